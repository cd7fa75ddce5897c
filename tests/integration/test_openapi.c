/* GET/HEAD / against PostgreSQL: the expected documents follow PostgREST's
 * documented OpenAPI output (api/openapi, ref/configuration openapi-mode,
 * openapi-server-proxy-uri; Response/OpenAPI.hs) over test_schema.sql,
 * whose schema, tables, columns and functions carry COMMENTs. */
#include <check.h>

#include "check_run.h"
#include <json-c/json.h>
#include <libpq-fe.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static json_object *doc;
static test_response resp;

/* Runs GET / on a fresh context with extra options and keeps the parsed
 * body in doc. */
static void get_root(const char *const *options, const char *const *headers)
{
    pgrest_ctx *ctx = harness_ctx(options);
    harness_request(ctx, "GET", "/", "", headers, NULL, &resp);
    pgrest_ctx_free(ctx);
    doc = json_tokener_parse(resp.body);
}

static void done(void)
{
    json_object_put(doc);
    doc = NULL;
    harness_free(&resp);
}

/* Follows object keys (NULL-terminated); NULL when a key is missing. */
static json_object *at(json_object *o, ...)
{
    va_list ap;
    va_start(ap, o);
    const char *k;
    while (o != NULL && (k = va_arg(ap, const char *)) != NULL)
        if (!json_object_object_get_ex(o, k, &o))
            o = NULL;
    va_end(ap);
    return o;
}

static const char *str_at(json_object *o)
{
    return o != NULL && json_object_is_type(o, json_type_string)
               ? json_object_get_string(o) : NULL;
}

/* o serialised compactly equals json (key order as built). */
static void ck_json(json_object *o, const char *json)
{
    ck_assert_ptr_nonnull(o);
    json_object *want = json_tokener_parse(json);
    ck_assert_ptr_nonnull(want);
    if (!json_object_equal(o, want))
        ck_abort_msg("got %s, want %s",
                     json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), json);
    json_object_put(want);
}

START_TEST(document_header_from_schema_comment)
{
    get_root(NULL, NULL);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_str_eq(harness_header(&resp, "Content-Type"),
                     "application/openapi+json; charset=utf-8");
    ck_assert_str_eq(str_at(at(doc, "swagger", NULL)), "2.0");
    /* one-line COMMENT ON SCHEMA: all of it is the title */
    ck_assert_str_eq(str_at(at(doc, "info", "title", NULL)), "Music catalogue API");
    ck_assert_str_eq(str_at(at(doc, "info", "description", NULL)), "");
    /* OpenAPI.hs: info.version is prettyVersion, what the Server header
     * carries after "postgrest/" */
    ck_assert_str_eq(str_at(at(doc, "info", "version", NULL)), "16.1 (pgrest " PGREST_VERSION_STRING ")");
    ck_assert_str_eq(str_at(at(doc, "host", NULL)), "0.0.0.0:3000");
    ck_assert_str_eq(str_at(at(doc, "basePath", NULL)), "/");
    ck_json(at(doc, "schemes", NULL), "[\"http\"]");
    ck_assert_ptr_null(at(doc, "securityDefinitions", NULL));
    ck_json(at(doc, "paths", "/", "get", "produces", NULL),
            "[\"application/openapi+json\",\"application/json\"]");
    done();
}
END_TEST

/* OpenAPI.hs makeTableDef / makeProperty: "required" lists every NOT NULL
 * column (a serial PK too); "format" is the type as the schema cache
 * prints it, under an empty search path (SchemaCache.hs querySchemaCache
 * "set local schema ''"), so the enum shows qualified and its default
 * loses the "::api.genre" cast (parseDefault). */
