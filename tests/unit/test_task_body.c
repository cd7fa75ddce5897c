/* Request bodies in chunks without a database (docs/embedding.md,
 * "Request bodies in chunks"): the collector's bounds, and the task API
 * on a context with a schema snapshot and no pool. Every request that
 * needs no database -- and every one that does, which answers 503
 * PGRST000 here -- must answer through chunks exactly as through
 * pgrest_request_set_body: status, headers and body. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "engine/body_collector.h"
#include "util/arena.h"
#include "pgrest/pgrest.h"

/* ------------------------------------------------------------ collector */

START_TEST(collector_keeps_bytes_in_order)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgr_body_collector c;
    pgr_body_collector_init(&c, a, 100000);
    size_t len;
    ck_assert_str_eq(pgr_body_collector_text(&c, &len), "");
    ck_assert_uint_eq(len, 0);
    /* 1-byte chunks across several growths, a NUL byte among them */
    char expected[5000];
    for (size_t i = 0; i < sizeof expected; i++) {
        expected[i] = (char)(i % 251);
        ck_assert_int_eq(pgr_body_collector_append(&c, &expected[i], 1), PGR_BODY_APPENDED);
    }
    ck_assert_int_eq(pgr_body_collector_append(&c, NULL, 0), PGR_BODY_APPENDED);
    const char *text = pgr_body_collector_text(&c, &len);
    ck_assert_uint_eq(len, sizeof expected);
    ck_assert(memcmp(text, expected, len) == 0);
    ck_assert_int_eq(text[len], '\0');
    pgrest_arena_free(a);
}
END_TEST

/* exactly the limit is allowed, one byte more is not, and a refused
 * chunk leaves the body as it was */
START_TEST(collector_limit_is_exact)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgr_body_collector c;
    pgr_body_collector_init(&c, a, 10);
    ck_assert_int_eq(pgr_body_collector_append(&c, "0123456", 7), PGR_BODY_APPENDED);
    ck_assert_int_eq(pgr_body_collector_append(&c, "7890", 4), PGR_BODY_TOO_LARGE);
    ck_assert_int_eq(pgr_body_collector_append(&c, "789", 3), PGR_BODY_APPENDED);
    ck_assert_int_eq(pgr_body_collector_append(&c, "x", 1), PGR_BODY_TOO_LARGE);
    /* a length that would wrap the running total is refused, not wrapped */
    ck_assert_int_eq(pgr_body_collector_append(&c, "x", SIZE_MAX), PGR_BODY_TOO_LARGE);
    size_t len;
    ck_assert_str_eq(pgr_body_collector_text(&c, &len), "0123456789");
    ck_assert_uint_eq(len, 10);
    pgrest_arena_free(a);
}
END_TEST

/* the arena's cap is an error, never a crash */
START_TEST(collector_out_of_memory)
{
    pgrest_arena *a = pgrest_arena_new(64 * 1024);
    pgr_body_collector c;
    pgr_body_collector_init(&c, a, 1 << 20);
    char chunk[4096];
    memset(chunk, 'x', sizeof chunk);
    pgr_body_append r = PGR_BODY_APPENDED;
    size_t appended = 0;
    while (r == PGR_BODY_APPENDED && appended < (1 << 20)) {
        r = pgr_body_collector_append(&c, chunk, sizeof chunk);
        appended += sizeof chunk;
    }
    ck_assert_int_eq(r, PGR_BODY_NO_MEMORY);
    pgrest_arena_free(a);
}
END_TEST

/* ------------------------------------------------------------ the task */

static pgrest_ctx *ctx;

#define SECRET "reallyreallyreallyreallyverysafe"

static void setup(void)
{
    ctx = pgrest_ctx_new();
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-schemas", "api", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-anon-role", "web_anon", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "jwt-secret", SECRET, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "server-max-body-size", "64", &err), PGREST_OK);
    char path[1024];
    snprintf(path, sizeof path, "%s/schema_snapshot.json", getenv("PGREST_TEST_FIXTURES"));
    ck_assert_msg(pgrest_ctx_load_schema_file(ctx, path, &err) == PGREST_OK, "snapshot: %s",
                  err.message);
}

