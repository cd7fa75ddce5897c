/* In-database configuration (PostgREST ref/configuration "In-Database
 * Configuration"): pgrst.* settings of the authenticator role, the
 * database-specific ones winning, and a db-pre-config function, read on
 * every schema cache load; db-config=false ignores them. */
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
    PGresult *r = PQexec(admin, sql);
    ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK, "%s: %s", sql, PQerrorMessage(admin));
    PQclear(r);
}

static void setup(void)
{
    const char *uri = getenv("PGREST_TEST_ADMIN_URI");
    if (uri == NULL || *uri == '\0') {
        fprintf(stderr, "PGREST_TEST_ADMIN_URI not set: skipping\n");
        exit(77);
    }
    admin = PQconnectdb(uri);
    ck_assert_int_eq(PQstatus(admin), CONNECTION_OK);
}

static void teardown(void)
{
    char sql[256];
    snprintf(sql, sizeof sql, "ALTER ROLE authenticator IN DATABASE %s RESET ALL", PQdb(admin));
    exec_admin(sql);
    exec_admin("ALTER ROLE authenticator RESET ALL");
    exec_admin("DROP FUNCTION IF EXISTS public.pgrest_pre_config()");
    PQfinish(admin);
}

static int rows_of_artists(pgrest_ctx *ctx)
{
    test_response r;
    harness_request(ctx, "GET", "/artists", "select=id", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    int n = 0;
    for (const char *p = r.body; (p = strstr(p, "\"id\"")) != NULL; p++)
        n++;
    harness_free(&r);
    return n;
}

START_TEST(role_settings_database_specific_wins)
{
    exec_admin("ALTER ROLE authenticator SET pgrst.db_max_rows = '2'");
    char sql[256];
    snprintf(sql, sizeof sql, "ALTER ROLE authenticator IN DATABASE %s SET pgrst.db_max_rows = '1'",
             PQdb(admin));
    exec_admin(sql);
    pgrest_ctx *ctx = harness_ctx(NULL);
    ck_assert_int_eq(rows_of_artists(ctx), 1);
    pgrest_ctx_free(ctx);
    const char *off[] = {"db-config", "false", NULL};
    ctx = harness_ctx(off);
    ck_assert_int_eq(rows_of_artists(ctx), 3);
    pgrest_ctx_free(ctx);
}
END_TEST

START_TEST(pre_config_function_and_reload)
{
    exec_admin("CREATE FUNCTION public.pgrest_pre_config() RETURNS void LANGUAGE sql AS "
               "$$ SELECT set_config('pgrst.db_max_rows', '2', true) $$");
    const char *opts[] = {"db-pre-config", "public.pgrest_pre_config", NULL};
    pgrest_ctx *ctx = harness_ctx(opts);
    ck_assert_int_eq(rows_of_artists(ctx), 2);
    /* a role setting outranks the pre-config function; seen on reload */
    exec_admin("ALTER ROLE authenticator SET pgrst.db_max_rows = '1'");
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_load_schema(ctx, &err), PGREST_OK);
    ck_assert_int_eq(rows_of_artists(ctx), 1);
    pgrest_ctx_free(ctx);
}
END_TEST

int main(void)
{
    harness_db_uri();
    Suite *s = suite_create("db_config");
    TCase *tc = tcase_create("db_config");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, role_settings_database_specific_wins);
    tcase_add_test(tc, pre_config_function_and_reload);
    suite_add_tcase(s, tc);
    return check_run(s);
}
