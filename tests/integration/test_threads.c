/* One context shared by many threads (pgrest.h "Threads"): workers call
 * pgrest_handle concurrently with a mix of reads, embeds, writes, RPC and
 * bad requests, each answer compared with the expected status and body,
 * while the schema cache is reloaded over and over by every path at once:
 * pgrest_ctx_load_schema (and the metrics read) in one thread, a snapshot
 * saved and loaded back plus NOTIFY pgrst (the listener thread reloads) in
 * another -- and the configuration too: pgrest_ctx_set, whole reloads
 * (pgrest_ctx_reload_config, valid and invalid) and NOTIFY 'reload config'
 * in a third, swapping snapshots (JWT cache included) under the requests.
 * Run in the plain, ASan and ThreadSanitizer builds
 * (scripts/test.sh); a data race, a use of a released schema cache or a
 * wrong answer fails it. */
#include <check.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_run.h"
#include "harness.h"

#define N_WORKERS 8
#define N_ITERATIONS 50
#define N_KINDS 9
/* {"role":"web_user"} signed HS256 with the harness's jwt-secret */
#define WEB_USER_TOKEN "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoid2ViX3VzZXIifQ." \
                       "6wrCou4-1o3Bp-OORQWhFf6FJwmF255Bv1kepHf4-BU"

static pgrest_ctx *ctx;

typedef struct shared {
    atomic_int workers_left;
    atomic_int failures;
    atomic_int answered;
    atomic_int reloads;
    atomic_int reload_errors;
    atomic_int snapshot_reloads;
    atomic_int notifies;
    atomic_int config_swaps;
    atomic_int config_refusals;
    pthread_mutex_t lock;   /* guards first_failure */
    char first_failure[1024];
} shared;

static shared sh;

static void setup(void)
{
    /* fewer pooled connections than workers: acquisition waits too */
    const char *opts[] = {"db-anon-role", "web_user", "db-tx-end", "rollback",
                          "db-pool", "3", "db-pool-acquisition-timeout", "30",
                          NULL};
    ctx = harness_ctx(opts);
}

static void teardown(void)
{
    pgrest_ctx_free(ctx);
}

typedef struct expectation {
    const char *method, *path, *query, *body, *token;
    int status;
    char want[256];
} expectation;

/* Request kind k for worker w, iteration i; the values vary with w and i
 * so that a response handed to the wrong thread cannot match. */
