/* Role and function settings applied per request (PostgREST
 * Config/Database.hs queryRoleSettings, Query/PreQuery.hs txVarQuery,
 * MainTx.hs planIsoLvl; ref/transactions "Isolation Level" and "Hoisted
 * Function Settings"): ALTER ROLE ... SET of the impersonated role, the
 * role's default_transaction_isolation as the transaction's isolation
 * level, a function's own isolation level winning over the role's, and
 * db-hoisted-tx-settings. */
#include <check.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "harness.h"

/* HS256 with the harness's jwt-secret, payload {"role":"web_user"}. */
#define WEB_USER_BEARER                                                        \
    "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoid2ViX3VzZXIifQ." \
    "6wrCou4-1o3Bp-OORQWhFf6FJwmF255Bv1kepHf4-BU"

static PGconn *admin;

static void exec_admin(const char *sql)
{
    harness_admin_exec(admin, sql);
}

static void setup(void)
{
    admin = harness_admin_connect();
    exec_admin(
        "CREATE OR REPLACE FUNCTION api.rs_settings() RETURNS json LANGUAGE sql AS $$"
        " SELECT json_build_object('statement_timeout', current_setting('statement_timeout'),"
        " 'work_mem', current_setting('work_mem'),"
        " 'iso', current_setting('transaction_isolation')) $$");
    exec_admin("CREATE OR REPLACE FUNCTION api.rs_settings_rr() RETURNS json LANGUAGE sql AS $$"
               " SELECT api.rs_settings() $$");
    exec_admin("ALTER FUNCTION api.rs_settings_rr() SET default_transaction_isolation = 'repeatable read'");
    exec_admin("CREATE OR REPLACE FUNCTION api.rs_sleep(s float8) RETURNS text LANGUAGE sql AS $$"
               " SELECT pg_sleep(s)::text || current_setting('statement_timeout') $$");
    exec_admin("CREATE OR REPLACE FUNCTION api.rs_hoisted() RETURNS text LANGUAGE sql AS $$"
               " SELECT current_setting('statement_timeout') || ' ' || current_setting('work_mem') $$");
    exec_admin("ALTER FUNCTION api.rs_hoisted() SET statement_timeout = '7s'");
    exec_admin("ALTER FUNCTION api.rs_hoisted() SET work_mem = '3MB'");
    exec_admin("GRANT EXECUTE ON FUNCTION api.rs_settings(), api.rs_settings_rr(),"
               " api.rs_sleep(float8), api.rs_hoisted() TO web_anon, web_user");
    /* the pre-request function runs after the settings statement and
     * before the call: it reports the transaction's statement_timeout */
    exec_admin("CREATE OR REPLACE FUNCTION api.rs_pre() RETURNS void LANGUAGE sql AS $$"
               " SELECT set_config('response.headers', json_build_array(json_build_object("
               "'X-Timeout', current_setting('statement_timeout')))::text, true) $$");
    exec_admin("GRANT EXECUTE ON FUNCTION api.rs_pre() TO web_anon, web_user");
}

static void teardown(void)
{
    char sql[256];
    snprintf(sql, sizeof sql, "ALTER ROLE web_anon IN DATABASE %s RESET ALL", PQdb(admin));
    exec_admin(sql);
    exec_admin("ALTER ROLE web_anon IN DATABASE postgres RESET ALL");
    exec_admin("ALTER ROLE web_anon RESET ALL");
    exec_admin("ALTER ROLE web_user RESET ALL");
    exec_admin("ALTER FUNCTION api.rs_sleep(float8) RESET ALL");
    exec_admin("DROP FUNCTION api.rs_settings_rr(), api.rs_settings(),"
               " api.rs_sleep(float8), api.rs_hoisted()");
    exec_admin("DROP FUNCTION api.rs_pre()");
    PQfinish(admin);
}

static void call(pgrest_ctx *ctx, const char *fn, const char *query,
                 const char *bearer, test_response *r)
{
    const char *h[] = {"Authorization", bearer, NULL};
    char path[64];
    snprintf(path, sizeof path, "/rpc/%s", fn);
    harness_request(ctx, "GET", path, query, bearer ? h : NULL, NULL, r);
}

static void expect_body(pgrest_ctx *ctx, const char *fn, const char *bearer,
                        const char *want)
{
    test_response r;
    call(ctx, fn, NULL, bearer, &r);
    ck_assert_msg(r.status == 200 && strcmp(r.body, want) == 0,
                  "%s: want 200 %s, got %d %s", fn, want, r.status, r.body);
    harness_free(&r);
}

