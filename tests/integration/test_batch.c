/* Transactional batches (docs/batch.md): POST / with
 * application/vnd.pgrest.batch+json. Each test compares the database
 * afterwards with what the responses said, on the test schema. */
#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "harness.h"
#include "pgrest/pgrest.h"

/* {"role":"web_user"} and {"role":"web_user","sub":"alice"}, signed HS256
 * with the harness's jwt-secret */
#define WEB_USER "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoid2ViX3VzZXIifQ." \
                 "6wrCou4-1o3Bp-OORQWhFf6FJwmF255Bv1kepHf4-BU"
#define ALICE "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." \
              "eyJyb2xlIjoid2ViX3VzZXIiLCJzdWIiOiJhbGljZSJ9." \
              "vICpRR1xRlHHJXH1NbGSXO13Ba6NiJEjZDIgFCOZZv0"
#define BATCH_TYPE "application/vnd.pgrest.batch+json"

static pgrest_ctx *ctx;
static PGconn *admin;

static void cleanup(void)
{
    harness_admin_exec(admin, "DELETE FROM api.albums WHERE artist_id >= 9000;"
                              "DELETE FROM api.artists WHERE id >= 9000;"
                              "DELETE FROM api.private_notes WHERE body LIKE 'batch %'");
}

/* Functions of this test only, created before the schema cache loads:
 * one sets the response GUCs, one raises SQLSTATE 'PGRST'. */
static void create_functions(void)
{
    harness_admin_exec(admin,
        "CREATE OR REPLACE FUNCTION api.batch_gucs() RETURNS integer LANGUAGE sql AS $$"
        " SELECT set_config('response.headers', '[{\"X-Batch\": \"set\"}]', true),"
        "        set_config('response.status', '202', true); SELECT 1 $$;"
        "CREATE OR REPLACE FUNCTION api.batch_raise() RETURNS integer LANGUAGE plpgsql AS $$"
        " BEGIN RAISE SQLSTATE 'PGRST' USING"
        "  MESSAGE = '{\"code\":\"123\",\"message\":\"raised\",\"details\":\"why\"}',"
        "  DETAIL = '{\"status\":409,\"headers\":{\"X-Raised\":\"yes\"}}'; END $$;"
        "GRANT EXECUTE ON FUNCTION api.batch_gucs(), api.batch_raise() TO web_user");
}

static void setup_with(const char *const *options)
{
    admin = harness_admin_connect();
    create_functions();
    ctx = harness_ctx(options);
    cleanup();
}

static void setup(void)
{
    setup_with(NULL);
}

static void setup_capped(void)
{
    static const char *const opts[] = {"server-max-batch-items", "2", NULL};
    setup_with(opts);
}

static void setup_disabled(void)
{
    static const char *const opts[] = {"server-max-batch-items", "0", NULL};
    setup_with(opts);
}

static void setup_overridable(void)
{
    static const char *const opts[] = {"db-tx-end", "commit-allow-override", NULL};
    setup_with(opts);
}

static void teardown(void)
{
    cleanup();
    harness_admin_exec(admin, "DROP FUNCTION api.batch_gucs(); DROP FUNCTION api.batch_raise()");
    PQfinish(admin);
    pgrest_ctx_free(ctx);
}

static long sql_long(const char *sql)
{
    return harness_sql_long(admin, sql);
}

static char *sql_text(const char *sql)
{
    PGresult *r = PQexec(admin, sql);
    ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "%s: %s", sql, PQerrorMessage(admin));
    char *s = PQntuples(r) > 0 ? strdup(PQgetvalue(r, 0, 0)) : NULL;
    PQclear(r);
    return s;
}

static void batch(const char *auth, const char *prefer, const char *body, test_response *out)
{
    const char *h[] = {"Content-Type", BATCH_TYPE, "Authorization", auth, "Prefer", prefer, NULL};
    if (prefer == NULL)
        h[4] = NULL;
    if (auth == NULL)
        h[2] = NULL;
    harness_request(ctx, "POST", "/", NULL, h, body, out);
}