static void request_for(int k, int w, int i, expectation *e, char *query,
                        size_t qn, char *body, size_t bn)
{
    static const char *const names[] = {"The Quiet Ones", "Blue Note Trio", "Solo Pianist"};
    int id = (w + i) % 3 + 1, a = w * 1000 + i, b = i;
    e->body = NULL;
    e->token = NULL;
    e->query = query;
    query[0] = '\0';
    switch (k) {
    case 0: /* read */
        e->method = "GET", e->path = "/artists", e->status = 200;
        snprintf(query, qn, "select=id,name&id=eq.%d", id);
        snprintf(e->want, sizeof e->want, "[{\"id\":%d,\"name\":\"%s\"}]", id, names[id - 1]);
        break;
    case 1: /* many-to-one embed */
        e->method = "GET", e->path = "/albums", e->status = 200;
        snprintf(query, qn, "select=title,artists(name)&id=eq.3");
        snprintf(e->want, sizeof e->want,
                 "[{\"title\":\"Late Set\",\"artists\":{\"name\": \"Blue Note Trio\"}}]");
        break;
    case 2: /* insert, rolled back by db-tx-end */
        e->method = "POST", e->path = "/artists", e->status = 201, e->body = body;
        snprintf(query, qn, "select=name,formed");
        snprintf(body, bn, "{\"name\":\"Band %d-%d\",\"formed\":%d}", w, i, a);
        snprintf(e->want, sizeof e->want, "[{\"name\":\"Band %d-%d\",\"formed\":%d}]", w, i, a);
        break;
    case 3: /* update, rolled back */
        e->method = "PATCH", e->path = "/artists", e->status = 200, e->body = body;
        snprintf(query, qn, "id=eq.%d&select=id,formed", id);
        snprintf(body, bn, "{\"formed\":%d}", a);
        snprintf(e->want, sizeof e->want, "[{\"id\":%d,\"formed\":%d}]", id, a);
        break;
    case 4: /* RPC by POST */
        e->method = "POST", e->path = "/rpc/add", e->status = 200, e->body = body;
        snprintf(body, bn, "{\"a\":%d,\"b\":%d}", a, b);
        snprintf(e->want, sizeof e->want, "%d", a + b);
        break;
    case 5: /* RPC by GET, default argument */
        e->method = "GET", e->path = "/rpc/add", e->status = 200;
        snprintf(query, qn, "a=%d", a);
        snprintf(e->want, sizeof e->want, "%d", a + 1);
        break;
    case 6: /* set-returning RPC with a filter */
        e->method = "GET", e->path = "/rpc/album_tracks", e->status = 200;
        snprintf(query, qn, "album=1&select=title&order=position");
        snprintf(e->want, sizeof e->want, "[{\"title\":\"Dawn\"}, \n {\"title\":\"Noon\"}]");
        break;
    case 7: /* authenticated read: the JWT cache of the snapshot */
        e->method = "GET", e->path = "/artists", e->status = 200, e->token = WEB_USER_TOKEN;
        snprintf(query, qn, "select=id&id=eq.%d", id);
        snprintf(e->want, sizeof e->want, "[{\"id\":%d}]", id);
        break;
    default: /* planning error */
        e->method = "GET", e->path = "/artists", e->status = 400;
        snprintf(query, qn, "select=nope%d", w);
        snprintf(e->want, sizeof e->want,
                 "{\"code\":\"42703\",\"details\":null,\"hint\":null,"
                 "\"message\":\"column artists.nope%d does not exist\"}", w);
        break;
    }
}

static void record_failure(int w, int i, const expectation *e, int status, const char *body,
                 size_t len)
{
    if (atomic_fetch_add(&sh.failures, 1) > 0)
        return;
    pthread_mutex_lock(&sh.lock);
    snprintf(sh.first_failure, sizeof sh.first_failure,
             "worker %d iteration %d: %s %s?%s: want %d %s, got %d %.*s", w, i,
             e->method, e->path, e->query, e->status, e->want, status, (int)len, body);
    pthread_mutex_unlock(&sh.lock);
}

static void *worker(void *arg)
{
    int w = (int)(intptr_t)arg;
    for (int i = 0; i < N_ITERATIONS; i++) {
        expectation e;
        char query[128], body[128];
        request_for((w + i) % N_KINDS, w, i, &e, query, sizeof query, body, sizeof body);
        pgrest_arena *a = pgrest_arena_new(0);
        pgrest_request *req = a ? pgrest_request_new(a, e.method, e.path, e.query) : NULL;
        if (req == NULL) {
            record_failure(w, i, &e, -1, "out of memory", 13);
            pgrest_arena_free(a);
            continue;
        }
        if (e.token != NULL)
            pgrest_request_add_header(req, "Authorization", "Bearer " WEB_USER_TOKEN);
        if (e.body != NULL) {
            pgrest_request_add_header(req, "Content-Type", "application/json");
            pgrest_request_add_header(req, "Prefer", "return=representation");
            pgrest_request_set_body(req, e.body, strlen(e.body));
        }
        pgrest_response *resp = pgrest_handle(ctx, a, req);
        size_t len = 0;
        const char *got = resp ? pgrest_response_body(resp, &len) : "";
        int status = resp ? pgrest_response_status(resp) : -1;
        if (status != e.status || len != strlen(e.want) || memcmp(got, e.want, len) != 0)
            record_failure(w, i, &e, status, got, len);
        atomic_fetch_add(&sh.answered, 1);
        pgrest_arena_free(a);
    }
    atomic_fetch_sub(&sh.workers_left, 1);
    return NULL;
}

/* Reloads until the workers are done (at least three times), reading the
 * readiness flag and the metrics in between. */
