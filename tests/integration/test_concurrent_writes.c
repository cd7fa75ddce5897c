/* 1,000 POSTs, single rows and bulks of 20, from several threads sharing
 * one context (and its pool): afterwards the table holds exactly the rows
 * of the requests answered 201 and nothing of those that failed. Every
 * tenth request carries a bad row (NULL in a NOT NULL column) so it must
 * fail as a whole (PostgREST: one statement in one transaction). */
#include <check.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "harness.h"

#define N_THREADS 8
#define N_REQUESTS 1000
#define BULK 20

static pgrest_ctx *ctx;
static int status_of[N_REQUESTS];
static int rows_of[N_REQUESTS];

/* Request r inserts ids r*BULK .. r*BULK+n-1, so ids never collide. */
static char *body_for(int r, int *n_rows)
{
    int n = r % 2 == 0 ? 1 : BULK;
    bool bad = r % 10 == 3;
    size_t cap = (size_t)n * 64 + 8;
    char *b = malloc(cap);
    size_t len = 0;
    if (n > 1)
        b[len++] = '[';
    for (int i = 0; i < n; i++) {
        bool null_note = bad && i == n - 1;
        len += (size_t)snprintf(b + len, cap - len, "%s{\"id\":%d,\"request\":%d,\"note\":%s}",
                                i ? "," : "", r * BULK + i, r,
                                null_note ? "null" : "\"ok\"");
    }
    if (n > 1)
        b[len++] = ']';
    b[len] = '\0';
    *n_rows = n;
    return b;
}

static void *writer(void *arg)
{
    int t = (int)(long)arg;
    for (int r = t; r < N_REQUESTS; r += N_THREADS) {
        char *body = body_for(r, &rows_of[r]);
        test_response resp;
        const char *h[] = {"Content-Type", "application/json", NULL};
        harness_request(ctx, "POST", "/ledger", "", h, body, &resp);
        status_of[r] = resp.status;
        harness_free(&resp);
        free(body);
    }
    return NULL;
}

START_TEST(table_holds_exactly_the_acknowledged_rows)
{
    const char *opts[] = {"db-anon-role", "web_user", "db-pool", "4",
                          "db-tx-end", "commit", NULL};
    ctx = harness_ctx(opts);
    PGconn *pg = PQconnectdb(harness_db_uri());
    ck_assert_int_eq(PQstatus(pg), CONNECTION_OK);
    PQclear(PQexec(pg, "SET ROLE web_user; DELETE FROM api.ledger"));
    pthread_t th[N_THREADS];
    for (long i = 0; i < N_THREADS; i++)
        pthread_create(&th[i], NULL, writer, (void *)i);
    for (int i = 0; i < N_THREADS; i++)
        pthread_join(th[i], NULL);
    long expected_rows = 0;
    int created = 0, failed = 0;
    for (int r = 0; r < N_REQUESTS; r++) {
        ck_assert_msg(status_of[r] == 201 || status_of[r] == 400,
                      "request %d answered %d", r, status_of[r]);
        if (status_of[r] == 201) {
            expected_rows += rows_of[r];
            created++;
        } else {
            failed++;
        }
        ck_assert_int_eq(status_of[r] == 400, r % 10 == 3);
    }
    ck_assert_int_eq(failed, N_REQUESTS / 10);
    PGresult *res = PQexec(pg, "SELECT count(*), count(DISTINCT request) FROM api.ledger");
    ck_assert_int_eq(atol(PQgetvalue(res, 0, 0)), expected_rows);
    ck_assert_int_eq(atoi(PQgetvalue(res, 0, 1)), created);
    PQclear(res);
    /* no row of a failed request, and every acknowledged request complete */
    res = PQexec(pg, "SELECT request, count(*) FROM api.ledger GROUP BY request");
    for (int i = 0; i < PQntuples(res); i++) {
        int r = atoi(PQgetvalue(res, i, 0));
        ck_assert_int_eq(status_of[r], 201);
        ck_assert_int_eq(atoi(PQgetvalue(res, i, 1)), rows_of[r]);
    }
    PQclear(res);
    PQclear(PQexec(pg, "DELETE FROM api.ledger"));
    PQfinish(pg);
    pgrest_ctx_free(ctx);
}
END_TEST

int main(void)
{
    harness_db_uri();
    Suite *s = suite_create("concurrent_writes");
    TCase *tc = tcase_create("writes");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, table_holds_exactly_the_acknowledged_rows);
    suite_add_tcase(s, tc);
    return check_run(s);
}
