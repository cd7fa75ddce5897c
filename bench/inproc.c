/* pgrest-bench-inproc: the library's own cost on PostgREST's published
 * benchmark requests, without HTTP. Public API only (pgrest/pgrest.h).
 *
 *   pgrest-bench-inproc [--db URI] [--snapshot FILE] [--batches N]
 *                       [--iters N] [--seconds S] [--no-plan] [--no-handle]
 *                       [scenario ...]
 *
 * (a) plan cost: pgrest_authenticate + pgrest_parse_request + pgrest_plan +
 *     pgrest_emit_sql for every scenario's request shape, against a schema snapshot (with --db
 *     the snapshot is first written from the live database with
 *     pgrest_ctx_save_schema_file; the timing then uses a second context
 *     loaded from the file, so no database is involved). Reports ns per
 *     request, median of --batches batches of --iters requests, for the
 *     whole per-request cycle (arena, request, parse, plan, emit, free) and
 *     per stage (from a separate pass that reads the clock between stages).
 * (b) pgrest_handle in-process against the live database (--db), one
 *     thread, sequential requests for --seconds per scenario: req/s.
 *
 * Request shapes (method, path, query, body) are the ones of the published
 * scenarios: random ids in the same ranges, the same employee bodies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pgrest/pgrest.h"

#define VARIANTS 64 /* distinct random-id requests per scenario, cycled */

typedef struct scenario {
    const char *name, *method, *path;
    const char *query_fmt; /* may contain %d (the random id) up to 5 times */
    int id_max;            /* ids drawn from 1..id_max; 0 = no id */
    int body;              /* 0 none, 1 PATCH body, 2 one employee, 3 twenty */
    int expected;
} scenario;

#define EMP_COLUMNS \
    "employee_id,first_name,last_name,title,reports_to,birth_date,hire_date," \
    "address,city,state,country,postal_code,phone,fax,email"

static const scenario SCENARIOS[] = {
    {"GETSingle", "GET", "/artist", "select=*&artist_id=eq.%d", 275, 0, 200},
    {"GETSingleEmbed", "GET", "/album", "select=*,track(*,genre(*))&artist_id=eq.%d", 347, 0, 200},
    {"GETAllEmbed", "GET", "/album", "select=*,track(*,genre(*))", 0, 0, 200},
    {"POSTSingle", "POST", "/employee", NULL, 0, 2, 201},
    {"POSTBulk", "POST", "/employee", "columns=" EMP_COLUMNS, 0, 3, 201},
    {"PATCHSingle", "PATCH", "/actor", "actor_id=eq.%d", 203, 1, 204},
    {"RPCSimple", "GET", "/rpc/add_them", "a=%d&b=%d&c=%d&d=%d&e=%d", 347, 0, 200},
    {"RPCGETSingle", "GET", "/rpc/ret_artists", "select=*&artist_id=eq.%d", 275, 0, 200},
    {"RPCGETSingleEmbed", "GET", "/rpc/ret_albums",
     "select=album_id,title,artist_id,track(*,genre(*))&artist_id=eq.%d", 347, 0, 200},
};
#define NSCEN (sizeof SCENARIOS / sizeof SCENARIOS[0])

typedef struct shape {
    char *query; /* NULL = no query string */
    char *body;  /* NULL = no body */
    size_t body_len;
} shape;

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return memcpy(p, s, n);
}

static void employee(char *buf, size_t cap, long i)
{
    snprintf(buf, cap,
             "{\"employee_id\":%ld,\"first_name\":\"Virtual %ld\",\"last_name\":\"User %ld\","
             "\"title\":\"Load Tester\",\"reports_to\":1,\"birth_date\":\"1920-01-01\","
             "\"hire_date\":\"2020-01-01\",\"address\":\"666 10 Street SW\",\"city\":\"Calgary\","
             "\"state\":\"AB\",\"country\":\"Canada\",\"postal_code\":\"T2P 5G\","
             "\"phone\":\"(403) 246-9887\",\"fax\":\"+1 (403) 246-9899\","
             "\"email\":\"vu%ld@chinookcorp.com\"}",
             i + 100, i, i, i);
}

