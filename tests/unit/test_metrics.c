/* The admin /metrics text as PostgREST's prometheus-client prints it
 * (Metrics.hs): metrics in registration order, HELP and TYPE lines,
 * Doubles shown as Haskell does, pgrst_db_pool_available an Int, and the
 * schema cache loads vector empty (no lines at all) until a load is
 * counted. */
#include <check.h>
#include <string.h>

#include "check_run.h"
#include "pgrest/pgrest.h"

START_TEST(fresh_context_in_registration_order)
{
    pgrest_ctx *ctx = pgrest_ctx_new();
    pgrest_error err;
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-pool", "7", &err), PGREST_OK);
    pgrest_arena *a = pgrest_arena_new(0);
    const char *text = pgrest_ctx_metrics(ctx, a);
    ck_assert_ptr_nonnull(text);
    const char *postgrest =
        "# HELP pgrst_db_pool_timeouts_total The total number of pool connection timeouts\n"
        "# TYPE pgrst_db_pool_timeouts_total counter\n"
        "pgrst_db_pool_timeouts_total 0.0\n"
        "# HELP pgrst_db_pool_available Available connections in the pool\n"
        "# TYPE pgrst_db_pool_available gauge\n"
        "pgrst_db_pool_available 0\n"
        "# HELP pgrst_db_pool_waiting Requests waiting to acquire a pool connection\n"
        "# TYPE pgrst_db_pool_waiting gauge\n"
        "pgrst_db_pool_waiting 0.0\n"
        "# HELP pgrst_db_pool_max Max pool connections\n"
        "# TYPE pgrst_db_pool_max gauge\n"
        "pgrst_db_pool_max 7.0\n"
        "# HELP pgrst_schema_cache_query_time_seconds The query time in seconds of the last "
        "schema cache load\n"
        "# TYPE pgrst_schema_cache_query_time_seconds gauge\n"
        "pgrst_schema_cache_query_time_seconds 0.0\n"
        "# HELP pgrst_jwt_cache_requests_total The total number of JWT cache lookups\n"
        "# TYPE pgrst_jwt_cache_requests_total counter\n"
        "pgrst_jwt_cache_requests_total 0.0\n"
        "# HELP pgrst_jwt_cache_hits_total The total number of JWT cache hits\n"
        "# TYPE pgrst_jwt_cache_hits_total counter\n"
        "pgrst_jwt_cache_hits_total 0.0\n"
        "# HELP pgrst_jwt_cache_evictions_total The total number of JWT cache evictions\n"
        "# TYPE pgrst_jwt_cache_evictions_total counter\n"
        "pgrst_jwt_cache_evictions_total 0.0\n";
    /* PostgREST's metrics come first, pgrest's request counter after */
    ck_assert_int_eq(strncmp(text, postgrest, strlen(postgrest)), 0);
    ck_assert_ptr_null(strstr(text, "pgrst_schema_cache_loads_total"));
    ck_assert_ptr_nonnull(strstr(text + strlen(postgrest), "\npgrst_requests_total{"));
    pgrest_arena_free(a);
    pgrest_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("metrics");
    tcase_add_test(tc, fresh_context_in_registration_order);
    suite_add_tcase(s, tc);
    return check_run(s);
}
