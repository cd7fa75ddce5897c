/* Non-blocking execution driven by one thread with poll() over a few
 * connections, as an event-loop host would (pgrest_execute_send /
 * pgrest_execute_consume). Each response must equal what the blocking
 * pgrest_execute gives for the same request. */
#include <check.h>
#include <libpq-fe.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "harness.h"

#define N_CONNS 3
#define N_REQUESTS 30

static pgrest_ctx *ctx;

typedef struct slot {
    PGconn *pg;
    pgrest_arena *arena;
    pgrest_pending *pending;
    int request;          /* index being served, -1 when idle */
} slot;

typedef struct expected {
    int status;
    char *body;
} expected;

static void setup(void)
{
    const char *opts[] = {"db-tx-end", "rollback", "db-anon-role", "web_user", NULL};
    ctx = harness_ctx(opts);
}

static void teardown(void)
{
    pgrest_ctx_free(ctx);
}

/* Request i: artists by id, an error, and a singular write that must be
 * rolled back after the post-check. */
static pgrest_statements *statements_for(int i, pgrest_arena *a, int *expect_error)
{
    pgrest_request *req;
    *expect_error = 0;
    if (i % 10 == 9) {
        req = pgrest_request_new(a, "GET", "/artists", "select=nope");
        *expect_error = 1;
    } else if (i % 10 == 8) {
        req = pgrest_request_new(a, "DELETE", "/playlist_track", "playlist_id=gt.0");
        pgrest_request_add_header(req, "Accept", "application/vnd.pgrst.object+json");
    } else {
        char q[64];
        snprintf(q, sizeof q, "select=id,name&id=eq.%d", i % 3 + 1);
        req = pgrest_request_new(a, "GET", "/artists", q);
    }
    pgrest_api_request *api;
    pgrest_query_plan *plan;
    pgrest_statements *st;
    pgrest_error err = {0};
    if (harness_authenticate(ctx, a, req, &err) != PGREST_OK ||
        pgrest_parse_request(ctx, a, req, &api, &err) != PGREST_OK ||
        pgrest_plan(ctx, a, api, &plan, &err) != PGREST_OK ||
        pgrest_emit_sql(ctx, a, plan, &st, &err) != PGREST_OK)
        return NULL;
    return st;
}

static void record(expected *e, int rc, const pgrest_response *resp,
                   const pgrest_error *err)
{
    if (rc == PGREST_OK) {
        size_t len;
        const char *b = pgrest_response_body(resp, &len);
        e->status = pgrest_response_status(resp);
        e->body = strndup(b, len);
    } else {
        e->status = err->http_status;
        e->body = strdup(err->code ? err->code : "");
    }
}

static void blocking_answers(PGconn *pg, expected *want)
{
    for (int i = 0; i < N_REQUESTS; i++) {
        pgrest_arena *a = pgrest_arena_new(0);
        int expect_error;
        pgrest_statements *st = statements_for(i, a, &expect_error);
        ck_assert_ptr_nonnull(st);
        pgrest_response *resp = NULL;
        pgrest_error err = {0};
        int rc = pgrest_execute(ctx, a, st, pg, &resp, &err);
        record(&want[i], rc, resp, &err);
        pgrest_arena_free(a);
    }
}

static int start_next(slot *s, int *next, expected *got)
{
    (void)got;
    if (*next >= N_REQUESTS)
        return 0;
    s->request = (*next)++;
    s->arena = pgrest_arena_new(0);
    int expect_error;
    pgrest_statements *st = statements_for(s->request, s->arena, &expect_error);
    ck_assert_ptr_nonnull(st);
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_execute_send(ctx, s->arena, st, s->pg, &s->pending, &err), PGREST_OK);
    return 1;
}

static void drive(slot *slots, expected *got)
{
    int next = 0, active = 0, done = 0, again = 0;
    for (int i = 0; i < N_CONNS; i++)
        active += start_next(&slots[i], &next, got);
    while (active > 0) {
        struct pollfd pfd[N_CONNS];
        for (int i = 0; i < N_CONNS; i++) {
            pfd[i].fd = slots[i].request >= 0 ? PQsocket(slots[i].pg) : -1;
            pfd[i].events = POLLIN |
                (slots[i].request >= 0 && pgrest_pending_wants_write(slots[i].pending) ? POLLOUT : 0);
        }
        ck_assert_int_ge(poll(pfd, N_CONNS, 5000), 1);
        for (int i = 0; i < N_CONNS; i++) {
            slot *s = &slots[i];
            if (s->request < 0 || pfd[i].revents == 0)
                continue;
            pgrest_response *resp = NULL;
            pgrest_error err = {0};
            int rc = pgrest_execute_consume(s->pending, &resp, &err);
            if (rc == PGREST_AGAIN) {
                again++;
                continue;
            }
            record(&got[s->request], rc, resp, &err);
            pgrest_arena_free(s->arena);
            s->request = -1;
            done++;
            active--;
            active += start_next(s, &next, got);
        }
    }
    ck_assert_int_eq(done, N_REQUESTS);
    ck_assert_int_gt(again, 0); /* the loop really waited on sockets */
}

START_TEST(poll_driven_requests_match_blocking_ones)
{
    slot slots[N_CONNS];
    for (int i = 0; i < N_CONNS; i++) {
        slots[i].pg = PQconnectdb(harness_db_uri());
        ck_assert_int_eq(PQstatus(slots[i].pg), CONNECTION_OK);
        slots[i].request = -1;
    }
    expected want[N_REQUESTS], got[N_REQUESTS];
    blocking_answers(slots[0].pg, want);
    drive(slots, got);
    /* the singular DELETE was refused (406) and rolled back */
    ck_assert_int_eq(want[8].status, 406);
    ck_assert_int_eq(want[9].status, 400);
    ck_assert_str_eq(want[0].body, "[{\"id\":1,\"name\":\"The Quiet Ones\"}]");
    for (int i = 0; i < N_REQUESTS; i++) {
        ck_assert_int_eq(got[i].status, want[i].status);
        ck_assert_str_eq(got[i].body, want[i].body);
        free(got[i].body);
        free(want[i].body);
    }
    for (int i = 0; i < N_CONNS; i++) {
        ck_assert_int_eq(PQtransactionStatus(slots[i].pg), PQTRANS_IDLE);
        ck_assert_int_eq(PQisnonblocking(slots[i].pg), 0);
        PQfinish(slots[i].pg);
    }
    test_response r;
    const char *count[] = {"Prefer", "count=exact", NULL};
    harness_request(ctx, "HEAD", "/playlist_track", "", count, NULL, &r);
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "0-3/4");
    harness_free(&r);
}
END_TEST

int main(void)
{
    harness_db_uri();
    Suite *s = suite_create("nonblocking");
    TCase *tc = tcase_create("poll");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, poll_driven_requests_match_blocking_ones);
    suite_add_tcase(s, tc);
    return check_run(s);
}
