/* The OpenAPI document built from a schema snapshot (no database): one
 * test per branch of PostgREST's Response/OpenAPI.hs, expectations taken
 * from that module (named in each test). fixtures/openapi_snapshot.json
 * holds tables api.types (one column per type branch), api.parents,
 * api.children (M2O, O2O and cross-schema FKs), the view api.aaa_parents
 * over parents, other.things, and functions covering the parameter
 * branches. */
#include <check.h>

#include "check_run.h"
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/context.h"
#include "openapi/openapi.h"

static pgrest_arena *arena;
static pgrest_ctx *ctx;
static pgr_schema_cache *sc;
static json_object *doc;
static const char *doc_text;  /* the document as encoded (in arena) */
static pgr_openapi_version version;  /* the document asked for */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = '\0';
    fclose(f);
    return buf;
}

/* Builds the document of schema api with the given options (key, value
 * pairs, NULL-terminated) from what the request transaction reported. */
static void build(const char *const *options, const char *inspect_json)
{
    ctx = pgrest_ctx_new();
    pgrest_error err = {0};
    pgrest_ctx_set(ctx, "db-schemas", "api, other", &err);
    for (size_t i = 0; options != NULL && options[i] != NULL; i += 2)
        ck_assert_int_eq(pgrest_ctx_set(ctx, options[i], options[i + 1], &err), PGREST_OK);
    char path[1024];
    snprintf(path, sizeof path, "%s/openapi_snapshot.json", getenv("PGREST_TEST_FIXTURES"));
    char *json = slurp(path);
    static const char *const exposed[] = {"api", "other", NULL};
    sc = pgr_schema_cache_from_json(json, exposed, &err);
    free(json);
    ck_assert_msg(sc != NULL, "snapshot: %s", err.message);
    arena = pgrest_arena_new(0);
    size_t len = 0;
    char *text = pgr_openapi_document(ctx, arena, sc, "api", version, inspect_json, &len, &err);
    ck_assert_msg(text != NULL, "document: %s", err.message);
    ck_assert_uint_eq(strlen(text), len);
    doc_text = text;
    doc = json_tokener_parse(text);
    ck_assert_ptr_nonnull(doc);
}

static void ignore_privileges(const char *const *options)
{
    build(options, "{\"description\": null}");
}

static void teardown(void)
{
    version = PGR_OPENAPI_V2;
    json_object_put(doc);
    doc = NULL;
    if (arena != NULL)
        pgrest_arena_free(arena);
    arena = NULL;
    pgr_schema_cache_release(sc);
    sc = NULL;
    if (ctx != NULL)
        pgrest_ctx_free(ctx);
    ctx = NULL;
}

/* Follows object keys and "#n" array indexes (NULL-terminated). */
static json_object *at(json_object *o, ...)
{
    va_list ap;
    va_start(ap, o);
    const char *k;
    while (o != NULL && (k = va_arg(ap, const char *)) != NULL) {
        if (k[0] == '#')
            o = json_object_is_type(o, json_type_array)
                    ? json_object_array_get_idx(o, (size_t)atoi(k + 1)) : NULL;
        else if (!json_object_object_get_ex(o, k, &o))
            o = NULL;
    }
    va_end(ap);
    return o;
}

static void ck_json(json_object *o, const char *json)
{
    json_object *want = json_tokener_parse(json);
    ck_assert_msg(want != NULL, "bad expectation %s", json);
    ck_assert_msg(o != NULL, "missing, want %s", json);
    if (!json_object_equal(o, want))
        ck_abort_msg("got %s, want %s",
                     json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), json);
    json_object_put(want);
}

#define PROP(name) at(doc, "definitions", "types", "properties", name, NULL)

/* toSwaggerType / toSwaggerFormat: integers are "integer" with int32
 * (smallint, integer) or int64 (bigint); the other formats are the type. */
START_TEST(integer_types)
{
    ignore_privileges(NULL);
    ck_json(PROP("a_smallint"), "{\"format\":\"int32\",\"type\":\"integer\"}");
    ck_json(PROP("a_bigint"), "{\"format\":\"int64\",\"type\":\"integer\"}");
    ck_json(PROP("a_real"), "{\"format\":\"real\",\"type\":\"number\"}");
    ck_json(PROP("a_double"), "{\"format\":\"double precision\",\"type\":\"number\"}");
}
END_TEST

/* toSwaggerType: json and jsonb have no type; anything unknown is a
 * string; colMaxLen becomes maxLength. */
START_TEST(string_and_untyped_types)
{
    ignore_privileges(NULL);
    ck_json(PROP("a_jsonb"), "{\"format\":\"jsonb\"}");
    ck_json(PROP("a_uuid"), "{\"format\":\"uuid\",\"type\":\"string\"}");
    ck_json(PROP("a_varchar"),
            "{\"format\":\"character varying\",\"maxLength\":20,\"type\":\"string\"}");
    ck_json(PROP("a_char"), "{\"format\":\"character\",\"maxLength\":1,\"type\":\"string\"}");
}
END_TEST

/* makePropertyItems: arrays carry the element's type; json[] elements
 * have none, so items is an empty schema. */
