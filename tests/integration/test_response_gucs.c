/* Status and headers a function sets (PostgREST Response.hs
 * overrideStatusHeaders with Response/GucHeader.hs; Error.hs
 * parseRaisePGRST for RAISE SQLSTATE 'PGRST'): the response.headers GUC
 * and the RAISE texts are read with aeson (strict JSON), response.status
 * with Data.Text.Read.decimal, headers they name replace PostgREST's own
 * and repeated ones all go out. */
#include <check.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check_run.h"
#include "harness.h"

static PGconn *admin;

static void exec_admin(const char *sql)
{
    harness_admin_exec(admin, sql);
}

static void setup(void)
{
    admin = harness_admin_connect();
    exec_admin("CREATE OR REPLACE FUNCTION api.guc_probe(h text DEFAULT NULL, s text DEFAULT NULL)"
               " RETURNS json LANGUAGE plpgsql AS $$ BEGIN"
               " IF h IS NOT NULL THEN PERFORM set_config('response.headers', h, true); END IF;"
               " IF s IS NOT NULL THEN PERFORM set_config('response.status', s, true); END IF;"
               " RETURN '{\"ok\":true}'::json; END $$");
    exec_admin("CREATE OR REPLACE FUNCTION api.raise_probe(m text, d text) RETURNS void"
               " LANGUAGE plpgsql AS $$ BEGIN"
               " RAISE SQLSTATE 'PGRST' USING MESSAGE = m, DETAIL = d; END $$");
    exec_admin("CREATE OR REPLACE FUNCTION api.raise_state(c text, m text) RETURNS void"
               " LANGUAGE plpgsql AS $$ BEGIN"
               " RAISE EXCEPTION USING ERRCODE = c, MESSAGE = m; END $$");
    exec_admin("GRANT EXECUTE ON FUNCTION api.guc_probe(text, text), api.raise_probe(text, text),"
               " api.raise_state(text, text) TO web_anon");
}

static void teardown(void)
{
    exec_admin("DROP FUNCTION api.guc_probe(text, text), api.raise_probe(text, text),"
               " api.raise_state(text, text)");
    PQfinish(admin);
}

static const char *const json_body[] = {"Content-Type", "application/json", NULL};

/* POST /rpc/NAME with {"KEY1": V1, "KEY2": V2} (V2 may be NULL). */
static void call(pgrest_ctx *ctx, const char *name, const char *k1, const char *v1,
                 const char *k2, const char *v2, test_response *r)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, k1, json_object_new_string(v1));
    if (v2 != NULL)
        json_object_object_add(o, k2, json_object_new_string(v2));
    char path[64];
    snprintf(path, sizeof path, "/rpc/%s", name);
    harness_request(ctx, "POST", path, NULL, json_body, json_object_to_json_string(o), r);
    json_object_put(o);
}

static size_t count_header(const test_response *r, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_headers; i++)
        n += strcasecmp(r->headers[i][0], name) == 0;
    return n;
}

static void expect_error(const test_response *r, int status, const char *code)
{
    char want[32];
    snprintf(want, sizeof want, "\"code\":\"%s\"", code);
    ck_assert_msg(r->status == status && strstr(r->body, want) != NULL,
                  "want %d %s, got %d %s", status, code, r->status, r->body);
}

/* aeson's eitherDecode takes one JSON value and nothing else: json-c's
 * leniencies (text after it, single quotes, trailing commas, comments)
 * are PGRST111 as the other malformed values are. */
