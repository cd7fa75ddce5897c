"""A JSON Schema draft-04 validator (standard library only) for the
keywords the Swagger 2.0 schema uses (conformance fixtures openapi.json,
which refers to draft04.json): what PostgREST's OpenApiSpec runs as
validateOpenApiResponse. errors(schema_doc, value, docs) lists the
violations as "path: message" strings; docs maps a file name
("draft04.json") to its schema for references into it."""
import re


def _is_type(value, name):
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or \
            (isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return False


def _equal(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


class Validator:
    def __init__(self, docs):
        self.docs = docs

    def resolve(self, ref, base):
        name, _, pointer = ref.partition("#")
        doc = self.docs[name] if name else base
        node = doc
        for part in [p for p in pointer.split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            node = node[int(part)] if isinstance(node, list) else node[part]
        return node, doc

    def check(self, schema, value, base, path, out):
        if "$ref" in schema:
            target, doc = self.resolve(schema["$ref"], base)
            self.check(target, value, doc, path, out)
            return
        t = schema.get("type")
        if t is not None:
            names = t if isinstance(t, list) else [t]
            if not any(_is_type(value, n) for n in names):
                out.append("%s: %r is not of type %s" % (path, value, t))
                return
        if "enum" in schema and not any(_equal(value, e) for e in schema["enum"]):
            out.append("%s: %r is not one of %r" % (path, value, schema["enum"]))
        for key in ("allOf", "anyOf", "oneOf"):
            if key in schema:
                results = []
                for sub in schema[key]:
                    errs = []
                    self.check(sub, value, base, path, errs)
                    results.append(errs)
                ok = sum(1 for e in results if not e)
                if key == "allOf" and ok != len(results):
                    out.extend(e for errs in results for e in errs)
                elif key == "anyOf" and ok == 0:
                    out.append("%s: no anyOf alternative matches" % path)
                elif key == "oneOf" and ok != 1:
                    out.append("%s: %d oneOf alternatives match, want 1" % (path, ok))
        if "not" in schema:
            errs = []
            self.check(schema["not"], value, base, path, errs)
            if not errs:
                out.append("%s: matches a \"not\" schema" % path)
        if isinstance(value, dict):
            self.check_object(schema, value, base, path, out)
        elif isinstance(value, list):
            self.check_array(schema, value, base, path, out)
        elif isinstance(value, str):
            if "pattern" in schema and re.search(schema["pattern"], value) is None:
                out.append("%s: %r does not match %r" % (path, value, schema["pattern"]))
            if len(value) < schema.get("minLength", 0):
                out.append("%s: %r is too short" % (path, value))
            if "maxLength" in schema and len(value) > schema["maxLength"]:
                out.append("%s: %r is too long" % (path, value))
        elif _is_type(value, "number"):
            if "minimum" in schema and (value < schema["minimum"] or (
                    schema.get("exclusiveMinimum") and value == schema["minimum"])):
                out.append("%s: %r is below the minimum" % (path, value))
            if "maximum" in schema and (value > schema["maximum"] or (
                    schema.get("exclusiveMaximum") and value == schema["maximum"])):
                out.append("%s: %r is above the maximum" % (path, value))

    def check_object(self, schema, value, base, path, out):
        for name in schema.get("required", []):
            if name not in value:
                out.append("%s: %r is required" % (path, name))
        if len(value) < schema.get("minProperties", 0):
            out.append("%s: too few properties" % path)
        props = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            sub = path + "/" + key
            matched = False
            if key in props:
                matched = True
                self.check(props[key], item, base, sub, out)
            for pattern, ps in patterns.items():
                if re.search(pattern, key):
                    matched = True
                    self.check(ps, item, base, sub, out)
            if not matched:
                if extra is False:
                    out.append("%s: additional property not allowed" % sub)
                elif isinstance(extra, dict):
                    self.check(extra, item, base, sub, out)

    def check_array(self, schema, value, base, path, out):
        if len(value) < schema.get("minItems", 0):
            out.append("%s: too few items" % path)
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            out.append("%s: too many items" % path)
        if schema.get("uniqueItems"):
            for i, a in enumerate(value):
                if any(_equal(a, b) for b in value[:i]):
                    out.append("%s: items are not unique" % path)
                    break
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                self.check(items, item, base, "%s/%d" % (path, i), out)
        elif isinstance(items, list):
            for i, item in enumerate(value):
                if i < len(items):
                    self.check(items[i], item, base, "%s/%d" % (path, i), out)
                elif schema.get("additionalItems", True) is False:
                    out.append("%s/%d: additional item not allowed" % (path, i))
                elif isinstance(schema.get("additionalItems"), dict):
                    self.check(schema["additionalItems"], item, base, "%s/%d" % (path, i), out)


def errors(schema, value, docs):
    out = []
    Validator(docs).check(schema, value, schema, "", out)
    return out
