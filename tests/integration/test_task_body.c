/* Request bodies in chunks against PostgreSQL (docs/embedding.md,
 * "Request bodies in chunks"): each write request is sent once with
 * pgrest_request_set_body and then through pgrest_task_write_body in
 * 1-byte chunks and in 3 big chunks, each time on the same starting
 * table; the responses (status, reason, every header, body) and the
 * tables afterwards (read back from PostgreSQL) must be the same. Plus
 * what comes before the body (a bad JWT), a body over
 * server-max-body-size, misuse and a cancel while the task waits. A
 * table and a function of their own, created before the schema cache is
 * loaded, committed to and dropped at the end. */
#include <check.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "harness.h"
#include "pgrest/pgrest.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#define TABLE_JSON "SELECT json_agg(t ORDER BY id) FROM api.tb_items t"

static pgrest_ctx *ctx;
static PGconn *admin;

static void setup(void)
{
    admin = harness_admin_connect();
    harness_admin_exec(admin,
                       "DROP TABLE IF EXISTS api.tb_items CASCADE;"
                       "CREATE TABLE api.tb_items (id integer PRIMARY KEY, name text NOT NULL,"
                       " score numeric, note text DEFAULT 'none');"
                       "CREATE FUNCTION api.tb_add(id integer, name text, score numeric)"
                       " RETURNS SETOF api.tb_items LANGUAGE sql AS"
                       " $$ INSERT INTO api.tb_items (id, name, score) VALUES (id, name, score)"
                       " RETURNING * $$;"
                       "GRANT ALL ON api.tb_items TO web_user;"
                       "GRANT EXECUTE ON FUNCTION api.tb_add TO web_user");
    const char *opts[] = {"db-anon-role", "web_user", "db-tx-end", "commit", NULL};
    ctx = harness_ctx(opts);
}

static void teardown(void)
{
    pgrest_ctx_free(ctx);
    harness_admin_exec(admin, "DROP TABLE api.tb_items CASCADE");
    PQfinish(admin);
}

static void reset_rows(void)
{
    harness_admin_exec(admin, "TRUNCATE api.tb_items;"
                              "INSERT INTO api.tb_items (id, name, score) VALUES"
                              " (100, 'kept', 1), (101, 'patched', 2)");
}

typedef struct req_spec {
    const char *method, *path, *query, *content_type, *prefer, *authorization;
} req_spec;

static pgrest_request *build(pgrest_arena *a, const req_spec *s)
{
    pgrest_request *req = pgrest_request_new(a, s->method, s->path, s->query);
    if (s->content_type != NULL)
        pgrest_request_add_header(req, "Content-Type", s->content_type);
    if (s->prefer != NULL)
        pgrest_request_add_header(req, "Prefer", s->prefer);
    if (s->authorization != NULL)
        pgrest_request_add_header(req, "Authorization", s->authorization);
    return req;
}

static char *via_set_body(const req_spec *s, const char *body)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = build(a, s);
    pgrest_request_set_body(req, body, strlen(body));
    pgrest_task *t = pgrest_task_start(ctx, a, req, NULL, NULL);
    harness_advance_until(t, PGREST_TASK_DONE);
    char *flat = harness_flatten(pgrest_task_response(t));
    pgrest_arena_free(a);
    return flat;
}

/* The body in `pieces` chunks, or 1-byte ones when pieces is 0. */
static char *via_chunks(const req_spec *s, const char *body, size_t pieces)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = build(a, s);
    pgrest_request_body_follows(req);
    pgrest_task *t = pgrest_task_start(ctx, a, req, NULL, NULL);
    ck_assert_int_eq(pgrest_task_wait_state(t), PGREST_TASK_WANTS_BODY);
    size_t len = strlen(body);
    size_t chunk = pieces == 0 ? 1 : len / pieces + 1;
    pgrest_error err = {0};
    for (size_t at = 0; at < len; at += chunk) {
        int rc = pgrest_task_write_body(t, body + at, len - at < chunk ? len - at : chunk, &err);
        ck_assert_msg(rc == PGREST_OK, "write: %d %s", rc, err.message);
        /* the task waits for more, holding no connection */
        ck_assert_int_eq(pgrest_task_advance(t), PGREST_TASK_WANTS_BODY);
        ck_assert_int_eq(pgrest_task_socket(t), -1);
    }
    ck_assert_int_eq(pgrest_task_end_body(t, &err), PGREST_OK);
    harness_advance_until(t, PGREST_TASK_DONE);
    char *flat = harness_flatten(pgrest_task_response(t));
    pgrest_arena_free(a);
    return flat;
}

