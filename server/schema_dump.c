#include "schema_dump.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <string.h>

static json_object *str(json_object *o, const char *key)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
        return NULL;
    return json_object_get(v);
}

static json_object *qi(const char *schema, const char *name)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "qiName", json_object_new_string(name ? name : ""));
    json_object_object_add(o, "qiSchema", json_object_new_string(schema ? schema : ""));
    return o;
}

static const char *get_s(json_object *o, const char *key)
{
    json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v) : NULL;
}

static bool get_b(json_object *o, const char *key)
{
    json_object *v = NULL;
    return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

static json_object *pair(json_object *k, json_object *v)
{
    json_object *a = json_object_new_array();
    json_object_array_add(a, k);
    json_object_array_add(a, v);
    return a;
}

static json_object *column(json_object *c)
{
    json_object *o = json_object_new_object();
    json_object *en = str(c, "enum");
    json_object_object_add(o, "colName", str(c, "name"));
    json_object_object_add(o, "colDescription", str(c, "description"));
    json_object_object_add(o, "colNullable", json_object_new_boolean(get_b(c, "nullable")));
    json_object_object_add(o, "colType", str(c, "type"));
    json_object_object_add(o, "colNominalType", str(c, "nominal_type"));
    json_object_object_add(o, "colMaxLen", str(c, "max_length"));
    json_object_object_add(o, "colDefault", str(c, "default"));
    json_object_object_add(o, "colEnum", en ? en : json_object_new_array());
    return o;
}

static json_object *table(json_object *t)
{
    json_object *o = json_object_new_object();
    json_object *cols = json_object_new_object(), *src = NULL;
    json_object_object_add(o, "tableSchema", str(t, "schema"));
    json_object_object_add(o, "tableName", str(t, "name"));
    json_object_object_add(o, "tableDescription", str(t, "description"));
    const char *kind = get_s(t, "kind");
    json_object_object_add(o, "tableIsView",
                           json_object_new_boolean(kind && strchr("vm", kind[0]) != NULL));
    json_object_object_add(o, "tableInsertable", json_object_new_boolean(get_b(t, "insertable")));
    json_object_object_add(o, "tableUpdatable", json_object_new_boolean(get_b(t, "updatable")));
    json_object_object_add(o, "tableDeletable", json_object_new_boolean(get_b(t, "deletable")));
    json_object *pk = str(t, "pk");
    json_object_object_add(o, "tablePKCols", pk ? pk : json_object_new_array());
    if (json_object_object_get_ex(t, "columns", &src))
        for (size_t i = 0; i < json_object_array_length(src); i++) {
            json_object *c = json_object_array_get_idx(src, i);
            const char *name = get_s(c, "name");
            if (name != NULL)
                json_object_object_add(cols, name, column(c));
        }
    json_object_object_add(o, "tableColumns", cols);
    return o;
}

static json_object *tables(json_object *snap)
{
    json_object *out = json_object_new_array(), *src = NULL;
    if (json_object_object_get_ex(snap, "tables", &src))
        for (size_t i = 0; i < json_object_array_length(src); i++) {
            json_object *t = json_object_array_get_idx(src, i);
            json_object_array_add(out, pair(qi(get_s(t, "schema"), get_s(t, "name")), table(t)));
        }
    return out;
}

/* relColumns: [[column, referenced column], ...] */
static json_object *column_pairs(json_object *fk, bool reverse)
{
    json_object *out = json_object_new_array(), *a = NULL, *b = NULL;
    json_object_object_get_ex(fk, reverse ? "ref_columns" : "columns", &a);
    json_object_object_get_ex(fk, reverse ? "columns" : "ref_columns", &b);
    for (size_t i = 0; a && b && i < json_object_array_length(a); i++)
        json_object_array_add(out, pair(json_object_get(json_object_array_get_idx(a, i)),
                                        json_object_get(json_object_array_get_idx(b, i))));
    return out;
}

/* Whether schema.name is a view (or materialized view) in the snapshot. */
static bool is_view(json_object *snap, const char *schema, const char *name)
{
    json_object *src = NULL;
    if (schema == NULL || name == NULL || !json_object_object_get_ex(snap, "tables", &src))
        return false;
    for (size_t i = 0; i < json_object_array_length(src); i++) {
        json_object *t = json_object_array_get_idx(src, i);
        const char *s = get_s(t, "schema"), *n = get_s(t, "name"), *k = get_s(t, "kind");
        if (s && n && !strcmp(s, schema) && !strcmp(n, name))
            return k != NULL && strchr("vm", k[0]) != NULL;
    }
    return false;
}

/* One direction of a foreign key: M2O from the referencing table, O2M
 * from the referenced one (O2O for one-to-one keys). */
static json_object *fk_relationship(json_object *snap, json_object *fk, bool reverse)
{
    const char *s = get_s(fk, "schema"), *t = get_s(fk, "table");
    const char *rs = get_s(fk, "ref_schema"), *rt = get_s(fk, "ref_table");
    json_object *card = json_object_new_object();
    bool one = get_b(fk, "one_to_one");
    json_object_object_add(card, "tag", json_object_new_string(one ? "O2O" : reverse ? "O2M"
                                                                                     : "M2O"));
    json_object_object_add(card, "relCons", str(fk, "name"));
    json_object_object_add(card, "relColumns", column_pairs(fk, reverse));
    if (one)
        json_object_object_add(card, "isParent", json_object_new_boolean(reverse));
    json_object *o = json_object_new_object();
    json_object_object_add(o, "tag", json_object_new_string("Relationship"));
    json_object_object_add(o, "relTable", reverse ? qi(rs, rt) : qi(s, t));
    json_object_object_add(o, "relForeignTable", reverse ? qi(s, t) : qi(rs, rt));
    json_object_object_add(o, "relIsSelf", json_object_new_boolean(
                                               s && rs && t && rt && !strcmp(s, rs) &&
                                               !strcmp(t, rt)));
    json_object_object_add(o, "relCardinality", card);
    bool view = is_view(snap, s, t), ref_view = is_view(snap, rs, rt);
    json_object_object_add(o, "relTableIsView", json_object_new_boolean(reverse ? ref_view
                                                                                : view));
    json_object_object_add(o, "relFTableIsView", json_object_new_boolean(reverse ? view
                                                                                 : ref_view));
    return o;
}

/* A function taking a row of table and returning target's rows. */
static json_object *computed_relationship(json_object *c)
{
    const char *ts = get_s(c, "table_schema"), *t = get_s(c, "table");
    const char *fs = get_s(c, "target_schema"), *f = get_s(c, "target");
    json_object *o = json_object_new_object();
    json_object_object_add(o, "tag", json_object_new_string("ComputedRelationship"));
    json_object_object_add(o, "relFunction", qi(get_s(c, "function_schema"),
                                                get_s(c, "function")));
    json_object_object_add(o, "relTable", qi(ts, t));
    json_object_object_add(o, "relForeignTable", qi(fs, f));
    json_object_object_add(o, "relTableAlias", qi(ts, t));
    json_object_object_add(o, "relToOne", json_object_new_boolean(get_b(c, "to_one")));
    json_object_object_add(o, "relIsSelf", json_object_new_boolean(
                                               ts && fs && t && f && !strcmp(ts, fs) &&
                                               !strcmp(t, f)));
    return o;
}

static void add_computed(json_object *snap, json_object *out)
{
    json_object *src = NULL;
    if (!json_object_object_get_ex(snap, "computed_relationships", &src))
        return;
    for (size_t i = 0; i < json_object_array_length(src); i++) {
        json_object *c = json_object_array_get_idx(src, i);
        const char *s = get_s(c, "table_schema");
        json_object *key = pair(qi(s, get_s(c, "table")), json_object_new_string(s ? s : ""));
        json_object *rels = json_object_new_array();
        json_object_array_add(rels, computed_relationship(c));
        json_object_array_add(out, pair(key, rels));
    }
}

/* Keyed by (table, schema of the table) as PostgREST's RelationshipsMap. */
static json_object *relationships(json_object *snap)
{
    json_object *out = json_object_new_array(), *src = NULL;
    add_computed(snap, out);
    if (!json_object_object_get_ex(snap, "foreign_keys", &src))
        return out;
    for (size_t i = 0; i < json_object_array_length(src); i++) {
        json_object *fk = json_object_array_get_idx(src, i);
        for (int dir = 0; dir < 2; dir++) {
            const char *s = get_s(fk, dir ? "ref_schema" : "schema");
            const char *t = get_s(fk, dir ? "ref_table" : "table");
            json_object *key = pair(qi(s, t), json_object_new_string(s ? s : ""));
            json_object *rels = json_object_new_array();
            json_object_array_add(rels, fk_relationship(snap, fk, dir == 1));
            json_object_array_add(out, pair(key, rels));
        }
    }
    return out;
}

static json_object *tagged(const char *tag, json_object *contents)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "tag", json_object_new_string(tag));
    json_object_object_add(o, "contents", contents);
    return o;
}

