/* Headers of answers that are not plain table reads (PostgREST App.hs
 * toWaiResponse, Response.hs actionResponse for DbPlanResult and
 * MaybeDbResult): every answer postgrestResponse builds varies on
 * Accept, Prefer and Range; Preference-Applied belongs to the CRUD
 * answers only. */
#include <check.h>
#include <string.h>

#include "check_run.h"
#include "harness.h"

static void expect_header(const test_response *r, const char *name, const char *want)
{
    const char *got = harness_header(r, name);
    if (want == NULL)
        ck_assert_msg(got == NULL, "%s: want none, got %s", name, got);
    else
        ck_assert_msg(got != NULL && strcmp(got, want) == 0, "%s: want %s, got %s", name, want,
                      got ? got : "(none)");
}

/* DbPlanResult: Content-Length and Content-Type only, then toWaiResponse
 * adds Vary; no Preference-Applied whatever the Prefer, on a read, a
 * write or a call. */
START_TEST(plan_answers_vary_without_preference_applied)
{
    static const char *const opts[] = {"db-plan-enabled", "true", "db-anon-role", "web_user",
                                       "db-tx-end", "rollback-allow-override", NULL};
    pgrest_ctx *ctx = harness_ctx(opts);
    const char *const h[] = {"Accept", "application/vnd.pgrst.plan+json",
                             "Prefer", "count=exact, tx=rollback, timezone=UTC",
                             "Content-Type", "application/json", NULL};
    static const struct {
        const char *method, *path, *body;
    } cases[] = {{"GET", "/artists", NULL},
                 {"HEAD", "/artists", NULL},
                 {"POST", "/artists", "{\"name\":\"x\"}"},
                 {"GET", "/rpc/add", NULL}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        test_response r;
        harness_request(ctx, cases[i].method, cases[i].path,
                        strcmp(cases[i].path, "/rpc/add") == 0 ? "a=1&b=2" : NULL, h,
                        cases[i].body, &r);
        ck_assert_msg(r.status == 200, "%s %s: %d %s", cases[i].method, cases[i].path, r.status,
                      r.body);
        expect_header(&r, "Vary", "Accept, Prefer, Range");
        expect_header(&r, "Preference-Applied", NULL);
        harness_free(&r);
    }
    pgrest_ctx_free(ctx);
}
END_TEST

/* MaybeDbResult (the OpenAPI root): no Preference-Applied either. */
START_TEST(root_has_no_preference_applied)
{
    pgrest_ctx *ctx = harness_ctx(NULL);
    const char *const h[] = {"Prefer", "count=exact, timezone=UTC", NULL};
    test_response r;
    harness_request(ctx, "GET", "/", NULL, h, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    expect_header(&r, "Vary", "Accept, Prefer, Range");
    expect_header(&r, "Preference-Applied", NULL);
    harness_free(&r);
    pgrest_ctx_free(ctx);
}
END_TEST

int main(void)
{
    harness_db_uri();
    Suite *s = suite_create("read_responses");
    TCase *tc = tcase_create("read_responses");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, plan_answers_vary_without_preference_applied);
    tcase_add_test(tc, root_has_no_preference_applied);
    suite_add_tcase(s, tc);
    return check_run(s);
}