static void teardown(void)
{
    pgrest_ctx_free(ctx);
}

/* A response flattened to one string: status, headers in order, body. */
static char *flatten(const pgrest_response *resp)
{
    ck_assert_ptr_nonnull(resp);
    size_t cap = 8192, len = 0;
    char *out = malloc(cap);
    len += (size_t)snprintf(out + len, cap - len, "%d\n", pgrest_response_status(resp));
    for (size_t i = 0; i < pgrest_response_header_count(resp); i++) {
        const pgrest_header *h = pgrest_response_header(resp, i);
        len += (size_t)snprintf(out + len, cap - len, "%s: %s\n", h->name, h->value);
    }
    size_t blen;
    const char *body = pgrest_response_body(resp, &blen);
    ck_assert_uint_lt(len + blen + 2, cap);
    out[len++] = '\n';
    memcpy(out + len, body, blen);
    out[len + blen] = '\0';
    return out;
}

typedef struct req_spec {
    const char *method, *path, *query, *content_type, *authorization;
} req_spec;

static pgrest_request *build(pgrest_arena *a, const req_spec *s)
{
    pgrest_request *req = pgrest_request_new(a, s->method, s->path, s->query);
    if (s->content_type != NULL)
        pgrest_request_add_header(req, "Content-Type", s->content_type);
    if (s->authorization != NULL)
        pgrest_request_add_header(req, "Authorization", s->authorization);
    return req;
}

static char *via_set_body(const req_spec *s, const char *body, size_t len)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = build(a, s);
    pgrest_request_set_body(req, body, len);
    pgrest_task *t = pgrest_task_start(ctx, a, req, NULL, NULL);
    ck_assert_int_eq(pgrest_task_wait_state(t), PGREST_TASK_DONE);
    char *flat = flatten(pgrest_task_response(t));
    pgrest_arena_free(a);
    return flat;
}

/* The body in chunks of `chunk` bytes; *refused is whether a write or
 * the end returned an error. */
static char *via_chunks(const req_spec *s, const char *body, size_t len, size_t chunk,
                        bool *refused)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = build(a, s);
    pgrest_request_body_follows(req);
    pgrest_task *t = pgrest_task_start(ctx, a, req, NULL, NULL);
    ck_assert_int_eq(pgrest_task_wait_state(t), PGREST_TASK_WANTS_BODY);
    ck_assert_int_eq(pgrest_task_socket(t), -1);
    ck_assert_int_eq(pgrest_task_timeout_ms(t), -1);
    ck_assert_ptr_null(pgrest_task_response(t));
    ck_assert_int_eq(pgrest_task_advance(t), PGREST_TASK_WANTS_BODY);
    pgrest_error err = {0};
    int rc = PGREST_OK;
    for (size_t at = 0; at < len && rc == PGREST_OK; at += chunk)
        rc = pgrest_task_write_body(t, body + at, len - at < chunk ? len - at : chunk, &err);
    if (rc == PGREST_OK)
        rc = pgrest_task_end_body(t, &err);
    *refused = rc != PGREST_OK;
    ck_assert_int_eq(pgrest_task_wait_state(t), PGREST_TASK_DONE);
    char *flat = flatten(pgrest_task_response(t));
    pgrest_arena_free(a);
    return flat;
}

static void assert_same(const req_spec *s, const char *body, bool expect_refused)
{
    size_t len = strlen(body);
    char *whole = via_set_body(s, body, len);
    size_t chunks[] = {1, 2, 7, len / 3 + 1, len > 0 ? len : 1};
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        bool refused;
        char *parts = via_chunks(s, body, len, chunks[i], &refused);
        ck_assert_msg(strcmp(parts, whole) == 0, "%s %s, chunks of %zu:\n%s\nvs\n%s",
                      s->method, s->path, chunks[i], parts, whole);
        ck_assert_int_eq(refused, expect_refused);
        free(parts);
    }
    free(whole);
}

