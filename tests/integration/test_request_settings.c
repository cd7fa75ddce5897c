/* The transaction settings every request gets (PostgREST
 * Query/PreQuery.hs txVarQuery; ref/transactions "Transaction-Scoped
 * Settings"): search_path, role, request.jwt.claims, request.method,
 * request.path, request.headers, request.cookies and app settings, all
 * visible to the called function and to the pre-request function, and
 * set again on every request: what user code set at session scope on a
 * pooled connection does not reach the next request's view of them.
 * bench/README.md (2026-12-02, item 5) explains why none of them may be
 * skipped or set once per connection; these cases fail if one is. */
#include <check.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "harness.h"

static PGconn *admin;

static void exec_admin(const char *sql)
{
    harness_admin_exec(admin, sql);
}

/* One text holding every setting, in a fixed order. */
#define SETTINGS_TEXT                                                          \
    "concat_ws(' | ', current_setting('search_path'), current_setting('role'),"  \
    " current_user, current_setting('request.method'),"                        \
    " current_setting('request.path'),"                                        \
    " current_setting('request.headers')::json->>'x-probe',"                   \
    " current_setting('request.cookies')::json->>'c',"                         \
    " current_setting('request.jwt.claims')::json->>'role',"                   \
    " current_setting('app.settings.probe', true))"

static void setup(void)
{
    admin = harness_admin_connect();
    exec_admin("CREATE OR REPLACE FUNCTION api.rq_settings() RETURNS text"
               " LANGUAGE sql VOLATILE AS $$ SELECT " SETTINGS_TEXT " $$");
    /* session scope (is_local false): outlives the transaction on the
     * pooled connection */
    exec_admin("CREATE OR REPLACE FUNCTION api.rq_leak() RETURNS text LANGUAGE sql VOLATILE AS $$"
               " SELECT set_config('search_path', 'pg_catalog', false)"
               " || set_config('request.method', 'LEAKED', false)"
               " || set_config('request.path', '/leaked', false)"
               " || set_config('request.headers', '{\"x-probe\":\"leaked\"}', false)"
               " || set_config('request.cookies', '{\"c\":\"leaked\"}', false)"
               " || set_config('request.jwt.claims', '{\"role\":\"leaked\"}', false)"
               " || set_config('app.settings.probe', 'leaked', false) $$");
    exec_admin("CREATE OR REPLACE FUNCTION api.rq_pre() RETURNS void LANGUAGE sql AS $$"
               " SELECT set_config('response.headers', json_build_array(json_build_object("
               "'X-Pre', " SETTINGS_TEXT "))::text, true) $$");
    exec_admin("GRANT EXECUTE ON FUNCTION api.rq_settings(), api.rq_leak(), api.rq_pre()"
               " TO web_anon, web_user");
}

static void teardown(void)
{
    exec_admin("DROP FUNCTION api.rq_settings(), api.rq_leak(), api.rq_pre()");
    PQfinish(admin);
}

static const char *const probe_headers[] = {
    "X-Probe", "probe-value", "Cookie", "c=1; d=2", "Content-Type", "application/json", NULL};

static void expect_settings(pgrest_ctx *ctx, const char *want)
{
    test_response r;
    harness_request(ctx, "POST", "/rpc/rq_settings", NULL, probe_headers, "{}", &r);
    ck_assert_msg(r.status == 200 && strcmp(r.body, want) == 0,
                  "want 200 %s, got %d %s", want, r.status, r.body);
    harness_free(&r);
}

#define EXPECTED_RPC                                                           \
    "\"\\\"api\\\", \\\"public\\\" | web_anon | web_anon | POST |"             \
    " /rpc/rq_settings | probe-value | 1 | web_anon | on\""

START_TEST(function_sees_every_setting)
{
    const char *opts[] = {"app.settings.probe", "on", NULL};
    pgrest_ctx *ctx = harness_ctx(opts);
    expect_settings(ctx, EXPECTED_RPC);
    pgrest_ctx_free(ctx);
}
END_TEST

/* The pre-request function runs after the settings statement: it sees
 * them all, on a table read as on a call. */
START_TEST(pre_request_sees_every_setting)
{
    const char *opts[] = {"app.settings.probe", "on", "db-pre-request", "api.rq_pre", NULL};
    pgrest_ctx *ctx = harness_ctx(opts);
    test_response r;
    harness_request(ctx, "GET", "/artists", "select=id&limit=1", probe_headers, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    const char *got = harness_header(&r, "X-Pre");
    const char *want =
        "\"api\", \"public\" | web_anon | web_anon | GET | /artists | probe-value | 1 | web_anon | on";
    ck_assert_msg(got != NULL && strcmp(got, want) == 0, "X-Pre: want %s, got %s", want,
                  got ? got : "(none)");
    harness_free(&r);
    pgrest_ctx_free(ctx);
}
END_TEST

/* One pooled connection: the second request runs where the first one
 * changed every setting at session scope, and still sees its own. */
START_TEST(session_scope_changes_do_not_reach_the_next_request)
{
    const char *opts[] = {"app.settings.probe", "on", "db-pool", "1", NULL};
    pgrest_ctx *ctx = harness_ctx(opts);
    expect_settings(ctx, EXPECTED_RPC);
    test_response r;
    harness_request(ctx, "POST", "/rpc/rq_leak", NULL, probe_headers, "{}", &r);
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.body);
    harness_free(&r);
    expect_settings(ctx, EXPECTED_RPC);
    /* a GET (read-only transaction) as well */
    harness_request(ctx, "POST", "/rpc/rq_leak", NULL, probe_headers, "{}", &r);
    harness_free(&r);
    harness_request(ctx, "GET", "/rpc/rq_settings", NULL, probe_headers, NULL, &r);
    const char *want = "\"\\\"api\\\", \\\"public\\\" | web_anon | web_anon | GET |"
                       " /rpc/rq_settings | probe-value | 1 | web_anon | on\"";
    ck_assert_msg(r.status == 200 && strcmp(r.body, want) == 0, "want 200 %s, got %d %s",
                  want, r.status, r.body);
    harness_free(&r);
    pgrest_ctx_free(ctx);
}
END_TEST

/* Without app settings, app.settings.probe is whatever the session has:
 * PostgREST sets only the configured ones. The role and claims follow
 * the JWT. */
START_TEST(settings_follow_the_request)
{
    pgrest_ctx *ctx = harness_ctx(NULL);
    const char *h[] = {"Authorization",
                       "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoid2ViX3VzZXIifQ."
                       "6wrCou4-1o3Bp-OORQWhFf6FJwmF255Bv1kepHf4-BU",
                       "X-Probe", "other", "Content-Type", "application/json", NULL};
    test_response r;
    harness_request(ctx, "POST", "/rpc/rq_settings", NULL, h, "{}", &r);
    const char *want = "\"\\\"api\\\", \\\"public\\\" | web_user | web_user | POST |"
                       " /rpc/rq_settings | other | web_user\"";
    ck_assert_msg(r.status == 200 && strcmp(r.body, want) == 0, "want 200 %s, got %d %s",
                  want, r.status, r.body);
    harness_free(&r);
    pgrest_ctx_free(ctx);
}
END_TEST

int main(void)
{
    harness_db_uri();
    Suite *s = suite_create("request_settings");
    TCase *tc = tcase_create("request_settings");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, function_sees_every_setting);
    tcase_add_test(tc, pre_request_sees_every_setting);
    tcase_add_test(tc, session_scope_changes_do_not_reach_the_next_request);
    tcase_add_test(tc, settings_follow_the_request);
    suite_add_tcase(s, tc);
    return check_run(s);
}
