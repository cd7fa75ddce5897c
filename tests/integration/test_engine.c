/* The request engine (pgrest_task_*) driven by one thread for many
 * concurrent requests over a pool smaller than the load, as an event-loop
 * host does: requests queue for connections, are woken when one is handed
 * over, and are advanced on their sockets. Every response must be
 * byte-identical (status, headers, body) to pgrest_handle's for the same
 * request: pool, authentication, OPTIONS and CORS, errors, RPC, writes
 * rolled back. Also: cancelling a running task returns its connection
 * idle, and connections the host owns get prepared statements. */
#include <check.h>
#include <libpq-fe.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check_run.h"
#include "harness.h"

#define N_REQUESTS 120
#define N_KINDS 12
/* {"role":"web_user"} signed HS256 with the harness's jwt-secret */
#define WEB_USER_TOKEN "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoid2ViX3VzZXIifQ." \
                       "6wrCou4-1o3Bp-OORQWhFf6FJwmF255Bv1kepHf4-BU"

static pgrest_ctx *ctx;

static void setup(void)
{
    const char *opts[] = {"db-pool", "2", "db-tx-end", "rollback",
                          "server-cors-allowed-origins", "http://example.com", NULL};
    ctx = harness_ctx(opts);
}

static void teardown(void)
{
    pgrest_ctx_free(ctx);
}

static pgrest_request *request_for(int i, pgrest_arena *a)
{
    pgrest_request *req;
    char q[64];
    switch (i % N_KINDS) {
    case 0:
        snprintf(q, sizeof q, "select=id,name&id=eq.%d", i % 3 + 1);
        return pgrest_request_new(a, "GET", "/artists", q);
    case 1:
        req = pgrest_request_new(a, "GET", "/artists", "select=id&order=id.desc&limit=2");
        pgrest_request_add_header(req, "Authorization", "Bearer " WEB_USER_TOKEN);
        return req;
    case 2: /* a bad token: answered without the database */
        req = pgrest_request_new(a, "GET", "/artists", "");
        pgrest_request_add_header(req, "Authorization", "Bearer a.b.c");
        return req;
    case 3: /* CORS preflight */
        req = pgrest_request_new(a, "OPTIONS", "/artists", "");
        pgrest_request_add_header(req, "Origin", "http://example.com");
        pgrest_request_add_header(req, "Access-Control-Request-Method", "POST");
        return req;
    case 4:
        return pgrest_request_new(a, "OPTIONS", "/artists", "");
    case 5: /* a planning error */
        return pgrest_request_new(a, "GET", "/artists", "select=nope");
    case 6: /* a database error: integer out of range */
        return pgrest_request_new(a, "GET", "/artists", "id=eq.99999999999");
    case 7:
        return pgrest_request_new(a, "GET", "/rpc/add", "a=1&b=2");
    case 8:
        req = pgrest_request_new(a, "POST", "/rpc/add", "");
        pgrest_request_add_header(req, "Content-Type", "application/json");
        pgrest_request_set_body(req, "{\"a\":40,\"b\":2}", 13);
        return req;
    case 9: /* a write, rolled back */
        req = pgrest_request_new(a, "POST", "/artists", "");
        pgrest_request_add_header(req, "Authorization", "Bearer " WEB_USER_TOKEN);
        pgrest_request_add_header(req, "Prefer", "return=representation");
        pgrest_request_add_header(req, "Origin", "http://example.com");
        pgrest_request_set_body(req, "{\"id\":900,\"name\":\"x\"}", 21);
        return req;
    case 10:
        return pgrest_request_new(a, "HEAD", "/artists", "id=eq.2");
    default: /* permission denied for web_anon (401 as anonymous) */
        req = pgrest_request_new(a, "DELETE", "/artists", "id=eq.1");
        return req;
    }
}