/* The error body's field, or NULL. */
static char *error_field(const test_response *r, const char *key)
{
    json_object *doc = json_tokener_parse(r->body), *v = NULL;
    char *s = NULL;
    if (doc != NULL && json_object_object_get_ex(doc, key, &v) && v != NULL)
        s = strdup(json_object_get_string(v));
    json_object_put(doc);
    return s;
}

static void assert_refused(const test_response *r, int status, const char *code,
                           const char *details_prefix)
{
    ck_assert_msg(r->status == status, "want %d, got %d %s", status, r->status, r->body);
    char *c = error_field(r, "code"), *d = error_field(r, "details");
    ck_assert_str_eq(c, code);
    ck_assert_msg(d != NULL && strncmp(d, details_prefix, strlen(details_prefix)) == 0,
                  "details %s, want %s...", d ? d : "(none)", details_prefix);
    free(c);
    free(d);
}

/* The answer's item i: status, a header and the body as canonical JSON. */
static json_object *answer_item(json_object *answer, size_t i)
{
    ck_assert(json_object_is_type(answer, json_type_array));
    return json_object_array_get_idx(answer, i);
}

static int item_status(json_object *item)
{
    json_object *v = NULL;
    ck_assert(json_object_object_get_ex(item, "status", &v));
    return json_object_get_int(v);
}

static const char *item_body(json_object *item)
{
    json_object *v = NULL;
    ck_assert(json_object_object_get_ex(item, "body", &v));
    return v != NULL ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN) : "null";
}

static const char *item_header(json_object *item, const char *name)
{
    json_object *h = NULL, *v = NULL;
    ck_assert(json_object_object_get_ex(item, "headers", &h));
    return json_object_object_get_ex(h, name, &v) ? json_object_get_string(v) : NULL;
}

START_TEST(insert_update_read_sees_both)
{
    test_response r;
    batch(WEB_USER, NULL,
          "[{\"method\":\"POST\",\"path\":\"/artists\",\"headers\":{\"Prefer\":\"return=representation\"},"
          "  \"body\":{\"id\":9001,\"name\":\"Batch A\",\"country\":\"FR\"}},"
          " {\"method\":\"PATCH\",\"path\":\"/artists\",\"query\":\"id=eq.9001\","
          "  \"body\":{\"name\":\"Batch B\"}},"
          " {\"method\":\"POST\",\"path\":\"/albums\",\"body\":[{\"id\":9101,\"artist_id\":9001,\"title\":\"T\"}]},"
          " {\"method\":\"GET\",\"path\":\"/artists\",\"query\":\"id=eq.9001&select=name,albums(title)\"},"
          " {\"method\":\"GET\",\"path\":\"/artists\",\"query\":\"id=eq.9001&select=name\","
          "  \"headers\":{\"Accept\":\"text/csv\"}}]",
          &r);
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.body);
    ck_assert_str_eq(harness_header(&r, "Content-Type"), "application/json; charset=utf-8");
    json_object *answer = json_tokener_parse(r.body);
    ck_assert_int_eq(json_object_array_length(answer), 5);
    ck_assert_int_eq(item_status(answer_item(answer, 0)), 201);
    ck_assert_str_eq(item_body(answer_item(answer, 0)),
                     "[{\"id\":9001,\"name\":\"Batch A\",\"country\":\"FR\",\"formed\":null,\"genre\":\"rock\"}]");
    ck_assert_int_eq(item_status(answer_item(answer, 1)), 204);
    ck_assert_str_eq(item_body(answer_item(answer, 1)), "null");
    ck_assert_int_eq(item_status(answer_item(answer, 2)), 201);
    /* the read sees the insert and the update of the same transaction */
    ck_assert_int_eq(item_status(answer_item(answer, 3)), 200);
    ck_assert_str_eq(item_body(answer_item(answer, 3)),
                     "[{\"name\":\"Batch B\",\"albums\":[{\"title\":\"T\"}]}]");
    ck_assert_str_eq(item_header(answer_item(answer, 3), "Content-Range"), "0-0/*");
    /* a body that is no JSON is a string */
    ck_assert_str_eq(item_body(answer_item(answer, 4)), "\"name\\n\\\"Batch B\\\"\"");
    json_object_put(answer);
    harness_free(&r);
    char *name = sql_text("SELECT name FROM api.artists WHERE id = 9001");
    ck_assert_str_eq(name, "Batch B");
    free(name);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM api.albums WHERE id = 9101"), 1);
}
END_TEST

