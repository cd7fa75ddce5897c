/* CORS preflight decisions without a database: pgrest_handle answers a
 * valid preflight itself (wai-cors in front of PostgREST's application,
 * Cors.hs corsPolicy), so a context with no schema cache is enough. A
 * request that is not a valid preflight reaches the application, which
 * here has no schema cache and answers 503: that is how these tests tell
 * "passed through" apart. */
#include <check.h>

#include "check_run.h"
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "pgrest/pgrest.h"

static pgrest_ctx *ctx;
static pgrest_arena *arena;
static pgrest_response *resp;

static void setup(void)
{
    ctx = pgrest_ctx_new();
    arena = pgrest_arena_new(0);
}

static void teardown(void)
{
    pgrest_arena_free(arena);
    pgrest_ctx_free(ctx);
}

static void set(const char *key, const char *value)
{
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, key, value, &err), PGREST_OK);
}

/* headers: name, value pairs, NULL-terminated */
static void send(const char *method, const char *const *headers)
{
    pgrest_request *req = pgrest_request_new(arena, method, "/items", "");
    for (size_t i = 0; headers[i] != NULL; i += 2)
        pgrest_request_add_header(req, headers[i], headers[i + 1]);
    resp = pgrest_handle(ctx, arena, req);
    ck_assert_ptr_nonnull(resp);
}

static const char *header(const char *name)
{
    for (size_t i = 0; i < pgrest_response_header_count(resp); i++) {
        const pgrest_header *h = pgrest_response_header(resp, i);
        if (strcasecmp(h->name, name) == 0)
            return h->value;
    }
    return NULL;
}

static bool answered_by_cors(void)
{
    return pgrest_response_status(resp) == 200 &&
           header("Access-Control-Allow-Methods") != NULL;
}

/* hdrReqMethod: the method must be one of corsMethods `union`
 * simpleMethods, compared exactly. */
START_TEST(request_method_must_be_supported)
{
    static const char *const ok[] = {"GET", "POST", "PATCH", "PUT", "DELETE", "OPTIONS", "HEAD"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        const char *h[] = {"Origin", "http://a", "Access-Control-Request-Method", ok[i], NULL};
        send("OPTIONS", h);
        ck_assert_msg(answered_by_cors(), "%s", ok[i]);
        ck_assert_str_eq(header("Access-Control-Allow-Methods"),
                         "GET, POST, PATCH, PUT, DELETE, OPTIONS, HEAD");
    }
    static const char *const bad[] = {"TRACE", "post", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *h[] = {"Origin", "http://a", "Access-Control-Request-Method", bad[i], NULL};
        send("OPTIONS", h);
        ck_assert_msg(!answered_by_cors(), "%s", bad[i]);
    }
}
END_TEST

/* Without Origin, or for other methods, nothing is answered by CORS. */
START_TEST(only_options_with_origin)
{
    const char *no_origin[] = {"Access-Control-Request-Method", "GET", NULL};
    send("OPTIONS", no_origin);
    ck_assert(!answered_by_cors());
    const char *get[] = {"Origin", "http://a", "Access-Control-Request-Method", "GET", NULL};
    send("GET", get);
    ck_assert(!answered_by_cors());
    /* the application's error still gets the CORS headers of an actual
     * request */
    ck_assert_str_eq(header("Access-Control-Allow-Origin"), "*");
    ck_assert_ptr_nonnull(header("Access-Control-Expose-Headers"));
}
END_TEST

/* hdrRequestHeader: names parsed as a token list (a valid prefix is
 * enough) must all be supported; the echo is ("Authorization" : each
 * element stripped, as sent) `union` the simple headers. */
START_TEST(request_headers)
{
    const char *h1[] = {"Origin", "http://a", "Access-Control-Request-Method", "PUT",
                        "Access-Control-Request-Headers", "Content-Type", NULL};
    send("OPTIONS", h1);
    ck_assert_str_eq(header("Access-Control-Allow-Headers"),
                     "Authorization, Content-Type, Accept, Accept-Language, Content-Language");
    const char *h2[] = {"Origin", "http://a", "Access-Control-Request-Method", "PUT",
                        "Access-Control-Request-Headers", "authorization,ACCEPT-LANGUAGE,,x", NULL};
    send("OPTIONS", h2);
    ck_assert_str_eq(header("Access-Control-Allow-Headers"),
                     "Authorization, authorization, ACCEPT-LANGUAGE, , x, Accept, Content-Language");
    /* "a b" parses as the name "a", which is not a requested element */
    const char *h3[] = {"Origin", "http://a", "Access-Control-Request-Method", "PUT",
                        "Access-Control-Request-Headers", "a b", NULL};
    send("OPTIONS", h3);
    ck_assert(!answered_by_cors());
    const char *h4[] = {"Origin", "http://a", "Access-Control-Request-Method", "PUT",
                        "Access-Control-Request-Headers", ",x", NULL};
    send("OPTIONS", h4);
    ck_assert(!answered_by_cors());
}
END_TEST

/* corsOrigins: with a list, only exact members (entries stripped), echoed
 * with credentials; others are not CORS requests at all. */
START_TEST(allowed_origins)
{
    set("server-cors-allowed-origins", "http://example.com , http://example2.com");
    const char *ok[] = {"Origin", "http://example.com", "Access-Control-Request-Method", "GET", NULL};
    send("OPTIONS", ok);
    ck_assert(answered_by_cors());
    ck_assert_str_eq(header("Access-Control-Allow-Origin"), "http://example.com");
    ck_assert_str_eq(header("Access-Control-Allow-Credentials"), "true");
    ck_assert_str_eq(header("Access-Control-Max-Age"), "86400");
    const char *other[] = {"Origin", "http://EXAMPLE.com", "Access-Control-Request-Method", "GET",
                           NULL};
    send("OPTIONS", other);
    ck_assert(!answered_by_cors());
    const char *get[] = {"Origin", "http://evil.com", NULL};
    send("GET", get);
    ck_assert_ptr_null(header("Access-Control-Allow-Origin"));
    ck_assert_ptr_null(header("Access-Control-Expose-Headers"));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cors");
    TCase *tc = tcase_create("preflight");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, request_method_must_be_supported);
    tcase_add_test(tc, only_options_with_origin);
    tcase_add_test(tc, request_headers);
    tcase_add_test(tc, allowed_origins);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
