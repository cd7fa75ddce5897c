/* CORS through pgrest_handle: PostgREST's Cors.hs policy as wai-cors
 * applies it (corsIgnoreFailures: a request that is not an acceptable
 * CORS request runs unchanged). Expected values from Cors.hs and the
 * api/cors docs. */
#include <check.h>

#include "check_run.h"
#include <string.h>

#include "harness.h"

#define EXPOSE "Content-Encoding, Content-Location, Content-Range, Content-Type, " \
               "Date, Location, Server, Transfer-Encoding, Range-Unit"

static test_response resp;

static void run(const char *const *opts, const char *method, const char *path,
                const char *const *headers)
{
    pgrest_ctx *ctx = harness_ctx(opts);
    harness_request(ctx, method, path, "", headers, NULL, &resp);
    pgrest_ctx_free(ctx);
}

static const char *hdr(const char *name)
{
    return harness_header(&resp, name);
}

/* corsPolicy: any origin ("*"), methods corsMethods `union` GET/HEAD/POST,
 * Authorization + the requested headers + the simple ones, one day. */
START_TEST(preflight_any_origin)
{
    const char *h[] = {"Origin", "http://example.com", "Access-Control-Request-Method", "POST",
                       "Access-Control-Request-Headers", "Foo,Bar", NULL};
    run(NULL, "OPTIONS", "/artists", h);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_str_eq(resp.body, "");
    ck_assert_str_eq(hdr("Access-Control-Allow-Origin"), "*");
    ck_assert_ptr_null(hdr("Access-Control-Allow-Credentials"));
    ck_assert_str_eq(hdr("Access-Control-Allow-Methods"),
                     "GET, POST, PATCH, PUT, DELETE, OPTIONS, HEAD");
    ck_assert_str_eq(hdr("Access-Control-Allow-Headers"),
                     "Authorization, Foo, Bar, Accept, Accept-Language, Content-Language");
    ck_assert_str_eq(hdr("Access-Control-Max-Age"), "86400");
    /* answered by the middleware: no Allow from the application */
    ck_assert_ptr_null(hdr("Allow"));
    harness_free(&resp);
}
END_TEST

/* Data.List.union: the requested names stay as sent (case, duplicates);
 * a simple header already requested is not repeated; no
 * Access-Control-Request-Headers, no Allow-Headers. */
START_TEST(preflight_header_list)
{
    const char *h[] = {"Origin", "http://a", "Access-Control-Request-Method", "GET",
                       "Access-Control-Request-Headers", " accept , x-Trace", NULL};
    run(NULL, "OPTIONS", "/", h);
    ck_assert_str_eq(hdr("Access-Control-Allow-Headers"),
                     "Authorization, accept, x-Trace, Accept-Language, Content-Language");
    harness_free(&resp);
    const char *none[] = {"Origin", "http://a", "Access-Control-Request-Method", "DELETE", NULL};
    run(NULL, "OPTIONS", "/", none);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_ptr_null(hdr("Access-Control-Allow-Headers"));
    ck_assert_str_eq(hdr("Access-Control-Max-Age"), "86400");
    harness_free(&resp);
}
END_TEST

/* Not a valid preflight (no or unsupported Access-Control-Request-Method,
 * a header list that is not tokens): the application answers the
 * OPTIONS, with nothing added by CORS. */
START_TEST(invalid_preflight_reaches_application)
{
    const char *no_method[] = {"Origin", "http://a", NULL};
    const char *bad_method[] = {"Origin", "http://a", "Access-Control-Request-Method", "post", NULL};
    const char *bad_list[] = {"Origin", "http://a", "Access-Control-Request-Method", "POST",
                              "Access-Control-Request-Headers", "Fo o", NULL};
    const char *const *cases[] = {no_method, bad_method, bad_list};
    for (size_t i = 0; i < 3; i++) {
        run(NULL, "OPTIONS", "/artists", cases[i]);
        ck_assert_int_eq(resp.status, 200);
        ck_assert_str_eq(hdr("Allow"), "OPTIONS,GET,HEAD,POST,PUT,PATCH,DELETE");
        ck_assert_str_eq(hdr("Access-Control-Allow-Origin"), "*");   /* respondInfo */
        ck_assert_ptr_null(hdr("Access-Control-Allow-Methods"));
        ck_assert_ptr_null(hdr("Access-Control-Expose-Headers"));
        harness_free(&resp);
    }
}
END_TEST

