"""The OpenAPI document of GET / validates against the Swagger 2.0 schema,
as PostgREST's OpenApiSpec checks it first ("root path returns a valid
openapi spec": validateOpenApiResponse with the JSON Schema in the
conformance fixtures, openapi.json and draft04.json), for every mode and
option that changes the document: follow-privileges as the anonymous
and an authenticated role, ignore-privileges, the security definitions
and a proxy URI (Response/OpenAPI.hs). A real Swagger client refuses a
document the schema refuses."""
import json
import os
import unittest

import draft4
from harness import ServerTestCase, hs256_token

JWT_SECRET = "reallyreallyreallyreallyverysafe"
HERE = os.path.dirname(os.path.abspath(__file__))


def jwt(claims):
    return hs256_token(claims, JWT_SECRET)


def swagger_schemas():
    shared = os.environ.get("PGREST_SHARED") or os.path.join(HERE, "..", "..", "..", "shared")
    fixtures = os.path.join(shared, "conformance", "fixtures")
    try:
        with open(os.path.join(fixtures, "openapi.json"), encoding="utf-8") as f:
            schema = json.load(f)
        with open(os.path.join(fixtures, "draft04.json"), encoding="utf-8") as f:
            draft = json.load(f)
    except OSError:
        return None
    return schema, {"draft04.json": draft}


class OpenApiDocumentTest(ServerTestCase):
    START_SERVER = False

    def setUp(self):
        self.schemas = swagger_schemas()
        if self.schemas is None:
            raise unittest.SkipTest("conformance fixtures (openapi.json) not found")
        super().setUp()

    def document(self, headers=None):
        r = self.server.get("/", headers=headers or {})
        self.assertEqual(r.status, 200, r.body[:300])
        self.assertEqual(r.headers["Content-Type"], "application/openapi+json; charset=utf-8")
        return json.loads(r.body)

    def assert_valid(self, doc):
        schema, docs = self.schemas
        errs = draft4.errors(schema, doc, docs)
        self.assertEqual(errs[:10], [])

    def test_the_validator_refuses_an_invalid_document(self):
        # the check can fail: documents the Swagger schema refuses
        self.start_server()
        doc = self.document()
        self.assert_valid(doc)
        for path, bad in ((("host",), "http://x"), (("swagger",), "3.0"),
                          (("paths", "/artists", "get", "responses"), {}),
                          (("definitions", "artists", "required"), [])):
            broken = json.loads(json.dumps(doc))
            node = broken
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = bad
            schema, docs = self.schemas
            self.assertNotEqual(draft4.errors(schema, broken, docs), [], path)

    def test_follow_privileges(self):
        self.start_server(**{"jwt-secret": JWT_SECRET})
        anon = self.document()
        self.assert_valid(anon)
        self.assertIn("/artists", anon["paths"])
        user = self.document({"Authorization": "Bearer " + jwt({"role": "web_user"})})
        self.assert_valid(user)
        # web_user may write: the write operations are there too
        self.assertIn("post", user["paths"]["/artists"])

    def test_ignore_privileges(self):
        self.start_server(**{"openapi-mode": "ignore-privileges"})
        self.assert_valid(self.document())

    def test_security_and_proxy(self):
        self.start_server(**{"openapi-security-active": "true",
                             "openapi-server-proxy-uri": "https://example.org:8443/api/v1"})
        doc = self.document()
        self.assert_valid(doc)
        self.assertEqual((doc["host"], doc["basePath"], doc["schemes"]),
                         ("example.org:8443", "/api/v1", ["https"]))
        self.assertEqual(doc["security"], [{"JWT": []}])


class OpenApiVersionTest(ServerTestCase):
    """pgrest's OpenAPI 3.1 (docs/openapi.md): asked for with
    Accept: application/openapi+json;version=3.1, or made the default by
    openapi-version = "3.1"; without either, every Accept PostgREST
    answers gets its Swagger 2.0 document, byte for byte the same. (The
    3.1 documents are validated against the official schema by
    tests/client/openapi31.test.mjs.)"""
    START_SERVER = False

    def body(self, accept=None):
        r = self.server.get("/", headers={"Accept": accept} if accept else {})
        self.assertEqual(r.status, 200, r.body[:300])
        self.assertEqual(r.headers["Content-Type"], "application/openapi+json; charset=utf-8")
        return r.body

    def version(self, accept=None):
        doc = json.loads(self.body(accept))
        return doc.get("openapi") or doc.get("swagger")

    def test_the_version_asked_for(self):
        self.start_server()
        swagger = self.body()
        for accept in ("application/openapi+json", "application/json", "*/*",
                       "application/openapi+json;version=2.0",
                       "text/csv, application/json;q=0.5",
                       # an unknown version is the default's
                       "application/openapi+json;version=9"):
            self.assertEqual(self.body(accept), swagger, accept)
        for accept in ("application/openapi+json;version=3.1",
                       "application/openapi+json; version=3.1.0",
                       "application/openapi+json;version=\"3.1\"".replace('"', ''),
                       "text/csv;q=0.1, application/openapi+json;version=3.1"):
            self.assertEqual(self.version(accept), "3.1.0", accept)
        # the first acceptable type in Accept's order (q, then specificity) decides
        self.assertEqual(self.version("application/json, application/openapi+json;version=3.1"),
                         "3.1.0")
        self.assertEqual(self.version(
            "application/openapi+json;version=3.1;q=0.5, application/json"), "2.0")
        r = self.server.get("/", headers={"Accept": "text/csv"})
        self.assertEqual(r.status, 406)

    def test_openapi_version_makes_3_1_the_default(self):
        self.start_server(**{"openapi-version": "3.1"})
        for accept in (None, "application/openapi+json", "application/json", "*/*"):
            self.assertEqual(self.version(accept), "3.1.0", accept)
        self.assertEqual(self.version("application/openapi+json;version=2.0"), "2.0")

    def test_modes_apply_to_3_1(self):
        self.start_server(**{"openapi-version": "3.1", "jwt-secret": JWT_SECRET,
                             "openapi-security-active": "true"})
        anon = json.loads(self.body())
        self.assertIn("/artists", anon["paths"])
        self.assertNotIn("security", json.loads(self.server.get("/", headers={
            "Accept": "application/openapi+json;version=2.0"}).body)["paths"])
        user = json.loads(self.server.get("/", headers={
            "Authorization": "Bearer " + jwt({"role": "web_user"})}).body)
        self.assertIn("post", user["paths"]["/artists"])
        self.assertEqual(user["security"], [{"JWT": []}])
        self.assertEqual(user["components"]["securitySchemes"]["JWT"]["scheme"], "bearer")

    def test_an_invalid_version_is_a_config_error(self):
        self.start_server(wait=False, **{"openapi-version": "3.0"})
        self.server.proc.wait(timeout=20)
        self.assertEqual(self.server.proc.returncode, 1)
        self.assertIn("Invalid openapi-version", self.server.log_tail())