START_TEST(guc_headers_are_strict_json)
{
    static const char *const bad[] = {
        "[{\"X-A\":\"b\"}] junk", "[{'X-A':'b'}]", "[{\"X-A\":\"b\"},]",
        "[{\"X-A\":\"b\"}]/*c*/", "{\"X-A\":\"b\"}", "[{\"X-A\":\"b\",\"X-B\":\"c\"}]",
        "[{\"X-A\":1}]", "[\"X-A\"]", "null", "5", NULL};
    pgrest_ctx *ctx = harness_ctx(NULL);
    test_response r;
    for (size_t i = 0; bad[i] != NULL; i++) {
        call(ctx, "guc_probe", "h", bad[i], NULL, NULL, &r);
        ck_assert_msg(r.status == 500 && strstr(r.body, "\"code\":\"PGRST111\"") != NULL,
                      "%s: got %d %s", bad[i], r.status, r.body);
        ck_assert_ptr_null(harness_header(&r, "X-A"));
        harness_free(&r);
    }
    /* whitespace around the array is JSON */
    call(ctx, "guc_probe", "h", " \n[{\"X-A\":\"b\"}]\t ", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(harness_header(&r, "X-A"), "b");
    harness_free(&r);
    /* an empty text is no setting (Statements.hs nullif(..., '')) */
    call(ctx, "guc_probe", "h", "", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    harness_free(&r);
    pgrest_ctx_free(ctx);
}
END_TEST

/* addHeadersIfNotIncluded: a name the GUC sets (any case) replaces
 * PostgREST's header of that name; every GUC entry is kept, repeated
 * names and empty values included. */
START_TEST(guc_headers_replace_and_repeat)
{
    pgrest_ctx *ctx = harness_ctx(NULL);
    test_response r;
    call(ctx, "guc_probe", "h",
         "[{\"content-type\":\"text/plain\"},{\"Set-Cookie\":\"a=1\"},"
         "{\"Set-Cookie\":\"b=2; Path=/\"},{\"X-Empty\":\"\"},{\"content-range\":\"x\"}]",
         NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_uint_eq(count_header(&r, "Content-Type"), 1);
    ck_assert_str_eq(harness_header(&r, "Content-Type"), "text/plain");
    ck_assert_uint_eq(count_header(&r, "Content-Range"), 1);
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "x");
    ck_assert_uint_eq(count_header(&r, "Set-Cookie"), 2);
    ck_assert_str_eq(harness_header(&r, "X-Empty"), "");
    /* the body is still the function's JSON */
    ck_assert_str_eq(r.body, "{\"ok\":true}");
    harness_free(&r);
    pgrest_ctx_free(ctx);
}
END_TEST

/* decodeGucStatus: Data.Text.Read.decimal reads the leading digits and
 * ignores the rest; no digits first is PGRST112. */
START_TEST(guc_status_leading_digits)
{
    static const struct {
        const char *value;
        int status;
    } cases[] = {{"201", 201}, {"202abc", 202}, {"418 teapot", 418}, {"299", 299}};
    static const char *const bad[] = {" 201", "+201", "-1", "abc", "2e2x", NULL};
    pgrest_ctx *ctx = harness_ctx(NULL);
    test_response r;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        call(ctx, "guc_probe", "s", cases[i].value, NULL, NULL, &r);
        ck_assert_msg(r.status == cases[i].status, "%s: got %d %s", cases[i].value, r.status,
                      r.body);
        harness_free(&r);
    }
    for (size_t i = 0; bad[i] != NULL; i++) {
        call(ctx, "guc_probe", "s", bad[i], NULL, NULL, &r);
        expect_error(&r, 500, "PGRST112");
        harness_free(&r);
    }
    pgrest_ctx_free(ctx);
}
END_TEST

/* parseRaisePGRST reads MESSAGE and DETAIL with aeson's decodeStrict. */
START_TEST(raise_texts_are_strict_json)
{
    pgrest_ctx *ctx = harness_ctx(NULL);
    test_response r;
    call(ctx, "raise_probe", "m", "{\"code\":\"X1\",\"message\":\"m\"} trailing", "d",
         "{\"status\":409,\"headers\":{}}", &r);
    expect_error(&r, 500, "PGRST121");
    ck_assert_ptr_nonnull(strstr(r.body, "Invalid JSON value for MESSAGE"));
    harness_free(&r);
    call(ctx, "raise_probe", "m", "{\"code\":\"X1\",\"message\":\"m\"}", "d",
         "{'status':409,'headers':{}}", &r);
    expect_error(&r, 500, "PGRST121");
    ck_assert_ptr_nonnull(strstr(r.body, "Invalid JSON value for DETAIL"));
    harness_free(&r);
    call(ctx, "raise_probe", "m", " {\"code\":\"X1\",\"message\":\"m\"} ", "d",
         "{\"status\":409,\"headers\":{\"X-R\":\"1\"}}\n", &r);
    expect_error(&r, 409, "X1");
    ck_assert_str_eq(harness_header(&r, "X-R"), "1");
    harness_free(&r);
    pgrest_ctx_free(ctx);
}
END_TEST

/* Error.hs: PTxyz is HTTP.mkStatus xyz message; RAISE 'PGRST' is mkStatus
 * status status_text, or toEnum status without one; Response.hs's
 * response.status is toEnum. Only mkStatus names its own phrase. */
START_TEST(reason_phrases_as_mkstatus)
{
    pgrest_ctx *ctx = harness_ctx(NULL);
    test_response r;
    call(ctx, "raise_state", "c", "PT418", "m", "short and stout", &r);
    ck_assert_int_eq(r.status, 418);
    ck_assert_str_eq(r.reason, "short and stout");
    harness_free(&r);
    call(ctx, "raise_state", "c", "PT409", "m", "line\r\nX-Evil: 1\tend", &r);
    ck_assert_int_eq(r.status, 409);
    ck_assert_str_eq(r.reason, "line  X-Evil: 1 end");
    harness_free(&r);
    call(ctx, "raise_state", "c", "PT0AB", "m", "no status", &r);
    ck_assert_int_eq(r.status, 500);
    ck_assert_ptr_null(r.reason);
    harness_free(&r);
    call(ctx, "raise_state", "c", "P0001", "m", "plain", &r);
    ck_assert_int_eq(r.status, 400);
    ck_assert_ptr_null(r.reason);
    harness_free(&r);
    call(ctx, "raise_probe", "m", "{\"code\":\"PT418\",\"message\":\"m\"}", "d",
         "{\"status\":332,\"status_text\":\"My Custom Status\",\"headers\":{}}", &r);
    ck_assert_int_eq(r.status, 332);
    ck_assert_str_eq(r.reason, "My Custom Status");
    harness_free(&r);
    call(ctx, "raise_probe", "m", "{\"code\":\"PT418\",\"message\":\"m\"}", "d",
         "{\"status\":404,\"headers\":{}}", &r);
    ck_assert_int_eq(r.status, 404);
    ck_assert_ptr_null(r.reason);
    harness_free(&r);
    call(ctx, "guc_probe", "s", "418", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 418);
    ck_assert_ptr_null(r.reason);
    harness_free(&r);
    pgrest_ctx_free(ctx);
}
END_TEST

int main(void)
{
    harness_db_uri();
    Suite *s = suite_create("response_gucs");
    TCase *tc = tcase_create("response_gucs");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, guc_headers_are_strict_json);
    tcase_add_test(tc, guc_headers_replace_and_repeat);
    tcase_add_test(tc, guc_status_leading_digits);
    tcase_add_test(tc, raise_texts_are_strict_json);
    tcase_add_test(tc, reason_phrases_as_mkstatus);
    suite_add_tcase(s, tc);
    return check_run(s);
}