START_TEST(failing_item_rolls_back_everything)
{
    test_response r;
    batch(WEB_USER, NULL,
          "[{\"method\":\"POST\",\"path\":\"/artists\",\"body\":{\"id\":9002,\"name\":\"x\"}},"
          " {\"method\":\"PATCH\",\"path\":\"/artists\",\"query\":\"id=eq.9002\",\"body\":{\"formed\":1234}},"
          " {\"method\":\"POST\",\"path\":\"/albums\",\"body\":{\"artist_id\":987654,\"title\":\"y\"}},"
          " {\"method\":\"POST\",\"path\":\"/artists\",\"body\":{\"id\":9003,\"name\":\"z\"}}]",
          &r);
    /* item 2's own error: the foreign key violation, 409 */
    assert_refused(&r, 409, "23503", "batch item 2: Key (artist_id)=(987654)");
    harness_free(&r);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM api.artists WHERE id >= 9000"), 0);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM api.artists WHERE formed = 1234"), 0);
    /* the connection went back clean: the next request works */
    batch(WEB_USER, NULL, "[{\"method\":\"GET\",\"path\":\"/artists\",\"query\":\"id=eq.9002\"}]",
          &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "[{\"status\":200,\"headers\":{\"Content-Type\":\"application/json; "
                             "charset=utf-8\",\"Content-Range\":\"*/*\",\"Content-Location\":"
                             "\"/artists?id=eq.9002\",\"Vary\":\"Accept, Prefer, Range\"},\"body\":[]}]");
    harness_free(&r);
}
END_TEST

/* Errors the single request path gives before any database work keep
 * their status and code, with the index. */
START_TEST(planning_errors_name_the_item)
{
    test_response r;
    batch(WEB_USER, NULL,
          "[{\"method\":\"POST\",\"path\":\"/artists\",\"body\":{\"id\":9004,\"name\":\"x\"}},"
          " {\"method\":\"GET\",\"path\":\"/no_such_table\"}]",
          &r);
    assert_refused(&r, 404, "PGRST205", "batch item 1");
    harness_free(&r);
    batch(WEB_USER, NULL,
          "[{\"method\":\"GET\",\"path\":\"/artists\",\"query\":\"id=zz.1\"}]", &r);
    assert_refused(&r, 400, "PGRST100", "batch item 0: ");
    harness_free(&r);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM api.artists WHERE id >= 9000"), 0);
}
END_TEST