/* The request through set_body, 1-byte chunks and 3 chunks, each on the
 * same starting table: the same response and the same table. Returns
 * the response, for the caller's own checks. */
static char *same_as_set_body(const req_spec *s, const char *body)
{
    reset_rows();
    char *whole = via_set_body(s, body);
    json_object *table = harness_sql_json(admin, TABLE_JSON);
    size_t pieces[] = {0, 3};
    for (size_t i = 0; i < 2; i++) {
        reset_rows();
        char *parts = via_chunks(s, body, pieces[i]);
        ck_assert_msg(strcmp(parts, whole) == 0, "%s %s (%zu pieces):\n%s\n--- vs ---\n%s",
                      s->method, s->path, pieces[i], parts, whole);
        free(parts);
        harness_assert_same_json(harness_sql_json(admin, TABLE_JSON),
                                 json_object_get(table), false);
    }
    json_object_put(table);
    return whole;
}

static void assert_status(const char *flat, const char *status)
{
    ck_assert_msg(strncmp(flat, status, strlen(status)) == 0, "%s", flat);
}

START_TEST(json_array_insert)
{
    static const req_spec s = {"POST", "/tb_items", "select=id,name,score,note", "application/json",
                               "return=representation,count=exact", NULL};
    char *r = same_as_set_body(&s, "[{\"id\":1,\"name\":\"caf\\u00e9\",\"score\":1.5},"
                                   "{\"id\":2,\"name\":\"two\",\"score\":null}]");
    assert_status(r, "201");
    ck_assert_ptr_nonnull(strstr(r, "\"name\":\"café\""));
    free(r);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.tb_items"), 4);
    /* an error the body causes, answered the same way */
    r = same_as_set_body(&s, "[{\"id\":1,\"name\":\"a\"},{\"id\":1,\"name\":\"b\"}]");
    assert_status(r, "409");
    free(r);
}
END_TEST

START_TEST(csv_insert)
{
    static const req_spec s = {"POST", "/tb_items", "", "text/csv", "return=representation", NULL};
    char *r = same_as_set_body(&s, "id,name,score\n1,one,1.25\n2,\"two, quoted\",NULL\n");
    assert_status(r, "201");
    free(r);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.tb_items WHERE"
                                             " name = 'two, quoted' AND score IS NULL"), 1);
}
END_TEST

START_TEST(ndjson_insert)
{
    static const req_spec s = {"POST", "/tb_items", "", "application/x-ndjson", NULL, NULL};
    char *r = same_as_set_body(&s, "{\"id\":1,\"name\":\"one\"}\r\n\n{\"id\":2,\"name\":\"two\"}");
    assert_status(r, "201");
    free(r);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.tb_items"), 4);
    /* a bad line: the same 400 */
    r = same_as_set_body(&s, "{\"id\":1,\"name\":\"one\"}\n[1]\n");
    assert_status(r, "400");
    free(r);
}
END_TEST

START_TEST(patch)
{
    static const req_spec s = {"PATCH", "/tb_items", "id=eq.101", "application/json",
                               "return=representation", NULL};
    char *r = same_as_set_body(&s, "{\"name\":\"patched again\",\"score\":42}");
    assert_status(r, "200");
    free(r);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT score FROM api.tb_items WHERE id = 101"), 42);
}
END_TEST

START_TEST(rpc_post)
{
    static const req_spec s = {"POST", "/rpc/tb_add", "", "application/json", NULL, NULL};
    char *r = same_as_set_body(&s, "{\"id\":7,\"name\":\"by rpc\",\"score\":3}");
    assert_status(r, "200");
    free(r);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.tb_items WHERE id = 7"), 1);
}
END_TEST

/* PostgREST authenticates before it reads the body: DONE at start */
START_TEST(bad_jwt_before_the_body)
{
    static const req_spec s = {"POST", "/tb_items", "", "application/json", NULL,
                               "Bearer eyJhbGciOiJIUzI1NiJ9.e30.bad"};
    reset_rows();
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = build(a, &s);
    pgrest_request_body_follows(req);
    pgrest_task *t = pgrest_task_start(ctx, a, req, NULL, NULL);
    ck_assert_int_eq(pgrest_task_wait_state(t), PGREST_TASK_DONE);
    char *early = harness_flatten(pgrest_task_response(t));
    assert_status(early, "401");
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_task_write_body(t, "[]", 2, &err), PGREST_ERR_INTERNAL);
    pgrest_arena_free(a);
    char *whole = via_set_body(&s, "[{\"id\":1,\"name\":\"x\"}]");
    ck_assert_str_eq(early, whole);
    free(early);
    free(whole);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.tb_items"), 2);
}
END_TEST