/* Fills shapes[VARIANTS] for scenario sc (variant k uses counter base+k). */
static void make_shapes(const scenario *sc, shape *shapes, long base)
{
    for (int k = 0; k < VARIANTS; k++) {
        shape *sh = &shapes[k];
        sh->query = NULL;
        sh->body = NULL;
        sh->body_len = 0;
        if (sc->query_fmt != NULL) {
            char q[512];
            int n = sc->id_max ? 1 + rand() % sc->id_max : 0;
            snprintf(q, sizeof q, sc->query_fmt, n, n + 1, n + 2, n + 3, n + 4);
            sh->query = xstrdup(q);
        }
        char one[1024];
        if (sc->body == 1) {
            sh->body = xstrdup("{\"last_update\":\"now\"}");
        } else if (sc->body == 2) {
            employee(one, sizeof one, base + k);
            sh->body = xstrdup(one);
        } else if (sc->body == 3) {
            employee(one, sizeof one, base + k);
            size_t len = strlen(one);
            char *b = malloc(20 * (len + 1) + 2);
            if (b == NULL)
                exit(1);
            char *p = b;
            *p++ = '[';
            for (int j = 0; j < 20; j++) {
                if (j)
                    *p++ = ',';
                memcpy(p, one, len);
                p += len;
            }
            *p++ = ']';
            *p = '\0';
            sh->body = b;
        }
        if (sh->body != NULL)
            sh->body_len = strlen(sh->body);
    }
}

static void free_shapes(shape *shapes)
{
    for (int k = 0; k < VARIANTS; k++) {
        free(shapes[k].query);
        free(shapes[k].body);
    }
}

static pgrest_request *build_request(pgrest_arena *a, const scenario *sc, const shape *sh)
{
    pgrest_request *req = pgrest_request_new(a, sc->method, sc->path, sh->query);
    if (req == NULL)
        return NULL;
    /* what wrk sends: Host (+ Content-Length, and the scenario's Content-Type) */
    pgrest_request_add_header(req, "Host", "127.0.0.1:3000");
    if (sh->body != NULL) {
        char len[32];
        snprintf(len, sizeof len, "%zu", sh->body_len);
        pgrest_request_add_header(req, "Content-Length", len);
        pgrest_request_add_header(req, "Content-Type", "application/json");
        pgrest_request_set_body(req, sh->body, sh->body_len);
    }
    return req;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One authenticate+parse+plan+emit; stage times added to t[0..2] when
 * t != NULL (t[0] is authentication and parsing together, as it was when
 * parsing verified the token).
 * Returns 0, or the failing stage's status with *err filled. */
static int plan_once(pgrest_ctx *ctx, const scenario *sc, const shape *sh, double *t,
                     pgrest_error *err, size_t *nstmt)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = build_request(a, sc, sh);
    pgrest_auth *auth;
    pgrest_api_request *api;
    pgrest_query_plan *plan;
    pgrest_statements *st;
    int rc;
    double t0 = t ? now_ns() : 0;
    rc = pgrest_authenticate(ctx, a, req, &auth, err);
    if (rc == PGREST_OK) {
        pgrest_request_set_auth(req, auth);
        rc = pgrest_parse_request(ctx, a, req, &api, err);
    }
    double t1 = t ? now_ns() : 0;
    if (rc == PGREST_OK)
        rc = pgrest_plan(ctx, a, api, &plan, err);
    double t2 = t ? now_ns() : 0;
    if (rc == PGREST_OK)
        rc = pgrest_emit_sql(ctx, a, plan, &st, err);
    double t3 = t ? now_ns() : 0;
    if (t != NULL) {
        t[0] += t1 - t0;
        t[1] += t2 - t1;
        t[2] += t3 - t2;
    }
    if (rc == PGREST_OK && nstmt != NULL)
        *nstmt = pgrest_statements_count(st);
    if (rc != PGREST_OK && err->message != NULL) {
        /* keep the message past the arena */
        static char msg[512], code[32];
        snprintf(msg, sizeof msg, "%s", err->message);
        snprintf(code, sizeof code, "%s", err->code ? err->code : "");
        err->message = msg;
        err->code = code;
        err->details = err->hint = NULL;
    }
    pgrest_arena_free(a);
    return rc;
}