START_TEST(table_definitions)
{
    get_root(NULL, NULL);
    ck_json(at(doc, "definitions", "artists", NULL),
            "{\"description\":\"People and bands\",\"type\":\"object\","
            "\"required\":[\"id\",\"name\"],"
            "\"properties\":{"
            "\"id\":{\"description\":\"Note:\\nThis is a Primary Key.<pk/>\","
            "\"format\":\"int32\",\"type\":\"integer\"},"
            "\"name\":{\"description\":\"Display name\",\"format\":\"text\",\"type\":\"string\"},"
            "\"country\":{\"format\":\"character\",\"maxLength\":2,\"type\":\"string\"},"
            "\"formed\":{\"format\":\"int32\",\"type\":\"integer\"},"
            "\"genre\":{\"default\":\"rock\",\"enum\":[\"rock\",\"jazz\",\"classical\",\"pop\"],"
            "\"format\":\"api.genre\",\"type\":\"string\"}}}");
    ck_json(at(doc, "definitions", "albums", "properties", "artist_id", NULL),
            "{\"description\":\"Note:\\nThis is a Foreign Key to `artists.id`."
            "<fk table='artists' column='id'/>\",\"format\":\"int32\",\"type\":\"integer\"}");
    ck_json(at(doc, "definitions", "albums", "properties", "title", NULL),
            "{\"format\":\"character varying\",\"maxLength\":200,\"type\":\"string\"}");
    ck_json(at(doc, "definitions", "albums", "properties", "tags", NULL),
            "{\"format\":\"text[]\",\"type\":\"array\",\"items\":{\"type\":\"string\"}}");
    ck_json(at(doc, "definitions", "albums", "required", NULL),
            "[\"id\",\"artist_id\",\"title\"]");
    done();
}
END_TEST

START_TEST(table_paths_and_parameters)
{
    get_root(NULL, NULL);
    json_object *artists = at(doc, "paths", "/artists", NULL);
    ck_assert_str_eq(str_at(at(artists, "get", "summary", NULL)), "People and bands");
    ck_assert_ptr_null(at(artists, "get", "description", NULL));
    ck_json(at(artists, "get", "tags", NULL), "[\"artists\"]");
    ck_json(at(artists, "post", "parameters", NULL),
            "[{\"$ref\":\"#/parameters/body.artists\"},{\"$ref\":\"#/parameters/select\"},"
            "{\"$ref\":\"#/parameters/preferPost\"}]");
    ck_assert_ptr_nonnull(at(artists, "patch", NULL));
    ck_assert_ptr_nonnull(at(artists, "delete", NULL));
    /* an aggregate view is read-only: get only */
    ck_assert_ptr_nonnull(at(doc, "paths", "/artist_stats", "get", NULL));
    ck_assert_ptr_null(at(doc, "paths", "/artist_stats", "post", NULL));
    /* OpenAPI.hs makeRowFilter: no format */
    ck_json(at(doc, "parameters", "rowFilter.artists.name", NULL),
            "{\"name\":\"name\",\"description\":\"Display name\",\"required\":false,"
            "\"in\":\"query\",\"type\":\"string\"}");
    ck_json(at(doc, "parameters", "body.artists", NULL),
            "{\"name\":\"artists\",\"description\":\"artists\",\"required\":false,"
            "\"in\":\"body\",\"schema\":{\"$ref\":\"#/definitions/artists\"}}");
    ck_json(at(doc, "parameters", "rangeUnit", NULL),
            "{\"name\":\"Range-Unit\",\"description\":\"Limiting and Pagination\","
            "\"required\":false,\"in\":\"header\",\"type\":\"string\",\"default\":\"items\"}");
    done();
}
END_TEST