/* past server-max-body-size: the answer a whole body that long gets, and
 * nothing written */
START_TEST(body_too_large)
{
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "server-max-body-size", "40", &err), PGREST_OK);
    static const req_spec s = {"POST", "/tb_items", "", "application/json", NULL, NULL};
    static const char body[] = "[{\"id\":1,\"name\":\"this body is too long\"}]";
    ck_assert_uint_gt(strlen(body), 40);
    reset_rows();
    char *whole = via_set_body(&s, body);
    assert_status(whole, "413");
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = build(a, &s);
    pgrest_request_body_follows(req);
    pgrest_task *t = pgrest_task_start(ctx, a, req, NULL, NULL);
    int rc = PGREST_OK;
    size_t sent = 0;
    while (rc == PGREST_OK && sent < strlen(body))
        rc = pgrest_task_write_body(t, body + sent++, 1, &err);
    ck_assert_int_eq(rc, PGREST_ERR_REQUEST);
    ck_assert_uint_eq(sent, 41);
    ck_assert_str_eq(err.code, "PGRST413");
    ck_assert_int_eq(pgrest_task_wait_state(t), PGREST_TASK_DONE);
    char *parts = harness_flatten(pgrest_task_response(t));
    ck_assert_str_eq(parts, whole);
    ck_assert_int_eq(pgrest_task_end_body(t, &err), PGREST_ERR_REQUEST);
    pgrest_arena_free(a);
    free(parts);
    free(whole);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.tb_items"), 2);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "server-max-body-size", "10485760", &err), PGREST_OK);
}
END_TEST

/* A body of N bytes costs about N bytes of the request arena (64 MiB by
 * default): a 36 MB PATCH and a 36 MB call, each in 16 KiB chunks, are
 * taken whole and written. Before, the collector's doubling left every
 * buffer it outgrew in the arena (16 MiB was the most a chunked body
 * could be) and the parse copied the body once more (32 MiB for a whole
 * one): both answered 500 PGRST500. */
#define BIG_BODY_TEXT 36000000 /* the text value, in bytes */

static int big_body(const req_spec *s, const char *prefix, const char *suffix)
{
    size_t np = strlen(prefix), ns = strlen(suffix), len = np + BIG_BODY_TEXT + ns;
    char *body = malloc(len);
    ck_assert_ptr_nonnull(body);
    memcpy(body, prefix, np);
    for (size_t i = 0; i < BIG_BODY_TEXT; i++)
        body[np + i] = (char)('a' + i % 10);
    memcpy(body + np + BIG_BODY_TEXT, suffix, ns);
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = build(a, s);
    pgrest_request_body_follows(req);
    pgrest_task *t = pgrest_task_start(ctx, a, req, NULL, NULL);
    pgrest_error err = {0};
    for (size_t at = 0; at < len; at += 16384) {
        int rc = pgrest_task_write_body(t, body + at, len - at < 16384 ? len - at : 16384, &err);
        ck_assert_msg(rc == PGREST_OK, "write at %zu: %d %s", at, rc, err.message);
    }
    ck_assert_int_eq(pgrest_task_end_body(t, &err), PGREST_OK);
    harness_advance_until(t, PGREST_TASK_DONE);
    int status = pgrest_response_status(pgrest_task_response(t));
    pgrest_arena_free(a);
    free(body);
    return status;
}

START_TEST(big_bodies)
{
    /* 36 MB through json-c and PostgreSQL takes minutes under memcheck;
     * the collector's bounds are the unit tests' (tests/unit) */
    if (RUNNING_ON_VALGRIND)
        return;
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "server-max-body-size", "67108864", &err), PGREST_OK);
    reset_rows();
    static const req_spec big_patch = {"PATCH", "/tb_items", "id=eq.101", "application/json",
                                       NULL, NULL};
    ck_assert_int_eq(big_body(&big_patch, "{\"name\":\"", "\",\"score\":7}"), 204);
    static const req_spec call = {"POST", "/rpc/tb_add", "select=id", "application/json",
                                  NULL, NULL};
    ck_assert_int_eq(big_body(&call, "{\"id\":8,\"score\":9,\"name\":\"", "\"}"), 200);
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM api.tb_items WHERE name = repeat('abcdefghij', %d)"
             " AND (id, score) IN ((101, 7), (8, 9))", BIG_BODY_TEXT / 10);
    ck_assert_int_eq(harness_sql_long(admin, sql), 2);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.tb_items"), 3);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "server-max-body-size", "10485760", &err), PGREST_OK);
}
END_TEST