START_TEST(array_items)
{
    ignore_privileges(NULL);
    ck_json(PROP("a_text_arr"),
            "{\"format\":\"text[]\",\"type\":\"array\",\"items\":{\"type\":\"string\"}}");
    ck_json(PROP("a_int_arr"),
            "{\"format\":\"integer[]\",\"type\":\"array\",\"items\":{\"type\":\"integer\"}}");
    ck_json(PROP("a_json_arr"), "{\"format\":\"json[]\",\"type\":\"array\",\"items\":{}}");
}
END_TEST

/* makeProperty: colEnum becomes "enum"; the type is the schema cache's
 * text (schema-qualified: the cache is read with an empty search path),
 * and parseDefault strips the matching "::type" cast and the quotes. */
START_TEST(enum_column)
{
    ignore_privileges(NULL);
    ck_json(PROP("a_enum"), "{\"default\":\"happy\",\"enum\":[\"sad\",\"happy\"],"
                            "\"format\":\"api.mood\",\"type\":\"string\"}");
}
END_TEST

/* parseDefault + JSON.decode: non-string types keep the expression when it
 * is JSON; strings are quoted after the cast is stripped, and whatever
 * does not decode is left out. */
START_TEST(defaults)
{
    ignore_privileges(NULL);
    ck_json(at(PROP("a_numeric"), "default", NULL), "42.2");
    ck_json(at(PROP("a_bool"), "default", NULL), "false");
    ck_json(at(PROP("a_text"), "default", NULL), "\"hello\"");
    ck_json(at(PROP("a_date"), "default", NULL), "\"1900-01-01\"");
    /* no matching cast: the whole expression, quoted */
    ck_json(at(PROP("a_tstz"), "default", NULL), "\"now()\"");
    ck_assert_ptr_null(at(PROP("a_int"), "default", NULL));   /* nextval(...) */
    ck_assert_ptr_null(at(PROP("a_json"), "default", NULL));  /* '{}'::json */
    ck_assert_ptr_null(at(PROP("a_quote"), "default", NULL)); /* "say "hi"" */
    ck_assert_ptr_null(at(PROP("a_neg"), "default", NULL));   /* '-1'::integer */
    ck_assert_ptr_null(at(PROP("a_nan"), "default", NULL));   /* aeson has no NaN */
}
END_TEST

/* The number as aeson encodes the Scientific it decoded: integers in full,
 * others normalised and shown as Data.Scientific's formatScientific
 * Generic (fixed for 0.1 <= x < 10^7, else d.ddde<n>). */
static const char *default_text(const char *column)
{
    json_object *d = at(PROP(column), "default", NULL);
    ck_assert_msg(d != NULL, "no default for %s", column);
    return json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN);
}

START_TEST(number_defaults_as_aeson_prints_them)
{
    ignore_privileges(NULL);
    ck_assert_str_eq(default_text("a_numeric"), "42.2");
    ck_assert_str_eq(default_text("a_scaled"), "42.2");     /* 42.20 */
    ck_assert_str_eq(default_text("a_small"), "5.0e-2");    /* 0.050 */
    /* beyond 64 bits: json-c would clamp it when parsing, so the text */
    ck_assert_ptr_nonnull(strstr(doc_text, "\"a_huge\":{\"default\":"
                                           "123456789012345678901234567890,"));
    ck_assert_str_eq(default_text("a_exp"), "1500");        /* 1.5e3 */
    ck_assert_str_eq(default_text("a_large"), "1.23456789e7");
}
END_TEST

/* makeTableDef: required lists the NOT NULL columns, defaults or not;
 * description is the whole table comment. */
START_TEST(required_and_description)
{
    ignore_privileges(NULL);
    ck_json(at(doc, "definitions", "types", "required", NULL), "[\"a_int\"]");
    ck_json(at(doc, "definitions", "types", "type", NULL), "\"object\"");
    ck_json(at(doc, "definitions", "children", "description", NULL),
            "\"Children\\n\\n\\nKids of parents\\nin two lines\"");
    ck_assert_ptr_null(at(doc, "definitions", "aaa_parents", "required", NULL));
}
END_TEST

/* makeProperty pk / fk: notes after the column comment; an FK note for a
 * single-column M2O or the FK side of an O2O whose target is in the
 * table's schema, the table preferred over a view of it. */
START_TEST(key_notes)
{
    ignore_privileges(NULL);
    json_object *props = at(doc, "definitions", "children", "properties", NULL);
    ck_json(at(props, "id", "description", NULL), "\"Note:\\nThis is a Primary Key.<pk/>\"");
    ck_json(at(props, "parent_id", "description", NULL),
            "\"The parent\\n\\nNote:\\nThis is a Foreign Key to `parents.id`."
            "<fk table='parents' column='id'/>\"");
    ck_json(at(props, "twin_id", "description", NULL),
            "\"Note:\\nThis is a Foreign Key to `parents.id`.<fk table='parents' column='id'/>\"");
    /* other.things is outside the table's schema */
    ck_assert_ptr_null(at(props, "other_id", "description", NULL));
    /* the referenced side of the O2O gets no FK note */
    ck_json(at(doc, "definitions", "parents", "properties", "id", "description", NULL),
            "\"Parent id\\n\\nNote:\\nThis is a Primary Key.<pk/>\"");
}
END_TEST

