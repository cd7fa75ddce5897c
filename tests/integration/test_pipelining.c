/* Several requests per pooled connection (docs/ARCHITECTURE.md, "Several
 * requests per connection"): a read that finds every connection busy
 * sends its pipeline behind a running read's, and gets the connection,
 * its results next, when that one is done. Each request keeps its own
 * transaction and its own answer: an error ahead does not reach it, a
 * cancelled request ahead lets it run elsewhere, its acquisition timeout
 * still answers 504, and writes never ride behind anything. Driven by one
 * thread as an event-loop host would. */
#include <check.h>
#include <libpq-fe.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_run.h"
#include "harness.h"

typedef struct slot {
    pgrest_arena *arena;
    pgrest_task *task;
    atomic_bool woken;
} slot;

static void wake(void *arg)
{
    atomic_store(&((slot *)arg)->woken, true);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static pgrest_request *get(pgrest_arena *a, const char *path, const char *query)
{
    return pgrest_request_new(a, "GET", path, query);
}

static void start(pgrest_ctx *ctx, slot *s, pgrest_request *(*make)(pgrest_arena *, int), int i)
{
    s->arena = pgrest_arena_new(0);
    atomic_init(&s->woken, false);
    s->task = pgrest_task_start(ctx, s->arena, make(s->arena, i), wake, s);
    ck_assert_ptr_nonnull(s->task);
}

/* One turn of a host loop over the tasks: advanced on their sockets, on
 * their wakes, and at least every 10 ms. Returns how many are not DONE. */
static int step(slot *s, int n)
{
    struct pollfd pfd[64];
    int np = 0, open = 0;
    ck_assert_int_le(n, 64);
    for (int i = 0; i < n; i++) {
        int w = pgrest_task_wait_state(s[i].task);
        if (w == PGREST_TASK_WAIT_CONN && atomic_exchange(&s[i].woken, false))
            w = pgrest_task_advance(s[i].task);
        if (w == PGREST_TASK_DONE)
            continue;
        open++;
        if (w == PGREST_TASK_WAIT_READ || w == PGREST_TASK_WAIT_WRITE)
            pfd[np++] = (struct pollfd){
                .fd = pgrest_task_socket(s[i].task),
                .events = POLLIN | (w == PGREST_TASK_WAIT_WRITE ? POLLOUT : 0)};
    }
    if (open == 0)
        return 0;
    poll(pfd, (nfds_t)np, 10);
    /* advancing a task that still waits is harmless */
    for (int i = 0; i < n; i++)
        if (pgrest_task_wait_state(s[i].task) != PGREST_TASK_DONE)
            pgrest_task_advance(s[i].task);
    return open;
}

/* The host loop until every task is DONE; fails after ms. */
static void drive(slot *s, int n, double ms)
{
    double end = now_ms() + ms;
    int open;
    while ((open = step(s, n)) > 0)
        ck_assert_msg(now_ms() < end, "%d tasks still running after %.0f ms", open, ms);
}

static int status_of(const slot *s)
{
    return pgrest_response_status(pgrest_task_response(s->task));
}

static const char *body_of(const slot *s)
{
    size_t len;
    return pgrest_response_body(pgrest_task_response(s->task), &len);
}

/* pgrst_db_pipelined_total from the context's metrics. */
static long long pipelined(pgrest_ctx *ctx)
{
    pgrest_arena *a = pgrest_arena_new(0);
    const char *m = strstr(pgrest_ctx_metrics(ctx, a), "\npgrst_db_pipelined_total ");
    ck_assert_ptr_nonnull(m);
    long long n = atoll(m + strlen("\npgrst_db_pipelined_total "));
    pgrest_arena_free(a);
    return n;
}

/* Drives the tasks (deadline 10 s) until an admin query counts at
 * least want. */
static void await_count(PGconn *admin, const char *sql, long long want, slot *s, int n_slots)
{
    double end = now_ms() + 10000;
    for (;;) {
        step(s, n_slots);
        PGresult *r = PQexec(admin, sql);
        long long n = PQresultStatus(r) == PGRES_TUPLES_OK ? atoll(PQgetvalue(r, 0, 0)) : -1;
        PQclear(r);
        if (n >= want)
            return;
        ck_assert_msg(now_ms() < end, "%s: %lld, wanted %lld", sql, n, want);
    }
}

#define SLEEPING "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep' " \
                 "AND application_name LIKE 'pgrest%'"

/* What pgrest_handle answers on its own connection: the expected body. */
static char *handled(pgrest_ctx *ctx, pgrest_request *(*make)(pgrest_arena *, int), int i)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_response *resp = pgrest_handle(ctx, a, make(a, i));
    size_t len;
    char *text = NULL;
    ck_assert_int_ne(asprintf(&text, "%d %s", pgrest_response_status(resp),
                              pgrest_response_body(resp, &len)), -1);
    pgrest_arena_free(a);
    return text;
}