static const req_spec json_post = {"POST", "/albums", "", "application/json", NULL};

START_TEST(answers_equal_set_body)
{
    /* no pool: what needs the database answers 503 PGRST000 either way */
    assert_same(&json_post, "[{\"id\":1,\"title\":\"a\"}]", false);
    assert_same(&json_post, "", false);
    /* errors the body causes */
    assert_same(&json_post, "[{\"id\":1,", false);
    assert_same(&json_post, "[{\"id\":1},{\"title\":\"x\"}]", false);
    static const req_spec csv = {"POST", "/albums", "", "text/csv", NULL};
    assert_same(&csv, "id,title\n1,a\n2,b", false);
    static const req_spec nd = {"POST", "/albums", "", "application/x-ndjson", NULL};
    assert_same(&nd, "{\"id\":1}\n{\"id\":2,\"x\":1}\n", false);
    static const req_spec patch = {"PATCH", "/albums", "id=eq.1", "application/json", NULL};
    assert_same(&patch, "{\"title\":\"b\"}", false);
    static const req_spec rpc = {"POST", "/rpc/add", "", "application/json", NULL};
    assert_same(&rpc, "{\"a\":1,\"b\":2}", false);
    assert_same(&rpc, "{\"a\":1,\"nope\":2}", false);
    /* errors that do not depend on the body */
    static const req_spec missing = {"POST", "/nowhere", "", "application/json", NULL};
    assert_same(&missing, "{}", false);
    static const req_spec options = {"OPTIONS", "/albums", "", NULL, NULL};
    assert_same(&options, "", false);
    /* exactly server-max-body-size (64) is taken */
    char at_limit[65];
    memset(at_limit, ' ', 64);
    at_limit[0] = '[';
    at_limit[63] = ']';
    at_limit[64] = '\0';
    assert_same(&json_post, at_limit, false);
}
END_TEST

/* one byte more: the 413 a whole body gets, returned by the write */
START_TEST(too_large_is_413)
{
    char over[66];
    memset(over, ' ', 65);
    over[0] = '[';
    over[64] = ']';
    over[65] = '\0';
    assert_same(&json_post, over, true);
    /* the write past the limit returns it, later ones repeat it */
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = build(a, &json_post);
    pgrest_request_body_follows(req);
    pgrest_task *t = pgrest_task_start(ctx, a, req, NULL, NULL);
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_task_write_body(t, over, 64, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_task_write_body(t, "x", 1, &err), PGREST_ERR_REQUEST);
    ck_assert_int_eq(err.http_status, 413);
    ck_assert_str_eq(err.code, "PGRST413");
    ck_assert_int_eq(pgrest_task_wait_state(t), PGREST_TASK_DONE);
    ck_assert_ptr_null(pgrest_response_role(pgrest_task_response(t)));
    err = (pgrest_error){0};
    ck_assert_int_eq(pgrest_task_write_body(t, "x", 1, &err), PGREST_ERR_REQUEST);
    ck_assert_str_eq(err.code, "PGRST413");
    err = (pgrest_error){0};
    ck_assert_int_eq(pgrest_task_end_body(t, &err), PGREST_ERR_REQUEST);
    ck_assert_str_eq(err.code, "PGRST413");
    ck_assert_int_eq(pgrest_response_status(pgrest_task_response(t)), 413);
    pgrest_arena_free(a);
}
END_TEST

/* PostgREST authenticates before it reads the body: a bad token is
 * answered at start, and the body is never wanted */
