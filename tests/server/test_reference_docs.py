"""The examples of PostgREST's reference docs (references/api/schemas.rst,
domain_representations.rst, resource_representation.rst, vary_header.rst,
auth.rst, schema_cache.rst), checked against a running server. Where the
docs and the source disagree the source is the expectation:
resource_representation.rst shows 415 for an unknown Accept, Error.hs
gives MediaTypeError status 406; schemas.rst shows the PGRST106 message
"The schema must be one of the following", Error.hs gives
"Invalid schema: <name>" with the exposed list in the hint."""
import time

from harness import ServerTestCase, hs256_token, http

SECRET = "reallyreallyreallyreallyverysafe"

TENANTS = """
CREATE SCHEMA tenant1; CREATE SCHEMA tenant2;
CREATE TABLE tenant1.items(id int PRIMARY KEY, name text);
CREATE TABLE tenant2.items(id int PRIMARY KEY, label text);
INSERT INTO tenant1.items VALUES (1, 't1');
INSERT INTO tenant2.items VALUES (2, 't2');
CREATE FUNCTION tenant1.search_path() RETURNS text LANGUAGE sql AS
  $$ SELECT current_setting('search_path') $$;
CREATE FUNCTION tenant2.search_path() RETURNS text LANGUAGE sql AS
  $$ SELECT current_setting('search_path') $$;
CREATE FUNCTION tenant1.vary_override() RETURNS int LANGUAGE plpgsql AS $$ BEGIN
  PERFORM set_config('response.headers', '[{"vary": "Accept, Prefer, X-Test-Vary"}]', true);
  RETURN 1; END $$;
GRANT USAGE ON SCHEMA tenant1, tenant2 TO web_anon;
GRANT ALL ON tenant1.items, tenant2.items TO web_anon;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA tenant1, tenant2 TO web_anon;

-- domain_representations.rst, verbatim but for the schemas
CREATE DOMAIN public.app_uuid AS uuid;
CREATE TABLE tenant1.profiles(id public.app_uuid, name text);
INSERT INTO tenant1.profiles VALUES ('846c4ffd-92ce-4de7-8d11-8e29929f4ec4', 'John Doe');
GRANT ALL ON tenant1.profiles TO web_anon;
CREATE FUNCTION public.json(public.app_uuid) RETURNS json AS
  $$ SELECT to_json(encode(uuid_send($1), 'base64')); $$ LANGUAGE sql IMMUTABLE;
CREATE CAST (public.app_uuid AS json) WITH FUNCTION public.json(public.app_uuid) AS IMPLICIT;
CREATE FUNCTION public.app_uuid(text) RETURNS public.app_uuid AS
  $$ SELECT encode(decode($1, 'base64'), 'hex')::uuid; $$ LANGUAGE sql IMMUTABLE;
CREATE CAST (text AS public.app_uuid) WITH FUNCTION public.app_uuid(text) AS IMPLICIT;
CREATE FUNCTION public.app_uuid(json) RETURNS public.app_uuid AS
  $$ SELECT public.app_uuid($1 #>> '{}'); $$ LANGUAGE sql IMMUTABLE;
CREATE CAST (json AS public.app_uuid) WITH FUNCTION public.app_uuid(json) AS IMPLICIT;
"""

EXPOSED = "tenant1, tenant2, api"


def token(claims):
    return hs256_token(claims, SECRET)