START_TEST(function_paths)
{
    get_root(NULL, NULL);
    json_object *tracks = at(doc, "paths", "/rpc/album_tracks", NULL);
    ck_assert_str_eq(str_at(at(tracks, "get", "summary", NULL)), "Tracks of an album");
    ck_json(at(tracks, "get", "tags", NULL), "[\"(rpc) album_tracks\"]");
    ck_json(at(tracks, "get", "parameters", NULL),
            "[{\"name\":\"album\",\"required\":true,\"in\":\"query\","
            "\"format\":\"int32\",\"type\":\"integer\"}]");
    json_object *post = json_object_array_get_idx(at(tracks, "post", "parameters", NULL), 0);
    ck_json(at(post, "schema", NULL),
            "{\"description\":\"Tracks of an album\",\"type\":\"object\","
            "\"required\":[\"album\"],"
            "\"properties\":{\"album\":{\"format\":\"int32\",\"type\":\"integer\"}}}");
    /* a default makes the argument optional */
    json_object *add = at(doc, "paths", "/rpc/add", "get", "parameters", NULL);
    ck_assert(!json_object_get_boolean(at(json_object_array_get_idx(add, 1), "required", NULL)));
    /* VOLATILE: POST only */
    ck_assert_ptr_null(at(doc, "paths", "/rpc/touch", "get", NULL));
    ck_assert_ptr_nonnull(at(doc, "paths", "/rpc/touch", "post", NULL));
    /* VARIADIC repeats the query parameter */
    ck_json(json_object_array_get_idx(at(doc, "paths", "/rpc/sum_all", "get", "parameters", NULL), 0),
            "{\"name\":\"v\",\"required\":true,\"in\":\"query\",\"type\":\"array\","
            "\"collectionFormat\":\"multi\",\"items\":{\"format\":\"int32\",\"type\":\"integer\"}}");
    done();
}
END_TEST

START_TEST(media_types_and_head)
{
    pgrest_ctx *ctx = harness_ctx(NULL);
    const char *json[] = {"Accept", "application/json", NULL};
    harness_request(ctx, "GET", "/", "", json, NULL, &resp);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_str_eq(harness_header(&resp, "Content-Type"),
                     "application/openapi+json; charset=utf-8");
    harness_free(&resp);
    const char *csv[] = {"Accept", "text/csv", NULL};
    harness_request(ctx, "GET", "/", "", csv, NULL, &resp);
    ck_assert_int_eq(resp.status, 406);
    ck_assert_ptr_nonnull(strstr(resp.body, "PGRST107"));
    harness_free(&resp);
    /* Error.hs MediaTypeError lists MediaType.toMime of each accepted type */
    const char *vnd[] = {"Accept", "text/csv, application/vnd.pgrst.object+json;nulls=stripped", NULL};
    harness_request(ctx, "GET", "/", "", vnd, NULL, &resp);
    ck_assert_int_eq(resp.status, 406);
    ck_assert_ptr_nonnull(strstr(resp.body, "None of these media types are available: "
                                            "application/vnd.pgrst.object+json;nulls=stripped, "
                                            "text/csv"));
    harness_free(&resp);
    /* Plan.hs inspectPlan checks no preferences: handling=strict with an
     * unknown one is still the document */
    const char *strict[] = {"Prefer", "handling=strict, foo=bar", NULL};
    harness_request(ctx, "GET", "/", "", strict, NULL, &resp);
    ck_assert_int_eq(resp.status, 200);
    harness_free(&resp);
    harness_request(ctx, "HEAD", "/", "", NULL, NULL, &resp);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_str_eq(resp.body, "");
    ck_assert_str_eq(harness_header(&resp, "Content-Type"),
                     "application/openapi+json; charset=utf-8");
    harness_free(&resp);
    pgrest_ctx_free(ctx);
}
END_TEST

START_TEST(disabled_mode)
{
    const char *opts[] = {"openapi-mode", "disabled", NULL};
    get_root(opts, NULL);
    ck_assert_int_eq(resp.status, 404);
    ck_assert_str_eq(str_at(at(doc, "code", NULL)), "PGRST126");
    ck_assert_str_eq(str_at(at(doc, "message", NULL)), "Root endpoint metadata is disabled");
    done();
}
END_TEST

/* authenticator is NOINHERIT and holds no table grants itself; functions
 * keep PostgreSQL's default EXECUTE for PUBLIC. */