static void assert_answer(pgrest_ctx *ctx, const slot *s,
                          pgrest_request *(*make)(pgrest_arena *, int), int i)
{
    char *want = handled(ctx, make, i);
    char *got = NULL;
    ck_assert_int_ne(asprintf(&got, "%d %s", status_of(s), body_of(s)), -1);
    ck_assert_str_eq(got, want);
    free(want);
    free(got);
}

static pgrest_request *artist(pgrest_arena *a, int i)
{
    char q[32];
    snprintf(q, sizeof q, "id=eq.%d", i);
    return get(a, "/artists", q);
}

static pgrest_request *slow(pgrest_arena *a, int tenths)
{
    char q[32];
    snprintf(q, sizeof q, "seconds=%d.%d", tenths / 10, tenths % 10);
    return get(a, "/rpc/slow", q);
}

/* The request ahead fails in the pre-request function, before its main
 * statement's Parse: PostgreSQL skips that Parse, and the request behind
 * it, whose statement has the same text, must not execute it by the name
 * the first one meant to prepare (26000, prepared statement does not
 * exist): it is sent unnamed until the Parse is confirmed. */
static pgrest_request *gated(pgrest_arena *a, int i)
{
    pgrest_request *req = artist(a, i);
    if (i == 1)
        pgrest_request_add_header(req, "X-Gate", "fail");
    return req;
}

START_TEST(error_ahead_leaves_the_follower_alone)
{
    PGconn *admin = harness_admin_connect();
    harness_admin_exec(admin,
        "CREATE SCHEMA IF NOT EXISTS pgrest_pipeline;"
        "CREATE OR REPLACE FUNCTION pgrest_pipeline.gate() RETURNS void LANGUAGE plpgsql AS $$"
        " BEGIN IF current_setting('request.headers', true)::json->>'x-gate' = 'fail' THEN"
        "   PERFORM pg_sleep(0.5); RAISE EXCEPTION 'gate closed'; END IF; END $$;"
        "GRANT USAGE ON SCHEMA pgrest_pipeline TO PUBLIC;"
        "GRANT EXECUTE ON FUNCTION pgrest_pipeline.gate() TO PUBLIC");
    const char *opts[] = {"db-pool", "1", "db-pre-request", "pgrest_pipeline.gate", NULL};
    pgrest_ctx *ctx = harness_ctx(opts);
    slot s[2];
    start(ctx, &s[0], gated, 1);
    await_count(admin, SLEEPING, 1, s, 1);
    start(ctx, &s[1], gated, 2);
    drive(s, 2, 20000);
    ck_assert_int_eq(status_of(&s[0]), 400);
    ck_assert_ptr_nonnull(strstr(body_of(&s[0]), "gate closed"));
    ck_assert_int_eq(status_of(&s[1]), 200);
    ck_assert_int_eq(pipelined(ctx), 1);
    assert_answer(ctx, &s[1], gated, 2);
    for (int i = 0; i < 2; i++)
        pgrest_arena_free(s[i].arena);
    pgrest_ctx_free(ctx);
    PQfinish(admin);
}
END_TEST