START_TEST(invalid_batches)
{
    static const struct {
        const char *body;
        int status;
        const char *details;
    } cases[] = {
        {"{}", 400, "the body must be a JSON array of items"},
        {"[", 400, "the body must be a JSON array of items"},
        {"[]", 400, "0 items"},
        {"[1]", 400, "batch item 0: an item must be an object"},
        {"[{\"method\":\"GET\"}]", 400, "batch item 0: \"method\" and \"path\""},
        {"[{\"method\":\"GET\",\"path\":\"/artists\"},{\"method\":\"HEAD\",\"path\":\"/artists\"}]",
         400, "batch item 1: method must be one of"},
        {"[{\"method\":\"OPTIONS\",\"path\":\"/artists\"}]", 400, "batch item 0: method"},
        {"[{\"method\":\"POST\",\"path\":\"/\",\"body\":[]}]", 400, "batch item 0: path"},
        {"[{\"method\":\"GET\",\"path\":\"/artists\",\"headers\":{\"authorization\":\"Bearer x\"}}]",
         400, "batch item 0: an item cannot carry Authorization"},
        {"[{\"method\":\"GET\",\"path\":\"/artists\",\"headers\":[]}]", 400,
         "batch item 0: \"headers\" must be an object"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        test_response r;
        batch(WEB_USER, NULL, cases[i].body, &r);
        assert_refused(&r, cases[i].status, "PGRST102", cases[i].details);
        harness_free(&r);
    }
}
END_TEST

/* One identity per batch: alice's policy refuses item 1, nothing stays. */
START_TEST(row_level_security_refuses_item_1)
{
    long before = sql_long("SELECT count(*) FROM api.private_notes");
    test_response r;
    batch(ALICE, NULL,
          "[{\"method\":\"POST\",\"path\":\"/private_notes\",\"body\":{\"owner\":\"alice\",\"body\":\"batch 1\"}},"
          " {\"method\":\"POST\",\"path\":\"/private_notes\",\"body\":{\"owner\":\"bob\",\"body\":\"batch 2\"}}]",
          &r);
    assert_refused(&r, 403, "42501", "batch item 1");
    harness_free(&r);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM api.private_notes"), before);
    /* without item 1 the batch commits, and alice reads her new note */
    batch(ALICE, NULL,
          "[{\"method\":\"POST\",\"path\":\"/private_notes\",\"body\":{\"owner\":\"alice\",\"body\":\"batch 1\"}},"
          " {\"method\":\"GET\",\"path\":\"/private_notes\",\"query\":\"select=owner,body&body=like.batch*\"}]",
          &r);
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.body);
    json_object *answer = json_tokener_parse(r.body);
    ck_assert_str_eq(item_body(answer_item(answer, 1)),
                     "[{\"owner\":\"alice\",\"body\":\"batch 1\"}]");
    json_object_put(answer);
    harness_free(&r);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM api.private_notes"), before + 1);
}
END_TEST

START_TEST(cap_on_items)
{
    test_response r;
    batch(WEB_USER, NULL,
          "[{\"method\":\"POST\",\"path\":\"/artists\",\"body\":{\"id\":9005,\"name\":\"x\"}},"
          " {\"method\":\"GET\",\"path\":\"/artists\"},{\"method\":\"GET\",\"path\":\"/artists\"}]",
          &r);
    assert_refused(&r, 413, "PGRST102", "3 items; server-max-batch-items is 2");
    harness_free(&r);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM api.artists WHERE id >= 9000"), 0);
    batch(WEB_USER, NULL,
          "[{\"method\":\"POST\",\"path\":\"/artists\",\"body\":{\"id\":9005,\"name\":\"x\"}},"
          " {\"method\":\"GET\",\"path\":\"/artists\",\"query\":\"id=eq.9005\"}]",
          &r);
    ck_assert_int_eq(r.status, 200);
    harness_free(&r);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM api.artists WHERE id >= 9000"), 1);
}
END_TEST

START_TEST(tx_rollback_answers_then_rolls_back)
{
    test_response r;
    batch(WEB_USER, "tx=rollback",
          "[{\"method\":\"POST\",\"path\":\"/artists\",\"body\":{\"id\":9006,\"name\":\"x\"}},"
          " {\"method\":\"GET\",\"path\":\"/artists\",\"query\":\"id=eq.9006&select=name\"}]",
          &r);
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.body);
    ck_assert_str_eq(harness_header(&r, "Preference-Applied"), "tx=rollback");
    json_object *answer = json_tokener_parse(r.body);
    ck_assert_str_eq(item_body(answer_item(answer, 1)), "[{\"name\":\"x\"}]");
    json_object_put(answer);
    harness_free(&r);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM api.artists WHERE id >= 9000"), 0);
}
END_TEST