START_TEST(role_settings_apply_to_the_role_only)
{
    exec_admin("ALTER ROLE web_anon SET statement_timeout = '4s'");
    exec_admin("ALTER ROLE web_anon SET work_mem = '5MB'");
    pgrest_ctx *ctx = harness_ctx(NULL);
    expect_body(ctx, "rs_settings", NULL,
                "{\"statement_timeout\" : \"4s\", \"work_mem\" : \"5MB\", \"iso\" : \"read committed\"}");
    /* web_user has none: the server defaults */
    expect_body(ctx, "rs_settings", WEB_USER_BEARER,
                "{\"statement_timeout\" : \"0\", \"work_mem\" : \"4MB\", \"iso\" : \"read committed\"}");
    pgrest_ctx_free(ctx);
}
END_TEST

/* ALTER ROLE ... IN DATABASE of this database wins over ALTER ROLE ...
 * SET, another database's is ignored (what PostgreSQL gives the role at
 * login; PostgREST itself reads only the latter, see introspect.c). */
START_TEST(role_settings_in_database)
{
    char sql[256];
    exec_admin("ALTER ROLE web_anon SET work_mem = '5MB'");
    exec_admin("ALTER ROLE web_anon SET statement_timeout = '4s'");
    snprintf(sql, sizeof sql, "ALTER ROLE web_anon IN DATABASE %s SET work_mem = '6MB'",
             PQdb(admin));
    exec_admin(sql);
    exec_admin("ALTER ROLE web_anon IN DATABASE postgres SET statement_timeout = '9s'");
    pgrest_ctx *ctx = harness_ctx(NULL);
    expect_body(ctx, "rs_settings", NULL,
                "{\"statement_timeout\" : \"4s\", \"work_mem\" : \"6MB\", \"iso\" : \"read committed\"}");
    pgrest_ctx_free(ctx);
}
END_TEST

START_TEST(role_statement_timeout_cancels_slow_request)
{
    exec_admin("ALTER ROLE web_anon SET statement_timeout = '50ms'");
    pgrest_ctx *ctx = harness_ctx(NULL);
    test_response r;
    call(ctx, "rs_sleep", "s=0.5", NULL, &r);
    ck_assert_int_eq(r.status, 500);
    ck_assert_msg(strstr(r.body, "\"code\":\"57014\"") != NULL, "%s", r.body);
    harness_free(&r);
    call(ctx, "rs_sleep", "s=0", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "\"50ms\"");
    harness_free(&r);
    pgrest_ctx_free(ctx);
}
END_TEST

/* Settings are read on every schema cache load (PostgREST reads them with
 * the in-database config). */
START_TEST(role_settings_follow_schema_reload)
{
    pgrest_ctx *ctx = harness_ctx(NULL);
    expect_body(ctx, "rs_settings", NULL,
                "{\"statement_timeout\" : \"0\", \"work_mem\" : \"4MB\", \"iso\" : \"read committed\"}");
    exec_admin("ALTER ROLE web_anon SET statement_timeout = '3s'");
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_load_schema(ctx, &err), PGREST_OK);
    expect_body(ctx, "rs_settings", NULL,
                "{\"statement_timeout\" : \"3s\", \"work_mem\" : \"4MB\", \"iso\" : \"read committed\"}");
    pgrest_ctx_free(ctx);
}
END_TEST