/* makePathItem: summary is the comment's first line, description the
 * rest without leading newlines; read-only relations get only GET. */
START_TEST(table_paths)
{
    ignore_privileges(NULL);
    json_object *get = at(doc, "paths", "/children", "get", NULL);
    ck_json(at(get, "summary", NULL), "\"Children\"");
    ck_json(at(get, "description", NULL), "\"Kids of parents\\nin two lines\"");
    ck_json(at(get, "tags", NULL), "[\"children\"]");
    ck_json(at(get, "parameters", NULL),
            "[{\"$ref\":\"#/parameters/rowFilter.children.id\"},"
            "{\"$ref\":\"#/parameters/rowFilter.children.parent_id\"},"
            "{\"$ref\":\"#/parameters/rowFilter.children.twin_id\"},"
            "{\"$ref\":\"#/parameters/rowFilter.children.other_id\"},"
            "{\"$ref\":\"#/parameters/select\"},{\"$ref\":\"#/parameters/order\"},"
            "{\"$ref\":\"#/parameters/range\"},{\"$ref\":\"#/parameters/rangeUnit\"},"
            "{\"$ref\":\"#/parameters/offset\"},{\"$ref\":\"#/parameters/limit\"},"
            "{\"$ref\":\"#/parameters/preferCount\"}]");
    ck_json(at(get, "responses", NULL),
            "{\"200\":{\"description\":\"OK\",\"schema\":{\"items\":"
            "{\"$ref\":\"#/definitions/children\"},\"type\":\"array\"}},"
            "\"206\":{\"description\":\"Partial Content\"}}");
    ck_json(at(doc, "paths", "/children", "delete", "parameters", "#4", NULL),
            "{\"$ref\":\"#/parameters/preferReturn\"}");
    ck_json(at(doc, "paths", "/children", "patch", "responses", NULL),
            "{\"204\":{\"description\":\"No Content\"}}");
    /* single-line comment: no description */
    ck_assert_ptr_null(at(doc, "paths", "/parents", "get", "description", NULL));
    ck_assert_ptr_nonnull(at(doc, "paths", "/aaa_parents", "get", NULL));
    ck_assert_ptr_null(at(doc, "paths", "/aaa_parents", "post", NULL));
    /* other schemas are not listed */
    ck_assert_ptr_null(at(doc, "paths", "/things", NULL));
    ck_assert_ptr_null(at(doc, "paths", "/rpc/elsewhere", NULL));
}
END_TEST

/* makeParamDefs: "params" has no known Prefer value (no enum); row
 * filters are plain strings with the column comment. */
START_TEST(parameter_definitions)
{
    ignore_privileges(NULL);
    ck_json(at(doc, "parameters", "preferParams", NULL),
            "{\"name\":\"Prefer\",\"description\":\"Preference\",\"required\":false,"
            "\"in\":\"header\",\"type\":\"string\"}");
    ck_json(at(doc, "parameters", "preferPost", "enum", NULL),
            "[\"return=representation\",\"return=minimal\",\"return=none\","
            "\"resolution=ignore-duplicates\",\"resolution=merge-duplicates\"]");
    ck_json(at(doc, "parameters", "rowFilter.children.parent_id", NULL),
            "{\"name\":\"parent_id\",\"description\":\"The parent\",\"required\":false,"
            "\"in\":\"query\",\"type\":\"string\"}");
    ck_json(at(doc, "parameters", "body.children", NULL),
            "{\"name\":\"children\",\"description\":\"children\",\"required\":false,"
            "\"in\":\"body\",\"schema\":{\"$ref\":\"#/definitions/children\"}}");
}
END_TEST

/* makeProcGetParam schemaNotMulti: arrays and json are strings in the
 * query, with the PostgreSQL type as format. */
START_TEST(function_get_parameters)
{
    ignore_privileges(NULL);
    json_object *get = at(doc, "paths", "/rpc/get_things", "get", NULL);
    ck_json(at(get, "summary", NULL), "\"Get things\"");
    ck_json(at(get, "description", NULL), "\"Longer description\"");
    ck_json(at(get, "tags", NULL), "[\"(rpc) get_things\"]");
    ck_json(at(get, "parameters", NULL),
            "[{\"name\":\"a\",\"required\":true,\"in\":\"query\",\"format\":\"int32\",\"type\":\"integer\"},"
            "{\"name\":\"b\",\"required\":false,\"in\":\"query\",\"format\":\"text\",\"type\":\"string\"},"
            "{\"name\":\"arr\",\"required\":true,\"in\":\"query\",\"format\":\"integer[]\",\"type\":\"string\"},"
            "{\"name\":\"j\",\"required\":true,\"in\":\"query\",\"format\":\"json\",\"type\":\"string\"}]");
    ck_json(at(get, "produces", NULL),
            "[\"application/json\",\"application/vnd.pgrst.object+json;nulls=stripped\","
            "\"application/vnd.pgrst.object+json\"]");
}
END_TEST