START_TEST(bad_jwt_answers_before_the_body)
{
    static const req_spec bad = {"POST", "/albums", "", "application/json", "Bearer not.a.jwt"};
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = build(a, &bad);
    pgrest_request_body_follows(req);
    pgrest_task *t = pgrest_task_start(ctx, a, req, NULL, NULL);
    ck_assert_int_eq(pgrest_task_wait_state(t), PGREST_TASK_DONE);
    ck_assert_int_eq(pgrest_response_status(pgrest_task_response(t)), 401);
    char *early = flatten(pgrest_task_response(t));
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_task_write_body(t, "[]", 2, &err), PGREST_ERR_INTERNAL);
    ck_assert_str_eq(err.code, "PGRST500");
    ck_assert_int_eq(pgrest_task_end_body(t, &err), PGREST_ERR_INTERNAL);
    pgrest_arena_free(a);
    /* the same answer the whole body gets */
    char *whole = via_set_body(&bad, "[]", 2);
    ck_assert_str_eq(early, whole);
    free(early);
    free(whole);
}
END_TEST

/* a CORS preflight is answered at start too */
START_TEST(preflight_answers_at_start)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = pgrest_request_new(a, "OPTIONS", "/albums", "");
    pgrest_request_add_header(req, "Origin", "http://example.com");
    pgrest_request_add_header(req, "Access-Control-Request-Method", "POST");
    pgrest_request_body_follows(req);
    pgrest_task *t = pgrest_task_start(ctx, a, req, NULL, NULL);
    ck_assert_int_eq(pgrest_task_wait_state(t), PGREST_TASK_DONE);
    ck_assert_int_eq(pgrest_response_status(pgrest_task_response(t)), 200);
    pgrest_arena_free(a);
}
END_TEST

START_TEST(misuse_is_refused)
{
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_task_write_body(NULL, "x", 1, &err), PGREST_ERR_INTERNAL);
    ck_assert_str_eq(err.message, "Invalid arguments");
    ck_assert_str_eq(err.details, "pgrest_task_write_body");
    ck_assert_int_eq(pgrest_task_end_body(NULL, &err), PGREST_ERR_INTERNAL);
    ck_assert_str_eq(err.details, "pgrest_task_end_body");
    ck_assert_int_eq(pgrest_task_write_body(NULL, "x", 1, NULL), PGREST_ERR_INTERNAL);
    pgrest_request_body_follows(NULL);

    /* a task without a following body */
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = build(a, &json_post);
    pgrest_request_set_body(req, "[]", 2);
    pgrest_task *t = pgrest_task_start(ctx, a, req, NULL, NULL);
    ck_assert_int_eq(pgrest_task_write_body(t, "x", 1, &err), PGREST_ERR_INTERNAL);
    ck_assert_str_eq(err.code, "PGRST500");
    ck_assert_int_eq(pgrest_task_end_body(t, &err), PGREST_ERR_INTERNAL);
    pgrest_arena_free(a);

    /* NULL data with a length; after the end */
    a = pgrest_arena_new(0);
    req = build(a, &json_post);
    pgrest_request_body_follows(req);
    t = pgrest_task_start(ctx, a, req, NULL, NULL);
    ck_assert_int_eq(pgrest_task_write_body(t, NULL, 1, &err), PGREST_ERR_INTERNAL);
    ck_assert_int_eq(pgrest_task_wait_state(t), PGREST_TASK_WANTS_BODY);
    ck_assert_int_eq(pgrest_task_write_body(t, NULL, 0, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_task_write_body(t, "[]", 2, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_task_end_body(t, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_task_write_body(t, "x", 1, &err), PGREST_ERR_INTERNAL);
    ck_assert_str_eq(err.details, "pgrest_task_write_body: the task does not wait for a body");
    ck_assert_int_eq(pgrest_task_end_body(t, &err), PGREST_ERR_INTERNAL);
    pgrest_arena_free(a);
}
END_TEST

/* set_body after body_follows takes the body back: no waiting */
START_TEST(set_body_undoes_body_follows)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = build(a, &json_post);
    pgrest_request_body_follows(req);
    pgrest_request_set_body(req, "[", 1);
    pgrest_task *t = pgrest_task_start(ctx, a, req, NULL, NULL);
    ck_assert_int_eq(pgrest_task_wait_state(t), PGREST_TASK_DONE);
    ck_assert_int_eq(pgrest_response_status(pgrest_task_response(t)), 400);
    pgrest_arena_free(a);
}
END_TEST

START_TEST(cancel_while_waiting)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = build(a, &json_post);
    pgrest_request_body_follows(req);
    pgrest_task *t = pgrest_task_start(ctx, a, req, NULL, NULL);
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_task_write_body(t, "[", 1, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_task_cancel(t), PGREST_TASK_DONE);
    ck_assert_int_eq(pgrest_task_wait_state(t), PGREST_TASK_DONE);
    ck_assert_ptr_nonnull(pgrest_task_response(t));
    ck_assert_int_eq(pgrest_task_write_body(t, "]", 1, &err), PGREST_ERR_INTERNAL);
    ck_assert_int_eq(pgrest_task_end_body(t, &err), PGREST_ERR_INTERNAL);
    pgrest_arena_free(a);
}
END_TEST