static void *reloader(void *arg)
{
    (void)arg;
    while (atomic_load(&sh.workers_left) > 0 || atomic_load(&sh.reloads) < 3) {
        pgrest_error err = {0};
        if (pgrest_ctx_load_schema(ctx, &err) == PGREST_OK)
            atomic_fetch_add(&sh.reloads, 1);
        else if (atomic_fetch_add(&sh.reload_errors, 1) > 10)
            break;
        if (!pgrest_ctx_ready(ctx))
            atomic_fetch_add(&sh.reload_errors, 1);
        pgrest_arena *a = pgrest_arena_new(0);
        const char *m = pgrest_ctx_metrics(ctx, a);
        if (m == NULL || strstr(m, "pgrst_schema_cache_loads_total") == NULL)
            atomic_fetch_add(&sh.reload_errors, 1);
        pgrest_arena_free(a);
    }
    return NULL;
}

/* Saves the cache as a snapshot and loads it back, and asks the listener
 * for a reload by NOTIFY, until the workers are done. */
static void *snapshot_reloader(void *arg)
{
    const char *path = arg;
    PGconn *pg = PQconnectdb(harness_db_uri());
    if (PQstatus(pg) != CONNECTION_OK)
        atomic_fetch_add(&sh.reload_errors, 1);
    while (atomic_load(&sh.workers_left) > 0 || atomic_load(&sh.snapshot_reloads) < 3) {
        pgrest_error err = {0};
        if (pgrest_ctx_save_schema_file(ctx, path, &err) != PGREST_OK ||
            pgrest_ctx_load_schema_file(ctx, path, &err) != PGREST_OK) {
            if (atomic_fetch_add(&sh.reload_errors, 1) > 10)
                break;
            continue;
        }
        int n = atomic_fetch_add(&sh.snapshot_reloads, 1);
        if (PQstatus(pg) == CONNECTION_OK) {
            PGresult *r = PQexec(pg, n % 2 ? "NOTIFY pgrst, 'reload config'"
                                           : "NOTIFY pgrst, 'reload schema'");
            if (PQresultStatus(r) == PGRES_COMMAND_OK)
                atomic_fetch_add(&sh.notifies, 1);
            else
                atomic_fetch_add(&sh.reload_errors, 1);
            PQclear(r);
        }
    }
    PQfinish(pg);
    return NULL;
}

/* The options of setup() and harness_ctx, for whole reloads. */
static int reload_all(int i)
{
    static const char *const keys[] = {
        "db-uri", "db-schemas", "db-anon-role", "db-pool", "jwt-secret", "db-tx-end",
        "db-pool-acquisition-timeout", "db-max-rows", "server-timing-enabled"};
    const char *values[] = {
        harness_db_uri(), "api", "web_user", "3", "reallyreallyreallyreallyverysafe",
        "rollback", "30", i % 2 ? "100" : "50", i % 2 ? "true" : "false"};
    pgrest_error err = {0};
    return pgrest_ctx_reload_config(ctx, keys, values, sizeof keys / sizeof keys[0], &err);
}

/* Swaps the configuration under the requests without changing their
 * answers: db-max-rows above any result, server-timing (a header), a new
 * JWT cache (jwt-cache-max-entries), whole reloads; an invalid reload
 * must change nothing. */
static void *config_reloader(void *arg)
{
    (void)arg;
    for (int i = 0; atomic_load(&sh.workers_left) > 0 || i < 6; i++) {
        pgrest_error err = {0};
        int rc;
        switch (i % 4) {
        case 0:
            rc = pgrest_ctx_set(ctx, "db-max-rows", i % 8 ? "40" : "20", &err);
            break;
        case 1:
            rc = pgrest_ctx_set(ctx, "jwt-cache-max-entries", i % 8 == 1 ? "500" : "1000", &err);
            break;
        case 2:
            rc = reload_all(i);
            break;
        default: {
            const char *keys[] = {"db-uri", "jwt-secret"};
            const char *values[] = {harness_db_uri(), "short"};
            if (pgrest_ctx_reload_config(ctx, keys, values, 2, &err) == PGREST_ERR_CONFIG &&
                pgrest_ctx_get(ctx, "jwt-secret") != NULL)
                atomic_fetch_add(&sh.config_refusals, 1);
            else
                atomic_fetch_add(&sh.reload_errors, 1);
            continue;
        }
        }
        if (rc == PGREST_OK)
            atomic_fetch_add(&sh.config_swaps, 1);
        else if (atomic_fetch_add(&sh.reload_errors, 1) > 10)
            break;
    }
    return NULL;
}

