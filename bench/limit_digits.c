/* CPU per request for `limit=0x<digits>` (issue 39): pgrest_parse_request
 * alone, public API only, no database. A benchmark, not a test: run it by
 * hand (bench/README.md, "Long numbers in limit/offset").
 *
 *   build/bench/pgrest-bench-limit-digits [DIGITS [REQUESTS]]
 *
 * Also Prefer: max-affected=0x<digits> on a PATCH.
 * Prints the answer (status, code, message length) and the process CPU
 * time per request, as clock_gettime(CLOCK_PROCESS_CPUTIME_ID) measures it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pgrest/pgrest.h"

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "limit=0x" and n hex digits, 'f' after a leading '7' */
static char *hex_query(const char *param, size_t n)
{
    size_t plen = strlen(param);
    char *q = malloc(plen + 3 + n + 1);
    if (q == NULL)
        return NULL;
    memcpy(q, param, plen);
    memcpy(q + plen, "=0x", 3);
    memset(q + plen + 3, 'f', n);
    q[plen + 3] = '7';
    q[plen + 3 + n] = '\0';
    return q;
}

/* query, or (prefer != NULL) a PATCH with that Prefer header */
static int run(pgrest_ctx *ctx, const char *query, const char *prefer, long requests)
{
    pgrest_error err;
    int status = 0;
    size_t msg_len = 0;
    const char *code = "";
    double t0 = cpu_seconds();
    for (long i = 0; i < requests; i++) {
        pgrest_arena *a = pgrest_arena_new(0);
        if (a == NULL)
            return 1;
        pgrest_request *req =
            pgrest_request_new(a, prefer != NULL ? "PATCH" : "GET", "/albums", query);
        if (prefer != NULL)
            pgrest_request_add_header(req, "Prefer", prefer);
        pgrest_api_request *api = NULL;
        memset(&err, 0, sizeof err);
        int rc = pgrest_parse_request(ctx, a, req, &api, &err);
        status = rc == PGREST_OK ? 200 : err.http_status;
        msg_len = rc == PGREST_OK || err.message == NULL ? 0 : strlen(err.message);
        code = rc == PGREST_OK ? "-" : (err.code != NULL && strcmp(err.code, "22003") == 0
                                            ? "22003" : "other");
        pgrest_arena_free(a);
    }
    double per = (cpu_seconds() - t0) / (double)requests;
    const char *shown = prefer != NULL ? prefer : query;
    printf("%-12.12s  %zu bytes: %d %s, message %zu bytes, %.3f ms CPU/request\n", shown,
           strlen(shown), status, code, msg_len, per * 1e3);
    return 0;
}

int main(int argc, char **argv)
{
    size_t digits = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 48000;
    long requests = argc > 2 ? strtol(argv[2], NULL, 10) : 20;
    if (digits < 1 || requests < 1) {
        fprintf(stderr, "usage: %s [DIGITS>0 [REQUESTS>0]]\n", argv[0]);
        return 2;
    }
    pgrest_ctx *ctx = pgrest_ctx_new();
    pgrest_error err;
    if (ctx == NULL || pgrest_ctx_set(ctx, "db-schemas", "api", &err) != PGREST_OK ||
        pgrest_ctx_set(ctx, "db-anon-role", "web_anon", &err) != PGREST_OK)
        return 1;
    const char *params[] = {"limit", "offset"};
    int rc = 0;
    for (size_t i = 0; i < 2 && rc == 0; i++) {
        char *q = hex_query(params[i], digits);
        rc = q == NULL ? 1 : run(ctx, q, NULL, requests);
        free(q);
    }
    /* Prefer: max-affected=0x... (an Int64: only the value modulo 2^64);
     * parsing only, so the PATCH needs no body */
    char *m = rc == 0 ? hex_query("max-affected", digits) : NULL;
    if (m != NULL)
        rc = run(ctx, "id=eq.1", m, requests);
    free(m);
    pgrest_ctx_free(ctx);
    return rc;
}