/* makeProcGetParam schemaMulti: VARIADIC repeats; items take the
 * element's type, json elements have none. */
START_TEST(function_variadic_parameters)
{
    ignore_privileges(NULL);
    ck_json(at(doc, "paths", "/rpc/sum_all", "get", "parameters", "#0", NULL),
            "{\"name\":\"v\",\"required\":true,\"in\":\"query\",\"type\":\"array\","
            "\"items\":{\"format\":\"int32\",\"type\":\"integer\"},\"collectionFormat\":\"multi\"}");
    ck_json(at(doc, "paths", "/rpc/json_all", "get", "parameters", "#0", NULL),
            "{\"name\":\"v\",\"required\":true,\"in\":\"query\",\"type\":\"array\","
            "\"items\":{\"format\":\"json\"},\"collectionFormat\":\"multi\"}");
}
END_TEST

/* makeProcPostParams / makeProcSchema: the body object; VOLATILE
 * functions have no GET; an unnamed argument is the "" property. */
START_TEST(function_post_body)
{
    ignore_privileges(NULL);
    ck_json(at(doc, "paths", "/rpc/get_things", "post", "parameters", NULL),
            "[{\"name\":\"args\",\"required\":true,\"in\":\"body\",\"schema\":{"
            "\"description\":\"Get things\\n\\nLonger description\",\"type\":\"object\","
            "\"required\":[\"a\",\"arr\",\"j\"],\"properties\":{"
            "\"a\":{\"format\":\"int32\",\"type\":\"integer\"},"
            "\"b\":{\"format\":\"text\",\"type\":\"string\"},"
            "\"arr\":{\"format\":\"integer[]\",\"type\":\"array\",\"items\":{\"type\":\"integer\"}},"
            "\"j\":{\"format\":\"json\"}}}},{\"$ref\":\"#/parameters/preferParams\"}]");
    ck_assert_ptr_null(at(doc, "paths", "/rpc/touch", "get", NULL));
    ck_json(at(doc, "paths", "/rpc/touch", "post", "parameters", "#0", "schema", NULL),
            "{\"description\":\"Touches\",\"type\":\"object\"}");
    ck_json(at(doc, "paths", "/rpc/unnamed", "post", "parameters", "#0", "schema", "properties", NULL),
            "{\"\":{\"format\":\"json\"}}");
    /* overloads share the path: makePathItems' fromList keeps the last in
     * Routine's Ord, over(a text) after over(a integer) ("integer" <
     * "text") */
    ck_json(at(doc, "paths", "/rpc/over", "get", "parameters", "#0", "format", NULL), "\"text\"");
}
END_TEST

/* ignore-privileges (MainTx.hs OAIgnorePriv): the cache's functions of
 * the schema, argument types as the cache has them. */
START_TEST(function_types_ignore_privileges)
{
    ignore_privileges(NULL);
    json_object *p = at(doc, "paths", "/rpc/with_types", "get", "parameters", NULL);
    ck_json(at(p, "#0", "format", NULL), "\"api.mood\"");
    ck_json(at(p, "#1", "format", NULL), "\"other.kind\"");
}
END_TEST

/* follow-privileges (MainTx.hs OAFollowPriv): the relations the request
 * found accessible, and the functions as its accessibleFuncs query
 * returned them (argument types printed on the request's search path),
 * not the cache's; the first of two overloads keeps the path. */
START_TEST(follow_privileges)
{
    build(NULL, "{\"description\":null,\"tables\":[\"parents\"],\"functions\":["
                "{\"name\":\"with_types\",\"description\":\"Live\\nfunction\",\"volatility\":\"s\","
                "\"params\":[{\"name\":\"m\",\"type\":\"mood\",\"required\":true,\"variadic\":false},"
                "{\"name\":\"v\",\"type\":\"text[]\",\"required\":false,\"variadic\":true}]},"
                "{\"name\":\"with_types\",\"description\":null,\"volatility\":\"v\",\"params\":[]},"
                "{\"name\":\"touch\",\"description\":null,\"volatility\":\"v\",\"params\":[]}]}");
    ck_assert_ptr_nonnull(at(doc, "paths", "/parents", NULL));
    ck_assert_ptr_null(at(doc, "paths", "/children", NULL));
    ck_assert_ptr_null(at(doc, "definitions", "children", NULL));
    ck_assert_ptr_null(at(doc, "parameters", "body.children", NULL));
    ck_assert_ptr_nonnull(at(doc, "paths", "/rpc/touch", "post", NULL));
    ck_assert_ptr_null(at(doc, "paths", "/rpc/touch", "get", NULL));
    ck_assert_ptr_null(at(doc, "paths", "/rpc/get_things", NULL));
    json_object *get = at(doc, "paths", "/rpc/with_types", "get", NULL);
    ck_json(at(get, "summary", NULL), "\"Live\"");
    ck_json(at(get, "description", NULL), "\"function\"");
    ck_json(at(get, "parameters", NULL),
            "[{\"name\":\"m\",\"required\":true,\"in\":\"query\",\"format\":\"mood\",\"type\":\"string\"},"
            "{\"name\":\"v\",\"required\":false,\"in\":\"query\",\"type\":\"array\","
            "\"items\":{\"format\":\"text\",\"type\":\"string\"},\"collectionFormat\":\"multi\"}]");
}
END_TEST