START_TEST(shared_context_under_concurrent_requests_and_reloads)
{
    atomic_init(&sh.workers_left, N_WORKERS);
    atomic_init(&sh.failures, 0);
    atomic_init(&sh.answered, 0);
    atomic_init(&sh.reloads, 0);
    atomic_init(&sh.reload_errors, 0);
    atomic_init(&sh.snapshot_reloads, 0);
    atomic_init(&sh.notifies, 0);
    atomic_init(&sh.config_swaps, 0);
    atomic_init(&sh.config_refusals, 0);
    pthread_mutex_init(&sh.lock, NULL);
    sh.first_failure[0] = '\0';

    char path[] = "/tmp/pgrest-threads-snapshot.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_start_listener(ctx, NULL, NULL, &err), PGREST_OK);

    pthread_t workers[N_WORKERS], rel, snap, conf;
    ck_assert_int_eq(pthread_create(&rel, NULL, reloader, NULL), 0);
    ck_assert_int_eq(pthread_create(&conf, NULL, config_reloader, NULL), 0);
    ck_assert_int_eq(pthread_create(&snap, NULL, snapshot_reloader, path), 0);
    for (int w = 0; w < N_WORKERS; w++)
        ck_assert_int_eq(pthread_create(&workers[w], NULL, worker, (void *)(intptr_t)w), 0);
    for (int w = 0; w < N_WORKERS; w++)
        pthread_join(workers[w], NULL);
    pthread_join(rel, NULL);
    pthread_join(snap, NULL);
    pthread_join(conf, NULL);
    pthread_mutex_destroy(&sh.lock);
    unlink(path);

    ck_assert_msg(atomic_load(&sh.failures) == 0, "%d wrong answers; first: %s",
                  atomic_load(&sh.failures), sh.first_failure);
    ck_assert_int_eq(atomic_load(&sh.answered), N_WORKERS * N_ITERATIONS);
    ck_assert_int_eq(atomic_load(&sh.reload_errors), 0);
    ck_assert_int_ge(atomic_load(&sh.reloads), 3);
    ck_assert_int_ge(atomic_load(&sh.snapshot_reloads), 3);
    ck_assert_int_ge(atomic_load(&sh.notifies), 3);
    ck_assert_int_ge(atomic_load(&sh.config_swaps), 4);
    ck_assert_int_ge(atomic_load(&sh.config_refusals), 1);
    ck_assert_str_eq(pgrest_ctx_get(ctx, "jwt-secret"), "reallyreallyreallyreallyverysafe");

    /* every request was counted once (Double samples, "44.0"), and the
     * writes were rolled back */
    pgrest_arena *a = pgrest_arena_new(0);
    const char *m = pgrest_ctx_metrics(ctx, a);
    char line[128];
    int bad = 0;
    for (int w = 0; w < N_WORKERS; w++)
        for (int i = 0; i < N_ITERATIONS; i++)
            bad += (w + i) % N_KINDS == N_KINDS - 1;
    snprintf(line, sizeof line, "pgrst_requests_total{status=\"4xx\"} %d.0\n", bad);
    ck_assert_msg(strstr(m, line) != NULL, "want %s in\n%s", line, m);
    snprintf(line, sizeof line, "pgrst_requests_total{status=\"2xx\"} %d.0\n",
             N_WORKERS * N_ITERATIONS - bad);
    ck_assert_msg(strstr(m, line) != NULL, "want %s in\n%s", line, m);
    pgrest_arena_free(a);
    test_response r;
    const char *count[] = {"Prefer", "count=exact", NULL};
    harness_request(ctx, "HEAD", "/artists", "", count, NULL, &r);
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "0-2/3");
    harness_free(&r);
}
END_TEST

/* ---- concurrent loads on a fresh context: the first loads race to create
 * the pool; failing loads all copy their error into the context. */