static json_object *return_type(json_object *r)
{
    const char *kind = get_s(r, "return_kind");
    json_object *type = qi(get_s(r, "return_schema"), get_s(r, "return_type"));
    json_object *pg;
    if (kind != NULL && strcmp(kind, "composite") == 0) {
        json_object *c = json_object_new_array();
        json_object_array_add(c, type);
        json_object_array_add(c, json_object_new_boolean(get_b(r, "return_composite_alias")));
        pg = tagged("Composite", c);
    } else
        pg = tagged("Scalar", type);
    return tagged(get_b(r, "returns_set") ? "SetOf" : "Single", pg);
}

static json_object *routine(json_object *r)
{
    json_object *o = json_object_new_object(), *params = json_object_new_array(), *src = NULL;
    bool variadic = false;
    if (json_object_object_get_ex(r, "params", &src))
        for (size_t i = 0; i < json_object_array_length(src); i++) {
            json_object *p = json_object_array_get_idx(src, i), *pp = json_object_new_object();
            json_object_object_add(pp, "ppName", str(p, "name"));
            json_object_object_add(pp, "ppType", str(p, "type"));
            json_object_object_add(pp, "ppTypeMaxLength", str(p, "cast_type"));
            json_object_object_add(pp, "ppReq", json_object_new_boolean(get_b(p, "required")));
            json_object_object_add(pp, "ppVar", json_object_new_boolean(get_b(p, "variadic")));
            variadic = variadic || get_b(p, "variadic");
            json_object_array_add(params, pp);
        }
    const char *vol = get_s(r, "volatility");
    json_object *settings = str(r, "settings");
    json_object_object_add(o, "pdSchema", str(r, "schema"));
    json_object_object_add(o, "pdName", str(r, "name"));
    json_object_object_add(o, "pdDescription", str(r, "description"));
    json_object_object_add(o, "pdParams", params);
    json_object_object_add(o, "pdReturnType", return_type(r));
    json_object_object_add(o, "pdVolatility",
                           json_object_new_string(vol && vol[0] == 'i' ? "Immutable"
                                                  : vol && vol[0] == 's' ? "Stable"
                                                                         : "Volatile"));
    json_object_object_add(o, "pdHasVariadic", json_object_new_boolean(variadic));
    json_object_object_add(o, "pdIsoLvl", str(r, "isolation_level"));
    json_object_object_add(o, "pdFuncSettings", settings ? settings : json_object_new_array());
    return o;
}

