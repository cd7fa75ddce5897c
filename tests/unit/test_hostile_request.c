/* Hostile request shapes through the public stages (parse, plan) on the
 * unit schema snapshot, with what PostgREST answers them: paths that are
 * not one of its resource shapes, and client bytes that are not UTF-8
 * echoed in an error body. No database. */
#include <check.h>

#include "check_run.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "pgrest/pgrest.h"
#include "parse/api_request.h"
#include "util/utf8.h"

static pgrest_ctx *ctx;
static pgrest_arena *arena;

static void setup(void)
{
    ctx = pgrest_ctx_new();
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-schemas", "api", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-anon-role", "web_anon", &err), PGREST_OK);
    char path[1024];
    snprintf(path, sizeof path, "%s/schema_snapshot.json", getenv("PGREST_TEST_FIXTURES"));
    ck_assert_int_eq(pgrest_ctx_load_schema_file(ctx, path, &err), PGREST_OK);
    arena = pgrest_arena_new(0);
}

static void teardown(void)
{
    pgrest_arena_free(arena);
    pgrest_ctx_free(ctx);
}

/* Parses and plans method + path[?query] (+ one header); fills *err on
 * failure. */
static int run(const char *method, const char *target, const char *header,
               const char *value, pgrest_error *err)
{
    const char *q = strchr(target, '?');
    char *path = strndup(target, q ? (size_t)(q - target) : strlen(target));
    pgrest_request *req = pgrest_request_new(arena, method, path, q ? q + 1 : "");
    free(path);
    if (header != NULL)
        pgrest_request_add_header(req, header, value);
    pgrest_api_request *api = NULL;
    int rc = pgrest_parse_request(ctx, arena, req, &api, err);
    if (rc != PGREST_OK)
        return rc;
    pgrest_query_plan *plan = NULL;
    return pgrest_plan(ctx, arena, api, &plan, err);
}

/* getResource over Wai's pathInfo (http-types decodePathSegments keeps
 * empty segments): a trailing or doubled slash is no resource shape. */
START_TEST(paths_outside_the_resource_shapes)
{
    static const char *const invalid[] = {
        "/artists/", "//artists", "/artists//", "/artists/1", "/rpc/add/", "/rpc/add/x",
        "//", "/./artists",
    };
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        pgrest_error err = {0};
        ck_assert_msg(run("GET", invalid[i], NULL, NULL, &err) != PGREST_OK, "%s", invalid[i]);
        ck_assert_int_eq(err.http_status, 404);
        ck_assert_str_eq(err.code, "PGRST125");
        ck_assert_str_eq(err.message, "Invalid path specified in request URL");
    }
}
END_TEST

START_TEST(paths_of_the_resource_shapes)
{
    pgrest_error err = {0};
    ck_assert_int_eq(run("GET", "/artists", NULL, NULL, &err), PGREST_OK);
    ck_assert_int_eq(run("GET", "artists", NULL, NULL, &err), PGREST_OK);
    ck_assert_int_eq(run("GET", "/rpc/add?a=1", NULL, NULL, &err), PGREST_OK);
    ck_assert_int_eq(run("GET", "/", NULL, NULL, &err), PGREST_OK);
    ck_assert_int_eq(run("GET", "", NULL, NULL, &err), PGREST_OK);
    /* ["rpc"] is the relation rpc; ["rpc", ""] the function named "" */
    ck_assert_int_ne(run("GET", "/rpc", NULL, NULL, &err), PGREST_OK);
    ck_assert_str_eq(err.code, "PGRST205");
    ck_assert_str_eq(err.message, "Could not find the table 'api.rpc' in the schema cache");
    memset(&err, 0, sizeof err);
    ck_assert_int_ne(run("GET", "/rpc/", NULL, NULL, &err), PGREST_OK);
    ck_assert_str_eq(err.code, "PGRST202");
    ck_assert_str_eq(err.message,
                     "Could not find the function api. without parameters in the schema cache");
}
END_TEST

/* The body a host sends for err: one JSON object in well-formed UTF-8. */
static const char *error_body(const pgrest_error *err)
{
    pgrest_response *resp = pgrest_error_response(ctx, arena, err);
    ck_assert_ptr_nonnull(resp);
    size_t len = 0;
    const char *body = pgrest_response_body(resp, &len);
    ck_assert_msg(pgr_utf8_valid(body, len), "not UTF-8: %s", body);
    json_object *o = json_tokener_parse(body);
    ck_assert_msg(o != NULL && json_object_is_type(o, json_type_object), "%s", body);
    json_object_put(o);
    return body;
}