#define N_LOADERS 6
#define N_LOADS 4

typedef struct loader_arg {
    pgrest_ctx *ctx;
    pthread_barrier_t *start;
    int ok, failed_as_expected;
    char first_problem[256];
} loader_arg;

static void *loader(void *arg)
{
    loader_arg *la = arg;
    pthread_barrier_wait(la->start);
    for (int i = 0; i < N_LOADS; i++) {
        pgrest_error err = {0};
        int rc = pgrest_ctx_load_schema(la->ctx, &err);
        if (rc == PGREST_OK)
            la->ok++;
        else if (rc == PGREST_ERR_CONNECTION && err.code != NULL &&
                 strcmp(err.code, "PGRST000") == 0 && err.details != NULL)
            la->failed_as_expected++;
        else if (la->first_problem[0] == '\0')
            snprintf(la->first_problem, sizeof la->first_problem, "rc %d code %s: %s",
                     rc, err.code ? err.code : "-", err.message ? err.message : "-");
    }
    return NULL;
}

static pgrest_ctx *fresh_ctx(const char *db_uri)
{
    pgrest_ctx *c = pgrest_ctx_new();
    pgrest_error err = {0};
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(pgrest_ctx_set(c, "db-uri", db_uri, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(c, "db-schemas", "api", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(c, "db-anon-role", "web_anon", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(c, "db-pool", "2", &err), PGREST_OK);
    return c;
}

/* Starts N_LOADERS threads at once on c; returns the summed counts. */
static void run_loaders(pgrest_ctx *c, int *ok, int *failed_as_expected)
{
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, N_LOADERS);
    pthread_t t[N_LOADERS];
    loader_arg la[N_LOADERS];
    for (int i = 0; i < N_LOADERS; i++) {
        memset(&la[i], 0, sizeof la[i]);
        la[i].ctx = c;
        la[i].start = &start;
        ck_assert_int_eq(pthread_create(&t[i], NULL, loader, &la[i]), 0);
    }
    *ok = *failed_as_expected = 0;
    for (int i = 0; i < N_LOADERS; i++) {
        pthread_join(t[i], NULL);
        ck_assert_msg(la[i].first_problem[0] == '\0', "loader %d: %s", i, la[i].first_problem);
        *ok += la[i].ok;
        *failed_as_expected += la[i].failed_as_expected;
    }
    pthread_barrier_destroy(&start);
}

START_TEST(concurrent_first_loads)
{
    pgrest_ctx *c = fresh_ctx(harness_db_uri());
    int ok, failed;
    run_loaders(c, &ok, &failed);
    ck_assert_int_eq(ok, N_LOADERS * N_LOADS);
    ck_assert_int_eq(failed, 0);
    test_response r;
    harness_request(c, "GET", "/artists", "select=id&id=eq.2", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "[{\"id\":2}]");
    harness_free(&r);
    pgrest_ctx_free(c);
}
END_TEST

START_TEST(concurrent_failing_loads)
{
    /* nothing listens on port 1: every load fails at once with PGRST000 */
    pgrest_ctx *c = fresh_ctx("postgresql://authenticator@127.0.0.1:1/none?connect_timeout=5");
    int ok, failed;
    run_loaders(c, &ok, &failed);
    ck_assert_int_eq(ok, 0);
    ck_assert_int_eq(failed, N_LOADERS * N_LOADS);
    ck_assert_int_eq(pgrest_ctx_ready(c), 0);
    pgrest_ctx_free(c);
}
END_TEST

int main(void)
{
    harness_db_uri();
    Suite *s = suite_create("threads");
    TCase *tc = tcase_create("shared_ctx");
    /* ThreadSanitizer runs this several times slower than the plain build */
    tcase_set_timeout(tc, 240);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, shared_context_under_concurrent_requests_and_reloads);
    suite_add_tcase(s, tc);
    TCase *loads = tcase_create("loads");
    tcase_set_timeout(loads, 120);
    tcase_add_test(loads, concurrent_first_loads);
    tcase_add_test(loads, concurrent_failing_loads);
    suite_add_tcase(s, loads);
    return check_run(s);
}
