/* A backend that dies under a request. PostgreSQL says why before it
 * closes the connection (pg_terminate_backend: 57P01 "terminating
 * connection due to administrator command"); PostgREST (hasql) reports that
 * server error, mapSQLtoHTTP answers 503 with its SQLSTATE. hasql-pool
 * returns a connection after a server error without looking at it, so the
 * next session on it fails at its first send (ClientError, 503 PGRST001)
 * and closes it; the one after gets a working connection. */
#include <check.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_run.h"
#include "harness.h"

static pgrest_ctx *ctx;

static void setup(void)
{
    const char *opts[] = {"db-pool", "1", NULL};
    ctx = harness_ctx(opts);
}

static void teardown(void)
{
    pgrest_ctx_free(ctx);
}

static void *slow_request(void *out)
{
    harness_request(ctx, "GET", "/rpc/slow", "seconds=20", NULL, NULL, out);
    return NULL;
}

static PGconn *admin_conn(void)
{
    const char *uri = getenv("PGREST_TEST_ADMIN_URI");
    ck_assert_msg(uri != NULL, "PGREST_TEST_ADMIN_URI is needed to terminate a backend");
    PGconn *pg = PQconnectdb(uri);
    ck_assert_int_eq(PQstatus(pg), CONNECTION_OK);
    return pg;
}

/* Terminates the backend running pg_sleep once it shows up; true if one was. */
static bool terminate_sleeper(PGconn *admin)
{
    for (int tries = 0; tries < 200; tries++) {
        PGresult *r = PQexec(admin,
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE wait_event = 'PgSleep'"
            " AND pid <> pg_backend_pid()");
        bool done = PQresultStatus(r) == PGRES_TUPLES_OK && atoi(PQgetvalue(r, 0, 0)) > 0;
        PQclear(r);
        if (done)
            return true;
        nanosleep(&(struct timespec){.tv_nsec = 50 * 1000 * 1000}, NULL);
    }
    return false;
}

START_TEST(terminated_backend_answers_its_sqlstate)
{
    PGconn *admin = admin_conn();
    test_response slow = {0};
    pthread_t th;
    pthread_create(&th, NULL, slow_request, &slow);
    bool terminated = terminate_sleeper(admin);
    pthread_join(th, NULL);
    PQfinish(admin);
    ck_assert_msg(terminated, "the request's backend never showed up in pg_stat_activity");
    ck_assert_int_eq(slow.status, 503);
    ck_assert_msg(strstr(slow.body, "\"code\":\"57P01\"") != NULL, "body: %s", slow.body);
    ck_assert_msg(strstr(slow.body, "terminating connection due to administrator command") != NULL,
                  "body: %s", slow.body);
    harness_free(&slow);

    /* the dead connection came back to the pool: its next session fails */
    test_response lost = {0};
    harness_request(ctx, "GET", "/rpc/slow", "seconds=0", NULL, NULL, &lost);
    ck_assert_int_eq(lost.status, 503);
    ck_assert_msg(strstr(lost.body, "\"code\":\"PGRST001\"") != NULL, "body: %s", lost.body);
    ck_assert_msg(strstr(lost.body, "no connection to the server") != NULL, "body: %s", lost.body);
    harness_free(&lost);

    /* closed then: the only slot reconnects */
    test_response next = {0};
    harness_request(ctx, "GET", "/rpc/slow", "seconds=0", NULL, NULL, &next);
    ck_assert_int_eq(next.status, 200);
    harness_free(&next);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("connection_lost");
    TCase *tc = tcase_create("terminated");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, terminated_backend_answers_its_sqlstate);
    suite_add_tcase(s, tc);
    return check_run(s);
}
