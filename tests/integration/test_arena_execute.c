/* Arena exhaustion is sticky through execution too (issue #14): the
 * benchmark scenarios on the Chinook database (../shared/bench), for every
 * arena cap from 1 KiB in 64-byte steps until every path completes, through
 * the stages (parse, plan, emit, then pgrest_execute, or
 * pgrest_execute_send/consume, on a connection of ours) and through
 * pgrest_handle (pooled). Every run either
 * gives the uncapped run's response or fails with PGREST_ERR_INTERNAL /
 * 500 PGRST500; never a crash, never PGREST_OK with a missing piece. The
 * writes run with Prefer: tx=rollback so the database is left as it was.
 * Skipped when PGREST_TEST_CHINOOK_URI is not set. */
#include <check.h>
#include <libpq-fe.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "harness.h"
#include "pgrest/pgrest.h"

#define SWEEP_FIRST 1024
#define SWEEP_STEP 64
#define OOM_CODE "PGRST500"

static const char *chinook_uri(void)
{
    const char *uri = getenv("PGREST_TEST_CHINOOK_URI");
    if (uri == NULL || *uri == '\0') {
        fprintf(stderr, "PGREST_TEST_CHINOOK_URI not set: skipping\n");
        exit(77);
    }
    return uri;
}

static pgrest_ctx *ctx;
static PGconn *conn;

static void setup(void)
{
    ctx = pgrest_ctx_new();
    pgrest_error err = {0};
    const char *opts[][2] = {{"db-uri", chinook_uri()}, {"db-schemas", "public"},
                             {"db-anon-role", "postgres"}, {"db-pool", "2"},
                             {"db-tx-end", "commit-allow-override"}};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        ck_assert_int_eq(pgrest_ctx_set(ctx, opts[i][0], opts[i][1], &err), PGREST_OK);
    ck_assert_msg(pgrest_ctx_load_schema(ctx, &err) == PGREST_OK, "%s", err.message);
    conn = PQconnectdb(chinook_uri());
    ck_assert_int_eq(PQstatus(conn), CONNECTION_OK);
}

static void teardown(void)
{
    PQfinish(conn);
    pgrest_ctx_free(ctx);
}

#define EMPLOYEE(id)                                                            \
    "{\"employee_id\":" id ",\"first_name\":\"Virtual\",\"last_name\":\"User\","   \
    "\"title\":\"Load Tester\",\"reports_to\":1,\"birth_date\":\"1920-01-01\","    \
    "\"hire_date\":\"2020-01-01\",\"address\":\"666 10 Street SW\",\"city\":"      \
    "\"Calgary\",\"state\":\"AB\",\"country\":\"Canada\",\"postal_code\":\"T2P 5G\"," \
    "\"phone\":\"(403) 246-9887\",\"fax\":\"+1 (403) 246-9899\",\"email\":"        \
    "\"vu@chinookcorp.com\"}"

static const struct scenario {
    const char *method, *path, *query, *body;
} scenarios[] = {
    {"GET", "/artist", "select=*&artist_id=eq.17", NULL},
    {"GET", "/album", "select=*,track(*,genre(*))&artist_id=eq.17", NULL},
    {"GET", "/album", "select=*,track(*,genre(*))", NULL},
    {"POST", "/employee", "", EMPLOYEE("101")},
    {"POST", "/employee",
     "columns=employee_id,first_name,last_name,title,reports_to,birth_date,"
     "hire_date,address,city,state,country,postal_code,phone,fax,email",
     "[" EMPLOYEE("102") "," EMPLOYEE("103") "]"},
    {"PATCH", "/actor", "actor_id=eq.7", "{\"last_update\":\"now\"}"},
    {"GET", "/rpc/add_them", "a=1&b=2&c=3&d=4&e=5", NULL},
    {"GET", "/rpc/ret_artists", "select=*&artist_id=eq.17", NULL},
    {"GET", "/rpc/ret_albums",
     "select=album_id,title,artist_id,track(*,genre(*))&artist_id=eq.17", NULL},
};

static pgrest_request *build(pgrest_arena *a, const struct scenario *s)
{
    pgrest_request *req = pgrest_request_new(a, s->method, s->path, s->query);
    if (req != NULL && s->body != NULL) {
        pgrest_request_add_header(req, "Content-Type", "application/json");
        pgrest_request_add_header(req, "Prefer", "tx=rollback");
        pgrest_request_set_body(req, s->body, strlen(s->body));
    }
    return req;
}

/* Status, headers (but Server-Timing) and body, or "oom". */
static char *render(const pgrest_response *resp)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    ck_assert_ptr_nonnull(resp);
    fprintf(f, "%d\n", pgrest_response_status(resp));
    for (size_t i = 0; i < pgrest_response_header_count(resp); i++) {
        const pgrest_header *h = pgrest_response_header(resp, i);
        ck_assert_msg(h->name != NULL && h->value != NULL, "incomplete header %zu", i);
        if (strcmp(h->name, "Server-Timing") != 0)
            fprintf(f, "%s: %s\n", h->name, h->value);
    }
    size_t blen = 0;
    const char *body = pgrest_response_body(resp, &blen);
    ck_assert_ptr_nonnull(body);
    fprintf(f, "%.*s", (int)blen, body);
    fclose(f);
    bool oom = pgrest_response_status(resp) == 500 && strstr(out, OOM_CODE) != NULL;
    if (oom) {
        free(out);
        return strdup("oom");
    }
    return out;
}