/* A path segment is decoded leniently by Wai (U+FFFD for a stray byte);
 * a header echoed in a message keeps the body valid JSON the same way. */
START_TEST(invalid_utf8_echoed_in_errors)
{
    pgrest_error err = {0};
    ck_assert_int_ne(run("GET", "/art%FFists", NULL, NULL, &err), PGREST_OK);
    ck_assert_str_eq(err.code, "PGRST205");
    ck_assert_ptr_nonnull(strstr(error_body(&err), "'api.art\xef\xbf\xbdists'"));
    memset(&err, 0, sizeof err);
    ck_assert_int_ne(run("GET", "/rpc/\xc3(", NULL, NULL, &err), PGREST_OK);
    ck_assert_str_eq(err.code, "PGRST202");
    ck_assert_ptr_nonnull(strstr(error_body(&err), "api.\xef\xbf\xbd("));
    memset(&err, 0, sizeof err);
    ck_assert_int_ne(run("GET", "/artists", "Accept-Profile", "\xfe\xff", &err), PGREST_OK);
    ck_assert_str_eq(err.code, "PGRST106");
    ck_assert_ptr_nonnull(strstr(error_body(&err), "Invalid schema: \xef\xbf\xbd\xef\xbf\xbd"));
    memset(&err, 0, sizeof err);
    ck_assert_int_ne(run("GET", "/artists", "Accept", "text/\xe0\x80", &err), PGREST_OK);
    ck_assert_str_eq(err.code, "PGRST107");
    error_body(&err);
}
END_TEST

/* The resource name itself is the leniently decoded segment: what the
 * schema cache lookup, the fuzzy hint and the SQL see is well-formed. */