START_TEST(follow_privileges_hides_inaccessible)
{
    const char *opts[] = {"db-anon-role", "authenticator", NULL};
    get_root(opts, NULL);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_ptr_null(at(doc, "paths", "/artists", NULL));
    ck_assert_ptr_null(at(doc, "definitions", NULL));
    ck_assert_ptr_nonnull(at(doc, "paths", "/rpc/add", NULL));
    done();
    const char *ignore[] = {"db-anon-role", "authenticator",
                            "openapi-mode", "ignore-privileges", NULL};
    get_root(ignore, NULL);
    ck_assert_ptr_nonnull(at(doc, "paths", "/artists", NULL));
    ck_assert_ptr_nonnull(at(doc, "definitions", "artists", NULL));
    done();
}
END_TEST

START_TEST(proxy_uri_and_security)
{
    const char *opts[] = {"openapi-server-proxy-uri", "https://api.example.com:8443/v1/",
                          "openapi-security-active", "true", NULL};
    get_root(opts, NULL);
    ck_assert_str_eq(str_at(at(doc, "host", NULL)), "api.example.com:8443");
    ck_assert_str_eq(str_at(at(doc, "basePath", NULL)), "/v1/");
    ck_json(at(doc, "schemes", NULL), "[\"https\"]");
    ck_assert_str_eq(str_at(at(doc, "securityDefinitions", "JWT", "in", NULL)), "header");
    ck_json(at(doc, "security", NULL), "[{\"JWT\":[]}]");
    done();
}
END_TEST

START_TEST(profile_selects_schema)
{
    const char *opts[] = {"db-schemas", "api,private", NULL};
    const char *hdr[] = {"Accept-Profile", "private", NULL};
    get_root(opts, hdr);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_str_eq(harness_header(&resp, "Content-Profile"), "private");
    ck_assert_str_eq(str_at(at(doc, "info", "title", NULL)), "PostgREST API");
    ck_assert_str_eq(str_at(at(doc, "info", "description", NULL)),
                     "This is a dynamic API generated by PostgREST");
    ck_assert_ptr_nonnull(at(doc, "definitions", "labels", NULL));
    ck_assert_ptr_null(at(doc, "definitions", "artists", NULL));
    done();
}
END_TEST

/* ApiRequest.hs getResource: with db-root-spec "/" is that function,
 * called and negotiated like /rpc/<name> in the request's schema. */
START_TEST(root_spec_is_a_function_call)
{
    const char *opts[] = {"db-root-spec", "boxes", NULL};
    get_root(opts, NULL);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_str_eq(harness_header(&resp, "Content-Type"), "application/json; charset=utf-8");
    ck_assert(json_object_is_type(doc, json_type_array));
    done();
    const char *openapi[] = {"Accept", "application/openapi+json", NULL};
    get_root(opts, openapi);
    ck_assert_int_eq(resp.status, 406);
    done();
}
END_TEST

/* OpenAPI.hs makePathItems: the path map is built with fromList over the
 * overloads in decodeFuncs' order (Routine's Ord: fewer parameters
 * first), so /rpc/pick shows the last, pick(x date, y integer), in both
 * modes (accessibleFuncs goes through decodeFuncs too). */
START_TEST(overloads_show_the_greatest)
{
    const char *ignore[] = {"openapi-mode", "ignore-privileges", NULL};
    for (int mode = 0; mode < 2; mode++) {
        get_root(mode ? ignore : NULL, NULL);
        /* VOLATILE: POST only, the arguments as the body's properties */
        json_object *body = json_object_array_get_idx(
            at(doc, "paths", "/rpc/pick", "post", "parameters", NULL), 0);
        ck_json(at(body, "schema", "properties", NULL),
                "{\"x\":{\"format\":\"date\",\"type\":\"string\"},"
                "\"y\":{\"format\":\"int32\",\"type\":\"integer\"}}");
        done();
    }
}
END_TEST

/* follow-privileges reads the functions in the request (SqlFragment.hs
 * accessibleFuncs): argument types print as type::regtype::text does on
 * the request's search path, unqualified for the api schema; the
 * ignore-privileges document shows the schema cache's qualified text. */