/* Without an override db-tx-end decides, as for a single request. */
START_TEST(tx_rollback_ignored_without_override)
{
    test_response r;
    batch(WEB_USER, "tx=rollback",
          "[{\"method\":\"POST\",\"path\":\"/artists\",\"body\":{\"id\":9007,\"name\":\"x\"}}]", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_null(harness_header(&r, "Preference-Applied"));
    harness_free(&r);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM api.artists WHERE id >= 9000"), 1);
}
END_TEST

/* POST / with any other media type keeps PostgREST's answer. */
START_TEST(other_media_types_unchanged)
{
    test_response plain, r;
    const char *h[] = {"Content-Type", "application/json", NULL};
    harness_request(ctx, "POST", "/", NULL, h, "[]", &plain);
    ck_assert_int_ne(plain.status, 200);
    const char *h2[] = {"Content-Type", "application/vnd.pgrest.batch+jsonx", NULL};
    harness_request(ctx, "POST", "/", NULL, h2, "[]", &r);
    ck_assert_int_eq(r.status, plain.status);
    ck_assert_str_eq(r.body, plain.body);
    harness_free(&plain);
    harness_free(&r);
}
END_TEST

/* response.headers and response.status set by one item are not the next
 * item's: each starts as its own transaction would. */
START_TEST(response_gucs_stay_with_their_item)
{
    test_response r;
    batch(WEB_USER, NULL,
          "[{\"method\":\"POST\",\"path\":\"/rpc/batch_gucs\",\"body\":{}},"
          " {\"method\":\"GET\",\"path\":\"/rpc/add\",\"query\":\"a=1&b=2\"}]",
          &r);
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.body);
    json_object *answer = json_tokener_parse(r.body);
    ck_assert_int_eq(item_status(answer_item(answer, 0)), 202);
    ck_assert_str_eq(item_header(answer_item(answer, 0), "X-Batch"), "set");
    ck_assert_int_eq(item_status(answer_item(answer, 1)), 200);
    ck_assert_ptr_null(item_header(answer_item(answer, 1), "X-Batch"));
    ck_assert_str_eq(item_body(answer_item(answer, 1)), "3");
    json_object_put(answer);
    harness_free(&r);
}
END_TEST

/* RAISE SQLSTATE 'PGRST' keeps its status and headers; its details get
 * the index. */
START_TEST(raised_error_keeps_its_status)
{
    test_response r;
    batch(WEB_USER, NULL,
          "[{\"method\":\"POST\",\"path\":\"/artists\",\"body\":{\"id\":9008,\"name\":\"x\"}},"
          " {\"method\":\"POST\",\"path\":\"/rpc/batch_raise\",\"body\":{}}]",
          &r);
    assert_refused(&r, 409, "123", "batch item 1: why");
    ck_assert_str_eq(harness_header(&r, "X-Raised"), "yes");
    harness_free(&r);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM api.artists WHERE id >= 9000"), 0);
}
END_TEST

/* A post-check that rolls back (max-affected under handling=strict) rolls
 * back the whole batch. */
START_TEST(post_check_rolls_back_the_batch)
{
    char *before = sql_text("SELECT string_agg(id || ':' || coalesce(formed, 0), ',' ORDER BY id)"
                            " FROM api.artists");
    test_response r;
    batch(WEB_USER, NULL,
          "[{\"method\":\"POST\",\"path\":\"/artists\",\"body\":{\"id\":9009,\"name\":\"x\"}},"
          " {\"method\":\"PATCH\",\"path\":\"/artists\",\"query\":\"id=lt.100\","
          "  \"headers\":{\"Prefer\":\"handling=strict, max-affected=1\"},\"body\":{\"formed\":1}},"
          " {\"method\":\"GET\",\"path\":\"/artists\"}]",
          &r);
    assert_refused(&r, 400, "PGRST124", "batch item 1: ");
    harness_free(&r);
    char *after = sql_text("SELECT string_agg(id || ':' || coalesce(formed, 0), ',' ORDER BY id)"
                           " FROM api.artists");
    ck_assert_str_eq(after, before);
    free(before);
    free(after);
}
END_TEST