static char *render(const pgrest_response *resp)
{
    ck_assert_ptr_nonnull(resp);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    fprintf(f, "%d\n", pgrest_response_status(resp));
    for (size_t i = 0; i < pgrest_response_header_count(resp); i++) {
        const pgrest_header *h = pgrest_response_header(resp, i);
        fprintf(f, "%s: %s\n", h->name, h->value);
    }
    size_t blen;
    const char *body = pgrest_response_body(resp, &blen);
    fwrite(body, 1, blen, f);
    fclose(f);
    return text;
}

typedef struct slot {
    pgrest_arena *arena;
    pgrest_task *task;
    atomic_bool woken;
    char *got;
} slot;

static void wake(void *arg)
{
    atomic_store(&((slot *)arg)->woken, true);
}

/* Starts every request at once, then one poll() loop until all are done. */
static void drive(slot *slots, int n, int *max_queued)
{
    int done = 0;
    *max_queued = 0;
    for (int i = 0; i < n; i++) {
        slots[i].arena = pgrest_arena_new(0);
        atomic_init(&slots[i].woken, false);
        slots[i].task = pgrest_task_start(ctx, slots[i].arena, request_for(i, slots[i].arena),
                                          wake, &slots[i]);
        ck_assert_ptr_nonnull(slots[i].task);
    }
    struct pollfd *pfd = calloc((size_t)n, sizeof *pfd);
    int *who = calloc((size_t)n, sizeof *who);
    while (done < n) {
        int np = 0, queued = 0;
        done = 0;
        for (int i = 0; i < n; i++) {
            pgrest_task *t = slots[i].task;
            int w = pgrest_task_wait_state(t);
            if (w == PGREST_TASK_WAIT_CONN && atomic_exchange(&slots[i].woken, false))
                w = pgrest_task_advance(t);
            if (w == PGREST_TASK_DONE) {
                done++;
                if (slots[i].got == NULL)
                    slots[i].got = render(pgrest_task_response(t));
            } else if (w == PGREST_TASK_WAIT_CONN) {
                queued++;
                ck_assert_int_ge(pgrest_task_timeout_ms(t), 0);
                ck_assert_int_eq(pgrest_task_socket(t), -1);
            } else {
                pfd[np].fd = pgrest_task_socket(t);
                ck_assert_int_ge(pfd[np].fd, 0);
                pfd[np].events = POLLIN | (w == PGREST_TASK_WAIT_WRITE ? POLLOUT : 0);
                pfd[np].revents = 0;
                who[np++] = i;
            }
        }
        if (queued > *max_queued)
            *max_queued = queued;
        if (np == 0)
            continue;
        ck_assert_int_ge(poll(pfd, (nfds_t)np, 5000), 1);
        for (int k = 0; k < np; k++)
            if (pfd[k].revents != 0)
                pgrest_task_advance(slots[who[k]].task);
    }
    free(pfd);
    free(who);
}

/* The engine goes first, on a pool with no connection open yet: the
 * first tasks open theirs on the loop (PQconnectPoll) while the others
 * queue for them. */
START_TEST(engine_matches_handle)
{
    slot *slots = calloc(N_REQUESTS, sizeof *slots);
    int max_queued;
    drive(slots, N_REQUESTS, &max_queued);
    char *want[N_REQUESTS];
    for (int i = 0; i < N_REQUESTS; i++) {
        pgrest_arena *a = pgrest_arena_new(0);
        want[i] = render(pgrest_handle(ctx, a, request_for(i, a)));
        pgrest_arena_free(a);
    }
    /* the pool of 2 made most requests wait for a hand-over */
    ck_assert_int_gt(max_queued, 10);
    for (int i = 0; i < N_REQUESTS; i++) {
        ck_assert_msg(strcmp(want[i], slots[i].got) == 0,
                      "request %d (kind %d):\nhandle:\n%s\nengine:\n%s", i, i % N_KINDS,
                      want[i], slots[i].got);
        free(want[i]);
        free(slots[i].got);
        pgrest_arena_free(slots[i].arena);
    }
    free(slots);
    /* the kinds really are what they claim */
    pgrest_arena *a = pgrest_arena_new(0);
    ck_assert_int_eq(pgrest_response_status(pgrest_handle(ctx, a, request_for(2, a))), 401);
    ck_assert_int_eq(pgrest_response_status(pgrest_handle(ctx, a, request_for(6, a))), 400);
    pgrest_response *created = pgrest_handle(ctx, a, request_for(9, a));
    size_t len;
    ck_assert_msg(pgrest_response_status(created) == 201, "%s", pgrest_response_body(created, &len));
    pgrest_arena_free(a);
}
END_TEST