static void bench_plan(pgrest_ctx *ctx, const scenario *sc, int batches, int iters)
{
    shape shapes[VARIANTS];
    make_shapes(sc, shapes, 1);
    pgrest_error err = {0};
    size_t nstmt = 0;
    int rc = plan_once(ctx, sc, &shapes[0], NULL, &err, &nstmt);
    if (rc != PGREST_OK) {
        printf("%-18s %10s  HTTP %d %s: %s\n", sc->name, "FAILED", err.http_status,
               err.code ? err.code : "", err.message ? err.message : "");
        free_shapes(shapes);
        return;
    }
    for (int i = 0; i < iters / 4 + 10; i++) /* warm-up */
        plan_once(ctx, sc, &shapes[i % VARIANTS], NULL, &err, NULL);
    double *tot = calloc((size_t)batches, sizeof *tot);
    double *st[3];
    for (int s = 0; s < 3; s++)
        st[s] = calloc((size_t)batches, sizeof *st[s]);
    for (int b = 0; b < batches; b++) {
        double t0 = now_ns();
        for (int i = 0; i < iters; i++)
            plan_once(ctx, sc, &shapes[i % VARIANTS], NULL, &err, NULL);
        tot[b] = (now_ns() - t0) / iters;
        double t[3] = {0, 0, 0};
        for (int i = 0; i < iters; i++)
            plan_once(ctx, sc, &shapes[i % VARIANTS], t, &err, NULL);
        for (int s = 0; s < 3; s++)
            st[s][b] = t[s] / iters;
    }
    double m = median(tot, batches);
    printf("%-18s %10.0f %10.0f %10.0f %10.0f %12.0f %6zu\n", sc->name, m,
           median(st[0], batches), median(st[1], batches), median(st[2], batches),
           1e9 / m, nstmt);
    free(tot);
    for (int s = 0; s < 3; s++)
        free(st[s]);
    free_shapes(shapes);
}

static int handle_once(pgrest_ctx *ctx, const scenario *sc, const shape *sh,
                       int *status, char *first_bad, size_t cap)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = build_request(a, sc, sh);
    pgrest_response *r = pgrest_handle(ctx, a, req);
    int ok = 0;
    if (r != NULL) {
        *status = pgrest_response_status(r);
        ok = *status >= 200 && *status <= 299;
        if (!ok && first_bad != NULL && first_bad[0] == '\0') {
            size_t len;
            const char *body = pgrest_response_body(r, &len);
            snprintf(first_bad, cap, "%d %.*s", *status, (int)(len > 200 ? 200 : len), body);
        }
    } else {
        *status = 0;
    }
    pgrest_arena_free(a);
    return ok;
}

static void cleanup_rows(pgrest_ctx *ctx)
{
    static const scenario del = {"cleanup", "DELETE", "/employee", "title=eq.Load%20Tester", 0, 0, 204};
    shape sh = {.query = (char *)del.query_fmt};
    int status;
    handle_once(ctx, &del, &sh, &status, NULL, 0);
}

static void bench_handle(pgrest_ctx *ctx, const scenario *sc, double seconds, long *counter)
{
    shape shapes[VARIANTS];
    char first_bad[256] = "";
    long n = 0, bad = 0;
    int status = 0;
    /* new employee ids for every variant set, like wrk's counter */
    make_shapes(sc, shapes, *counter);
    *counter += VARIANTS;
    for (int i = 0; i < 5; i++) /* warm-up: connection, prepared statements */
        handle_once(ctx, sc, &shapes[i % VARIANTS], &status, NULL, 0);
    double t0 = now_ns(), end = t0 + seconds * 1e9, t;
    do {
        if (!handle_once(ctx, sc, &shapes[n % VARIANTS], &status, first_bad, sizeof first_bad))
            bad++;
        n++;
        t = now_ns();
    } while (t < end);
    double el = (t - t0) / 1e9;
    printf("%-18s %10.0f %10.1f %8ld %8ld  %s\n", sc->name, n / el, el * 1e6 / n, n, bad,
           first_bad);
    if (sc->body >= 2)
        cleanup_rows(ctx);
    free_shapes(shapes);
}

static int set(pgrest_ctx *ctx, const char *k, const char *v)
{
    pgrest_error err = {0};
    if (pgrest_ctx_set(ctx, k, v, &err) != PGREST_OK) {
        fprintf(stderr, "pgrest-bench-inproc: %s=%s: %s\n", k, v, err.message ? err.message : "");
        return -1;
    }
    return 0;
}