/* The task API runs a batch like any request (pgrest_handle is a loop
 * over it; here the host drives it without blocking). */
START_TEST(task_api_runs_a_batch)
{
    pgrest_arena *a = pgrest_arena_new(0);
    const char *h[] = {"Content-Type", BATCH_TYPE, "Authorization", WEB_USER, NULL};
    pgrest_request *req = harness_new_request(
        a, "POST", "/", NULL, h,
        "[{\"method\":\"POST\",\"path\":\"/artists\",\"body\":{\"id\":9010,\"name\":\"t\"}},"
        " {\"method\":\"GET\",\"path\":\"/artists\",\"query\":\"id=eq.9010&select=name\"}]");
    pgrest_task *t = pgrest_task_start(ctx, a, req, NULL, NULL);
    ck_assert_ptr_nonnull(t);
    int w;
    while ((w = pgrest_task_advance(t)) != PGREST_TASK_DONE) {
        struct pollfd pfd = {.fd = pgrest_task_socket(t),
                             .events = w == PGREST_TASK_WAIT_WRITE ? POLLOUT : POLLIN};
        long ms = pgrest_task_timeout_ms(t);
        if (pfd.fd >= 0)
            poll(&pfd, 1, ms < 0 ? 1000 : (int)ms);
        else
            poll(NULL, 0, 1);
    }
    pgrest_response *resp = pgrest_task_response(t);
    ck_assert_int_eq(pgrest_response_status(resp), 200);
    size_t len;
    const char *body = pgrest_response_body(resp, &len);
    ck_assert_msg(strstr(body, "\"body\":[{\"name\":\"t\"}]") != NULL, "%s", body);
    pgrest_arena_free(a);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM api.artists WHERE id = 9010"), 1);
}
END_TEST

/* server-max-batch-items=0: no batches, POST / is PostgREST's. */
START_TEST(batches_off)
{
    test_response plain, r;
    const char *h[] = {"Content-Type", "application/json", "Authorization", WEB_USER, NULL};
    harness_request(ctx, "POST", "/", NULL, h, "[]", &plain);
    batch(WEB_USER, NULL, "[{\"method\":\"POST\",\"path\":\"/artists\",\"body\":{\"id\":9011,\"name\":\"x\"}}]",
          &r);
    ck_assert_int_eq(r.status, plain.status);
    ck_assert_str_eq(r.body, plain.body);
    harness_free(&plain);
    harness_free(&r);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM api.artists WHERE id >= 9000"), 0);
}
END_TEST