START_TEST(misuse)
{
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_task_write_body(NULL, "x", 1, &err), PGREST_ERR_INTERNAL);
    ck_assert_int_eq(pgrest_task_end_body(NULL, &err), PGREST_ERR_INTERNAL);
    static const req_spec s = {"POST", "/tb_items", "", "application/json", NULL, NULL};
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = build(a, &s);
    pgrest_request_set_body(req, "[]", 2);
    pgrest_task *t = pgrest_task_start(ctx, a, req, NULL, NULL);
    /* no following body: nothing to write, whatever the task waits for */
    ck_assert_int_eq(pgrest_task_write_body(t, "x", 1, &err), PGREST_ERR_INTERNAL);
    ck_assert_str_eq(err.code, "PGRST500");
    ck_assert_int_eq(pgrest_task_end_body(t, &err), PGREST_ERR_INTERNAL);
    harness_advance_until(t, PGREST_TASK_DONE);
    ck_assert_int_eq(pgrest_response_status(pgrest_task_response(t)), 201);
    pgrest_arena_free(a);
    /* after the end */
    a = pgrest_arena_new(0);
    req = build(a, &s);
    pgrest_request_body_follows(req);
    t = pgrest_task_start(ctx, a, req, NULL, NULL);
    ck_assert_int_eq(pgrest_task_write_body(t, NULL, 3, &err), PGREST_ERR_INTERNAL);
    ck_assert_int_eq(pgrest_task_end_body(t, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_task_write_body(t, "[]", 2, &err), PGREST_ERR_INTERNAL);
    ck_assert_int_eq(pgrest_task_end_body(t, &err), PGREST_ERR_INTERNAL);
    harness_advance_until(t, PGREST_TASK_DONE);
    /* the empty body of a POST, as set_body's */
    char *parts = harness_flatten(pgrest_task_response(t));
    pgrest_arena_free(a);
    char *whole = via_set_body(&s, "");
    ck_assert_str_eq(parts, whole);
    free(parts);
    free(whole);
}
END_TEST

/* cancelled while it waits for its body: DONE at once, no connection
 * held or taken, nothing written */
START_TEST(cancel_while_waiting)
{
    static const req_spec s = {"POST", "/tb_items", "", "application/json", NULL, NULL};
    reset_rows();
    /* more tasks than the pool has connections: none is held */
    pgrest_arena *arenas[6];
    pgrest_task *tasks[6];
    pgrest_error err = {0};
    for (size_t i = 0; i < 6; i++) {
        arenas[i] = pgrest_arena_new(0);
        pgrest_request *req = build(arenas[i], &s);
        pgrest_request_body_follows(req);
        tasks[i] = pgrest_task_start(ctx, arenas[i], req, NULL, NULL);
        ck_assert_int_eq(pgrest_task_write_body(tasks[i], "[{\"id\":9,", 9, &err), PGREST_OK);
    }
    /* a request meanwhile gets a connection at once */
    char *r = via_set_body(&s, "[{\"id\":5,\"name\":\"five\"}]");
    assert_status(r, "201");
    free(r);
    for (size_t i = 0; i < 6; i++) {
        ck_assert_int_eq(pgrest_task_cancel(tasks[i]), PGREST_TASK_DONE);
        ck_assert_ptr_nonnull(pgrest_task_response(tasks[i]));
        ck_assert_int_eq(pgrest_task_write_body(tasks[i], "\"name\":\"x\"}]", 12, &err),
                         PGREST_ERR_INTERNAL);
        pgrest_arena_free(arenas[i]);
    }
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.tb_items"), 3);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("task_body");
    TCase *c = tcase_create("task_body");
    tcase_add_checked_fixture(c, setup, teardown);
    tcase_set_timeout(c, 60);
    tcase_add_test(c, json_array_insert);
    tcase_add_test(c, csv_insert);
    tcase_add_test(c, ndjson_insert);
    tcase_add_test(c, patch);
    tcase_add_test(c, rpc_post);
    tcase_add_test(c, bad_jwt_before_the_body);
    tcase_add_test(c, body_too_large);
    tcase_add_test(c, big_bodies);
    tcase_add_test(c, misuse);
    tcase_add_test(c, cancel_while_waiting);
    suite_add_tcase(s, c);
    return s;
}

int main(void)
{
    return check_run(suite());
}