/* Cancelling the request ahead could cancel the follower's statement:
 * the follower is let go first and runs on a connection of its own. */
START_TEST(cancel_ahead_reruns_the_follower)
{
    PGconn *admin = harness_admin_connect();
    const char *opts[] = {"db-pool", "1", NULL};
    pgrest_ctx *ctx = harness_ctx(opts);
    slot s[2];
    start(ctx, &s[0], slow, 300);
    await_count(admin, SLEEPING, 1, s, 1);
    start(ctx, &s[1], artist, 3);
    ck_assert_int_eq(pgrest_task_wait_state(s[1].task), PGREST_TASK_WAIT_CONN);
    pgrest_task_cancel(s[0].task);
    drive(s, 2, 20000);
    ck_assert_ptr_nonnull(strstr(body_of(&s[0]), "57014"));
    ck_assert_int_eq(status_of(&s[1]), 200);
    ck_assert_int_eq(pipelined(ctx), 0);
    assert_answer(ctx, &s[1], artist, 3);
    for (int i = 0; i < 2; i++)
        pgrest_arena_free(s[i].arena);
    pgrest_ctx_free(ctx);
    PQfinish(admin);
}
END_TEST

/* A follower waits for its connection as a queued request does: past
 * db-pool-acquisition-timeout it is answered PGRST003 (its read, already
 * sent, is dropped with the connection), and the pool serves on. */
START_TEST(follower_times_out_like_a_queued_request)
{
    PGconn *admin = harness_admin_connect();
    const char *opts[] = {"db-pool", "1", "db-pool-acquisition-timeout", "1", NULL};
    pgrest_ctx *ctx = harness_ctx(opts);
    slot s[2];
    start(ctx, &s[0], slow, 30);
    await_count(admin, SLEEPING, 1, s, 1);
    start(ctx, &s[1], artist, 1);
    drive(s, 2, 30000);
    ck_assert_int_eq(status_of(&s[0]), 200);
    ck_assert_int_eq(status_of(&s[1]), 504);
    ck_assert_ptr_nonnull(strstr(body_of(&s[1]), "PGRST003"));
    slot next;
    start(ctx, &next, artist, 2);
    drive(&next, 1, 20000);
    assert_answer(ctx, &next, artist, 2);
    for (int i = 0; i < 2; i++)
        pgrest_arena_free(s[i].arena);
    pgrest_arena_free(next.arena);
    pgrest_ctx_free(ctx);
    PQfinish(admin);
}
END_TEST

/* A follower that leaves after sending (its client is gone) leaves its
 * statement on the line: once the holder is done it is cancelled and its
 * results dropped, and the connection -- the same backend -- serves on. */
static long long pool_backend(PGconn *admin)
{
    PGresult *r = PQexec(admin, "SELECT pid FROM pg_stat_activity "
                                "WHERE application_name LIKE 'pgrest%' AND backend_type = 'client backend'");
    ck_assert_int_eq(PQntuples(r), 1);
    long long pid = atoll(PQgetvalue(r, 0, 0));
    PQclear(r);
    return pid;
}