/* pgrest_handle has no chunks to give: the request runs with the empty
 * body instead of waiting forever */
START_TEST(handle_ends_the_body)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = build(a, &json_post);
    pgrest_request_body_follows(req);
    char *ours = flatten(pgrest_handle(ctx, a, req));
    pgrest_arena_free(a);
    char *empty = via_set_body(&json_post, "", 0);
    ck_assert_str_eq(ours, empty);
    free(ours);
    free(empty);
}
END_TEST
/* pgr_arena_resize: the buffer's current size is what the cap counts;
 * growing past the cap is refused (sticky exhaustion) and leaves the
 * buffer as it was; shrinking gives the room back */
START_TEST(arena_resize_counts_its_size)
{
    pgrest_arena *a = pgrest_arena_new(1 << 20);
    size_t before = pgr_arena_used(a);
    char *p = pgr_arena_resize(a, NULL, 1000);
    ck_assert_ptr_nonnull(p);
    memset(p, 'a', 1000);
    ck_assert_uint_eq(pgr_arena_used(a), before + 1000);
    /* grown four times over: 10 KiB, 100 KiB, 500 KiB; only the last counts */
    size_t sizes[] = {10 * 1024, 100 * 1024, 500 * 1024};
    for (size_t i = 0; i < 3; i++) {
        p = pgr_arena_resize(a, p, sizes[i]);
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq(pgr_arena_used(a), before + sizes[i]);
    }
    ck_assert_int_eq(p[999], 'a');
    ck_assert_uint_eq(pgr_arena_room(a), (1 << 20) - pgr_arena_used(a));
    /* past the cap: refused, the buffer intact, the arena exhausted */
    ck_assert_ptr_null(pgr_arena_resize(a, p, 2 << 20));
    ck_assert(pgr_arena_exhausted(a));
    ck_assert_int_eq(p[0], 'a');
    ck_assert_uint_eq(pgr_arena_used(a), before + 500 * 1024);
    /* shrinking is allowed even then, and gives the room back */
    p = pgr_arena_resize(a, p, 1000);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(p[999], 'a');
    ck_assert_uint_eq(pgr_arena_used(a), before + 1000);
    /* several buffers at once, freed with the arena (ASan/valgrind: no leak) */
    char *q = pgr_arena_resize(a, NULL, 4096);
    char *r = pgr_arena_resize(a, NULL, 4096);
    ck_assert_ptr_nonnull(q);
    ck_assert_ptr_nonnull(r);
    q = pgr_arena_resize(a, q, 300 * 1024);
    ck_assert_ptr_nonnull(q);
    ck_assert_uint_eq(pgr_arena_used(a), before + 1000 + 300 * 1024 + 4096);
    pgrest_arena_free(a);
}
END_TEST