/* A host's gateway identity runs through the engine like a token would. */
START_TEST(supplied_identity)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = pgrest_request_new(a, "POST", "/artists", "");
    pgrest_request_add_header(req, "Prefer", "return=minimal");
    pgrest_request_set_body(req, "{\"id\":901,\"name\":\"y\"}", 21);
    ck_assert_int_eq(pgrest_response_status(pgrest_handle(ctx, a, req)), 401);
    pgrest_auth *auth;
    pgrest_error err;
    ck_assert_int_eq(pgrest_auth_supply(ctx, a, "web_user", "{\"sub\":\"gw\"}", &auth, &err),
                     PGREST_OK);
    pgrest_request_set_auth(req, auth);
    pgrest_response *resp = pgrest_handle(ctx, a, req);
    ck_assert_int_eq(pgrest_response_status(resp), 201);
    ck_assert_str_eq(pgrest_response_role(resp), "web_user");
    pgrest_arena_free(a);
}
END_TEST

static long long idle_connections(PGconn *admin)
{
    PGresult *r = PQexec(admin, "SELECT count(*) FROM pg_stat_activity WHERE "
                                "application_name LIKE 'pgrest%' AND state = 'idle'");
    long long n = PQresultStatus(r) == PGRES_TUPLES_OK ? atoll(PQgetvalue(r, 0, 0)) : -1;
    PQclear(r);
    return n;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Advances t as a host loop would -- on its socket, on its wake, at its
 * timeout -- until it is DONE or ms have passed; returns its wait state. */
static int drive_task(pgrest_task *t, slot *s, double ms)
{
    double end = now_ms() + ms;
    int w = pgrest_task_wait_state(t);
    while (w != PGREST_TASK_DONE && now_ms() < end) {
        long left = (long)(end - now_ms()) + 1;
        long due = pgrest_task_timeout_ms(t);
        if (due >= 0 && due < left)
            left = due;
        if (w == PGREST_TASK_WAIT_CONN) {
            if (!atomic_exchange(&s->woken, false))
                poll(NULL, 0, left < 5 ? (int)left : 5);
        } else {
            struct pollfd pfd = {.fd = pgrest_task_socket(t),
                                 .events = POLLIN | (w == PGREST_TASK_WAIT_WRITE ? POLLOUT : 0)};
            ck_assert_int_ge(pfd.fd, 0);
            poll(&pfd, 1, (int)left);
        }
        w = pgrest_task_advance(t);
    }
    return w;
}

static long long admin_count(PGconn *admin, const char *sql)
{
    PGresult *r = PQexec(admin, sql);
    long long n = PQresultStatus(r) == PGRES_TUPLES_OK ? atoll(PQgetvalue(r, 0, 0)) : -1;
    PQclear(r);
    return n;
}

#define RUNNING_SLOW "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' " \
                     "AND query LIKE '%slow%' AND pid <> pg_backend_pid()"

/* Cancels a task running api.slow(30) on c's pool: within a second it is
 * DONE with the cancellation, no backend runs the statement any more and
 * the connection is pooled idle; then the pool serves again. */
static void cancel_slow_statement(pgrest_ctx *c, int pool_size)
{
    PGconn *admin = PQconnectdb(getenv("PGREST_TEST_ADMIN_URI"));
    ck_assert_int_eq(PQstatus(admin), CONNECTION_OK);
    pgrest_arena *a = pgrest_arena_new(0);
    slot s = {.arena = a};
    atomic_init(&s.woken, false);
    pgrest_task *t = pgrest_task_start(c, a, pgrest_request_new(a, "GET", "/rpc/slow", "seconds=30"),
                                       wake, &s);
    /* connecting (a fresh pool), then the statement sleeps */
    ck_assert_int_ne(drive_task(t, &s, 700), PGREST_TASK_DONE);
    ck_assert_int_eq(admin_count(admin, RUNNING_SLOW), 1);
    double t0 = now_ms();
    pgrest_task_cancel(t);
    ck_assert_int_eq(drive_task(t, &s, 5000), PGREST_TASK_DONE);
    ck_assert_double_lt(now_ms() - t0, 1000);
    size_t len;
    ck_assert_ptr_nonnull(strstr(pgrest_response_body(pgrest_task_response(t), &len), "57014"));
    pgrest_arena_free(a);
    ck_assert_int_eq(admin_count(admin, RUNNING_SLOW), 0);
    ck_assert_int_ge(idle_connections(admin), 1);
    /* the same backends serve on: none was replaced */
    long long backends = admin_count(admin, "SELECT count(*) FROM pg_stat_activity "
                                           "WHERE application_name LIKE 'pgrest%'");
    for (int i = 0; i < 2 * pool_size; i++) {
        a = pgrest_arena_new(0);
        ck_assert_int_eq(pgrest_response_status(pgrest_handle(c, a, request_for(7, a))), 200);
        pgrest_arena_free(a);
    }
    ck_assert_int_le(admin_count(admin, "SELECT count(*) FROM pg_stat_activity "
                                        "WHERE application_name LIKE 'pgrest%'"),
                     pool_size);
    ck_assert_int_ge(backends, 1);
    PQfinish(admin);
}

/* A task cancelled mid-statement finishes with the cancellation and its
 * connection is reused, idle, by the next requests (db-pool is 2). */
START_TEST(cancel_returns_connection_clean)
{
    cancel_slow_statement(ctx, 2);
}
END_TEST

/* The same with a single pooled connection: had the cancel left it
 * dirty or taken, the next request would wait for it in vain. */
START_TEST(cancel_with_pool_of_one)
{
    const char *opts[] = {"db-pool", "1", "db-pool-acquisition-timeout", "2", NULL};
    pgrest_ctx *one = harness_ctx(opts);
    cancel_slow_statement(one, 1);
    pgrest_ctx_free(one);
}
END_TEST

/* A database that accepts TCP connections and never answers: the
 * kernel completes the handshake for the listen backlog. */
static int stalled_database(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    ck_assert_int_eq(listen(fd, 16), 0);
    socklen_t len = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &len);
    *port = ntohs(sa.sin_port);
    return fd;
}