START_TEST(follower_gone_is_drained)
{
    PGconn *admin = harness_admin_connect();
    const char *opts[] = {"db-pool", "1", NULL};
    pgrest_ctx *ctx = harness_ctx(opts);
    slot s[2];
    start(ctx, &s[0], slow, 5);
    await_count(admin, SLEEPING, 1, s, 1);
    long long pid = pool_backend(admin);
    start(ctx, &s[1], slow, 300);
    ck_assert_int_eq(pgrest_task_cancel(s[1].task), PGREST_TASK_DONE);
    ck_assert_ptr_nonnull(strstr(body_of(&s[1]), "57014"));
    double t0 = now_ms();
    drive(s, 2, 20000);
    ck_assert_int_eq(status_of(&s[0]), 200);
    /* well before the follower's 30 s */
    ck_assert_double_lt(now_ms() - t0, 10000);
    ck_assert_int_eq(pool_backend(admin), pid);
    await_count(admin, "SELECT count(*) FROM pg_stat_activity WHERE state = 'idle' "
                       "AND application_name LIKE 'pgrest%'", 1, s, 0);
    slot next;
    start(ctx, &next, artist, 2);
    drive(&next, 1, 20000);
    assert_answer(ctx, &next, artist, 2);
    ck_assert_int_eq(pool_backend(admin), pid);
    for (int i = 0; i < 2; i++)
        pgrest_arena_free(s[i].arena);
    pgrest_arena_free(next.arena);
    pgrest_ctx_free(ctx);
    PQfinish(admin);
}
END_TEST

/* A write (a POST call) waits in the queue, and the read after it does
 * not overtake it. */
static pgrest_request *slow_or_write(pgrest_arena *a, int i)
{
    if (i == 0)
        return slow(a, 5);
    if (i == 2)
        return artist(a, 1);
    pgrest_request *req = pgrest_request_new(a, "POST", "/rpc/slow", "");
    pgrest_request_add_header(req, "Content-Type", "application/json");
    pgrest_request_set_body(req, "{\"seconds\":0}", 13);
    return req;
}

START_TEST(writes_never_ride)
{
    PGconn *admin = harness_admin_connect();
    const char *opts[] = {"db-pool", "1", NULL};
    pgrest_ctx *ctx = harness_ctx(opts);
    slot s[3];
    start(ctx, &s[0], slow_or_write, 0);
    await_count(admin, SLEEPING, 1, s, 1);
    start(ctx, &s[1], slow_or_write, 1);
    start(ctx, &s[2], slow_or_write, 2);
    drive(s, 3, 20000);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(status_of(&s[i]), 200);
    ck_assert_int_eq(pipelined(ctx), 0);
    for (int i = 0; i < 3; i++)
        pgrest_arena_free(s[i].arena);
    pgrest_ctx_free(ctx);
    PQfinish(admin);
}
END_TEST

/* Many reads of several shapes (rows, a call, a database error, an
 * empty result) over two connections: each answer is the one
 * pgrest_handle gives alone, and some did ride. */
static pgrest_request *mixed(pgrest_arena *a, int i)
{
    switch (i % 5) {
    case 0:
        return artist(a, i % 3 + 1);
    case 1:
        return get(a, "/rpc/add", "a=1&b=2");
    case 2:
        return get(a, "/artists", "id=eq.99999999999");
    case 3:
        return get(a, "/artists", "id=eq.0");
    default:
        return slow(a, 1);
    }
}

START_TEST(many_reads_keep_their_answers)
{
    const char *opts[] = {"db-pool", "2", NULL};
    pgrest_ctx *ctx = harness_ctx(opts);
    enum { N = 60 };
    slot s[N];
    for (int i = 0; i < N; i++)
        start(ctx, &s[i], mixed, i);
    drive(s, N, 60000);
    ck_assert_int_gt(pipelined(ctx), 0);
    for (int i = 0; i < N; i++) {
        assert_answer(ctx, &s[i], mixed, i);
        pgrest_arena_free(s[i].arena);
    }
    pgrest_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pipelining");
    TCase *tc = tcase_create("pipelining");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, error_ahead_leaves_the_follower_alone);
    tcase_add_test(tc, cancel_ahead_reruns_the_follower);
    tcase_add_test(tc, follower_times_out_like_a_queued_request);
    tcase_add_test(tc, follower_gone_is_drained);
    tcase_add_test(tc, writes_never_ride);
    tcase_add_test(tc, many_reads_keep_their_answers);
    suite_add_tcase(s, tc);
    return check_run(s);
}