class ReferenceDocsTest(ServerTestCase):
    START_SERVER = False
    SERVER_CONFIG = {"db-schemas": EXPOSED, "jwt-secret": SECRET}

    def setUp(self):
        super().setUp()
        self.cluster.psql(TENANTS)
        self.start_server()

    def req(self, method, path, body=None, headers=None):
        return http(method, self.server.url(path), body, headers)

    def assert_invalid_schema(self, resp, name):
        self.assertEqual(resp.status, 406, resp)
        self.assertEqual(resp.headers.get("Content-Profile"), None)
        self.assertEqual(resp.json(), {
            "code": "PGRST106", "details": None,
            "hint": "Only the following schemas are exposed: " + EXPOSED,
            "message": "Invalid schema: " + name})

    # schemas.rst; ApiRequest.hs getSchema, Response.hs profileHeader

    def test_first_schema_is_the_default_and_is_announced(self):
        r = self.req("GET", "/items")
        self.assertEqual((r.status, r.json()), (200, [{"id": 1, "name": "t1"}]))
        # several schemas: the default counts as negotiated
        self.assertEqual(r.headers.get("Content-Profile"), "tenant1")

    def test_accept_profile_selects_for_get_head_options(self):
        r = self.req("GET", "/items", headers={"Accept-Profile": "tenant2"})
        self.assertEqual(r.json(), [{"id": 2, "label": "t2"}])
        self.assertEqual(r.headers.get("Content-Profile"), "tenant2")
        r = self.req("HEAD", "/items", headers={"Accept-Profile": "tenant2"})
        self.assertEqual((r.status, r.headers.get("Content-Profile")), (200, "tenant2"))
        # GET reads Accept-Profile only
        r = self.req("GET", "/items", headers={"Content-Profile": "tenant2"})
        self.assertEqual(r.json(), [{"id": 1, "name": "t1"}])
        self.assert_invalid_schema(
            self.req("OPTIONS", "/items", headers={"Accept-Profile": "tenant3"}), "tenant3")

    def test_content_profile_selects_for_writes(self):
        r = self.req("POST", "/items", {"id": 3, "label": "x"},
                     {"Content-Profile": "tenant2", "Prefer": "return=representation"})
        self.assertEqual((r.status, r.json()), (201, [{"id": 3, "label": "x"}]))
        self.assertEqual(r.headers.get("Content-Profile"), "tenant2")
        # writes ignore Accept-Profile: this PATCH goes to tenant1.items
        r = self.req("PATCH", "/items?id=eq.1", {"name": "u"},
                     {"Accept-Profile": "tenant2", "Prefer": "return=representation"})
        self.assertEqual((r.status, r.json()), (200, [{"id": 1, "name": "u"}]))
        self.assertEqual(r.headers.get("Content-Profile"), "tenant1")
        self.assert_invalid_schema(
            self.req("DELETE", "/items", headers={"Content-Profile": "tenant3"}), "tenant3")

    def test_unexposed_schema_is_pgrst106(self):
        self.assert_invalid_schema(
            self.req("GET", "/items", headers={"Accept-Profile": "tenant3"}), "tenant3")
        # names compare exactly: no case folding, an empty name is a name
        self.assert_invalid_schema(
            self.req("GET", "/items", headers={"Accept-Profile": "TENANT2"}), "TENANT2")
        self.assert_invalid_schema(
            self.req("GET", "/", headers={"Accept-Profile": "public"}), "public")

    def test_only_the_selected_schema_is_on_the_search_path(self):
        r = self.req("GET", "/rpc/search_path")
        self.assertEqual(r.json(), '"tenant1", "public"')
        r = self.req("GET", "/rpc/search_path", headers={"Accept-Profile": "tenant2"})
        self.assertEqual(r.json(), '"tenant2", "public"')
        r = self.req("POST", "/rpc/search_path", {}, {"Content-Profile": "tenant2"})
        self.assertEqual(r.json(), '"tenant2", "public"')

    def test_openapi_per_schema(self):
        r = self.req("GET", "/", headers={"Accept-Profile": "tenant2"})
        self.assertEqual(r.status, 200)
        self.assertEqual(r.headers.get("Content-Profile"), "tenant2")
        doc = r.json()
        self.assertEqual(sorted(doc["definitions"]["items"]["properties"]), ["id", "label"])
        self.assertNotIn("/profiles", doc["paths"])
        r = self.req("GET", "/")
        self.assertEqual(r.headers.get("Content-Profile"), "tenant1")
        self.assertIn("/profiles", r.json()["paths"])

    # vary_header.rst; App.hs toWaiResponse

    def test_vary_header_default_and_override(self):
        r = self.req("GET", "/items")
        self.assertEqual(r.headers.get_all("Vary"), ["Accept, Prefer, Range"])
        # a function's own Vary (any case) replaces it verbatim
        r = self.req("GET", "/rpc/vary_override")
        self.assertEqual(r.headers.get_all("Vary"), ["Accept, Prefer, X-Test-Vary"])
        # errors leave the ExceptT before toWaiResponse: no Vary
        r = self.req("GET", "/no_such_table")
        self.assertEqual((r.status, r.headers.get_all("Vary")), (404, None))

    # domain_representations.rst; Plan.hs withTransformer

    def test_domain_representations(self):
        john = [{"id": "hGxP/ZLOTeeNEY4pkp9OxA==", "name": "John Doe"}]
        self.assertEqual(self.req("GET", "/profiles").json(), john)
        self.assertEqual(self.req("GET", "/profiles?id=eq.hGxP/ZLOTeeNEY4pkp9OxA==").json(), john)
        # text -> app_uuid applies to every element of in.()
        self.assertEqual(self.req("GET", "/profiles?id=in.(hGxP/ZLOTeeNEY4pkp9OxA==)").json(), john)
        r = self.req("POST", "/profiles", {"id": "zH7HbFJUTfy/GZpwuirpuQ==", "name": "Jane Doe"},
                     {"Prefer": "return=representation"})
        self.assertEqual(r.json(), [{"id": "zH7HbFJUTfy/GZpwuirpuQ==", "name": "Jane Doe"}])
        stored = self.cluster.psql("SELECT id FROM tenant1.profiles ORDER BY name").split()
        self.assertEqual(stored, ["cc7ec76c-5254-4dfc-bf19-9a70ba2ae9b9",
                                  "846c4ffd-92ce-4de7-8d11-8e29929f4ec4"])
        # the output representation is hardcoded "json" (Plan.hs readPlan),
        # so CSV carries the JSON text of the value
        r = self.req("GET", "/profiles?select=id&name=eq.Jane%20Doe", headers={"Accept": "text/csv"})
        self.assertEqual(r.body, 'id\n"""zH7HbFJUTfy/GZpwuirpuQ=="""')

    # resource_representation.rst; MediaType.hs, Error.hs

    def test_media_types(self):
        r = self.req("GET", "/items", headers={"Accept": "unknown/unknown"})
        self.assertEqual(r.status, 406)
        self.assertEqual(r.json(), {"code": "PGRST107", "details": None, "hint": None,
                                    "message": "None of these media types are available: unknown/unknown"})
        r = self.req("GET", "/items", headers={"Accept": "*/*"})
        self.assertEqual(r.headers.get("Content-Type"), "application/json; charset=utf-8")
        r = self.req("GET", "/", headers={"Accept": "*/*"})
        self.assertEqual(r.headers.get("Content-Type"), "application/openapi+json; charset=utf-8")
        r = self.req("GET", "/items?id=eq.1", headers={"Accept": "application/vnd.pgrst.object+json"})
        self.assertEqual(r.json(), {"id": 1, "name": "t1"})
        r = self.req("GET", "/items?id=eq.99", headers={"Accept": "application/vnd.pgrst.object+json"})
        self.assertEqual(r.status, 406)
        self.assertEqual(r.json(), {"code": "PGRST116", "details": "The result contains 0 rows",
                                    "hint": None,
                                    "message": "Cannot coerce the result to a single JSON object"})
        # without nulls=stripped the array type is plain JSON
        r = self.req("GET", "/items?id=eq.1", headers={"Accept": "application/vnd.pgrst.array+json"})
        self.assertEqual(r.headers.get("Content-Type"), "application/json; charset=utf-8")

    def test_request_body_media_types(self):
        r = self.req("POST", "/items", b"id=10&name=form",
                     {"Content-Type": "application/x-www-form-urlencoded",
                      "Prefer": "return=representation"})
        self.assertEqual(r.json(), [{"id": 10, "name": "form"}])
        r = self.req("POST", "/items", b"id,name\n11,csv",
                     {"Content-Type": "text/csv", "Prefer": "return=representation"})
        self.assertEqual(r.json(), [{"id": 11, "name": "csv"}])

    # auth.rst; wai-extra extractBearerAuth, Auth/Jwt.hs (30 s skew)

    def test_bearer_scheme_is_case_insensitive(self):
        t = token({"role": "web_anon"})
        for scheme in ("Bearer", "bearer", "BEARER"):
            r = self.req("GET", "/items", headers={"Authorization": scheme + " " + t})
            self.assertEqual(r.status, 200, scheme)
        r = self.req("GET", "/items", headers={"Authorization": "Bearer"})
        self.assertEqual(r.status, 401)
        self.assertEqual(r.json()["message"], "Empty JWT is sent in Authorization header")

    def test_time_claims_allow_30_seconds_of_skew(self):
        now = int(time.time())
        cases = [({"exp": now - 10}, 200), ({"exp": now - 60}, "JWT expired"),
                 ({"nbf": now + 10}, 200), ({"nbf": now + 60}, "JWT not yet valid"),
                 ({"iat": now + 10}, 200), ({"iat": now + 60}, "JWT issued at future")]
        for claims, expect in cases:
            claims["role"] = "web_anon"
            r = self.req("GET", "/items", headers={"Authorization": "Bearer " + token(claims)})
            if expect == 200:
                self.assertEqual(r.status, 200, claims)
            else:
                self.assertEqual((r.status, r.json()["code"], r.json()["message"]),
                                 (401, "PGRST303", expect), claims)

    # schema_cache.rst: the event trigger of "Automatic Schema Cache Reloading"

    def test_event_trigger_reloads_the_schema_cache(self):
        self.cluster.psql("""
CREATE FUNCTION public.pgrst_watch() RETURNS event_trigger LANGUAGE plpgsql AS
  $$ BEGIN NOTIFY pgrst, 'reload schema'; END; $$;
CREATE EVENT TRIGGER pgrst_watch ON ddl_command_end EXECUTE PROCEDURE public.pgrst_watch();""")
        self.cluster.psql("CREATE TABLE tenant1.auto(a int); GRANT SELECT ON tenant1.auto TO web_anon;"
                          "INSERT INTO tenant1.auto VALUES (5)")
        self.assertIsNotNone(self.server.wait_for(lambda: self.req("GET", "/auto").status == 200, 10))
        self.cluster.psql("ALTER TABLE tenant1.auto ADD COLUMN b int DEFAULT 2")
        self.assertIsNotNone(self.server.wait_for(
            lambda: self.req("GET", "/auto").body == '[{"a":5,"b":2}]', 10))
