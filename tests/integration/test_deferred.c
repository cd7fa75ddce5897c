/* Constraints checked at commit: the violation is only known when the
 * transaction ends, after the main statement succeeded. The client must
 * get PostgREST's 409 and nothing may be written — both when the pipeline
 * commits implicitly at its Sync and when an explicit COMMIT follows a
 * post-check (max-affected). */
#include <check.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "harness.h"

static pgrest_ctx *ctx;

static void setup(void)
{
    const char *opts[] = {"db-anon-role", "web_user", "db-tx-end", "commit", NULL};
    ctx = harness_ctx(opts);
    /* start empty even if an earlier run stopped half-way */
    test_response r;
    harness_request(ctx, "DELETE", "/seats", "id=gt.0", NULL, NULL, &r);
    harness_free(&r);
}

static void teardown(void)
{
    pgrest_ctx_free(ctx);
}

static int seats(void)
{
    test_response r;
    const char *h[] = {"Prefer", "count=exact", NULL};
    harness_request(ctx, "HEAD", "/seats", "", h, NULL, &r);
    const char *cr = harness_header(&r, "Content-Range");
    int n = atoi(strchr(cr, '/') + 1);
    harness_free(&r);
    return n;
}

static void post_duplicates(const char *prefer)
{
    const char *h[] = {"Content-Type", "application/json", "Prefer", prefer, NULL};
    test_response r;
    harness_request(ctx, "POST", "/seats", "",
                    h, "[{\"id\":1,\"seat\":\"A1\"},{\"id\":2,\"seat\":\"A1\"}]", &r);
    ck_assert_int_eq(r.status, 409);
    ck_assert_ptr_nonnull(strstr(r.body, "\"code\":\"23505\""));
    ck_assert_ptr_nonnull(strstr(r.body, "seats_seat_key"));
    harness_free(&r);
}

START_TEST(violation_at_implicit_commit)
{
    ck_assert_int_eq(seats(), 0);
    post_duplicates("return=minimal");
    ck_assert_int_eq(seats(), 0);
}
END_TEST

/* PUT always ends with an explicit COMMIT after its post-check. */
START_TEST(violation_at_commit_after_post_check)
{
    const char *h[] = {"Content-Type", "application/json", NULL};
    test_response r;
    harness_request(ctx, "POST", "/seats", "", h, "{\"id\":1,\"seat\":\"C1\"}", &r);
    ck_assert_int_eq(r.status, 201);
    harness_free(&r);
    harness_request(ctx, "PUT", "/seats", "id=eq.2", h, "{\"id\":2,\"seat\":\"C1\"}", &r);
    ck_assert_int_eq(r.status, 409);
    ck_assert_ptr_nonnull(strstr(r.body, "seats_seat_key"));
    harness_free(&r);
    ck_assert_int_eq(seats(), 1);
    harness_request(ctx, "DELETE", "/seats", "id=gt.0", NULL, NULL, &r);
    harness_free(&r);
    ck_assert_int_eq(seats(), 0);
}
END_TEST

START_TEST(valid_rows_still_commit)
{
    const char *h[] = {"Content-Type", "application/json", NULL};
    test_response r;
    harness_request(ctx, "POST", "/seats", "", h,
                    "[{\"id\":1,\"seat\":\"B1\"},{\"id\":2,\"seat\":\"B2\"}]", &r);
    ck_assert_int_eq(r.status, 201);
    harness_free(&r);
    ck_assert_int_eq(seats(), 2);
    harness_request(ctx, "DELETE", "/seats", "id=gt.0", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 204);
    harness_free(&r);
    ck_assert_int_eq(seats(), 0);
}
END_TEST

int main(void)
{
    harness_db_uri();
    Suite *s = suite_create("deferred");
    TCase *tc = tcase_create("deferred");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, violation_at_implicit_commit);
    tcase_add_test(tc, violation_at_commit_after_post_check);
    tcase_add_test(tc, valid_rows_still_commit);
    suite_add_tcase(s, tc);
    return check_run(s);
}
