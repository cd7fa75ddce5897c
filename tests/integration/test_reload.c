/* Schema cache reloads without a restart (PostgREST ref/schema_cache,
 * ref/listener): NOTIFY on db-channel and the library call; a request
 * planned before a reload keeps working with the cache it started with. */
#include <check.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_run.h"
#include "harness.h"

static pgrest_ctx *ctx;
static PGconn *admin;

static void exec_admin(const char *sql)
{
    PGresult *r = PQexec(admin, sql);
    ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK, "%s: %s", sql,
                  PQerrorMessage(admin));
    PQclear(r);
}

static void setup(void)
{
    const char *uri = getenv("PGREST_TEST_ADMIN_URI");
    if (uri == NULL)
        uri = harness_db_uri();
    admin = PQconnectdb(uri);
    ck_assert_int_eq(PQstatus(admin), CONNECTION_OK);
    ctx = harness_ctx(NULL);
}

static void teardown(void)
{
    pgrest_ctx_free(ctx);
    PQfinish(admin);
}

static int status_of(const char *path)
{
    test_response r;
    harness_request(ctx, "GET", path, "", NULL, NULL, &r);
    int st = r.status;
    harness_free(&r);
    return st;
}

/* Polls for up to 5 s: the listener reloads asynchronously. */
static int wait_status(const char *path, int want)
{
    int st = 0;
    for (int i = 0; i < 50 && (st = status_of(path)) != want; i++) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return st;
}

START_TEST(notify_reloads_schema)
{
    pgrest_error err = {0};
    exec_admin("DROP TABLE IF EXISTS api.reload_probe");
    ck_assert_int_eq(pgrest_ctx_start_listener(ctx, NULL, NULL, &err), PGREST_OK);
    ck_assert_int_eq(status_of("/reload_probe"), 404);
    exec_admin("CREATE TABLE api.reload_probe(id int)");
    exec_admin("GRANT SELECT ON api.reload_probe TO web_anon");
    exec_admin("NOTIFY pgrst, 'reload schema'");
    ck_assert_int_eq(wait_status("/reload_probe", 200), 200);
    exec_admin("DROP TABLE api.reload_probe");
    exec_admin("NOTIFY pgrst");
    ck_assert_int_eq(wait_status("/reload_probe", 404), 404);
    pgrest_ctx_stop_listener(ctx);
}
END_TEST

START_TEST(other_payloads_are_ignored)
{
    pgrest_error err = {0};
    exec_admin("DROP TABLE IF EXISTS api.reload_probe2");
    ck_assert_int_eq(pgrest_ctx_start_listener(ctx, NULL, NULL, &err), PGREST_OK);
    exec_admin("CREATE TABLE api.reload_probe2(id int)");
    exec_admin("GRANT SELECT ON api.reload_probe2 TO web_anon");
    exec_admin("NOTIFY pgrst, 'something else'");
    struct timespec ts = {0, 500 * 1000 * 1000};
    nanosleep(&ts, NULL);
    ck_assert_int_eq(status_of("/reload_probe2"), 404);
    ck_assert_int_eq(pgrest_ctx_load_schema(ctx, &err), PGREST_OK);
    ck_assert_int_eq(status_of("/reload_probe2"), 200);
    exec_admin("DROP TABLE api.reload_probe2");
}
END_TEST

START_TEST(plan_keeps_its_cache_across_reload)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = pgrest_request_new(a, "GET", "/artists", "select=id&id=eq.1");
    pgrest_api_request *api;
    pgrest_query_plan *plan;
    pgrest_statements *st;
    pgrest_error err = {0};
    ck_assert_int_eq(harness_authenticate(ctx, a, req, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_parse_request(ctx, a, req, &api, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_plan(ctx, a, api, &plan, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_load_schema(ctx, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_load_schema(ctx, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_emit_sql(ctx, a, plan, &st, &err), PGREST_OK);
    PGconn *pg = PQconnectdb(harness_db_uri());
    pgrest_response *resp;
    ck_assert_int_eq(pgrest_execute(ctx, a, st, pg, &resp, &err), PGREST_OK);
    size_t len;
    const char *body = pgrest_response_body(resp, &len);
    ck_assert_str_eq(body, "[{\"id\":1}]");
    PQfinish(pg);
    pgrest_arena_free(a);
}
END_TEST

int main(void)
{
    harness_db_uri();
    Suite *s = suite_create("reload");
    TCase *tc = tcase_create("reload");
    tcase_set_timeout(tc, 30);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, notify_reloads_schema);
    tcase_add_test(tc, other_payloads_are_ignored);
    tcase_add_test(tc, plan_keeps_its_cache_across_reload);
    suite_add_tcase(s, tc);
    return check_run(s);
}