static char *oom_or_error(int rc, const pgrest_error *err)
{
    ck_assert_msg(rc == PGREST_ERR_INTERNAL && err->code != NULL &&
                      strcmp(err->code, OOM_CODE) == 0 && err->http_status == 500,
                  "stage failed with %d %s %s", rc, err->code ? err->code : "(null)",
                  err->message ? err->message : "(null)");
    return strdup("oom");
}

/* pgrest_execute_send + pgrest_execute_consume, polling the socket */
static int execute_nonblocking(pgrest_arena *a, const pgrest_statements *st,
                               pgrest_response **resp, pgrest_error *err)
{
    pgrest_pending *p = NULL;
    int rc = pgrest_execute_send(ctx, a, st, conn, &p, err);
    while (rc == PGREST_OK || rc == PGREST_AGAIN) {
        rc = pgrest_execute_consume(p, resp, err);
        if (rc != PGREST_AGAIN)
            break;
        struct pollfd fd = {PQsocket(conn), POLLIN | (pgrest_pending_wants_write(p) ? POLLOUT : 0),
                            0};
        ck_assert_int_ge(poll(&fd, 1, 10000), 1);
    }
    return rc;
}

/* The stages (authenticate, parse, plan, emit, execute) on our
 * connection, execution blocking or not. */
static char *run_stages(const struct scenario *s, size_t cap, bool nonblocking)
{
    pgrest_arena *a = pgrest_arena_new(cap);
    pgrest_request *req = build(a, s);
    pgrest_api_request *api;
    pgrest_query_plan *plan;
    pgrest_statements *st;
    pgrest_response *resp = NULL;
    pgrest_error err = {0};
    char *out;
    int rc = req == NULL ? PGREST_ERR_INTERNAL : PGREST_OK;
    if (req == NULL)
        out = strdup("oom");
    else if ((rc = harness_authenticate(ctx, a, req, &err)) != PGREST_OK ||
             (rc = pgrest_parse_request(ctx, a, req, &api, &err)) != PGREST_OK ||
             (rc = pgrest_plan(ctx, a, api, &plan, &err)) != PGREST_OK ||
             (rc = pgrest_emit_sql(ctx, a, plan, &st, &err)) != PGREST_OK ||
             (rc = nonblocking ? execute_nonblocking(a, st, &resp, &err)
                               : pgrest_execute(ctx, a, st, conn, &resp, &err)) != PGREST_OK)
        out = oom_or_error(rc, &err);
    else
        out = render(resp);
    /* the connection is idle again whatever happened */
    ck_assert_int_eq(PQtransactionStatus(conn), PQTRANS_IDLE);
    pgrest_arena_free(a);
    return out;
}

static char *run_handle(const struct scenario *s, size_t cap)
{
    pgrest_arena *a = pgrest_arena_new(cap);
    pgrest_request *req = build(a, s);
    char *out;
    if (req == NULL) {
        out = strdup("oom");
    } else {
        pgrest_response *resp = pgrest_handle(ctx, a, req);
        ck_assert_msg(resp != NULL, "pgrest_handle returned NULL at cap %zu", cap);
        out = render(resp);
    }
    pgrest_arena_free(a);
    return out;
}

/* Sweeping stops this far past the first cap where both paths succeed
 * (the arena's block layout makes success not quite monotonic). */
#define PAST_SUCCESS 4096
#define SWEEP_LIMIT ((size_t)1 << 20)

START_TEST(sweep_scenarios)
{
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        const struct scenario *s = &scenarios[i];
        char *base_stages = run_stages(s, 0, false);
        char *base_handle = run_handle(s, 0);
        ck_assert_str_ne(base_stages, "oom");
        ck_assert_str_ne(base_handle, "oom");
        size_t first_ok = 0, runs = 0;
        for (size_t cap = SWEEP_FIRST; cap <= SWEEP_LIMIT; cap += SWEEP_STEP) {
            if (first_ok != 0 && cap > first_ok + PAST_SUCCESS)
                break;
            char *st = run_stages(s, cap, false);
            char *nb = run_stages(s, cap, true);
            char *hd = run_handle(s, cap);
            ck_assert_msg(strcmp(nb, "oom") == 0 || strcmp(nb, base_stages) == 0,
                          "%s %s?%s cap %zu non-blocking:\n%s\nwant\n%s", s->method, s->path,
                          s->query, cap, nb, base_stages);
            ck_assert_msg(strcmp(st, "oom") == 0 || strcmp(st, base_stages) == 0,
                          "%s %s?%s cap %zu stages:\n%s\nwant\n%s", s->method, s->path,
                          s->query, cap, st, base_stages);
            ck_assert_msg(strcmp(hd, "oom") == 0 || strcmp(hd, base_handle) == 0,
                          "%s %s?%s cap %zu handle:\n%s\nwant\n%s", s->method, s->path,
                          s->query, cap, hd, base_handle);
            runs++;
            bool ok = strcmp(st, "oom") != 0 && strcmp(nb, "oom") != 0 &&
                      strcmp(hd, "oom") != 0;
            if (ok && first_ok == 0)
                first_ok = cap;
            free(st);
            free(nb);
            free(hd);
        }
        ck_assert_msg(first_ok != 0, "%s %s: still out of memory at 1 MiB", s->method, s->path);
        fprintf(stderr, "%s %s?%.40s: %zu caps, complete from %zu bytes\n", s->method,
                s->path, s->query, runs, first_ok);
        free(base_stages);
        free(base_handle);
    }
}
END_TEST

int main(void)
{
    chinook_uri();
    Suite *s = suite_create("arena_execute");
    TCase *tc = tcase_create("sweep");
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, sweep_scenarios);
    suite_add_tcase(s, tc);
    return check_run(s);
}