/* RoutineMap: overloads grouped under one qualified name. */
static json_object *routines(json_object *snap)
{
    json_object *out = json_object_new_array(), *src = NULL;
    if (!json_object_object_get_ex(snap, "routines", &src))
        return out;
    size_t n = json_object_array_length(src);
    for (size_t i = 0; i < n; i++) {
        json_object *r = json_object_array_get_idx(src, i);
        const char *s = get_s(r, "schema"), *name = get_s(r, "name");
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++) {
            json_object *q = json_object_array_get_idx(src, j);
            seen = s && name && get_s(q, "schema") && get_s(q, "name") &&
                   !strcmp(s, get_s(q, "schema")) && !strcmp(name, get_s(q, "name"));
        }
        if (seen)
            continue;
        json_object *group = json_object_new_array();
        for (size_t j = i; j < n; j++) {
            json_object *q = json_object_array_get_idx(src, j);
            if (s && name && get_s(q, "schema") && get_s(q, "name") &&
                !strcmp(s, get_s(q, "schema")) && !strcmp(name, get_s(q, "name")))
                json_object_array_add(group, routine(q));
        }
        json_object_array_add(out, pair(qi(s, name), group));
    }
    return out;
}

/* RepresentationsMap: keyed by (source type, target type). */
static json_object *representations(json_object *snap)
{
    json_object *out = json_object_new_array(), *src = NULL;
    if (!json_object_object_get_ex(snap, "representations", &src))
        return out;
    for (size_t i = 0; i < json_object_array_length(src); i++) {
        json_object *r = json_object_array_get_idx(src, i), *o = json_object_new_object();
        json_object_object_add(o, "drSourceType", str(r, "source"));
        json_object_object_add(o, "drTargetType", str(r, "target"));
        json_object_object_add(o, "drFunction", str(r, "function"));
        json_object_array_add(out, pair(pair(str(r, "source"), str(r, "target")), o));
    }
    return out;
}

/* MediaHandlerMap: keyed by (relation or any element, media type); the
 * value pairs the CustomFunc handler with the media type. */
static json_object *media_handlers(json_object *snap)
{
    json_object *out = json_object_new_array(), *src = NULL;
    if (!json_object_object_get_ex(snap, "media_handlers", &src))
        return out;
    for (size_t i = 0; i < json_object_array_length(src); i++) {
        json_object *h = json_object_array_get_idx(src, i);
        json_object *rel = get_b(h, "any_element")
                               ? json_object_new_string("RelAnyElement")
                               : tagged("RelId", qi(get_s(h, "target_schema"),
                                                    get_s(h, "target_name")));
        json_object *fn = json_object_new_array();
        json_object_array_add(fn, qi(get_s(h, "handler_schema"), get_s(h, "handler_name")));
        json_object_array_add(fn, json_object_get(rel));
        json_object *value = pair(tagged("CustomFunc", fn), str(h, "resolved_media_type"));
        json_object_array_add(out, pair(pair(rel, str(h, "media_type")), value));
    }
    return out;
}

int schema_dump(FILE *out, const char *snapshot_path)
{
    json_object *snap = json_object_from_file(snapshot_path);
    if (snap == NULL)
        return -1;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "dbTables", tables(snap));
    json_object_object_add(o, "dbRelationships", relationships(snap));
    json_object_object_add(o, "dbRoutines", routines(snap));
    json_object_object_add(o, "dbRepresentations", representations(snap));
    json_object_object_add(o, "dbMediaHandlers", media_handlers(snap));
    fprintf(out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                              JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
    json_object_put(snap);
    return 0;
}