static pgrest_ctx *new_ctx(const char *db)
{
    pgrest_ctx *ctx = pgrest_ctx_new();
    if (ctx == NULL || set(ctx, "db-schemas", "public") || set(ctx, "db-anon-role", "postgres") ||
        set(ctx, "db-pool", "1") || (db != NULL && set(ctx, "db-uri", db))) {
        pgrest_ctx_free(ctx);
        return NULL;
    }
    return ctx;
}

static int usage(void)
{
    fprintf(stderr,
            "usage: pgrest-bench-inproc [--db URI] [--snapshot FILE] [--batches N] [--iters N]\n"
            "                           [--seconds S] [--no-plan] [--no-handle] [scenario ...]\n"
            "  with --db, FILE is written from the database (default /tmp/pgrest-bench-schema.json);\n"
            "  without --db, FILE is read and only the plan benchmark runs.\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *db = NULL, *snap = NULL;
    int batches = 7, iters = 20000, do_plan = 1, do_handle = 1;
    double seconds = 5;
    int want[NSCEN] = {0}, any = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--db") == 0 && i + 1 < argc)
            db = argv[++i];
        else if (strcmp(a, "--snapshot") == 0 && i + 1 < argc)
            snap = argv[++i];
        else if (strcmp(a, "--batches") == 0 && i + 1 < argc)
            batches = atoi(argv[++i]);
        else if (strcmp(a, "--iters") == 0 && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (strcmp(a, "--seconds") == 0 && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (strcmp(a, "--no-plan") == 0)
            do_plan = 0;
        else if (strcmp(a, "--no-handle") == 0)
            do_handle = 0;
        else if (a[0] == '-')
            return usage();
        else {
            size_t k;
            for (k = 0; k < NSCEN && strcmp(SCENARIOS[k].name, a) != 0; k++)
                ;
            if (k == NSCEN) {
                fprintf(stderr, "pgrest-bench-inproc: unknown scenario %s\n", a);
                return 2;
            }
            want[k] = any = 1;
        }
    }
    if (batches < 1 || iters < 1 || (db == NULL && snap == NULL))
        return usage();
    if (snap == NULL)
        snap = "/tmp/pgrest-bench-schema.json";
    srand(42);
    pgrest_error err = {0};
    pgrest_ctx *live = NULL;
    if (db != NULL) {
        live = new_ctx(db);
        if (live == NULL)
            return 1;
        if (pgrest_ctx_load_schema(live, &err) != PGREST_OK ||
            pgrest_ctx_save_schema_file(live, snap, &err) != PGREST_OK) {
            fprintf(stderr, "pgrest-bench-inproc: schema: %s\n", err.message ? err.message : "?");
            pgrest_ctx_free(live);
            return 1;
        }
    }
    if (do_plan) {
        pgrest_ctx *off = new_ctx(NULL);
        if (off == NULL || pgrest_ctx_load_schema_file(off, snap, &err) != PGREST_OK) {
            fprintf(stderr, "pgrest-bench-inproc: %s: %s\n", snap, err.message ? err.message : "?");
            pgrest_ctx_free(off);
            pgrest_ctx_free(live);
            return 1;
        }
        printf("# (a) parse + plan + emit, no database (schema snapshot %s)\n", snap);
        printf("#     ns/request: median of %d batches x %d requests; total includes arena,\n"
               "#     request building and free; stages measured in a separate pass\n",
               batches, iters);
        printf("%-18s %10s %10s %10s %10s %12s %6s\n", "scenario", "total_ns", "parse_ns",
               "plan_ns", "emit_ns", "req/s/core", "stmts");
        for (size_t k = 0; k < NSCEN; k++)
            if (!any || want[k])
                bench_plan(off, &SCENARIOS[k], batches, iters);
        pgrest_ctx_free(off);
    }
    if (do_handle && live != NULL) {
        long counter = 5000000;
        printf("\n# (b) pgrest_handle in-process, live database, 1 thread, sequential, %.0f s each\n",
               seconds);
        printf("%-18s %10s %10s %8s %8s  %s\n", "scenario", "req/s", "us/req", "requests",
               "non2xx", "first non-2xx");
        for (size_t k = 0; k < NSCEN; k++)
            if (!any || want[k])
                bench_handle(live, &SCENARIOS[k], seconds, &counter);
    }
    pgrest_ctx_free(live);
    return 0;
}