START_TEST(role_isolation_level)
{
    exec_admin("ALTER ROLE web_user SET default_transaction_isolation = 'serializable'");
    pgrest_ctx *ctx = harness_ctx(NULL);
    expect_body(ctx, "rs_settings", WEB_USER_BEARER,
                "{\"statement_timeout\" : \"0\", \"work_mem\" : \"4MB\", \"iso\" : \"serializable\"}");
    /* the function's own level wins over the role's */
    expect_body(ctx, "rs_settings_rr", WEB_USER_BEARER,
                "{\"statement_timeout\" : \"0\", \"work_mem\" : \"4MB\", \"iso\" : \"repeatable read\"}");
    /* and applies to roles without one */
    expect_body(ctx, "rs_settings_rr", NULL,
                "{\"statement_timeout\" : \"0\", \"work_mem\" : \"4MB\", \"iso\" : \"repeatable read\"}");
    /* reads of tables too */
    test_response r;
    const char *h[] = {"Authorization", WEB_USER_BEARER, NULL};
    harness_request(ctx, "GET", "/artists", "select=id&limit=1", h, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    harness_free(&r);
    pgrest_ctx_free(ctx);
}
END_TEST

/* db-config = false: PostgREST reads no role settings. */
START_TEST(role_settings_need_db_config)
{
    exec_admin("ALTER ROLE web_anon SET work_mem = '5MB'");
    const char *opts[] = {"db-config", "false", NULL};
    pgrest_ctx *ctx = harness_ctx(opts);
    expect_body(ctx, "rs_settings", NULL,
                "{\"statement_timeout\" : \"0\", \"work_mem\" : \"4MB\", \"iso\" : \"read committed\"}");
    pgrest_ctx_free(ctx);
}
END_TEST

/* Only user-settable settings: a superuser-only one (log_statement) set
 * on the role would make every request fail, PostgREST leaves it out. */
START_TEST(role_settings_skip_superuser_only)
{
    exec_admin("ALTER ROLE web_anon SET log_statement = 'all'");
    exec_admin("ALTER ROLE web_anon SET work_mem = '5MB'");
    pgrest_ctx *ctx = harness_ctx(NULL);
    expect_body(ctx, "rs_settings", NULL,
                "{\"statement_timeout\" : \"0\", \"work_mem\" : \"5MB\", \"iso\" : \"read committed\"}");
    pgrest_ctx_free(ctx);
}
END_TEST

/* The transaction's statement_timeout when the pre-request function ran,
 * i.e. after the settings statement. */
static void expect_tx_timeout(pgrest_ctx *ctx, const char *want)
{
    test_response r;
    call(ctx, "rs_hoisted", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    const char *got = harness_header(&r, "X-Timeout");
    ck_assert_msg(got != NULL && strcmp(got, want) == 0, "X-Timeout: want %s, got %s",
                  want, got ? got : "(none)");
    harness_free(&r);
}

START_TEST(function_settings_hoisted)
{
    /* default list: statement_timeout hoisted, work_mem not */
    const char *dflt[] = {"db-pre-request", "api.rs_pre", NULL};
    pgrest_ctx *ctx = harness_ctx(dflt);
    expect_tx_timeout(ctx, "7s");
    /* inside the function both SETs apply */
    expect_body(ctx, "rs_hoisted", NULL, "\"7s 3MB\"");
    pgrest_ctx_free(ctx);
    /* a list without it: the transaction keeps the server's value */
    const char *none[] = {"db-pre-request", "api.rs_pre", "db-hoisted-tx-settings",
                          "work_mem", NULL};
    ctx = harness_ctx(none);
    expect_tx_timeout(ctx, "0");
    pgrest_ctx_free(ctx);
    /* entries are regular expressions over "name=value" (PostgREST
     * funcsSqlQuery: setting ~ ANY(...)) */
    const char *regex[] = {"db-pre-request", "api.rs_pre", "db-hoisted-tx-settings",
                           "^statement_.*=7s$", NULL};
    ctx = harness_ctx(regex);
    expect_tx_timeout(ctx, "7s");
    pgrest_ctx_free(ctx);
}
END_TEST

/* Hoisting decides whether the function's statement_timeout cancels the
 * call: set inside the function only, it comes too late for the running
 * statement. */
START_TEST(function_statement_timeout_hoisted)
{
    exec_admin("ALTER FUNCTION api.rs_sleep(float8) SET statement_timeout = '50ms'");
    pgrest_ctx *ctx = harness_ctx(NULL);
    test_response r;
    call(ctx, "rs_sleep", "s=0.5", NULL, &r);
    ck_assert_msg(r.status == 500 && strstr(r.body, "57014") != NULL, "%d %s", r.status, r.body);
    harness_free(&r);
    pgrest_ctx_free(ctx);
    const char *opts[] = {"db-hoisted-tx-settings", "work_mem", NULL};
    ctx = harness_ctx(opts);
    call(ctx, "rs_sleep", "s=0.3", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "\"50ms\"");
    harness_free(&r);
    pgrest_ctx_free(ctx);
    exec_admin("ALTER FUNCTION api.rs_sleep(float8) RESET ALL");
}
END_TEST

int main(void)
{
    harness_db_uri();
    Suite *s = suite_create("role_settings");
    TCase *tc = tcase_create("role_settings");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, role_settings_apply_to_the_role_only);
    tcase_add_test(tc, role_settings_in_database);
    tcase_add_test(tc, role_statement_timeout_cancels_slow_request);
    tcase_add_test(tc, role_settings_follow_schema_reload);
    tcase_add_test(tc, role_isolation_level);
    tcase_add_test(tc, role_settings_need_db_config);
    tcase_add_test(tc, role_settings_skip_superuser_only);
    tcase_add_test(tc, function_settings_hoisted);
    tcase_add_test(tc, function_statement_timeout_hoisted);
    suite_add_tcase(s, tc);
    return check_run(s);
}