START_TEST(path_segment_decoded_leniently)
{
    static const struct { const char *path, *name; } cases[] = {
        {"/art%FFists", "art\xef\xbf\xbdists"},
        {"/art\xffists", "art\xef\xbf\xbdists"},
        {"/rpc/a%C3%28", "a\xef\xbf\xbd("},
        {"/caf%C3%A9", "caf\xc3\xa9"},
        {"/%ED%A0%80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pgrest_request *req = pgrest_request_new(arena, "GET", cases[i].path, "");
        pgrest_api_request *api = NULL;
        pgrest_error err = {0};
        ck_assert_int_eq(pgrest_parse_request(ctx, arena, req, &api, &err), PGREST_OK);
        ck_assert_str_eq(api->name, cases[i].name);
    }
}
END_TEST

/* A call's arguments are the keys the parse stage read: a body nested
 * deeper than json-c's default 32 levels (within request-max-json-depth)
 * is planned, not refused as invalid JSON by a second parse. */
START_TEST(call_body_keys_come_from_the_parse_stage)
{
    char body[256] = "{\"a\":";
    size_t n = strlen(body);
    for (int i = 0; i < 40; i++)
        body[n++] = '[';
    for (int i = 0; i < 40; i++)
        body[n++] = ']';
    body[n++] = '}';
    body[n] = '\0';
    static const char *const bodies[] = {NULL, "[{\"a\":1},{\"a\":2}]"};
    for (size_t i = 0; i < 2; i++) {
        const char *b = bodies[i] ? bodies[i] : body;
        pgrest_request *req = pgrest_request_new(arena, "POST", "/rpc/add", "");
        pgrest_request_add_header(req, "Content-Type", "application/json");
        pgrest_request_set_body(req, b, strlen(b));
        pgrest_api_request *api = NULL;
        pgrest_query_plan *plan = NULL;
        pgrest_error err = {0};
        ck_assert_int_eq(pgrest_parse_request(ctx, arena, req, &api, &err), PGREST_OK);
        ck_assert_msg(pgrest_plan(ctx, arena, api, &plan, &err) == PGREST_OK, "%s: %s", b,
                      err.message);
    }
}
END_TEST

/* Parses and plans a POST with body[0..n) of content type ctype. */
static int run_body(const char *target, const char *ctype, const char *body, size_t n,
                    pgrest_error *err)
{
    const char *q = strchr(target, '?');
    char *path = strndup(target, q ? (size_t)(q - target) : strlen(target));
    pgrest_request *req = pgrest_request_new(arena, "POST", path, q ? q + 1 : "");
    free(path);
    pgrest_request_add_header(req, "Content-Type", ctype);
    pgrest_request_set_body(req, body, n);
    pgrest_api_request *api = NULL;
    int rc = pgrest_parse_request(ctx, arena, req, &api, err);
    if (rc != PGREST_OK)
        return rc;
    pgrest_query_plan *plan = NULL;
    return pgrest_plan(ctx, arena, api, &plan, err);
}

static void expect_nul_refused(int rc, const pgrest_error *err, const char *what)
{
    ck_assert_msg(rc != PGREST_OK, "%s: accepted", what);
    ck_assert_msg(err->http_status == 400, "%s: %d %s", what, err->http_status, err->code);
    ck_assert_msg(strcmp(err->code, "22021") == 0, "%s: %s %s", what, err->code, err->message);
    ck_assert_str_eq(err->message, "invalid byte sequence for encoding \"UTF8\": 0x00");
}

/* A NUL in a function argument: PostgREST sends every argument as a
 * text-like parameter (QueryBuilder.hs fmtArgs, singleParameter), which
 * PostgreSQL refuses (22021) -- after the function is found (Plan.hs
 * findProc, PGRST202 first); never the argument cut at the NUL. */
START_TEST(nul_in_function_arguments)
{
    pgrest_error err = {0};
    expect_nul_refused(run("GET", "/rpc/add?a=1%00", NULL, NULL, &err), &err, "GET arg");
    expect_nul_refused(run("GET", "/rpc/sum_all?v=1&v=%002", NULL, NULL, &err), &err,
                       "VARIADIC arg");
    /* the last of a repeated name is the argument */
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(run("GET", "/rpc/add?a=%00&a=1", NULL, NULL, &err), PGREST_OK);
    memset(&err, 0, sizeof err);
    ck_assert_int_ne(run("GET", "/rpc/add?nope=%00", NULL, NULL, &err), PGREST_OK);
    ck_assert_str_eq(err.code, "PGRST202");
    expect_nul_refused(run_body("/rpc/add", "application/x-www-form-urlencoded", "a=1%00", 6,
                                &err), &err, "form arg");
    expect_nul_refused(run_body("/rpc/add", "application/x-www-form-urlencoded", "a=1\0", 4,
                                &err), &err, "raw NUL in a form arg");
    memset(&err, 0, sizeof err);
    ck_assert_int_ne(run_body("/rpc/add", "application/x-www-form-urlencoded", "nope=%00", 8,
                              &err), PGREST_OK);
    ck_assert_str_eq(err.code, "PGRST202");
    /* a raw text/plain body for a single unnamed text param: test_hostile.py */
}
END_TEST

/* ?columns= sends the JSON body unparsed (Payload.hs RawJSON): a NUL byte
 * in it is PostgreSQL's 22021 once planned -- not the body before it
 * inserted or passed, and not json-c's view of the cut body. */
START_TEST(nul_in_a_raw_columns_body)
{
    pgrest_error err = {0};
    static const char row[] = "{\"name\":\"a\"}\0zz";
    expect_nul_refused(run_body("/artists?columns=name", "application/json", row,
                                sizeof row - 1, &err), &err, "insert");
    static const char rows[] = "[{\"name\":\"a\0b\"}]";
    expect_nul_refused(run_body("/artists?columns=name", "application/json", rows,
                                sizeof rows - 1, &err), &err, "insert, NUL in a string");
    static const char args[] = "{\"a\":1}\0x";
    expect_nul_refused(run_body("/rpc/add?columns=a", "application/json", args,
                                sizeof args - 1, &err), &err, "call");
    static const char doc[] = "{\"a\":\"\0\"}";
    expect_nul_refused(run_body("/rpc/add?columns=a", "application/json", doc,
                                sizeof doc - 1, &err), &err, "call, NUL in a string");
    /* planning errors come first */
    memset(&err, 0, sizeof err);
    ck_assert_int_ne(run_body("/nope?columns=name", "application/json", row, sizeof row - 1,
                              &err), PGREST_OK);
    ck_assert_str_eq(err.code, "PGRST205");
    memset(&err, 0, sizeof err);
    ck_assert_int_ne(run_body("/rpc/add?columns=nope", "application/json", args,
                              sizeof args - 1, &err), PGREST_OK);
    ck_assert_str_eq(err.code, "PGRST202");
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(run_body("/artists?columns=name", "application/json", row, 12, &err),
                     PGREST_OK);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hostile_request");
    TCase *tc = tcase_create("hostile_request");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, paths_outside_the_resource_shapes);
    tcase_add_test(tc, paths_of_the_resource_shapes);
    tcase_add_test(tc, invalid_utf8_echoed_in_errors);
    tcase_add_test(tc, path_segment_decoded_leniently);
    tcase_add_test(tc, call_body_keys_come_from_the_parse_stage);
    tcase_add_test(tc, nul_in_function_arguments);
    tcase_add_test(tc, nul_in_a_raw_columns_body);
    suite_add_tcase(s, tc);
    return check_run(s);
}