#define ROOT_GET "{\"tags\":[\"Introspection\"],\"summary\":\"OpenAPI description (this document)\"," \
                 "\"produces\":[\"application/openapi+json\",\"application/json\"]," \
                 "\"responses\":{\"200\":{\"description\":\"OK\"}}}"

/* pgrest's batch (docs/batch.md) is POST / while server-max-batch-items
 * allows batches; with 0, "/" is PostgREST's alone. */
START_TEST(batch_listed_on_root)
{
    ignore_privileges(NULL);
    json_object *post = at(doc, "paths", "/", "post", NULL);
    ck_assert_ptr_nonnull(post);
    ck_json(at(post, "consumes", NULL), "[\"application/vnd.pgrest.batch+json\"]");
    ck_json(at(post, "tags", NULL), "[\"Batch\"]");
    json_object *items = at(post, "parameters", NULL);
    ck_json(at(json_object_array_get_idx(items, 0), "schema", "items", "required", NULL),
            "[\"method\",\"path\"]");
    teardown();
    static const char *const off[] = {"server-max-batch-items", "0", NULL};
    ignore_privileges(off);
    ck_json(at(doc, "paths", "/", NULL), "{\"get\":" ROOT_GET "}");
}
END_TEST

/* postgrestSpec info: the schema comment's first line is the title, the
 * rest (leading newlines dropped) the description; defaults otherwise. */
START_TEST(info_from_schema_comment)
{
    build(NULL, "{\"description\":\"My API\\n\\nDoes things\\nwell\"}");
    ck_json(at(doc, "info", "title", NULL), "\"My API\"");
    ck_json(at(doc, "info", "description", NULL), "\"Does things\\nwell\"");
    teardown();
    ignore_privileges(NULL);
    ck_json(at(doc, "info", "title", NULL), "\"PostgREST API\"");
    ck_json(at(doc, "info", "description", NULL),
            "\"This is a dynamic API generated by PostgREST\"");
    ck_json(at(doc, "externalDocs", NULL),
            "{\"description\":\"PostgREST Documentation\","
            "\"url\":\"https://postgrest.org/en/v16/references/api.html\"}");
    ck_json(at(doc, "paths", "/", "get", NULL), ROOT_GET);
    ck_json(at(doc, "consumes", NULL),
            "[\"application/json\",\"application/vnd.pgrst.object+json;nulls=stripped\","
            "\"application/vnd.pgrst.object+json\",\"text/csv\"]");
}
END_TEST

/* postgrestSpec host/schemes/basePath without a proxy: server-host
 * (escapeHostName maps the special hosts to 0.0.0.0) and server-port. */
START_TEST(host_from_server_settings)
{
    const char *opts[] = {"server-host", "*6", "server-port", "8080", NULL};
    ignore_privileges(opts);
    ck_json(at(doc, "host", NULL), "\"0.0.0.0:8080\"");
    ck_json(at(doc, "schemes", NULL), "[\"http\"]");
    ck_json(at(doc, "basePath", NULL), "\"/\"");
    teardown();
    const char *named[] = {"server-host", "api.local", "server-port", "3001", NULL};
    ignore_privileges(named);
    ck_json(at(doc, "host", NULL), "\"api.local:3001\"");
}
END_TEST

/* pickProxy: scheme lower-cased, default port by scheme, "/" for an empty
 * path. */
START_TEST(proxy_uri)
{
    const char *opts[] = {"openapi-server-proxy-uri", "HTTPS://example.com", NULL};
    ignore_privileges(opts);
    ck_json(at(doc, "host", NULL), "\"example.com:443\"");
    ck_json(at(doc, "schemes", NULL), "[\"https\"]");
    ck_json(at(doc, "basePath", NULL), "\"/\"");
    teardown();
    const char *port[] = {"openapi-server-proxy-uri", "http://[::1]:08080/api/v1", NULL};
    ignore_privileges(port);
    ck_json(at(doc, "host", NULL), "\"[::1]:8080\"");
    ck_json(at(doc, "schemes", NULL), "[\"http\"]");
    ck_json(at(doc, "basePath", NULL), "\"/api/v1\"");
}
END_TEST

/* Config/Proxy.hs isMalformedProxyUri: a query, user info, a port out of
 * range or another scheme make the URI unusable. Config.hs
 * parseOpenAPIServerProxyURI refuses it, so the option stays unset and
 * the server settings apply. */
