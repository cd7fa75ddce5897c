/* jwt-jwks-uri in the library (lib/auth/jwks*.c): the Cache-Control
 * reading, the URIs accepted, and a context of a host fetching its keys
 * from a loopback HTTP responder made here (a test fixture, not an HTTP
 * client: the library fetches with libcurl). Tokens are HS256 with oct
 * keys, signed with OpenSSL's HMAC. */
#include <check.h>

#include "check_run.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth/jwks.h"
#include "auth/jwt.h"
#include "engine/context.h"
#include "util/arena.h"
#include "util/base64.h"
#include "util/monotonic.h"

/* ------------------------------------------------------------ Cache-Control */

START_TEST(max_age_of_cache_control)
{
    static const struct { const char *value; long max_age; } cases[] = {
        {"max-age=300", 300},
        {" public, max-age=60, must-revalidate", 60},
        {"MAX-AGE=5\r\n", 5},
        {"max-age=\"7\"", 7},
        {"no-cache", 0},
        {"public, no-store", 0},
        {"s-maxage=10", -1},
        {"public", -1},
        {"", -1},
        {"max-age=", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg(pgr_jwks_max_age(cases[i].value, strlen(cases[i].value)) == cases[i].max_age,
                      "%s", cases[i].value);
}
END_TEST

START_TEST(uris_accepted)
{
    static const char *const ok[] = {
        "https://idp.example/.well-known/jwks.json", "HTTPS://idp.example:8443/k",
        "http://127.0.0.1:8080/jwks", "http://localhost/jwks", "http://[::1]:9/jwks",
        "http://127.1.2.3/jwks",
    };
    static const char *const refused[] = {
        "http://idp.example/jwks", "http://10.0.0.1/jwks", "ftp://idp.example/jwks",
        "http://127.0.0.1@idp.example/jwks", "http://localhost.idp.example/jwks",
        "file:///etc/jwks.json", "not a uri", "",
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        ck_assert_msg(pgr_jwks_uri_problem(ok[i]) == NULL, "%s", ok[i]);
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        ck_assert_msg(pgr_jwks_uri_problem(refused[i]) != NULL, "%s", refused[i]);
}
END_TEST

/* ------------------------------------------------------------ a responder */

typedef struct responder {
    int fd;
    int port;
    pthread_t thread;
    pthread_mutex_t lock;
    char body[1024];
    int hits;
    bool stop;
} responder;

static void *respond_loop(void *arg)
{
    responder *r = arg;
    for (;;) {
        int c = accept(r->fd, NULL, NULL);
        if (c < 0)
            return NULL;
        char buf[2048];
        size_t got = 0;
        ssize_t n;
        while (got < sizeof buf - 1 && (n = read(c, buf + got, sizeof buf - 1 - got)) > 0) {
            got += (size_t)n;
            buf[got] = '\0';
            if (strstr(buf, "\r\n\r\n") != NULL)
                break;
        }
        pthread_mutex_lock(&r->lock);
        bool stop = r->stop;
        char out[1200];
        int len = snprintf(out, sizeof out,
                           "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                           "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                           strlen(r->body), r->body);
        r->hits++;
        pthread_mutex_unlock(&r->lock);
        if (!stop && len > 0 && write(c, out, (size_t)len) < 0)
            len = 0;
        close(c);
        if (stop)
            return NULL;
    }
}

static void responder_start(responder *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->lock, NULL);
    r->fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(r->fd, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    ck_assert_int_eq(bind(r->fd, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_eq(listen(r->fd, 16), 0);
    ck_assert_int_eq(getsockname(r->fd, (struct sockaddr *)&sa, &sl), 0);
    r->port = ntohs(sa.sin_port);
    ck_assert_int_eq(pthread_create(&r->thread, NULL, respond_loop, r), 0);
}

static void responder_serve(responder *r, const char *body)
{
    pthread_mutex_lock(&r->lock);
    snprintf(r->body, sizeof r->body, "%s", body);
    pthread_mutex_unlock(&r->lock);
}

static int responder_hits(responder *r)
{
    pthread_mutex_lock(&r->lock);
    int n = r->hits;
    pthread_mutex_unlock(&r->lock);
    return n;
}

static void responder_stop(responder *r)
{
    pthread_mutex_lock(&r->lock);
    r->stop = true;
    pthread_mutex_unlock(&r->lock);
    /* wake the accept with one last connection */
    int c = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)r->port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(c, (struct sockaddr *)&sa, sizeof sa) != 0)
        shutdown(r->fd, SHUT_RDWR);
    close(c);
    pthread_join(r->thread, NULL);
    close(r->fd);
    pthread_mutex_destroy(&r->lock);
}

/* ------------------------------------------------------------ tokens */

static void b64url(const unsigned char *raw, size_t n, char *out)
{
    char *std = pgr_base64_encode(raw, n);
    size_t k = 0;
    for (const char *c = std; *c != '\0' && *c != '='; c++)
        out[k++] = *c == '+' ? '-' : *c == '/' ? '_' : *c;
    out[k] = '\0';
    free(std);
}

/* An HS256 token naming kid, signed with key. */
static char *hs256(const char *kid, const char *key, const char *claims)
{
    char header[128], head64[256], body64[512], sig64[128];
    snprintf(header, sizeof header, "{\"alg\":\"HS256\",\"kid\":\"%s\"}", kid);
    b64url((const unsigned char *)header, strlen(header), head64);
    b64url((const unsigned char *)claims, strlen(claims), body64);
    char input[800];
    snprintf(input, sizeof input, "%s.%s", head64, body64);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    HMAC(EVP_sha256(), key, (int)strlen(key), (const unsigned char *)input, strlen(input), mac,
         &mac_len);
    b64url(mac, mac_len, sig64);
    size_t len = strlen(input) + strlen(sig64) + 2;
    char *token = malloc(len);
    ck_assert_ptr_nonnull(token);
    snprintf(token, len, "%s.%s", input, sig64);
    return token;
}

/* {"kty":"oct","kid":...,"k":...} for each kid, key = "key-of-<kid>...". */
static void jwks_of(char *out, size_t size, const char *kid1, const char *kid2)
{
    char k1[128], k2[128], key[64];
    snprintf(key, sizeof key, "key-of-%s-0123456789abcdefghijklmnopq", kid1);
    b64url((const unsigned char *)key, strlen(key), k1);
    if (kid2 == NULL) {
        snprintf(out, size, "{\"keys\":[{\"kty\":\"oct\",\"kid\":\"%s\",\"k\":\"%s\"}]}", kid1, k1);
        return;
    }
    snprintf(key, sizeof key, "key-of-%s-0123456789abcdefghijklmnopq", kid2);
    b64url((const unsigned char *)key, strlen(key), k2);
    snprintf(out, size,
             "{\"keys\":[{\"kty\":\"oct\",\"kid\":\"%s\",\"k\":\"%s\"},"
             "{\"kty\":\"oct\",\"kid\":\"%s\",\"k\":\"%s\"}]}", kid1, k1, kid2, k2);
}

static int auth_with(pgrest_ctx *ctx, const char *kid, pgrest_error *err)
{
    char key[64];
    snprintf(key, sizeof key, "key-of-%s-0123456789abcdefghijklmnopq", kid);
    char *token = hs256(kid, key, "{\"role\":\"alice\"}");
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_api_request api;
    memset(&api, 0, sizeof api);
    memset(err, 0, sizeof *err);
    int rc = pgr_jwt_authenticate(ctx, pgr_cfg(ctx, a), a, token, &api, err);
    if (rc == PGREST_OK)
        ck_assert_str_eq(api.role, "alice");
    pgrest_arena_free(a);
    free(token);
    return rc;
}

static int fetched, failed;

static void observe(void *arg, pgrest_event event, const char *message)
{
    (void)arg;
    (void)message;
    if (event == PGREST_EVENT_JWKS_FETCHED)
        __atomic_add_fetch(&fetched, 1, __ATOMIC_SEQ_CST);
    if (event == PGREST_EVENT_JWKS_FETCH_FAILED)
        __atomic_add_fetch(&failed, 1, __ATOMIC_SEQ_CST);
}

/* Polls auth until it succeeds (ok) or fails, 10 s at most. */
static bool eventually(pgrest_ctx *ctx, const char *kid, bool ok)
{
    pgrest_error err;
    double until = pgr_monotonic_seconds() + 10;
    while (pgr_monotonic_seconds() < until) {
        if ((auth_with(ctx, kid, &err) == PGREST_OK) == ok)
            return true;
        usleep(50000);
    }
    return false;
}

/* A host sets the option on its context: the fetch runs on the library's
 * thread; a new kid is picked up, a key that left is refused (also when
 * the JWT cache had it), and the metrics count the fetches. */
START_TEST(a_host_context_fetches_and_rotates)
{
    responder r;
    responder_start(&r);
    char body[1024];
    jwks_of(body, sizeof body, "a", NULL);
    responder_serve(&r, body);
    pgrest_ctx *ctx = pgrest_ctx_new();
    pgrest_ctx_set_observer(ctx, observe, NULL);
    pgrest_error err;
    char uri[64];
    snprintf(uri, sizeof uri, "http://127.0.0.1:%d/jwks", r.port);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "jwt-jwks-min-refresh", "0", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "jwt-jwks-uri", uri, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-anon-role", "anon", &err), PGREST_OK);
    ck_assert(eventually(ctx, "a", true));
    ck_assert(eventually(ctx, "a", true)); /* from the JWT cache */
    /* a kid nobody published: 401 PGRST301, no key fits */
    ck_assert_int_ne(auth_with(ctx, "zz", &err), PGREST_OK);
    ck_assert_int_eq(err.http_status, 401);
    ck_assert_str_eq(err.details, "No suitable key was found to decode the JWT");

    jwks_of(body, sizeof body, "a", "b");
    responder_serve(&r, body);
    ck_assert(eventually(ctx, "b", true));
    ck_assert_int_eq(auth_with(ctx, "a", &err), PGREST_OK);

    jwks_of(body, sizeof body, "b", NULL);
    responder_serve(&r, body);
    auth_with(ctx, "zz", &err); /* an unknown kid: a refetch */
    ck_assert(eventually(ctx, "a", false));
    ck_assert_int_ne(auth_with(ctx, "a", &err), PGREST_OK);
    ck_assert_int_eq(err.http_status, 401);
    ck_assert_int_eq(auth_with(ctx, "b", &err), PGREST_OK);
    ck_assert_int_ge(responder_hits(&r), 3);

    pgrest_arena *a = pgrest_arena_new(0);
    const char *m = pgrest_ctx_metrics(ctx, a);
    ck_assert_ptr_nonnull(strstr(m, "\npgrst_jwks_fetches_total "));
    ck_assert_ptr_nonnull(strstr(m, "\npgrst_jwks_fetch_failures_total 0.0\n"));
    pgrest_arena_free(a);
    ck_assert_int_ge(__atomic_load_n(&fetched, __ATOMIC_SEQ_CST), 3);
    ck_assert_int_eq(__atomic_load_n(&failed, __ATOMIC_SEQ_CST), 0);
    pgrest_ctx_free(ctx);
    responder_stop(&r);
}
END_TEST

/* Unknown kids ask for a fetch at most once per jwt-jwks-min-refresh
 * (30 s by default): a burst of them after the fetch at start fetches
 * nothing more, and none of them waits. */
START_TEST(unknown_kids_are_rate_limited)
{
    responder r;
    responder_start(&r);
    char body[1024];
    jwks_of(body, sizeof body, "a", NULL);
    responder_serve(&r, body);
    pgrest_ctx *ctx = pgrest_ctx_new();
    pgrest_error err;
    char uri[64];
    snprintf(uri, sizeof uri, "http://127.0.0.1:%d/jwks", r.port);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "jwt-jwks-timeout", "5", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "jwt-jwks-uri", uri, &err), PGREST_OK);
    ck_assert(eventually(ctx, "a", true));
    ck_assert_int_eq(responder_hits(&r), 1);
    double t0 = pgr_monotonic_seconds();
    for (int i = 0; i < 20; i++)
        ck_assert_int_ne(auth_with(ctx, "zz", &err), PGREST_OK);
    /* twenty waits of jwt-jwks-timeout would take 100 s */
    ck_assert(pgr_monotonic_seconds() - t0 < 10);
    ck_assert_int_eq(responder_hits(&r), 1);
    pgrest_ctx_free(ctx);
    responder_stop(&r);
}
END_TEST

/* Without jwt-jwks-uri the metrics have no JWKS lines (PostgREST's). */
START_TEST(no_jwks_no_metrics)
{
    pgrest_ctx *ctx = pgrest_ctx_new();
    pgrest_arena *a = pgrest_arena_new(0);
    ck_assert_ptr_null(strstr(pgrest_ctx_metrics(ctx, a), "jwks"));
    pgrest_arena_free(a);
    pgrest_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("jwks");
    TCase *tc = tcase_create("jwks");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, max_age_of_cache_control);
    tcase_add_test(tc, uris_accepted);
    tcase_add_test(tc, a_host_context_fetches_and_rotates);
    tcase_add_test(tc, unknown_kids_are_rate_limited);
    tcase_add_test(tc, no_jwks_no_metrics);
    suite_add_tcase(s, tc);
    return check_run(s);
}
