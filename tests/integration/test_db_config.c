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
    harness_admin_exec(admin, sql);
}

static void setup(void)
{
    admin = harness_admin_connect();
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

typedef struct observed {
    int n;
    pgrest_event last_kind;
    char last[512];
} observed;

/* Counts the configuration reports only: schema cache loads and
 * connections are observed too. */
static void observer(void *arg, pgrest_event kind, const char *message)
{
    observed *o = arg;
    if (kind != PGREST_EVENT_CONFIG_RELOADED && kind != PGREST_EVENT_CONFIG_INVALID &&
        kind != PGREST_EVENT_CONFIG_READ_ERROR)
        return;
    o->n++;
    o->last_kind = kind;
    snprintf(o->last, sizeof o->last, "%s", message);
}

/* {"role":"web_user"} signed HS256 with the harness's jwt-secret */
#define WEB_USER_TOKEN "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoid2ViX3VzZXIifQ." \
                       "6wrCou4-1o3Bp-OORQWhFf6FJwmF255Bv1kepHf4-BU"

static int jwt_status(pgrest_ctx *ctx)
{
    const char *auth[] = {"Authorization", "Bearer " WEB_USER_TOKEN, NULL};
    test_response r;
    harness_request(ctx, "GET", "/artists", "select=id&id=eq.1", auth, NULL, &r);
    int status = r.status;
    harness_free(&r);
    return status;
}

/* readInDbConfig on reload: a valid change is applied, a removed setting
 * returns to the host's value, an invalid one keeps the previous
 * configuration ("Failed reloading config: ..."), as does a failing
 * pre-config function ("Failed to query database settings ..."). */
START_TEST(reload_applies_valid_and_keeps_previous_on_invalid)
{
    pgrest_ctx *ctx = harness_ctx(NULL);
    observed seen = {0};
    pgrest_ctx_set_observer(ctx, observer, &seen);
    pgrest_error err = {0};
    ck_assert_int_eq(rows_of_artists(ctx), 3);
    ck_assert_int_eq(jwt_status(ctx), 200);

    exec_admin("ALTER ROLE authenticator SET pgrst.db_max_rows = '1'");
    ck_assert_int_eq(pgrest_ctx_reload_config(ctx, NULL, NULL, 0, &err), PGREST_OK);
    ck_assert_int_eq(seen.last_kind, PGREST_EVENT_CONFIG_RELOADED);
    ck_assert_str_eq(seen.last, "Config reloaded");
    ck_assert_int_eq(rows_of_artists(ctx), 1);
    ck_assert_str_eq(pgrest_ctx_get(ctx, "db-max-rows"), "1");

    /* an invalid jwt-secret arriving from the database is not applied */
    exec_admin("ALTER ROLE authenticator SET pgrst.jwt_secret = 'short'");
    exec_admin("ALTER ROLE authenticator SET pgrst.db_max_rows = '2'");
    ck_assert_int_eq(pgrest_ctx_reload_config(ctx, NULL, NULL, 0, &err), PGREST_ERR_CONFIG);
    ck_assert_int_eq(seen.last_kind, PGREST_EVENT_CONFIG_INVALID);
    ck_assert_str_eq(seen.last, "Failed reloading config: "
                                "user error (The JWT secret must be at least 32 characters long.)");
    ck_assert_int_eq(jwt_status(ctx), 200);
    ck_assert_int_eq(rows_of_artists(ctx), 1);
    /* the schema cache loader reads it too, reports it and loads on */
    int before = seen.n;
    ck_assert_int_eq(pgrest_ctx_load_schema(ctx, &err), PGREST_OK);
    ck_assert_int_eq(seen.n, before + 1);
    ck_assert_int_eq(seen.last_kind, PGREST_EVENT_CONFIG_INVALID);
    ck_assert_int_eq(jwt_status(ctx), 200);

    /* fixed in the database: applied; removed: back to the host's value */
    exec_admin("ALTER ROLE authenticator RESET pgrst.jwt_secret");
    ck_assert_int_eq(pgrest_ctx_load_schema(ctx, &err), PGREST_OK);
    ck_assert_str_eq(seen.last, "Config reloaded");
    ck_assert_int_eq(rows_of_artists(ctx), 2);
    exec_admin("ALTER ROLE authenticator RESET pgrst.db_max_rows");
    ck_assert_int_eq(pgrest_ctx_reload_config(ctx, NULL, NULL, 0, &err), PGREST_OK);
    ck_assert_int_eq(rows_of_artists(ctx), 3);
    ck_assert_ptr_null(pgrest_ctx_get(ctx, "db-max-rows"));

    /* a failing pre-config function: reported, settings in force kept */
    exec_admin("ALTER ROLE authenticator SET pgrst.db_max_rows = '1'");
    ck_assert_int_eq(pgrest_ctx_reload_config(ctx, NULL, NULL, 0, &err), PGREST_OK);
    exec_admin("CREATE FUNCTION public.pgrest_pre_config() RETURNS void LANGUAGE sql AS "
               "$$ SELECT 1/0 $$");
    exec_admin("ALTER ROLE authenticator RESET pgrst.db_max_rows");
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-pre-config", "public.pgrest_pre_config", &err),
                     PGREST_OK);
    before = seen.n;
    ck_assert_int_eq(pgrest_ctx_reload_config(ctx, NULL, NULL, 0, &err), PGREST_OK);
    ck_assert_int_eq(seen.n, before + 2);
    ck_assert_int_eq(rows_of_artists(ctx), 1);
    pgrest_ctx_free(ctx);
}
END_TEST

/* Observations: the settings query failure comes first (checked through
 * its text), then "Config reloaded". */
static void record_all(void *arg, pgrest_event kind, const char *message)
{
    char *first = arg;
    if (kind == PGREST_EVENT_CONFIG_READ_ERROR && first[0] == '\0')
        snprintf(first, 512, "%s", message);
}

START_TEST(failing_pre_config_is_reported)
{
    exec_admin("CREATE FUNCTION public.pgrest_pre_config() RETURNS void LANGUAGE sql AS "
               "$$ SELECT 1/0 $$");
    const char *opts[] = {"db-pre-config", "public.pgrest_pre_config", NULL};
    char first[512] = "";
    pgrest_ctx *ctx = harness_ctx(opts);
    pgrest_ctx_set_observer(ctx, record_all, first);
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_load_schema(ctx, &err), PGREST_OK);
    ck_assert_str_eq(first, "Failed to query database settings for the config parameters."
                            "{\"code\":\"22012\",\"details\":null,\"hint\":null,"
                            "\"message\":\"division by zero\"}");
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
    tcase_add_test(tc, reload_applies_valid_and_keeps_previous_on_invalid);
    tcase_add_test(tc, failing_pre_config_is_reported);
    suite_add_tcase(s, tc);
    return check_run(s);
}