START_TEST(function_argument_types_by_mode)
{
    get_root(NULL, NULL);
    json_object *p = at(doc, "paths", "/rpc/roster_step", "post", NULL);
    p = at(json_object_array_get_idx(at(p, "parameters", NULL), 0), "schema", "properties", NULL);
    ck_json(at(p, "acc", NULL), "{\"format\":\"\\\"text/x-roster\\\"\",\"type\":\"string\"}");
    ck_json(at(p, "a", NULL), "{\"format\":\"artists\",\"type\":\"string\"}");
    done();
    const char *ignore[] = {"openapi-mode", "ignore-privileges", NULL};
    get_root(ignore, NULL);
    p = at(doc, "paths", "/rpc/roster_step", "post", NULL);
    p = at(json_object_array_get_idx(at(p, "parameters", NULL), 0), "schema", "properties", NULL);
    ck_json(at(p, "acc", NULL), "{\"format\":\"api.\\\"text/x-roster\\\"\",\"type\":\"string\"}");
    ck_json(at(p, "a", NULL), "{\"format\":\"api.artists\",\"type\":\"string\"}");
    done();
}
END_TEST

static void admin_exec(const char *sql)
{
    const char *uri = getenv("PGREST_TEST_ADMIN_URI");
    if (uri == NULL || *uri == '\0')
        return;
    PGconn *c = PQconnectdb(uri);
    ck_assert_int_eq(PQstatus(c), CONNECTION_OK);
    PGresult *r = PQexec(c, sql);
    ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK, "%s", PQerrorMessage(c));
    PQclear(r);
    PQfinish(c);
}

/* SchemaCache.hs tablesSqlQuery: a domain column's type is the domain's
 * ultimate base type (through a domain over a domain) when that is a
 * pg_catalog type; its default is the column's own, else the domain's
 * (OpenAPI.hs parseDefault then strips the "::text" cast). */
START_TEST(domain_columns)
{
    if (getenv("PGREST_TEST_ADMIN_URI") == NULL)
        return;
    admin_exec("SET client_min_messages = warning;"
               "DROP SCHEMA IF EXISTS openapi_domains CASCADE;"
               "CREATE SCHEMA openapi_domains;"
               "CREATE DOMAIN openapi_domains.d1 AS text;"
               "CREATE DOMAIN openapi_domains.d2 AS openapi_domains.d1 DEFAULT 'x';"
               "CREATE TABLE openapi_domains.t (a openapi_domains.d2,"
               "  c openapi_domains.d2 DEFAULT 'own');");
    const char *opts[] = {"db-schemas", "openapi_domains", "openapi-mode", "ignore-privileges",
                          NULL};
    get_root(opts, NULL);
    admin_exec("SET client_min_messages = warning; DROP SCHEMA openapi_domains CASCADE");
    ck_assert_int_eq(resp.status, 200);
    json_object *props = at(doc, "definitions", "t", "properties", NULL);
    ck_json(at(props, "a", NULL), "{\"default\":\"x\",\"format\":\"text\",\"type\":\"string\"}");
    ck_json(at(props, "c", NULL), "{\"default\":\"own\",\"format\":\"text\",\"type\":\"string\"}");
    done();
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("openapi");
    TCase *tc = tcase_create("root");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, document_header_from_schema_comment);
    tcase_add_test(tc, table_definitions);
    tcase_add_test(tc, table_paths_and_parameters);
    tcase_add_test(tc, function_paths);
    tcase_add_test(tc, overloads_show_the_greatest);
    tcase_add_test(tc, media_types_and_head);
    tcase_add_test(tc, disabled_mode);
    tcase_add_test(tc, follow_privileges_hides_inaccessible);
    tcase_add_test(tc, proxy_uri_and_security);
    tcase_add_test(tc, profile_selects_schema);
    tcase_add_test(tc, root_spec_is_a_function_call);
    tcase_add_test(tc, function_argument_types_by_mode);
    tcase_add_test(tc, domain_columns);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    harness_db_uri();
    return check_run(suite());
}
