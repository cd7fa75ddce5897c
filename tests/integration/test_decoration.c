/* The headers App.hs puts around an answer, through pgrest_handle:
 * Server-Timing only on what postgrestResponse returns (toWaiResponse) --
 * an error leaves it before, through handleError/errorResponseFor, with
 * neither Server-Timing nor Vary; the trace header (traceHeaderMiddleware)
 * on every answer, empty when the request has none. */
#include <check.h>

#include "check_run.h"
#include <string.h>

#include "harness.h"

static test_response resp;

static void run(const char *const *opts, const char *path, const char *query,
                const char *const *headers)
{
    pgrest_ctx *ctx = harness_ctx(opts);
    harness_request(ctx, "GET", path, query, headers, NULL, &resp);
    pgrest_ctx_free(ctx);
}

static const char *const timing[] = {"server-timing-enabled", "true", NULL};

START_TEST(timing_on_answers)
{
    run(timing, "/artists", "select=name&limit=1", NULL);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_ptr_nonnull(harness_header(&resp, "Server-Timing"));
    ck_assert_str_eq(harness_header(&resp, "Vary"), "Accept, Prefer, Range");
    harness_free(&resp);
}
END_TEST

/* a planning error (PGRST205), a parse error (PGRST100) and a database
 * error (42703) all come from errorResponseFor */
START_TEST(no_timing_on_errors)
{
    static const char *const requests[][2] = {
        {"/nope", ""}, {"/artists", "id=eqx.1"}, {"/artists", "select=nope"}};
    for (size_t i = 0; i < sizeof requests / sizeof requests[0]; i++) {
        run(timing, requests[i][0], requests[i][1], NULL);
        ck_assert_int_ge(resp.status, 400);
        ck_assert_ptr_null(harness_header(&resp, "Server-Timing"));
        ck_assert_ptr_null(harness_header(&resp, "Vary"));
        ck_assert_ptr_nonnull(harness_header(&resp, "Proxy-Status"));
        harness_free(&resp);
    }
}
END_TEST

static const char *const trace[] = {"server-trace-header", "X-Request-Id", NULL};

START_TEST(trace_header_echoed)
{
    const char *h[] = {"X-Request-Id", "abc-123", NULL};
    run(trace, "/artists", "limit=1", h);
    ck_assert_str_eq(harness_header(&resp, "X-Request-Id"), "abc-123");
    harness_free(&resp);
    run(trace, "/nope", "", h);
    ck_assert_str_eq(harness_header(&resp, "X-Request-Id"), "abc-123");
    harness_free(&resp);
}
END_TEST

START_TEST(trace_header_empty_when_absent)
{
    run(trace, "/artists", "limit=1", NULL);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_ptr_nonnull(harness_header(&resp, "X-Request-Id"));
    ck_assert_str_eq(harness_header(&resp, "X-Request-Id"), "");
    harness_free(&resp);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("decoration");
    TCase *tc = tcase_create("decoration");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, timing_on_answers);
    tcase_add_test(tc, no_timing_on_errors);
    tcase_add_test(tc, trace_header_echoed);
    tcase_add_test(tc, trace_header_empty_when_absent);
    suite_add_tcase(s, tc);
    return check_run(s);
}