/* Chinook: a playlist and its tracks in one batch; the read sees them. */
START_TEST(chinook_playlist_with_tracks)
{
    const char *uri = getenv("PGREST_TEST_CHINOOK_URI");
    if (uri == NULL || *uri == '\0')
        return;
    pgrest_ctx *c = pgrest_ctx_new();
    pgrest_error err = {0};
    const char *opts[][2] = {{"db-uri", uri}, {"db-schemas", "public"},
                             {"db-anon-role", "postgres"}, {"db-pool", "2"}};
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
        ck_assert_int_eq(pgrest_ctx_set(c, opts[i][0], opts[i][1], &err), PGREST_OK);
    ck_assert_msg(pgrest_ctx_load_schema(c, &err) == PGREST_OK, "%s", err.message);
    PGconn *db = PQconnectdb(uri);
    ck_assert_int_eq(PQstatus(db), CONNECTION_OK);
    PQclear(PQexec(db, "DELETE FROM playlist_track WHERE playlist_id = 9900;"
                       "DELETE FROM playlist WHERE playlist_id = 9900"));
    const char *h[] = {"Content-Type", BATCH_TYPE, NULL};
    test_response r;
    harness_request(c, "POST", "/", NULL, h,
        "[{\"method\":\"POST\",\"path\":\"/playlist\",\"body\":{\"playlist_id\":9900,\"name\":\"batch\"}},"
        " {\"method\":\"POST\",\"path\":\"/playlist_track\","
        "  \"body\":[{\"playlist_id\":9900,\"track_id\":1},{\"playlist_id\":9900,\"track_id\":2}]},"
        " {\"method\":\"GET\",\"path\":\"/playlist\","
        "  \"query\":\"playlist_id=eq.9900&select=name,track(track_id)&track.order=track_id\"},"
        " {\"method\":\"POST\",\"path\":\"/playlist_track\",\"body\":{\"playlist_id\":9900,\"track_id\":999999}}]",
        &r);
    /* the last item breaks a foreign key: nothing stays */
    assert_refused(&r, 409, "23503", "batch item 3: ");
    harness_free(&r);
    PGresult *n = PQexec(db, "SELECT count(*) FROM playlist WHERE playlist_id = 9900");
    ck_assert_str_eq(PQgetvalue(n, 0, 0), "0");
    PQclear(n);
    harness_request(c, "POST", "/", NULL, h,
        "[{\"method\":\"POST\",\"path\":\"/playlist\",\"body\":{\"playlist_id\":9900,\"name\":\"batch\"}},"
        " {\"method\":\"POST\",\"path\":\"/playlist_track\","
        "  \"body\":[{\"playlist_id\":9900,\"track_id\":1},{\"playlist_id\":9900,\"track_id\":2}]},"
        " {\"method\":\"GET\",\"path\":\"/playlist\","
        "  \"query\":\"playlist_id=eq.9900&select=name,track(track_id)&track.order=track_id\"}]",
        &r);
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.body);
    json_object *answer = json_tokener_parse(r.body);
    ck_assert_str_eq(item_body(answer_item(answer, 2)),
                     "[{\"name\":\"batch\",\"track\":[{\"track_id\":1},{\"track_id\":2}]}]");
    json_object_put(answer);
    harness_free(&r);
    n = PQexec(db, "SELECT string_agg(track_id::text, ',' ORDER BY track_id) FROM playlist_track"
                   " WHERE playlist_id = 9900");
    ck_assert_str_eq(PQgetvalue(n, 0, 0), "1,2");
    PQclear(n);
    PQclear(PQexec(db, "DELETE FROM playlist_track WHERE playlist_id = 9900;"
                       "DELETE FROM playlist WHERE playlist_id = 9900"));
    PQfinish(db);
    pgrest_ctx_free(c);
}
END_TEST

int main(void)
{
    if (getenv("PGREST_TEST_DB_URI") == NULL)
        return 77;
    Suite *s = suite_create("batch");
    TCase *tc = tcase_create("batch");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, insert_update_read_sees_both);
    tcase_add_test(tc, failing_item_rolls_back_everything);
    tcase_add_test(tc, planning_errors_name_the_item);
    tcase_add_test(tc, invalid_batches);
    tcase_add_test(tc, row_level_security_refuses_item_1);
    tcase_add_test(tc, tx_rollback_ignored_without_override);
    tcase_add_test(tc, other_media_types_unchanged);
    tcase_add_test(tc, response_gucs_stay_with_their_item);
    tcase_add_test(tc, raised_error_keeps_its_status);
    tcase_add_test(tc, post_check_rolls_back_the_batch);
    tcase_add_test(tc, task_api_runs_a_batch);
    tcase_add_test(tc, chinook_playlist_with_tracks);
    suite_add_tcase(s, tc);
    TCase *capped = tcase_create("capped");
    tcase_add_checked_fixture(capped, setup_capped, teardown);
    tcase_add_test(capped, cap_on_items);
    suite_add_tcase(s, capped);
    TCase *disabled = tcase_create("disabled");
    tcase_add_checked_fixture(disabled, setup_disabled, teardown);
    tcase_add_test(disabled, batches_off);
    suite_add_tcase(s, disabled);
    TCase *overridable = tcase_create("overridable");
    tcase_add_checked_fixture(overridable, setup_overridable, teardown);
    tcase_add_test(overridable, tx_rollback_answers_then_rolls_back);
    suite_add_tcase(s, overridable);
    return check_run(s);
}