/* Actual requests get the origin and the exposed headers, errors too;
 * without Origin nothing is added. */
START_TEST(actual_requests)
{
    const char *h[] = {"Origin", "http://example.com", NULL};
    run(NULL, "GET", "/artists", h);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_str_eq(hdr("Access-Control-Allow-Origin"), "*");
    ck_assert_str_eq(hdr("Access-Control-Expose-Headers"), EXPOSE);
    harness_free(&resp);
    run(NULL, "GET", "/nope", h);
    ck_assert_int_eq(resp.status, 404);
    ck_assert_str_eq(hdr("Access-Control-Expose-Headers"), EXPOSE);
    harness_free(&resp);
    run(NULL, "GET", "/artists", NULL);
    ck_assert_ptr_null(hdr("Access-Control-Allow-Origin"));
    ck_assert_ptr_null(hdr("Access-Control-Expose-Headers"));
    harness_free(&resp);
}
END_TEST

/* server-cors-allowed-origins (stripped, comma-separated): a listed origin
 * is echoed with credentials; another one gets no CORS headers at all, and
 * its OPTIONS reaches the application. */
START_TEST(allowed_origins)
{
    const char *opts[] = {"server-cors-allowed-origins", " http://example.com ,http://example2.com",
                          NULL};
    const char *pre[] = {"Origin", "http://example2.com", "Access-Control-Request-Method", "PATCH",
                         NULL};
    run(opts, "OPTIONS", "/artists", pre);
    ck_assert_str_eq(hdr("Access-Control-Allow-Origin"), "http://example2.com");
    ck_assert_str_eq(hdr("Access-Control-Allow-Credentials"), "true");
    ck_assert_ptr_nonnull(hdr("Access-Control-Allow-Methods"));
    harness_free(&resp);
    const char *get[] = {"Origin", "http://example.com", NULL};
    run(opts, "GET", "/artists", get);
    ck_assert_str_eq(hdr("Access-Control-Allow-Origin"), "http://example.com");
    ck_assert_str_eq(hdr("Access-Control-Allow-Credentials"), "true");
    ck_assert_str_eq(hdr("Access-Control-Expose-Headers"), EXPOSE);
    harness_free(&resp);
    const char *other[] = {"Origin", "http://invalid.com", NULL};
    run(opts, "GET", "/artists", other);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_ptr_null(hdr("Access-Control-Allow-Origin"));
    ck_assert_ptr_null(hdr("Access-Control-Expose-Headers"));
    harness_free(&resp);
    const char *other_pre[] = {"Origin", "http://invalid.com", "Access-Control-Request-Method",
                               "POST", NULL};
    run(opts, "OPTIONS", "/artists", other_pre);
    ck_assert_ptr_null(hdr("Access-Control-Allow-Methods"));
    ck_assert_str_eq(hdr("Allow"), "OPTIONS,GET,HEAD,POST,PUT,PATCH,DELETE");
    harness_free(&resp);
}
END_TEST

/* App.hs traceHeaderMiddleware wraps the CORS middleware: preflight
 * answers echo the trace header too. */
START_TEST(trace_header_on_preflight)
{
    const char *opts[] = {"server-trace-header", "X-Request-Id", NULL};
    const char *h[] = {"Origin", "http://a", "Access-Control-Request-Method", "GET",
                       "X-Request-Id", "abc", NULL};
    run(opts, "OPTIONS", "/artists", h);
    ck_assert_ptr_nonnull(hdr("Access-Control-Allow-Methods"));
    ck_assert_str_eq(hdr("X-Request-Id"), "abc");
    harness_free(&resp);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cors");
    TCase *tc = tcase_create("cors");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, preflight_any_origin);
    tcase_add_test(tc, preflight_header_list);
    tcase_add_test(tc, invalid_preflight_reaches_application);
    tcase_add_test(tc, actual_requests);
    tcase_add_test(tc, allowed_origins);
    tcase_add_test(tc, trace_header_on_preflight);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
