/* OPTIONS against PostgreSQL (test_schema.sql): the Allow header of
 * PostgREST's Response.hs actionResponse for RelInfoPlan, RoutineInfoPlan
 * and SchemaInfoPlan (respondInfo: empty body, Allow,
 * Access-Control-Allow-Origin: *), with the routine found as Plan.hs
 * callReadPlan finds it for OPTIONS, and the root resource of
 * ApiRequest.hs getResource. */
#include <check.h>

#include "check_run.h"
#include <string.h>

#include "harness.h"

static test_response resp;

static void options(const char *const *opts, const char *path, const char *query)
{
    pgrest_ctx *ctx = harness_ctx(opts);
    harness_request(ctx, "OPTIONS", path, query, NULL, NULL, &resp);
    pgrest_ctx_free(ctx);
}

static void ck_allow(const char *allow)
{
    ck_assert_int_eq(resp.status, 200);
    ck_assert_str_eq(resp.body, "");
    ck_assert_str_eq(harness_header(&resp, "Allow"), allow);
    ck_assert_str_eq(harness_header(&resp, "Access-Control-Allow-Origin"), "*");
    ck_assert_str_eq(harness_header(&resp, "Vary"), "Accept, Prefer, Range");
    harness_free(&resp);
}

/* allowH: POST if insertable, PUT if insertable, updatable and with a PK,
 * PATCH if updatable, DELETE if deletable. */
START_TEST(relations)
{
    options(NULL, "/artists", "");
    ck_allow("OPTIONS,GET,HEAD,POST,PUT,PATCH,DELETE");
    options(NULL, "/artist_stats", "");   /* aggregate view: read-only */
    ck_allow("OPTIONS,GET,HEAD");
    options(NULL, "/plays", "");          /* partitioned table with a PK */
    ck_allow("OPTIONS,GET,HEAD,POST,PUT,PATCH,DELETE");
    options(NULL, "/nope", "");
    ck_assert_int_eq(resp.status, 404);
    ck_assert_ptr_nonnull(strstr(resp.body, "PGRST205"));
    harness_free(&resp);
}
END_TEST

/* RoutineInfoPlan: VOLATILE -> OPTIONS,POST; STABLE/IMMUTABLE add GET,HEAD. */
START_TEST(functions_by_volatility)
{
    options(NULL, "/rpc/touch", "");
    ck_allow("OPTIONS,POST");
    options(NULL, "/rpc/boxes", "");
    ck_allow("OPTIONS,GET,HEAD,POST");
    /* OPTIONS passes no arguments: add(a, b DEFAULT 1) is not found */
    options(NULL, "/rpc/add", "");
    ck_assert_int_eq(resp.status, 404);
    harness_free(&resp);
    options(NULL, "/rpc/nope", "");
    ck_assert_int_eq(resp.status, 404);
    ck_assert_ptr_nonnull(strstr(resp.body, "PGRST202"));
    harness_free(&resp);
}
END_TEST

/* ApiRequest.hs parses function arguments from the query string only for
 * GET/HEAD: for OPTIONS a=1 is a filter, and not a valid one (PGRST100),
 * so the function is looked up without arguments. */
START_TEST(function_query_is_not_arguments)
{
    options(NULL, "/rpc/add", "a=1");
    ck_assert_int_eq(resp.status, 400);
    ck_assert_ptr_nonnull(strstr(resp.body, "PGRST100"));
    harness_free(&resp);
    options(NULL, "/rpc/boxes", "id=eq.1");
    ck_allow("OPTIONS,GET,HEAD,POST");
}
END_TEST

/* SchemaInfoPlan; with db-root-spec "/" is that function (schema-qualified
 * names keep the function name); openapi-mode=disabled refuses it. */
START_TEST(root)
{
    options(NULL, "/", "");
    ck_allow("OPTIONS,GET,HEAD");
    const char *spec[] = {"db-root-spec", "api.touch", NULL};
    options(spec, "/", "");
    ck_allow("OPTIONS,POST");
    const char *disabled[] = {"openapi-mode", "disabled", NULL};
    options(disabled, "/", "");
    ck_assert_int_eq(resp.status, 404);
    ck_assert_ptr_nonnull(strstr(resp.body, "PGRST126"));
    harness_free(&resp);
    /* disabled wins over db-root-spec */
    const char *both[] = {"openapi-mode", "disabled", "db-root-spec", "boxes", NULL};
    options(both, "/", "");
    ck_assert_int_eq(resp.status, 404);
    harness_free(&resp);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("options");
    TCase *tc = tcase_create("allow");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, relations);
    tcase_add_test(tc, functions_by_volatility);
    tcase_add_test(tc, function_query_is_not_arguments);
    tcase_add_test(tc, root);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
