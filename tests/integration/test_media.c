/* Media type handlers and execution plans end to end (PostgREST docs
 * "Media Type Handlers" and "Execution plan"): the api."text/x-roster"
 * aggregate over api.artists, the api.initials function returning the
 * bytea domain "application/x-initials" (test_schema.sql), and
 * Accept: application/vnd.pgrst.plan with db-plan-enabled. */
#include <check.h>

#include "check_run.h"
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static pgrest_ctx *ctx;

static void setup(void)
{
    ctx = harness_ctx(NULL);
}

static void teardown(void)
{
    pgrest_ctx_free(ctx);
}

START_TEST(aggregate_handler_for_table)
{
    test_response r;
    const char *const h[] = {"Accept", "text/x-roster", NULL};
    harness_request(ctx, "GET", "/artists", "id=lt.3&order=id", h, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "1|The Quiet Ones\n2|Blue Note Trio\n");
    /* media types PostgREST does not know get no charset */
    ck_assert_str_eq(harness_header(&r, "Content-Type"), "text/x-roster");
    harness_free(&r);
}
END_TEST

START_TEST(table_handler_needs_default_select)
{
    test_response r;
    const char *const h[] = {"Accept", "text/x-roster", NULL};
    harness_request(ctx, "GET", "/artists", "select=id,name", h, NULL, &r);
    ck_assert_int_eq(r.status, 406);
    ck_assert_ptr_nonnull(strstr(r.body, "PGRST107"));
    harness_free(&r);
    /* other relations have no such handler */
    harness_request(ctx, "GET", "/albums", NULL, h, NULL, &r);
    ck_assert_int_eq(r.status, 406);
    harness_free(&r);
}
END_TEST

/* hasDefaultSelect: a written `select=*` is the default select too. */
START_TEST(table_handler_with_explicit_star)
{
    test_response r;
    const char *const h[] = {"Accept", "text/x-roster", NULL};
    harness_request(ctx, "GET", "/artists", "select=*&id=lt.3&order=id", h, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "1|The Quiet Ones\n2|Blue Note Trio\n");
    harness_free(&r);
}
END_TEST

START_TEST(function_handler_returns_bytes)
{
    test_response r;
    const char *const h[] = {"Accept", "application/x-initials", NULL};
    harness_request(ctx, "GET", "/rpc/initials", "id=2", h, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "BL");
    ck_assert_str_eq(harness_header(&r, "Content-Type"), "application/x-initials");
    harness_free(&r);
    /* JSON stays available, and unknown types are refused */
    harness_request(ctx, "GET", "/rpc/initials", "id=2", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "\"\\\\x424c\"");
    harness_free(&r);
    const char *const other[] = {"Accept", "image/png", NULL};
    harness_request(ctx, "GET", "/rpc/initials", "id=2", other, NULL, &r);
    ck_assert_int_eq(r.status, 406);
    harness_free(&r);
}
END_TEST

START_TEST(plan_disabled_is_not_acceptable)
{
    test_response r;
    const char *const h[] = {"Accept", "application/vnd.pgrst.plan+json", NULL};
    harness_request(ctx, "GET", "/artists", NULL, h, NULL, &r);
    ck_assert_int_eq(r.status, 406);
    harness_free(&r);
}
END_TEST

START_TEST(plan_json_and_text)
{
    static const char *const opts[] = {"db-plan-enabled", "true", NULL};
    pgrest_ctx *pc = harness_ctx(opts);
    test_response r;
    const char *const h[] = {"Accept", "application/vnd.pgrst.plan+json; options=verbose|bogus", NULL};
    harness_request(pc, "GET", "/artists", "id=eq.1", h, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(harness_header(&r, "Content-Type"),
                     "application/vnd.pgrst.plan+json; for=\"application/json\"; options=verbose; charset=utf-8");
    ck_assert_ptr_nonnull(strstr(r.body, "\"Plan\""));
    ck_assert_ptr_nonnull(strstr(r.body, "json_agg(ROW(artists.id"));
    /* MainTx.hs planRow: BS.unlines of the rows */
    ck_assert(strlen(r.body) > 2 && strcmp(r.body + strlen(r.body) - 2, "]\n") == 0);
    harness_free(&r);
    /* the plan of a media handler's aggregate, as text */
    const char *const t[] = {"Accept", "application/vnd.pgrst.plan; for=\"text/x-roster\"", NULL};
    harness_request(pc, "GET", "/artists", NULL, t, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(harness_header(&r, "Content-Type"),
                     "application/vnd.pgrst.plan+text; for=\"text/x-roster\"; charset=utf-8");
    ck_assert_ptr_nonnull(strstr(r.body, "Aggregate"));
    ck_assert(r.body[strlen(r.body) - 1] == '\n' && r.body[strlen(r.body) - 2] != '\n');
    harness_free(&r);
    pgrest_ctx_free(pc);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("media");
    TCase *tc = tcase_create("media");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, aggregate_handler_for_table);
    tcase_add_test(tc, table_handler_needs_default_select);
    tcase_add_test(tc, table_handler_with_explicit_star);
    tcase_add_test(tc, function_handler_returns_bytes);
    tcase_add_test(tc, plan_disabled_is_not_acceptable);
    tcase_add_test(tc, plan_json_and_text);
    suite_add_tcase(s, tc);
    return check_run(s);
}