START_TEST(malformed_proxy_uri_refused)
{
    static const char *const bad[] = {
        "https://example.com/?a=1", "https://user@example.com", "http://example.com:0",
        "http://example.com:65536", "ftp://example.com", "http://:80/x", "example.com",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pgrest_ctx *probe = pgrest_ctx_new();
        pgrest_error err = {0};
        ck_assert_msg(pgrest_ctx_set(probe, "openapi-server-proxy-uri", bad[i], &err) ==
                          PGREST_ERR_CONFIG, "%s accepted", bad[i]);
        ck_assert_str_eq(err.message, "Malformed proxy uri, a correct example: "
                                      "https://example.com:8443/basePath");
        ck_assert_ptr_null(pgrest_ctx_get(probe, "openapi-server-proxy-uri"));
        pgrest_ctx_free(probe);
    }
    const char *opts[] = {"server-host", "h", "server-port", "1", NULL};
    ignore_privileges(opts);
    json_object *want = json_object_new_string("h:1");
    ck_assert(json_object_equal(at(doc, "host", NULL), want));
    json_object_put(want);
}
END_TEST

/* makeSecurityDefinitions: only with openapi-security-active. */
START_TEST(security_definitions)
{
    ignore_privileges(NULL);
    ck_assert_ptr_null(at(doc, "securityDefinitions", NULL));
    ck_assert_ptr_null(at(doc, "security", NULL));
    teardown();
    const char *opts[] = {"openapi-security-active", "TRUE", NULL};
    ignore_privileges(opts);
    ck_json(at(doc, "securityDefinitions", NULL),
            "{\"JWT\":{\"type\":\"apiKey\",\"in\":\"header\",\"name\":\"Authorization\","
            "\"description\":\"Add the token prepending \\\"Bearer \\\" (without quotes) to it\"}}");
    ck_json(at(doc, "security", NULL), "[{\"JWT\":[]}]");
}
END_TEST

/* pgrest's having= and distinct= (docs/aggregates.md, docs/distinct.md)
 * are listed beside PostgREST's parameters only under their gate,
 * db-aggregates-enabled: off, the document stays PostgREST's. */