/* a body of N bytes costs about N bytes of the arena, not the sum of the
 * buffers a doubling outgrew: a body of 7/8 of the cap, in 1 KiB chunks,
 * is taken (a pgr_sb in the arena refused it past 1/4 of the cap), and
 * once it ended the arena holds little more than the body */
START_TEST(collector_costs_its_size)
{
    size_t cap = (size_t)4 << 20;
    pgrest_arena *a = pgrest_arena_new(cap);
    pgr_body_collector c;
    pgr_body_collector_init(&c, a, (long long)cap * 2);
    char chunk[1024];
    memset(chunk, 'b', sizeof chunk);
    size_t want = cap / 8 * 7;
    for (size_t n = 0; n < want; n += sizeof chunk)
        ck_assert_int_eq(pgr_body_collector_append(&c, chunk, sizeof chunk), PGR_BODY_APPENDED);
    size_t len;
    const char *text = pgr_body_collector_end(&c, &len);
    ck_assert_uint_eq(len, want);
    ck_assert_int_eq(text[0], 'b');
    ck_assert_int_eq(text[len - 1], 'b');
    ck_assert_int_eq(text[len], '\0');
    ck_assert_uint_le(pgr_arena_used(a), want + 64 * 1024);
    ck_assert(!pgr_arena_exhausted(a));
    /* the room left holds a little more, and no more than the cap */
    char *more = pgr_alloc(a, cap / 16);
    ck_assert_ptr_nonnull(more);
    ck_assert_ptr_null(pgr_alloc(a, cap / 8));
    pgrest_arena_free(a);
}
END_TEST

/* a chunk the arena cannot hold: 500 PGRST500, never a crash */
START_TEST(arena_exhaustion_is_an_error)
{
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "server-max-body-size", "10485760", &err), PGREST_OK);
    pgrest_arena *a = pgrest_arena_new(256 * 1024);
    pgrest_request *req = build(a, &json_post);
    pgrest_request_body_follows(req);
    pgrest_task *t = pgrest_task_start(ctx, a, req, NULL, NULL);
    static char chunk[16384];
    memset(chunk, ' ', sizeof chunk);
    int rc = PGREST_OK;
    for (int i = 0; i < 64 && rc == PGREST_OK; i++)
        rc = pgrest_task_write_body(t, chunk, sizeof chunk, &err);
    ck_assert_int_eq(rc, PGREST_ERR_INTERNAL);
    ck_assert_str_eq(err.code, "PGRST500");
    ck_assert_int_eq(pgrest_task_wait_state(t), PGREST_TASK_DONE);
    ck_assert_int_eq(pgrest_response_status(pgrest_task_response(t)), 500);
    ck_assert_int_eq(pgrest_task_write_body(t, "x", 1, &err), PGREST_ERR_INTERNAL);
    ck_assert_str_eq(err.code, "PGRST500");
    pgrest_arena_free(a);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("task_body");
    TCase *c = tcase_create("collector");
    tcase_add_test(c, collector_keeps_bytes_in_order);
    tcase_add_test(c, collector_limit_is_exact);
    tcase_add_test(c, collector_out_of_memory);
    tcase_add_test(c, arena_resize_counts_its_size);
    tcase_add_test(c, collector_costs_its_size);
    suite_add_tcase(s, c);
    TCase *t = tcase_create("task");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, answers_equal_set_body);
    tcase_add_test(t, too_large_is_413);
    tcase_add_test(t, bad_jwt_answers_before_the_body);
    tcase_add_test(t, preflight_answers_at_start);
    tcase_add_test(t, misuse_is_refused);
    tcase_add_test(t, set_body_undoes_body_follows);
    tcase_add_test(t, cancel_while_waiting);
    tcase_add_test(t, handle_ends_the_body);
    tcase_add_test(t, arena_exhaustion_is_an_error);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return check_run(suite());
}