/* A context whose database stalls, planning from a snapshot of the real
 * one's schema; its first load (blocking, the host's choice) creates the
 * pool and times out. */
static pgrest_ctx *stalled_ctx(int port)
{
    char path[] = "/tmp/pgrest-engine-schema-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    pgrest_error err;
    ck_assert_int_eq(pgrest_ctx_save_schema_file(ctx, path, &err), PGREST_OK);
    pgrest_ctx *c = pgrest_ctx_new();
    char uri[160];
    snprintf(uri, sizeof uri,
             "postgresql://authenticator@127.0.0.1:%d/pgrest_test?connect_timeout=2", port);
    const char *opts[][2] = {{"db-uri", uri}, {"db-schemas", "api"},
                             {"db-anon-role", "web_anon"}, {"db-pool", "2"},
                             {"db-config", "false"}};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        ck_assert_int_eq(pgrest_ctx_set(c, opts[i][0], opts[i][1], &err), PGREST_OK);
    ck_assert_int_ne(pgrest_ctx_load_schema(c, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_load_schema_file(c, path, &err), PGREST_OK);
    unlink(path);
    return c;
}

/* Opening a pooled connection never blocks the host's loop: while one
 * context's database stalls, the requests of another, driven by the same
 * thread, are answered; the stalled one ends at connect_timeout with
 * libpq's "timeout expired" (503 PGRST000), and pgrest_handle, the same
 * engine driven by poll(), gives that answer too. */
START_TEST(stalled_connect_does_not_block)
{
    int port;
    int listener = stalled_database(&port);
    pgrest_ctx *stalled = stalled_ctx(port);
    pgrest_arena *a = pgrest_arena_new(0);
    slot s = {.arena = a};
    atomic_init(&s.woken, false);
    double t0 = now_ms();
    pgrest_task *t = pgrest_task_start(stalled, a, pgrest_request_new(a, "GET", "/artists", ""),
                                       wake, &s);
    ck_assert_double_lt(now_ms() - t0, 500);
    ck_assert_int_ge(pgrest_task_wait_state(t), PGREST_TASK_WAIT_READ);
    ck_assert_int_ge(pgrest_task_socket(t), 0);
    ck_assert_int_gt(pgrest_task_timeout_ms(t), 0);
    ck_assert_int_le(pgrest_task_timeout_ms(t), 2001);
    /* the other context's requests go through meanwhile */
    slot others[N_KINDS];
    memset(others, 0, sizeof others);
    int max_queued;
    drive(others, N_KINDS, &max_queued);
    for (int i = 0; i < N_KINDS; i++) {
        free(others[i].got);
        pgrest_arena_free(others[i].arena);
    }
    ck_assert_int_ne(drive_task(t, &s, 0), PGREST_TASK_DONE);
    ck_assert_int_eq(drive_task(t, &s, 5000), PGREST_TASK_DONE);
    ck_assert_double_ge(now_ms() - t0, 1900);
    pgrest_response *resp = pgrest_task_response(t);
    ck_assert_int_eq(pgrest_response_status(resp), 503);
    size_t len;
    const char *body = pgrest_response_body(resp, &len);
    ck_assert_ptr_nonnull(strstr(body, "\"code\":\"PGRST000\""));
    ck_assert_ptr_nonnull(strstr(body, "timeout expired"));
    char *engine_body = strndup(body, len);
    pgrest_arena_free(a);
    a = pgrest_arena_new(0);
    t0 = now_ms();
    resp = pgrest_handle(stalled, a, pgrest_request_new(a, "GET", "/artists", ""));
    ck_assert_double_ge(now_ms() - t0, 1900);
    ck_assert_int_eq(pgrest_response_status(resp), 503);
    body = pgrest_response_body(resp, &len);
    ck_assert_uint_eq(len, strlen(engine_body));
    ck_assert_int_eq(memcmp(body, engine_body, len), 0);
    free(engine_body);
    pgrest_arena_free(a);
    pgrest_ctx_free(stalled);
    close(listener);
}
END_TEST

/* A task cancelled while its connection opens is DONE at once. */
START_TEST(cancel_while_connecting)
{
    int port;
    int listener = stalled_database(&port);
    pgrest_ctx *stalled = stalled_ctx(port);
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_task *t = pgrest_task_start(stalled, a, pgrest_request_new(a, "GET", "/artists", ""),
                                       NULL, NULL);
    ck_assert_int_ge(pgrest_task_wait_state(t), PGREST_TASK_WAIT_READ);
    ck_assert_int_eq(pgrest_task_cancel(t), PGREST_TASK_DONE);
    ck_assert_ptr_nonnull(pgrest_task_response(t));
    pgrest_arena_free(a);
    pgrest_ctx_free(stalled);
    close(listener);
}
END_TEST

/* A task still queued for a connection leaves the queue on cancel. */
START_TEST(cancel_while_queued)
{
    pgrest_arena *busy[2];
    pgrest_task *running[2];
    slot s[3];
    for (int i = 0; i < 2; i++) {
        busy[i] = pgrest_arena_new(0);
        atomic_init(&s[i].woken, false);
        running[i] = pgrest_task_start(ctx, busy[i],
                                       pgrest_request_new(busy[i], "GET", "/rpc/slow", "seconds=0.3"),
                                       wake, &s[i]);
    }
    pgrest_arena *a = pgrest_arena_new(0);
    atomic_init(&s[2].woken, false);
    pgrest_task *t = pgrest_task_start(ctx, a, request_for(0, a), wake, &s[2]);
    ck_assert_int_eq(pgrest_task_wait_state(t), PGREST_TASK_WAIT_CONN);
    ck_assert_int_eq(pgrest_task_cancel(t), PGREST_TASK_DONE);
    ck_assert_ptr_nonnull(pgrest_task_response(t));
    pgrest_arena_free(a);
    for (int i = 0; i < 2; i++) {
        int w;
        while ((w = pgrest_task_wait_state(running[i])) != PGREST_TASK_DONE) {
            struct pollfd pfd = {.fd = pgrest_task_socket(running[i]), .events = POLLIN};
            poll(&pfd, 1, 2000);
            pgrest_task_advance(running[i]);
        }
        ck_assert_int_eq(pgrest_response_status(pgrest_task_response(running[i])), 200);
        pgrest_arena_free(busy[i]);
    }
    ck_assert_int_eq(atomic_load(&s[2].woken), false);
}
END_TEST

static long long prepared_count(PGconn *pg)
{
    PGresult *r = PQexec(pg, "SELECT count(*) FROM pg_prepared_statements");
    long long n = PQresultStatus(r) == PGRES_TUPLES_OK ? atoll(PQgetvalue(r, 0, 0)) : -1;
    PQclear(r);
    return n;
}

static int execute_on(PGconn *pg, int id)
{
    pgrest_arena *a = pgrest_arena_new(0);
    char q[32];
    snprintf(q, sizeof q, "id=eq.%d", id);
    pgrest_request *req = pgrest_request_new(a, "GET", "/artists", q);
    pgrest_api_request *api;
    pgrest_query_plan *plan;
    pgrest_statements *st;
    pgrest_response *resp = NULL;
    pgrest_error err;
    ck_assert_int_eq(harness_authenticate(ctx, a, req, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_parse_request(ctx, a, req, &api, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_plan(ctx, a, api, &plan, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_emit_sql(ctx, a, plan, &st, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_execute(ctx, a, st, pg, &resp, &err), PGREST_OK);
    int status = pgrest_response_status(resp);
    pgrest_arena_free(a);
    return status;
}

/* Connections the host owns prepare their statements too, once per
 * shape; a schema reload deallocates them before the next use. */
START_TEST(host_connection_prepares)
{
    PGconn *pg = PQconnectdb(harness_db_uri());
    ck_assert_int_eq(PQstatus(pg), CONNECTION_OK);
    ck_assert_int_eq(execute_on(pg, 1), 200);
    long long after_one = prepared_count(pg);
    ck_assert_int_gt(after_one, 0);
    ck_assert_int_eq(execute_on(pg, 2), 200);
    ck_assert_int_eq(prepared_count(pg), after_one);
    pgrest_error err;
    ck_assert_int_eq(pgrest_ctx_load_schema(ctx, &err), PGREST_OK);
    ck_assert_int_eq(execute_on(pg, 3), 200);
    ck_assert_int_eq(prepared_count(pg), after_one);
    PQfinish(pg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine");
    TCase *tc = tcase_create("engine");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, engine_matches_handle);
    tcase_add_test(tc, supplied_identity);
    tcase_add_test(tc, cancel_returns_connection_clean);
    tcase_add_test(tc, cancel_while_queued);
    tcase_add_test(tc, cancel_with_pool_of_one);
    tcase_add_test(tc, stalled_connect_does_not_block);
    tcase_add_test(tc, cancel_while_connecting);
    tcase_add_test(tc, host_connection_prepares);
    suite_add_tcase(s, tc);
    return check_run(s);
}