START_TEST(query_extension_parameters)
{
    ignore_privileges(NULL);
    ck_assert_ptr_null(at(doc, "parameters", "having", NULL));
    ck_assert_ptr_null(at(doc, "parameters", "distinct", NULL));
    ck_assert_ptr_null(strstr(json_object_to_json_string(at(doc, "paths", "/children", "get",
                                                           "parameters", NULL)), "having"));
    teardown();
    const char *opts[] = {"db-aggregates-enabled", "true", NULL};
    ignore_privileges(opts);
    ck_json(at(doc, "parameters", "having", NULL),
            "{\"name\":\"having\",\"description\":\"Filtering Aggregates (pgrest)\","
            "\"required\":false,\"in\":\"query\",\"type\":\"string\"}");
    ck_json(at(doc, "parameters", "distinct", NULL),
            "{\"name\":\"distinct\",\"description\":\"Distinct Rows (pgrest)\","
            "\"required\":false,\"in\":\"query\",\"type\":\"string\"}");
    const char *refs = json_object_to_json_string_ext(
        at(doc, "paths", "/children", "get", "parameters", NULL),
        JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    ck_assert_ptr_nonnull(strstr(refs, "{\"$ref\":\"#/parameters/preferCount\"},"
                                       "{\"$ref\":\"#/parameters/having\"},"
                                       "{\"$ref\":\"#/parameters/distinct\"}]"));
    ck_assert_ptr_null(strstr(json_object_to_json_string(at(doc, "paths", "/children", "post",
                                                           "parameters", NULL)), "having"));
}
END_TEST

/* ------------------------------------------------------------ 3.1 */

/* pgrest's OpenAPI 3.1 (docs/openapi.md): the same walk, components
 * where 3.1 keeps them, a server URL for host/basePath/schemes. */
START_TEST(v31_document_frame)
{
    version = PGR_OPENAPI_V3_1;
    ignore_privileges(NULL);
    ck_json(at(doc, "openapi", NULL), "\"3.1.0\"");
    ck_assert_ptr_null(at(doc, "swagger", NULL));
    ck_assert_ptr_null(at(doc, "definitions", NULL));
    ck_assert_ptr_null(at(doc, "parameters", NULL));
    ck_assert_ptr_null(at(doc, "host", NULL));
    ck_assert_ptr_null(at(doc, "consumes", NULL));
    ck_json(at(doc, "servers", NULL), "[{\"url\":\"http://0.0.0.0:3000/\"}]");
    ck_json(at(doc, "info", "title", NULL), "\"PostgREST API\"");
    ck_assert_ptr_nonnull(at(doc, "components", "schemas", "children", "properties", NULL));
    /* nothing of 2.0's shape is left anywhere in the document */
    ck_assert_ptr_null(strstr(doc_text, "#/definitions/"));
    ck_assert_ptr_null(strstr(doc_text, "\"#/parameters/"));
    ck_assert_ptr_null(strstr(doc_text, "\"in\":\"body\""));
    ck_assert_ptr_null(strstr(doc_text, "\"produces\""));
    ck_assert_ptr_null(strstr(doc_text, "collectionFormat"));
    teardown();
    version = PGR_OPENAPI_V3_1;
    const char *opts[] = {"openapi-server-proxy-uri", "https://api.example.com/v1", NULL};
    ignore_privileges(opts);
    ck_json(at(doc, "servers", NULL), "[{\"url\":\"https://api.example.com:443/v1\"}]");
}
END_TEST

/* JSON Schema 2020-12 nullability: a nullable column also takes null
 * (an enum lists it too); NOT NULL columns and untyped json stay as 2.0
 * writes them. */
START_TEST(v31_nullable_types)
{
    version = PGR_OPENAPI_V3_1;
    ignore_privileges(NULL);
#define PROP31(name) at(doc, "components", "schemas", "types", "properties", name, NULL)
    ck_json(PROP31("a_int"), "{\"format\":\"int32\",\"type\":\"integer\"}");
    ck_json(PROP31("a_bigint"), "{\"format\":\"int64\",\"type\":[\"integer\",\"null\"]}");
    ck_json(PROP31("a_jsonb"), "{\"format\":\"jsonb\"}");
    ck_json(PROP31("a_enum"), "{\"default\":\"happy\",\"enum\":[\"sad\",\"happy\",null],"
                              "\"format\":\"api.mood\",\"type\":[\"string\",\"null\"]}");
    ck_json(PROP31("a_int_arr"), "{\"format\":\"integer[]\",\"type\":[\"array\",\"null\"],"
                                 "\"items\":{\"type\":\"integer\"}}");
    ck_json(at(doc, "components", "schemas", "types", "required", NULL), "[\"a_int\"]");
#undef PROP31
}
END_TEST

/* Parameters keep their names and places; what 2.0 says on the
 * parameter (type, enum, default) is in its schema. */
START_TEST(v31_parameters)
{
    version = PGR_OPENAPI_V3_1;
    ignore_privileges(NULL);
    json_object *params = at(doc, "components", "parameters", NULL);
    ck_json(at(params, "preferParams", NULL),
            "{\"name\":\"Prefer\",\"description\":\"Preference\",\"required\":false,"
            "\"in\":\"header\",\"schema\":{\"type\":\"string\"}}");
    ck_json(at(params, "preferReturn", "schema", NULL),
            "{\"type\":\"string\",\"enum\":[\"return=representation\",\"return=minimal\","
            "\"return=none\"]}");
    ck_json(at(params, "rangeUnit", "schema", NULL), "{\"type\":\"string\",\"default\":\"items\"}");
    ck_json(at(params, "rowFilter.children.parent_id", NULL),
            "{\"name\":\"parent_id\",\"description\":\"The parent\",\"required\":false,"
            "\"in\":\"query\",\"schema\":{\"type\":\"string\"}}");
    ck_assert_ptr_null(at(params, "body.children", NULL));
    ck_json(at(doc, "paths", "/children", "get", "parameters", "#0", NULL),
            "{\"$ref\":\"#/components/parameters/rowFilter.children.id\"}");
}
END_TEST

/* The rows a table path reads and takes, by media type: GET answers an
 * array in JSON, one object in the vnd.pgrst.object types, text in CSV;
 * POST and PATCH take the body from components/requestBodies (one row
 * or many; a form is one row). */
START_TEST(v31_table_bodies_and_responses)
{
    version = PGR_OPENAPI_V3_1;
    ignore_privileges(NULL);
    json_object *ok = at(doc, "paths", "/children", "get", "responses", "200", NULL);
    ck_json(at(ok, "description", NULL), "\"OK\"");
    ck_json(at(ok, "content", "application/json", "schema", NULL),
            "{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/children\"}}");
    ck_json(at(ok, "content", "application/vnd.pgrst.object+json", "schema", NULL),
            "{\"$ref\":\"#/components/schemas/children\"}");
    ck_json(at(ok, "content", "text/csv", "schema", NULL), "{\"type\":\"string\"}");
    ck_assert_ptr_nonnull(at(doc, "paths", "/children", "get", "responses", "206", "content", NULL));
    ck_json(at(doc, "paths", "/children", "post", "requestBody", NULL),
            "{\"$ref\":\"#/components/requestBodies/body.children\"}");
    ck_json(at(doc, "paths", "/children", "patch", "requestBody", NULL),
            "{\"$ref\":\"#/components/requestBodies/body.children\"}");
    ck_assert_ptr_null(at(doc, "paths", "/children", "delete", "requestBody", NULL));
    ck_json(at(doc, "paths", "/children", "post", "parameters", NULL),
            "[{\"$ref\":\"#/components/parameters/select\"},"
            "{\"$ref\":\"#/components/parameters/preferPost\"}]");
    json_object *body = at(doc, "components", "requestBodies", "body.children", NULL);
    ck_json(at(body, "required", NULL), "false");
    ck_json(at(body, "content", "application/json", "schema", NULL),
            "{\"oneOf\":[{\"$ref\":\"#/components/schemas/children\"},{\"type\":\"array\","
            "\"items\":{\"$ref\":\"#/components/schemas/children\"}}]}");
    ck_json(at(body, "content", "application/x-www-form-urlencoded", "schema", NULL),
            "{\"$ref\":\"#/components/schemas/children\"}");
    ck_json(at(body, "content", "text/csv", "schema", NULL), "{\"type\":\"string\"}");
    /* pgrest's NDJSON bodies (docs/bulk-import.md): text, requests only */
    ck_json(at(body, "content", "application/x-ndjson", "schema", NULL), "{\"type\":\"string\"}");
    ck_assert_ptr_null(at(ok, "content", "application/x-ndjson", NULL));
    /* a view PostgREST cannot write has no body */
    ck_assert_ptr_null(at(doc, "components", "requestBodies", "body.aaa_parents", NULL));
}
END_TEST

/* Functions: GET parameters with schemas (VARIADIC: an exploded form
 * array, 2.0's collectionFormat multi), the POST arguments as a required
 * request body, the answer in each type 2.0 produces. */
START_TEST(v31_functions)
{
    version = PGR_OPENAPI_V3_1;
    ignore_privileges(NULL);
    ck_json(at(doc, "paths", "/rpc/get_things", "get", "parameters", "#0", NULL),
            "{\"name\":\"a\",\"required\":true,\"in\":\"query\","
            "\"schema\":{\"format\":\"int32\",\"type\":\"integer\"}}");
    ck_json(at(doc, "paths", "/rpc/sum_all", "get", "parameters", "#0", NULL),
            "{\"name\":\"v\",\"required\":true,\"in\":\"query\",\"schema\":{\"type\":\"array\","
            "\"items\":{\"format\":\"int32\",\"type\":\"integer\"}},\"style\":\"form\","
            "\"explode\":true}");
    json_object *post = at(doc, "paths", "/rpc/get_things", "post", NULL);
    ck_json(at(post, "parameters", NULL), "[{\"$ref\":\"#/components/parameters/preferParams\"}]");
    ck_json(at(post, "requestBody", "required", NULL), "true");
    ck_json(at(post, "requestBody", "content", "application/json", "schema", "required", NULL),
            "[\"a\",\"arr\",\"j\"]");
    ck_assert_ptr_nonnull(
        at(post, "requestBody", "content", "application/x-www-form-urlencoded", "schema", NULL));
    ck_json(at(post, "responses", "200", "content", NULL),
            "{\"application/json\":{\"schema\":{}},"
            "\"application/vnd.pgrst.object+json;nulls=stripped\":{\"schema\":{}},"
            "\"application/vnd.pgrst.object+json\":{\"schema\":{}}}");
    ck_assert_ptr_null(at(post, "produces", NULL));
}
END_TEST

/* openapi-security-active: 3.1 names the scheme, a JWT bearer token. */
START_TEST(v31_security_scheme)
{
    version = PGR_OPENAPI_V3_1;
    const char *opts[] = {"openapi-security-active", "true", NULL};
    ignore_privileges(opts);
    ck_json(at(doc, "components", "securitySchemes", NULL),
            "{\"JWT\":{\"type\":\"http\",\"scheme\":\"bearer\",\"bearerFormat\":\"JWT\"}}");
    ck_json(at(doc, "security", NULL), "[{\"JWT\":[]}]");
    ck_assert_ptr_null(at(doc, "securityDefinitions", NULL));
}
END_TEST

/* The batch on POST / (server-max-batch-items > 0) takes its array as a
 * request body. */
START_TEST(v31_batch_and_root)
{
    version = PGR_OPENAPI_V3_1;
    ignore_privileges(NULL);
    json_object *root = at(doc, "paths", "/", NULL);
    ck_json(at(root, "get", "responses", "200", "content", "application/openapi+json", NULL),
            "{\"schema\":{\"type\":\"object\"}}");
    ck_json(at(root, "post", "requestBody", "content", "application/vnd.pgrest.batch+json",
               "schema", "type", NULL),
            "\"array\"");
    ck_json(at(root, "post", "parameters", NULL),
            "[{\"$ref\":\"#/components/parameters/preferParams\"}]");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("openapi");
    TCase *tc = tcase_create("document");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, integer_types);
    tcase_add_test(tc, number_defaults_as_aeson_prints_them);
    tcase_add_test(tc, string_and_untyped_types);
    tcase_add_test(tc, array_items);
    tcase_add_test(tc, enum_column);
    tcase_add_test(tc, defaults);
    tcase_add_test(tc, required_and_description);
    tcase_add_test(tc, key_notes);
    tcase_add_test(tc, table_paths);
    tcase_add_test(tc, parameter_definitions);
    tcase_add_test(tc, function_get_parameters);
    tcase_add_test(tc, function_variadic_parameters);
    tcase_add_test(tc, function_post_body);
    tcase_add_test(tc, function_types_ignore_privileges);
    tcase_add_test(tc, follow_privileges);
    tcase_add_test(tc, info_from_schema_comment);
    tcase_add_test(tc, batch_listed_on_root);
    tcase_add_test(tc, host_from_server_settings);
    tcase_add_test(tc, proxy_uri);
    tcase_add_test(tc, malformed_proxy_uri_refused);
    tcase_add_test(tc, security_definitions);
    tcase_add_test(tc, query_extension_parameters);
    tcase_add_test(tc, v31_document_frame);
    tcase_add_test(tc, v31_nullable_types);
    tcase_add_test(tc, v31_parameters);
    tcase_add_test(tc, v31_table_bodies_and_responses);
    tcase_add_test(tc, v31_functions);
    tcase_add_test(tc, v31_security_scheme);
    tcase_add_test(tc, v31_batch_and_root);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
