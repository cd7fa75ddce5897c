/* Streamed bodies against PostgreSQL (docs/bulk-import.md,
 * pgrest_request_allow_streamed_body): a POST of many rows, fed to the
 * task in chunks past a small threshold, goes to PostgreSQL through a COPY
 * while the body still comes (seen in pg_stat_activity), and its answer
 * and the table afterwards are those of the same body set whole; rows
 * PostgreSQL refuses (NOT NULL, RLS) leave nothing written, with the
 * whole body's answer; a cancel mid-body writes nothing and frees the
 * connection. Tables of their own, created before the schema cache is
 * loaded and dropped at the end. */
#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_run.h"
#include "harness.h"
#include "pgrest/pgrest.h"

#define TABLE_JSON "SELECT json_agg(t ORDER BY id) FROM api.imp_rows t"
/* what the test sets as threshold: bodies of a few hundred KB stream */
#define THRESHOLD 4096
#define CHUNK 1000

static pgrest_ctx *ctx;
static PGconn *admin;

static void setup(void)
{
    admin = harness_admin_connect();
    harness_admin_exec(admin,
        "DROP TABLE IF EXISTS api.imp_rows, api.imp_child, api.imp_later, api.imp_owned,"
        " api.imp_moods, api.imp_ident, api.imp_after, api.imp_read_only, api.imp_typed"
        " CASCADE;"
        "DROP FUNCTION IF EXISTS api.imp_tag(), api.imp_counted(), api.imp_mood_header();"
        "DROP TYPE IF EXISTS api.imp_mood; DROP DOMAIN IF EXISTS api.imp_doc;"
        /* what no_temp_privilege_takes_the_body_whole revokes, should it
         * have failed before giving it back */
        "DO $$ BEGIN EXECUTE format('GRANT TEMPORARY ON DATABASE %I TO PUBLIC',"
        " current_database()); END $$;"
        "CREATE TABLE api.imp_rows (id integer PRIMARY KEY, name text NOT NULL,"
        " score numeric, at timestamptz, doc jsonb, note text DEFAULT 'none', tag text);"
        "CREATE FUNCTION api.imp_tag() RETURNS trigger LANGUAGE plpgsql AS"
        " $$ BEGIN IF NEW.name = 'x' THEN RAISE 'no x'; END IF;"
        " NEW.tag := 'trg:' || NEW.name; RETURN NEW; END $$;"
        "CREATE TRIGGER imp_tag BEFORE INSERT ON api.imp_rows"
        " FOR EACH ROW EXECUTE FUNCTION api.imp_tag();"
        "GRANT ALL ON api.imp_rows TO web_user;"
        "CREATE TABLE api.imp_child (id integer PRIMARY KEY,"
        " parent integer REFERENCES api.imp_rows (id));"
        "GRANT ALL ON api.imp_child TO web_user;"
        "CREATE TABLE api.imp_later (id integer PRIMARY KEY, parent integer REFERENCES"
        " api.imp_rows (id) DEFERRABLE INITIALLY DEFERRED);"
        "GRANT ALL ON api.imp_later TO web_user;"
        "CREATE TABLE api.imp_owned (id integer PRIMARY KEY, owner text);"
        "ALTER TABLE api.imp_owned ENABLE ROW LEVEL SECURITY;"
        "CREATE POLICY imp_mine ON api.imp_owned TO web_user"
        " USING (true) WITH CHECK (owner = 'me');"
        "GRANT ALL ON api.imp_owned TO web_user;"
        /* a type of the API's schema, which the connection's role
         * (authenticator) may not use */
        "CREATE TYPE api.imp_mood AS ENUM ('calm', 'busy');"
        "CREATE DOMAIN api.imp_doc AS jsonb CHECK (VALUE IS NULL OR VALUE <> '\"no\"');"
        "CREATE TABLE api.imp_moods (id integer PRIMARY KEY, mood api.imp_mood NOT NULL,"
        " since date, tags text[], doc api.imp_doc);"
        "GRANT ALL ON api.imp_moods TO web_user;"
        /* response GUCs a row trigger sets, which COPY fires as INSERT does */
        "CREATE FUNCTION api.imp_mood_header() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        " PERFORM set_config('response.headers', json_build_array(json_build_object("
        " 'X-Last-Mood', NEW.mood::text))::text, true); RETURN NEW; END $$;"
        "CREATE TRIGGER imp_mood_header BEFORE INSERT ON api.imp_moods"
        " FOR EACH ROW EXECUTE FUNCTION api.imp_mood_header();"
        /* ... and an AFTER trigger's, which PostgREST's answer does not see
         * (they run once the statement's rows are written) */
        "CREATE TABLE api.imp_after (id integer PRIMARY KEY, name text);"
        "GRANT ALL ON api.imp_after TO web_user;"
        "CREATE FUNCTION api.imp_counted() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        " PERFORM set_config('response.headers', json_build_array(json_build_object("
        " 'X-Count', (SELECT count(*) FROM new_rows)::text))::text, true); RETURN NULL;"
        " END $$;"
        "CREATE TRIGGER imp_counted AFTER INSERT ON api.imp_after REFERENCING NEW TABLE"
        " AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION api.imp_counted();"
        /* COPY would write an identity column GENERATED ALWAYS: INSERTs only */
        "CREATE TABLE api.imp_ident (id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
        " name text);"
        "GRANT ALL ON api.imp_ident TO web_user;"
        "CREATE TABLE api.imp_read_only (id integer PRIMARY KEY, name text);"
        "GRANT SELECT ON api.imp_read_only TO web_user;"
        /* typed JSON rows: a column of each kind they convert, and an
         * array column, which keeps JSON rows */
        "CREATE TABLE api.imp_typed (id integer PRIMARY KEY, t text, n numeric, big bigint,"
        " f double precision, at timestamptz, ok boolean, j json, jb jsonb,"
        " mood api.imp_mood, v varchar(12), tags text[]);"
        "GRANT ALL ON api.imp_typed TO web_user");
    const char *opts[] = {"db-anon-role", "web_user", "db-tx-end", "commit", NULL};
    ctx = harness_ctx(opts);
}

static void teardown(void)
{
    pgrest_ctx_free(ctx);
    harness_admin_exec(admin, "DROP TABLE api.imp_rows, api.imp_child, api.imp_later,"
                              " api.imp_owned, api.imp_moods, api.imp_ident, api.imp_after,"
                              " api.imp_read_only, api.imp_typed CASCADE;"
                              "DROP FUNCTION api.imp_tag(), api.imp_counted(),"
                              " api.imp_mood_header();"
                              "DROP TYPE api.imp_mood;"
                              "DROP DOMAIN api.imp_doc");
    PQfinish(admin);
}

static void reset_rows(void)
{
    harness_admin_exec(admin, "TRUNCATE api.imp_rows, api.imp_child, api.imp_later,"
                              " api.imp_owned, api.imp_moods, api.imp_ident, api.imp_after,"
                              " api.imp_read_only, api.imp_typed RESTART IDENTITY;"
                              "INSERT INTO api.imp_rows (id, name, score) VALUES"
                              " (1, 'old one', 1), (2, 'old two', 2)");
}

typedef struct req_spec {
    const char *path, *query, *content_type, *prefer;
} req_spec;

static pgrest_request *build(pgrest_arena *a, const req_spec *s)
{
    pgrest_request *req = pgrest_request_new(a, "POST", s->path, s->query ? s->query : "");
    if (s->content_type != NULL)
        pgrest_request_add_header(req, "Content-Type", s->content_type);
    if (s->prefer != NULL)
        pgrest_request_add_header(req, "Prefer", s->prefer);
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

/* Backends running a streamed body's COPY now (into the rows' temporary
 * table, or into a table of the API's schema itself). */
static long copies_running(const char *into)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM pg_stat_activity WHERE state = 'active'"
                              " AND query LIKE 'COPY %s%%FROM STDIN' AND pid <> pg_backend_pid()",
             into);
    return harness_sql_long(admin, sql);
}

/* via_stream's pause after each piece (a slow client); what it fed before
 * the task was done; the response's streaming threshold (0: the response
 * is not streamed) and whether the response streamed. */
static useconds_t pace;
static size_t fed;
static size_t response_threshold;
static bool response_streamed;
static bool copied_into_table;   /* the COPY wrote into the table itself */

/* The task's response once the body went: a streamed one's body read
 * from the task as a host does, taking what is there and advancing;
 * flattened as harness_flatten does. */
static char *take_response(pgrest_task *t)
{
    harness_advance_until(t, PGREST_TASK_BODY);
    response_streamed = pgrest_task_wait_state(t) == PGREST_TASK_BODY;
    char *out = harness_flatten(pgrest_task_response(t));
    if (!response_streamed)
        return out;
    size_t len = strlen(out), cap = len + (1u << 16);
    out = realloc(out, cap);
    for (;;) {
        if (cap - len < (1u << 15))
            out = realloc(out, cap *= 2);
        long n = pgrest_task_read_body(t, out + len, cap - len - 1);
        if (n == PGREST_BODY_END)
            break;
        ck_assert_int_ne(n, PGREST_BODY_FAILED);
        if (n > 0) {
            len += (size_t)n;
            continue;
        }
        pgrest_task_advance(t);
        harness_advance_until(t, PGREST_TASK_BODY);
    }
    out[len] = '\0';
    return out;
}

/* The body in CHUNK-byte pieces as a host feeds it (PGREST_AGAIN: advance
 * until the task wants the body again, then the same piece); *copying
 * tells whether a COPY was running at the body's middle. */
static char *via_stream(const req_spec *s, const char *body, bool *copying)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = build(a, s);
    pgrest_request_body_follows(req);
    pgrest_request_allow_streamed_body(req, THRESHOLD);
    if (response_threshold > 0)
        pgrest_request_allow_streaming(req, response_threshold);
    pgrest_task *t = pgrest_task_start(ctx, a, req, NULL, NULL);
    ck_assert_int_eq(pgrest_task_wait_state(t), PGREST_TASK_WANTS_BODY);
    size_t len = strlen(body);
    pgrest_error err = {0};
    *copying = copied_into_table = false;
    bool looked = false;
    fed = 0;
    for (size_t at = 0; at < len && pgrest_task_wait_state(t) != PGREST_TASK_DONE; at += CHUNK) {
        size_t n = len - at < CHUNK ? len - at : CHUNK;
        int rc = pgrest_task_write_body(t, body + at, n, &err);
        while (rc == PGREST_AGAIN) {
            harness_advance_until(t, PGREST_TASK_WANTS_BODY);
            rc = pgrest_task_write_body(t, body + at, n, &err);
        }
        if (rc != PGREST_OK)
            break;
        fed = at + n;
        if (pace > 0)
            usleep(pace);
        if (!looked && at > len / 2) {
            looked = true;
            *copying = copies_running("") == 1;
            copied_into_table = copies_running("\"api\".") == 1;
        }
    }
    if (pgrest_task_wait_state(t) != PGREST_TASK_DONE)
        pgrest_task_end_body(t, &err);
    char *flat = take_response(t);
    pgrest_arena_free(a);
    return flat;
}

/* Two answers alike; where they differ (up to 300 bytes from there, as
 * Check's messages are bounded). */
static void assert_same_answer(const char *streamed, const char *whole)
{
    size_t at = 0;
    while (streamed[at] != '\0' && streamed[at] == whole[at])
        at++;
    ck_assert_msg(streamed[at] == whole[at], "at byte %zu, streamed:\n%.300s\n--- whole:\n%.300s",
                  at, streamed + at, whole + at);
}

/* The request set whole and streamed, each on the same starting table:
 * the same response and the same table. *copying as via_stream's. */
static char *same_as_whole(const req_spec *s, const char *body, const char *table_sql,
                           bool *copying)
{
    reset_rows();
    char *whole = via_set_body(s, body);
    json_object *table = harness_sql_json(admin, table_sql);
    reset_rows();
    char *streamed = via_stream(s, body, copying);
    assert_same_answer(streamed, whole);
    harness_assert_same_json(harness_sql_json(admin, table_sql), table, false);
    free(streamed);
    return whole;
}

static void assert_status(const char *flat, const char *status)
{
    ck_assert_msg(strncmp(flat, status, strlen(status)) == 0, "%s", flat);
}

/* same_as_whole for a body that must stream (a COPY seen at its middle),
 * with the answer's status. */
static char *streamed_as_whole(const req_spec *s, const char *body, const char *table_sql,
                               const char *status)
{
    bool copying;
    char *r = same_as_whole(s, body, table_sql, &copying);
    ck_assert_msg(copying, "no COPY ran while the body came");
    assert_status(r, status);
    return r;
}

/* The whole body's answer with `row` named first in its details, as a
 * streamed body's error names the row PostgreSQL failed on. */
static char *with_row_named(const char *whole, const char *row)
{
    const char *str = strstr(whole, "\"details\":\"");
    const char *null = strstr(whole, "\"details\":null");
    ck_assert_msg(str != NULL || null != NULL, "no details in %s", whole);
    size_t cap = strlen(whole) + strlen(row) + 16;
    char *out = malloc(cap);
    if (str != NULL)
        snprintf(out, cap, "%.*s\"details\":\"%s: %s", (int)(str - whole), whole, row,
                 str + strlen("\"details\":\""));
    else
        snprintf(out, cap, "%.*s\"details\":\"%s\"%s", (int)(null - whole), whole, row,
                 null + strlen("\"details\":null"));
    return out;
}

/* An error of the write after the COPY: the streamed body answers the
 * whole body's error with `row` named in details (NULL: nothing named,
 * the very same answer), and nothing is written either way. */
static char *streamed_naming(const req_spec *s, const char *body, const char *table_sql,
                             const char *row)
{
    reset_rows();
    char *whole = via_set_body(s, body);
    json_object *table = harness_sql_json(admin, table_sql);
    reset_rows();
    bool copying;
    char *streamed = via_stream(s, body, &copying);
    ck_assert_msg(copying, "no COPY ran while the body came");
    char *expected = row != NULL ? with_row_named(whole, row) : strdup(whole);
    assert_same_answer(streamed, expected);
    harness_assert_same_json(harness_sql_json(admin, table_sql), table, false);
    free(expected);
    free(whole);
    return streamed;
}

/* n rows as NDJSON from id `first`; row `bad` (0: none) gets a null name */
static char *ndjson_rows(int first, int n, int bad)
{
    size_t cap = (size_t)n * 160 + 1, len = 0;
    char *out = malloc(cap);
    for (int i = first; i < first + n; i++)
        len += (size_t)snprintf(out + len, cap - len,
                                "{\"id\":%d,\"name\":%s,\"score\":%d.25,"
                                "\"at\":\"2026-01-%02dT10:00:00Z\","
                                "\"doc\":{\"k\":[%d,\"tab\\there\",\"back\\\\slash\"]}}\n",
                                i, i == bad ? "null" : "\"r\"", i, 1 + i % 28, i);
    return out;
}

/* the rows of ndjson_rows as one JSON array */
static char *json_rows(int first, int n, int bad)
{
    char *lines = ndjson_rows(first, n, bad);
    size_t len = strlen(lines);
    char *out = malloc(len + 3);
    out[0] = '[';
    memcpy(out + 1, lines, len);
    for (size_t i = 1; i < len; i++)
        if (out[i] == '\n')
            out[i] = ',';
    out[len] = ']';
    out[len + 1] = '\0';
    free(lines);
    return out;
}

/* n CSV records; doc is text to PostgREST (a JSON string in the jsonb
 * column); record `bad` (0: none) has fields too few (PostgREST drops a
 * record's extra fields) */
static char *csv_rows(int first, int n, int bad)
{
    size_t cap = (size_t)n * 160 + 64, len = 0;
    char *out = malloc(cap);
    len += (size_t)snprintf(out, cap, "id,name,score,at,doc\r\n");
    for (int i = first; i < first + n; i++)
        len += (size_t)snprintf(out + len, cap - len,
                                i == bad ? "%d,\"r\"\r\n"
                                         : "%d,\"r, \"\"%d\"\"\",%s,2026-01-%02dT10:00:00Z,"
                                           "\"{\"\"k\"\":[%d,\"\"back\\\\slash\"\"]}\"\r\n",
                                i, i, i % 7 == 0 ? "NULL" : "3.5", 1 + i % 28, i);
    return out;
}

START_TEST(json_array_import)
{
    static const req_spec s = {"/imp_rows", NULL, "application/json", "count=exact"};
    char *body = json_rows(10, 1000, 0);
    char *r = streamed_as_whole(&s, body, TABLE_JSON, "201");
    ck_assert_ptr_nonnull(strstr(r, "Content-Range: */1000"));
    free(r);
    free(body);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_rows WHERE"
                                             " doc->'k'->>2 = 'back\\slash'"), 1000);
}
END_TEST

START_TEST(csv_import)
{
    static const req_spec s = {"/imp_rows", NULL, "text/csv", NULL};
    char *body = csv_rows(10, 1000, 0);
    char *r = streamed_as_whole(&s, body, TABLE_JSON, "201");
    ck_assert_msg(copied_into_table, "the typed rows did not go into the table by COPY");
    free(r);
    free(body);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_rows WHERE"
                                             " name = 'r, \"14\"' AND score IS NULL"
                                             " AND doc #>> '{}' = '{\"k\":[14,\"back\\\\slash\"]}'"),
                     1);
}
END_TEST

/* A bad row past the threshold: 400 naming it, nothing written. For
 * NDJSON the whole body's answer names the line too. */
START_TEST(bad_rows_write_nothing)
{
    static const req_spec nd = {"/imp_rows", NULL, "application/x-ndjson", NULL};
    char *body = ndjson_rows(10, 1000, 0);
    char *line = strstr(body, "{\"id\":909,");
    memcpy(line, "{\"id\" 29", 8);
    bool copying;
    char *r = streamed_as_whole(&nd, body, TABLE_JSON, "400");
    ck_assert_ptr_nonnull(strstr(r, "\"details\":\"line 900: invalid JSON\""));
    free(r);
    free(body);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_rows"), 2);

    static const req_spec csv = {"/imp_rows", NULL, "text/csv", NULL};
    body = csv_rows(10, 1000, 909);
    reset_rows();
    r = via_stream(&csv, body, &copying);
    ck_assert(copying);
    assert_status(r, "400");
    ck_assert_ptr_nonnull(strstr(r, "All lines must have same number of fields"));
    ck_assert_ptr_nonnull(strstr(r, "line 901"));
    free(r);
    free(body);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_rows"), 2);

    static const req_spec json = {"/imp_rows", NULL, "application/json", NULL};
    body = json_rows(10, 1000, 0);
    line = strstr(body, "{\"id\":909,");
    memcpy(line, "{\"id\"!29", 8);
    r = via_stream(&json, body, &copying);
    assert_status(r, "400");
    ck_assert_msg(strstr(r, "index 899") != NULL, "%s", r);
    free(r);
    free(body);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_rows"), 2);
}
END_TEST

/* Typed rows keep PostgREST's CSV reading: the literal NULL (quoted too)
 * is null, an empty field an empty string, a jsonb field a JSON string,
 * quoted line ends and blank lines stay; a header naming a column twice,
 * or ?columns= naming others, keeps the rows JSON objects. */
START_TEST(typed_rows_read_as_postgrest)
{
    static const req_spec s = {"/imp_rows", NULL, "text/csv", NULL};
    size_t cap = 400000, len = 0;
    char *body = malloc(cap);
    len += (size_t)snprintf(body, cap, "name,id,doc,note\n");
    for (int i = 10; i < 3010; i++)
        len += (size_t)snprintf(body + len, cap - len,
                                i % 5 == 0 ? "\"multi\nline\",%d,\"NULL\",\n\n"
                                           : "tab\there,%d,\"[1,\"\"\\u00e9\"\"]\",NULL\r\n",
                                i);
    bool copying;
    char *r = streamed_as_whole(&s, body, TABLE_JSON, "201");
    free(r);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_rows WHERE"
                                             " name = E'multi\\nline' AND doc IS NULL"
                                             " AND note = ''"), 600);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_rows WHERE"
                                             " name = E'tab\\there' AND note IS NULL"
                                             " AND jsonb_typeof(doc) = 'string'"
                                             " AND doc #>> '{}' = '[1,\"\\u00e9\"]'"), 2400);
    free(body);

    /* a repeated name: the last one's value, as the JSON object has it */
    body = csv_rows(10, 1000, 0);
    memcpy(body, "id,name,score,at,id ", 20);
    r = same_as_whole(&s, body, TABLE_JSON, &copying);
    free(r);
    static const req_spec some = {"/imp_rows", "columns=id,name", "text/csv", NULL};
    free(body);
    body = csv_rows(10, 1000, 0);
    r = same_as_whole(&some, body, TABLE_JSON, &copying);
    assert_status(r, "201");
    free(r);
    free(body);
}
END_TEST

/* Typed rows into a column of the API's own enum, of its own domain over
 * jsonb and a text[] column, straight into the table by COPY (each value
 * through its column's input function, as the INSERT's cast), with the
 * response header a row trigger sets: as the whole body, rows and a
 * refused value alike. */
START_TEST(typed_rows_of_the_api_types)
{
    static const req_spec s = {"/imp_moods", NULL, "text/csv", "count=exact"};
    size_t cap = 200000, len = 0;
    char *body = malloc(cap);
    len += (size_t)snprintf(body, cap, "id,mood,since,tags,doc\n");
    for (int i = 1; i <= 3000; i++)
        len += (size_t)snprintf(body + len, cap - len,
                                "%d,%s,2026-02-%02d,\"{a,\"\"b c\"\"}\",%s\n", i,
                                i % 3 ? "calm" : "busy", 1 + i % 28, i % 2 ? "NULL" : "\"{\"\"k\"\":1}\"");
    char *r = streamed_as_whole(&s, body, "SELECT json_agg(t ORDER BY id) FROM api.imp_moods t",
                                "201");
    ck_assert_ptr_nonnull(strstr(r, "Content-Range: */3000"));
    ck_assert_ptr_nonnull(strstr(r, "X-Last-Mood: busy"));
    ck_assert_msg(copied_into_table, "the typed rows did not go into the table by COPY");
    free(r);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_moods WHERE"
                                             " mood = 'busy' AND tags = '{a,\"b c\"}'"), 1000);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_moods WHERE"
                                             " doc #>> '{}' = '{\"k\":1}'"), 1500);
    char *bad = strstr(body, "\n2000,");
    memcpy(bad + 6, "lazy", 4);
    /* record 2000, on line 2001 */
    r = streamed_naming(&s, body, "SELECT count(*) FROM api.imp_moods",
                        "line 2001, column mood");
    assert_status(r, "400");
    ck_assert_msg(strstr(r, "invalid input value for enum imp_mood: \\\"lazy\\\"") != NULL, "%s", r);
    free(r);
    free(body);
}
END_TEST

/* A value its column refuses in a typed body: the COPY fails on it (the
 * INSERT never runs) while the body still comes, and the rest of it is
 * not read; the error is PostgreSQL's with the body's line and the column
 * in details (the record over two lines before it counted), nothing
 * written. */
START_TEST(typed_bad_value_names_its_line)
{
    static const req_spec s = {"/imp_rows", NULL, "text/csv", NULL};
    char *body = csv_rows(10, 200000, 0);
    char *row = strstr(body, "\r\n20,");
    memcpy(row + 2, "20,\"r\n", 6);   /* record 11 spans lines 12 and 13 */
    row = strstr(body, "2026-01-21T10:00:00Z,\"{\"\"k\"\":[1000,");
    ck_assert_ptr_nonnull(row);
    memcpy(row, "2026-13-06", 10);    /* row 991: line 992, plus one */
    reset_rows();
    bool copying;
    char *r = via_stream(&s, body, &copying);
    assert_status(r, "400");
    ck_assert_msg(strstr(r, "\"code\":\"22008\"") != NULL, "%s", r);
    ck_assert_msg(strstr(r, "\"details\":\"line 993, column at\"") != NULL, "%s", r);
    /* ~77 KB in, of ~16 MB: PostgreSQL's error comes long before the end */
    ck_assert_msg(fed < strlen(body) / 2, "%zu of %zu bytes read", fed, strlen(body));
    free(r);
    free(body);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_rows"), 2);
}
END_TEST

/* The rows are converted after the request's settings and pre-request,
 * as its INSERT converts them: the pre-request's time zone applies to a
 * timestamp without one, its error is the answer, and its statement
 * timeout does not cut a COPY that lasts as long as a slow client. */
START_TEST(pre_request_runs_before_the_rows)
{
    harness_admin_exec(admin,
        "CREATE OR REPLACE FUNCTION api.imp_pre() RETURNS void LANGUAGE plpgsql AS $$ BEGIN"
        " PERFORM set_config('timezone', 'Asia/Tokyo', true);"
        " PERFORM set_config('statement_timeout', '300ms', true);"
        " IF current_setting('request.headers')::json->>'prefer' = 'count=exact' THEN"
        "  RAISE sqlstate 'PT402' USING message = 'no counted imports'; END IF; END $$;"
        "GRANT EXECUTE ON FUNCTION api.imp_pre() TO web_user");
    pgrest_ctx *plain = ctx;
    const char *opts[] = {"db-anon-role", "web_user", "db-tx-end", "commit",
                          "db-pre-request", "api.imp_pre", NULL};
    ctx = harness_ctx(opts);
    static const req_spec s = {"/imp_rows", NULL, "text/csv", NULL};
    char *body = csv_rows(10, 1000, 0);
    for (char *z = strstr(body, "T10:00:00Z"); z != NULL; z = strstr(z, "T10:00:00Z"))
        memcpy(z, "T10:00:00 ", 10);
    bool copying;
    pace = 10000;   /* ~80 pieces: over three times the timeout */
    char *r = same_as_whole(&s, body, TABLE_JSON, &copying);
    pace = 0;
    ck_assert(copying);
    assert_status(r, "201");
    free(r);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_rows WHERE"
                                             " extract(hour FROM at AT TIME ZONE 'UTC') = 1"),
                     1000);
    static const req_spec counted = {"/imp_rows", NULL, "text/csv", "count=exact"};
    r = same_as_whole(&counted, body, TABLE_JSON, &copying);
    assert_status(r, "402");
    ck_assert_ptr_nonnull(strstr(r, "no counted imports"));
    free(r);
    free(body);
    pgrest_ctx_free(ctx);
    ctx = plain;
    harness_admin_exec(admin, "DROP FUNCTION api.imp_pre()");
}
END_TEST

START_TEST(ndjson_import)
{
    static const req_spec s = {"/imp_rows", NULL, "application/x-ndjson", "count=exact"};
    char *body = ndjson_rows(10, 1000, 0);
    char *r = streamed_as_whole(&s, body, TABLE_JSON, "201");
    ck_assert_ptr_nonnull(strstr(r, "Content-Range: */1000"));
    free(r);
    free(body);
    /* the trigger ran for every row, the default filled note */
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_rows WHERE"
                                             " tag = 'trg:r' AND note = 'none'"), 1000);
}
END_TEST

START_TEST(upsert_over_existing_keys)
{
    static const req_spec s = {"/imp_rows", NULL, "application/x-ndjson",
                               "resolution=merge-duplicates,return=headers-only"};
    /* ids 1 and 2 exist */
    char *body = ndjson_rows(1, 1000, 0);
    char *r = streamed_as_whole(&s, body, TABLE_JSON, "201");
    free(r);
    free(body);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_rows"), 1000);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_rows"
                                             " WHERE name = 'old one'"), 0);
}
END_TEST

START_TEST(missing_default_and_columns)
{
    /* JSON rows under missing=default are jsonb's: a number's text and a
     * json column's spacing normalized, as the whole body has them */
    static const req_spec typed = {"/imp_typed", NULL, "application/x-ndjson",
                                   "missing=default"};
    size_t cap = 200000, len = 0;
    char *rows = malloc(cap);
    for (int i = 1; i <= 2000; i++)
        len += (size_t)snprintf(rows + len, cap - len,
                                "{\"id\":%d,\"t\":1.50e3,\"j\":{\"a\":  %d}}\n", i, i);
    char *r = streamed_as_whole(&typed, rows, "SELECT json_agg(t ORDER BY id) FROM api.imp_typed t",
                                "201");
    free(r);
    free(rows);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_typed WHERE"
                                             " t = '1500' AND j::text = '{\"a\": 7}'"), 1);

    static const req_spec s = {"/imp_rows", "columns=id,name,note", "application/x-ndjson",
                               "missing=default"};
    char *body = ndjson_rows(10, 1000, 0);
    r = streamed_as_whole(&s, body, TABLE_JSON, "201");
    free(r);
    free(body);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_rows WHERE"
                                             " note = 'none' AND score IS NULL"), 1000);
}
END_TEST

/* PostgreSQL refuses row 900: the whole body's answer, nothing written */
/* A row PostgreSQL refuses in the write itself (NOT NULL; RLS's check):
 * nothing written, the whole body's error with that row's line named */
START_TEST(refused_row_writes_nothing)
{
    static const req_spec s = {"/imp_rows", NULL, "application/x-ndjson", NULL};
    char *body = ndjson_rows(10, 1000, 900);
    char *r = streamed_naming(&s, body, TABLE_JSON, "line 891");
    assert_status(r, "400");
    ck_assert_ptr_nonnull(strstr(r, "\"code\":\"23502\""));
    ck_assert_ptr_nonnull(strstr(r, "\"details\":\"line 891: Failing row contains (900, null"));
    free(r);
    free(body);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_rows"), 2);
}
END_TEST

START_TEST(rls_refusal_writes_nothing)
{
    static const req_spec s = {"/imp_owned", NULL, "application/x-ndjson", NULL};
    size_t cap = 1000 * 40, len = 0;
    char *body = malloc(cap);
    for (int i = 1; i <= 1000; i++)
        len += (size_t)snprintf(body + len, cap - len, "{\"id\":%d,\"owner\":\"%s\"}\n", i,
                                i == 999 ? "someone else" : "me");
    char *r = streamed_naming(&s, body, "SELECT json_agg(t ORDER BY id) FROM api.imp_owned t",
                              "line 999");
    /* anonymous: PostgREST answers 42501 with 401 */
    assert_status(r, "401");
    ck_assert_ptr_nonnull(strstr(r, "\"code\":\"42501\""));
    free(r);
    free(body);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_owned"), 0);
}
END_TEST

/* Each format names the row in its own terms: a JSON array's index, a
 * CSV record's first line (records spanning lines and blank lines
 * counted), for a key the body repeats, a value the column's type
 * refuses in the INSERT's cast, a trigger's error; an error raised once
 * all rows went (a foreign key's) names none */
START_TEST(write_errors_name_their_row)
{
    static const req_spec json = {"/imp_rows", NULL, "application/json", NULL};
    char *body = json_rows(10, 1000, 0);
    char *row = strstr(body, "{\"id\":500,");
    memcpy(row, "{\"id\":777,", 10);   /* index 490 repeats index 767's key */
    char *r = streamed_naming(&json, body, TABLE_JSON, "index 767");
    ck_assert_msg(strstr(r, "\"code\":\"23505\"") != NULL, "%s", r);
    ck_assert_ptr_nonnull(strstr(r, "\"details\":\"index 767: Key (id)=(777) already exists."));
    free(r);
    /* ... and so with a representation streamed back */
    static const req_spec shown = {"/imp_rows", "select=id", "application/json",
                                   "return=representation"};
    response_threshold = 4096;
    r = streamed_naming(&shown, body, TABLE_JSON, "index 767");
    response_threshold = 0;
    ck_assert(!response_streamed);
    ck_assert_msg(strstr(r, "\"code\":\"23505\"") != NULL, "%s", r);
    free(r);
    free(body);

    /* an existing key in typed CSV rows: record 3 spans lines 4 and 5,
     * line 7 is blank, record 4000 (line 4003) repeats key 2 */
    static const req_spec csv = {"/imp_rows", NULL, "text/csv", NULL};
    size_t cap = 100000, len = 0;
    body = malloc(cap);
    len += (size_t)snprintf(body, cap, "id,name\n");
    for (int k = 1; k <= 5000; k++)
        len += (size_t)snprintf(body + len, cap - len,
                                k == 3      ? "%d,\"two\nlines\"\n"
                                : k == 5    ? "\n%d,r\n"
                                : k == 4000 ? "2,dup\n"
                                            : "%d,r\n",
                                10 + k);
    r = streamed_naming(&csv, body, TABLE_JSON, "line 4003");
    ck_assert_msg(strstr(r, "\"details\":\"line 4003: Key (id)=(2) already exists.") != NULL,
                  "%s", r);
    free(r);
    free(body);

    /* a value the enum refuses: a text column of the rows' table, cast by
     * the INSERT */
    static const req_spec moods = {"/imp_moods", NULL, "text/csv", NULL};
    cap = 200000;
    len = 0;
    body = malloc(cap);
    len += (size_t)snprintf(body, cap, "id,mood\n");
    for (int i = 1; i <= 5000; i++)
        len += (size_t)snprintf(body + len, cap - len, "%d,%s\n", i,
                                i == 4321 ? "angry" : i % 2 ? "calm" : "busy");
    r = streamed_naming(&moods, body, "SELECT json_agg(t ORDER BY id) FROM api.imp_moods t",
                        "line 4322, column mood");
    ck_assert_msg(strstr(r, "\"code\":\"22P02\"") != NULL, "%s", r);
    free(r);
    free(body);

    /* a BEFORE trigger's RAISE, NDJSON line 700 */
    static const req_spec nd = {"/imp_rows", NULL, "application/x-ndjson", NULL};
    body = ndjson_rows(10, 1000, 0);
    row = strstr(body, "\"name\":\"r\",\"score\":709.25");
    memcpy(row, "\"name\":\"x\"", 10);
    r = streamed_naming(&nd, body, TABLE_JSON, "line 700");
    ck_assert_msg(strstr(r, "\"code\":\"P0001\"") != NULL, "%s", r);
    free(r);

    /* a foreign key's check runs after the last row: no row named */
    static const req_spec child = {"/imp_child", NULL, "application/x-ndjson", NULL};
    free(body);
    cap = 1000 * 40;
    len = 0;
    body = malloc(cap);
    for (int i = 1; i <= 1000; i++)
        len += (size_t)snprintf(body + len, cap - len, "{\"id\":%d,\"parent\":%d}\n", i,
                                i == 300 ? 99 : 1);
    r = streamed_naming(&child, body, "SELECT json_agg(t ORDER BY id) FROM api.imp_child t",
                        NULL);
    ck_assert_msg(strstr(r, "\"code\":\"23503\"") != NULL, "%s", r);
    free(r);
    free(body);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_rows"), 2);
}
END_TEST

/* A CSV body: the header, then 5000 records of row_fmt, whose every %d is
 * the record's number from 1 (id,name: "%d,n%d\n") */
static char *numbered_csv(const char *header, const char *row_fmt)
{
    size_t cap = 100000, len = 0;
    char *body = malloc(cap);
    len += (size_t)snprintf(body, cap, "%s\n", header);
    for (int i = 1; i <= 5000; i++)
        len += (size_t)snprintf(body + len, cap - len, row_fmt, i, i);
    return body;
}

/* COPY writes typed rows into the table only where it does what the
 * INSERT does: not under row-level security (which COPY refuses), not
 * into an identity column GENERATED ALWAYS (which COPY would write and
 * the INSERT refuses), not where an AFTER trigger sets a response header
 * (which PostgREST's answer does not see); those go through the rows'
 * table, as the whole body's answer has it. */
START_TEST(copy_only_where_it_does_as_insert)
{
    static const req_spec owned = {"/imp_owned", NULL, "text/csv", "count=exact"};
    char *body = numbered_csv("id,owner", "%d,me\n");
    char *r = streamed_as_whole(&owned, body, "SELECT json_agg(t ORDER BY id) FROM api.imp_owned t",
                                "201");
    ck_assert(!copied_into_table);
    ck_assert_ptr_nonnull(strstr(r, "Content-Range: */5000"));
    free(r);
    free(body);

    static const req_spec ident = {"/imp_ident", NULL, "text/csv", NULL};
    body = numbered_csv("name", "n%d\n");
    r = streamed_as_whole(&ident, body, "SELECT json_agg(t ORDER BY id) FROM api.imp_ident t",
                          "201");
    ck_assert(!copied_into_table);
    free(r);
    free(body);
    body = numbered_csv("id,name", "%d,n%d\n");
    r = same_as_whole(&ident, body, "SELECT count(*) FROM api.imp_ident", &(bool){false});
    assert_status(r, "400");
    ck_assert_msg(strstr(r, "\"code\":\"428C9\"") != NULL, "%s", r);
    free(r);

    static const req_spec after = {"/imp_after", NULL, "text/csv", NULL};
    r = streamed_as_whole(&after, body, "SELECT json_agg(t ORDER BY id) FROM api.imp_after t",
                          "201");
    ck_assert(!copied_into_table);
    ck_assert_ptr_null(strstr(r, "X-Count"));
    free(r);

    /* a COPY into the table refused at its start (no INSERT privilege)
     * answers as the INSERT would, without taking the body whole (which
     * server-max-body-size would refuse) */
    static const req_spec ro = {"/imp_read_only", NULL, "text/csv", NULL};
    reset_rows();
    char *whole = via_set_body(&ro, body);
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "server-max-body-size", "10000", &err), PGREST_OK);
    bool copying;
    r = via_stream(&ro, body, &copying);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "server-max-body-size", "10485760", &err), PGREST_OK);
    assert_same_answer(r, whole);
    ck_assert_msg(strstr(r, "\"code\":\"42501\"") != NULL, "%s", r);
    free(whole);
    free(r);
    free(body);
}
END_TEST

/* return=representation: the body streams, the response is the whole
 * body's (held until complete), embeds and ?columns= included */
START_TEST(representation_streams_the_body)
{
    static const req_spec s = {"/imp_rows", "select=id,name,doc", "application/x-ndjson",
                               "return=representation"};
    char *body = ndjson_rows(10, 1000, 0);
    char *r = streamed_as_whole(&s, body, TABLE_JSON, "201");
    ck_assert_msg(strstr(r, "{\"id\":1009,\"name\":\"r\",\"doc\":{\"k\": [1009, ") != NULL,
                  "%s", r);
    free(r);
    free(body);

    static const req_spec csv = {"/imp_rows", "select=id,tag&columns=id,name",
                                 "text/csv", "return=representation,count=exact"};
    body = csv_rows(10, 1000, 0);
    r = streamed_as_whole(&csv, body, TABLE_JSON, "201");
    ck_assert_ptr_nonnull(strstr(r, "Content-Range: */1000"));
    ck_assert_ptr_nonnull(strstr(r, "{\"id\":1009,\"tag\":\"trg:r, \\\"1009\\\"\"}"));
    free(r);
    free(body);

    /* the response streams too when the host streams responses: the head
     * once the rows are written (their count known), then the rows */
    response_threshold = 4096;
    static const req_spec nd = {"/imp_rows", "select=id,name,doc", "application/x-ndjson",
                                "return=representation,count=exact"};
    body = ndjson_rows(10, 1000, 0);
    r = streamed_as_whole(&nd, body, TABLE_JSON, "201");
    ck_assert(response_streamed);
    ck_assert_ptr_nonnull(strstr(r, "Content-Range: */1000"));
    free(r);
    free(body);

    static const req_spec child = {"/imp_child", "select=id,imp_rows(name)&order=id",
                                   "application/x-ndjson", "return=representation"};
    size_t cap = 1000 * 40, len = 0;
    body = malloc(cap);
    for (int i = 1; i <= 1000; i++)
        len += (size_t)snprintf(body + len, cap - len, "{\"id\":%d,\"parent\":%d}\n", i,
                                1 + i % 2);
    r = streamed_as_whole(&child, body, "SELECT json_agg(t ORDER BY id) FROM api.imp_child t",
                          "201");
    ck_assert_ptr_nonnull(strstr(r, "{\"id\":1000,\"imp_rows\":{\"name\": \"old one\"}}"));
    ck_assert(response_streamed);
    free(r);

    /* a deferred constraint the commit would break: checked before the
     * head, so the answer is the whole body's error, not a cut stream */
    static const req_spec later = {"/imp_later", "select=id", "application/x-ndjson",
                                   "return=representation"};
    body[strlen(body) - 3] = '9';   /* the last row's parent: 9 */
    r = streamed_naming(&later, body, "SELECT json_agg(t ORDER BY id) FROM api.imp_later t",
                        NULL);
    ck_assert_msg(strstr(r, "\"code\":\"23503\"") != NULL, "%s", r);
    ck_assert(!response_streamed);
    free(r);
    free(body);
    response_threshold = 0;
}
END_TEST

/* The host gives up mid-body: nothing written, the COPY's connection
 * gone, and the pool serves the next request. */
START_TEST(cancel_mid_body)
{
    /* NDJSON with ?columns= goes into the rows' table, typed CSV into the
     * table itself */
    static const req_spec nd = {"/imp_rows", "columns=id,name,score,at,doc",
                                "application/x-ndjson", NULL};
    static const req_spec csv = {"/imp_rows", NULL, "text/csv", NULL};
    reset_rows();
    char *bodies[] = {ndjson_rows(10, 1000, 0), csv_rows(10, 1000, 0)};
    for (int round = 0; round < 6; round++) {
        const req_spec *s = round % 2 ? &csv : &nd;
        const char *body = bodies[round % 2];
        pgrest_arena *a = pgrest_arena_new(0);
        pgrest_request *req = build(a, s);
        pgrest_request_body_follows(req);
        pgrest_request_allow_streamed_body(req, THRESHOLD);
        pgrest_task *t = pgrest_task_start(ctx, a, req, NULL, NULL);
        pgrest_error err = {0};
        size_t half = strlen(body) / 2;
        for (size_t at = 0; at < half; at += CHUNK) {
            int rc = pgrest_task_write_body(t, body + at, CHUNK, &err);
            while (rc == PGREST_AGAIN) {
                harness_advance_until(t, PGREST_TASK_WANTS_BODY);
                rc = pgrest_task_write_body(t, body + at, CHUNK, &err);
            }
            ck_assert_int_eq(rc, PGREST_OK);
        }
        ck_assert_int_eq(copies_running(round % 2 ? "\"api\"." : "pg_temp."), 1);
        ck_assert_int_eq(pgrest_task_cancel(t), PGREST_TASK_DONE);
        pgrest_arena_free(a);
    }
    /* more rounds than the pool has connections: each was given back */
    char *r = via_set_body(&nd, "{\"id\":5,\"name\":\"five\"}");
    assert_status(r, "201");
    free(r);
    free(bodies[0]);
    free(bodies[1]);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_rows"), 3);
}
END_TEST

/* server-max-streamed-body-size bounds a streamed body: 413, nothing
 * written; unbounded again, the same body goes in */
START_TEST(streamed_body_bound)
{
    static const req_spec s = {"/imp_rows", NULL, "application/x-ndjson", NULL};
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "server-max-streamed-body-size", "50000", &err),
                     PGREST_OK);
    reset_rows();
    char *body = ndjson_rows(10, 1000, 0);
    ck_assert_uint_gt(strlen(body), 50000);
    bool copying;
    char *r = via_stream(&s, body, &copying);
    ck_assert(!copying);
    assert_status(r, "413");
    ck_assert_ptr_nonnull(strstr(r, "\"details\":\"The limit is 50000 bytes"
                                    " (server-max-streamed-body-size)\""));
    free(r);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_rows"), 2);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "server-max-streamed-body-size", "0", &err), PGREST_OK);
    r = via_stream(&s, body, &copying);
    assert_status(r, "201");
    free(r);
    free(body);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_rows"), 1002);
}
END_TEST

/* handling=strict with max-affected (which PostgREST applies to PATCH,
 * DELETE and calls, not to a POST) answers as for the whole body;
 * ignore-duplicates with on_conflict keeps the rows that were there */
START_TEST(max_affected_and_ignore_duplicates)
{
    static const req_spec strict = {"/imp_rows", NULL, "application/x-ndjson",
                                    "handling=strict,max-affected=10"};
    char *body = ndjson_rows(10, 1000, 0);
    char *r = streamed_as_whole(&strict, body, TABLE_JSON, "201");
    free(r);
    free(body);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_rows"), 1002);

    static const req_spec ignore = {"/imp_rows", "on_conflict=id", "application/x-ndjson",
                                    "resolution=ignore-duplicates,count=exact"};
    body = ndjson_rows(1, 1000, 0);
    r = streamed_as_whole(&ignore, body, TABLE_JSON, "201");
    free(r);
    free(body);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_rows"
                                             " WHERE name = 'old one'"), 1);
}
END_TEST

/* The connection's role may not create temporary tables: the COPY cannot
 * start, and the body is taken whole instead, with the whole body's
 * answer and rows */
START_TEST(no_temp_privilege_takes_the_body_whole)
{
    /* ?columns=: JSON rows, which need the rows' table */
    static const req_spec s = {"/imp_rows", "columns=id,name,score,at,doc",
                               "application/x-ndjson", "count=exact"};
    harness_admin_exec(admin, "DO $$ BEGIN EXECUTE format('REVOKE TEMPORARY ON DATABASE %I"
                              " FROM PUBLIC', current_database()); END $$");
    char *body = ndjson_rows(10, 1000, 0);
    bool copying;
    char *r = same_as_whole(&s, body, TABLE_JSON, &copying);
    harness_admin_exec(admin, "DO $$ BEGIN EXECUTE format('GRANT TEMPORARY ON DATABASE %I"
                              " TO PUBLIC', current_database()); END $$");
    ck_assert(!copying);
    assert_status(r, "201");
    ck_assert_ptr_nonnull(strstr(r, "Content-Range: */1000"));
    free(r);
    free(body);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_rows"), 1002);
}
END_TEST

#define TYPED_JSON "SELECT json_agg(t ORDER BY id) FROM api.imp_typed t"

/* Values of each kind for api.imp_typed, as JSON texts */
static const char *const t_vals[] = {
    "\"tab\\there \\\"q\\\" back\\\\slash \\/ \\u00e9\\ud83d\\ude00 \\b\\f\\r\\n\"",
    "\"plain\"", "\"\xc3\xa9\xe6\xbc\xa2\"", "\"\"", "null", "12.50", "true",
    "{\"a\" : [1, 2]}", "\"\\u0041\\u00DF\"", "[ \"x\\ty\" ]"};
static const char *const n_vals[] = {
    "123456789012345678901234567890.123456789012345678901", "1.5e-7", "-0", "1E+3",
    "\"7.25\"", "null", "-0.000"};
static const char *const big_vals[] = {"9223372036854775807", "-9223372036854775808", "\"42\"",
                                       "null", "0"};
static const char *const f_vals[] = {"1.7976931348623157e308", "0.1", "5e-324", "1e2",
                                     "\"NaN\"", "null", "-0.0", "3.141592653589793238"};
static const char *const at_vals[] = {"\"2026-01-05T10:00:00+02:00\"",
                                      "\"2026-01-05 10:00:00.123456Z\"", "null", "\"infinity\""};
static const char *const ok_vals[] = {"true", "false", "\"yes\"", "\"f\"", "null"};
static const char *const j_vals[] = {
    "{\"a\" : [1, 2.50, \"x\\u00e9\"], \"b\":null}", "[ 1 , 2 ]",
    "\"str\\\"with\\\\escapes\\u0041\\/\"", "12.50e1", "true", "null", "\"plain\"", "{}",
    "\"\\u0009 tab \\u001f\"", "{\"k\": {\"deep\": [\"\\ud83d\\ude00\"]}, \"k\": 2}"};
static const char *const mood_vals[] = {"\"calm\"", "\"busy\"", "null"};
static const char *const v_vals[] = {"\"short\"", "\"\\u00e9\\u00e9\"", "null"};

#define PICK(vals, i) vals[(size_t)(i) % (sizeof vals / sizeof vals[0])]

/* n rows for api.imp_typed (ids from 1), NDJSON or a JSON array: every
 * third one's keys in another order, some spaced out, some with a key
 * repeated (the last value counts) or escaped; tags: with the array
 * column too. Row `bad` (0: none) gets `bad_t` as t. */
static char *typed_json_rows(int n, bool array, bool tags, int bad, const char *bad_t)
{
    size_t cap = (size_t)n * 700 + 16, len = 0;
    char *out = malloc(cap);
    if (array)
        out[len++] = '[';
    for (int i = 1; i <= n; i++) {
        const char *sep = i % 5 == 0 ? " : " : ":", *comma = i % 5 == 0 ? " ,\t" : ",";
        const char *keys[] = {"id", i % 13 == 0 ? "\\u0074" : "t", "n", "big", "f", "at", "ok",
                              "j", "jb", "mood", "v", "tags"};
        char id[16];
        snprintf(id, sizeof id, "%d", i);
        const char *vals[] = {id, i == bad ? bad_t : PICK(t_vals, i), PICK(n_vals, i),
                              PICK(big_vals, i), PICK(f_vals, i), PICK(at_vals, i),
                              PICK(ok_vals, i), PICK(j_vals, i), PICK(j_vals, i + 3),
                              PICK(mood_vals, i), PICK(v_vals, i), "[\"a\", null]"};
        size_t k = tags ? 12 : 11;
        len += (size_t)snprintf(out + len, cap - len, "%s{%s", i > 1 && array ? ",\n" : "",
                                i % 11 == 0 ? "\"t\":\"dup\"," : "");
        for (size_t m = 0; m < k; m++) {
            size_t f = i % 3 == 1 ? k - 1 - m : m;
            len += (size_t)snprintf(out + len, cap - len, "%s\"%s\"%s%s", m > 0 ? comma : "",
                                    keys[f], sep, vals[f]);
        }
        len += (size_t)snprintf(out + len, cap - len, "}%s", array ? "" : "\n");
    }
    if (array)
        out[len++] = ']';
    out[len] = '\0';
    return out;
}

/* NDJSON lines and JSON array elements become typed rows when their keys
 * are the written columns: each value as json_to_record gives it to the
 * column (strings decoded, json strings quoted again as PostgreSQL does,
 * numbers as written, objects and arrays as their text, the last of a
 * repeated key), straight into the table or through the rows' table */
START_TEST(typed_json_rows_as_whole)
{
    static const req_spec nd = {"/imp_typed", NULL, "application/x-ndjson", NULL};
    static const req_spec json = {"/imp_typed", NULL, "application/json", "count=exact"};
    static const req_spec shown = {"/imp_typed", "select=id,t,j,jb,mood",
                                   "application/x-ndjson", "return=representation"};
    for (int array = 0; array < 2; array++) {
        char *body = typed_json_rows(1500, array, false, 0, NULL);
        char *r = streamed_as_whole(array ? &json : &nd, body, TYPED_JSON, "201");
        ck_assert_msg(copied_into_table, "the typed rows did not go into the table by COPY");
        free(r);
        if (!array) {
            bool copying;
            r = same_as_whole(&shown, body, TYPED_JSON, &copying);
            ck_assert(copying && !copied_into_table);
            assert_status(r, "201");
            free(r);
        }
        free(body);
    }
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_typed WHERE"
                                             " t = E'tab\\there \"q\" back\\\\slash /"
                                             " \\u00e9\\U0001F600 \\b\\f\\r\\n'"),
                     150);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_typed WHERE"
                                             " j::text = '\"\\t tab \\u001f\"'"),
                     150);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.imp_typed WHERE"
                                             " n::text = '123456789012345678901234567890"
                                             ".123456789012345678901'"
                                             " AND big = 9223372036854775807"),
                     1500 / 35);
}
END_TEST

/* A value the column refuses fails the COPY, named by its line (index)
 * and column; an escape PostgreSQL's JSON reading refuses (\u0000,
 * nested too; a lone surrogate) is refused as the whole body's is, the
 * row named */
START_TEST(typed_json_rows_refused)
{
    static const req_spec nd = {"/imp_typed", NULL, "application/x-ndjson", NULL};
    static const req_spec json = {"/imp_typed", NULL, "application/json", NULL};
    char *body = typed_json_rows(1500, false, false, 1400, "{\"x\": \"\\u0000\"}");
    char *r = streamed_naming(&nd, body, TYPED_JSON, "line 1400");
    ck_assert_msg(strstr(r, "\"code\":\"22P05\"") != NULL, "%s", r);
    free(r);
    free(body);
    body = typed_json_rows(1500, true, false, 1450, "\"a\\ud800b\"");
    r = streamed_naming(&json, body, TYPED_JSON, "index 1449");
    ck_assert_msg(strstr(r, "\"code\":\"22P02\"") != NULL, "%s", r);
    free(r);
    free(body);
    body = typed_json_rows(1500, false, false, 0, NULL);
    char *row = strstr(body, "\n{\"id\":1004,");
    ck_assert_ptr_nonnull(row);
    row = strstr(row, "\"mood\":null");
    memcpy(row, "\"mood\":\"no\"", 11);
    r = streamed_naming(&nd, body, TYPED_JSON, "line 1004, column mood");
    ck_assert_msg(strstr(r, "\"code\":\"22P02\"") != NULL, "%s", r);
    free(r);
    free(body);
}
END_TEST

/* Keys that are not exactly the written columns of convertible kinds
 * keep JSON rows: an array column, ?columns=; the same answers */
START_TEST(typed_json_rows_excluded)
{
    static const req_spec nd = {"/imp_typed", NULL, "application/x-ndjson", NULL};
    static const req_spec some = {"/imp_typed", "columns=id,t,n,big,f,at,ok,j,jb,mood,v",
                                  "application/x-ndjson", NULL};
    char *body = typed_json_rows(1500, false, true, 0, NULL);
    bool copying;
    char *r = same_as_whole(&nd, body, TYPED_JSON, &copying);
    ck_assert(copying && !copied_into_table);
    assert_status(r, "201");
    free(r);
    free(body);
    body = typed_json_rows(1500, false, false, 0, NULL);
    r = same_as_whole(&some, body, TYPED_JSON, &copying);
    ck_assert(copying && !copied_into_table);
    assert_status(r, "201");
    free(r);
    free(body);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("import");
    TCase *c = tcase_create("import");
    tcase_add_checked_fixture(c, setup, teardown);
    tcase_set_timeout(c, 120);
    tcase_add_test(c, ndjson_import);
    tcase_add_test(c, json_array_import);
    tcase_add_test(c, csv_import);
    tcase_add_test(c, typed_rows_read_as_postgrest);
    tcase_add_test(c, typed_bad_value_names_its_line);
    tcase_add_test(c, typed_rows_of_the_api_types);
    tcase_add_test(c, pre_request_runs_before_the_rows);
    tcase_add_test(c, bad_rows_write_nothing);
    tcase_add_test(c, upsert_over_existing_keys);
    tcase_add_test(c, missing_default_and_columns);
    tcase_add_test(c, refused_row_writes_nothing);
    tcase_add_test(c, rls_refusal_writes_nothing);
    tcase_add_test(c, write_errors_name_their_row);
    tcase_add_test(c, copy_only_where_it_does_as_insert);
    tcase_add_test(c, representation_streams_the_body);
    tcase_add_test(c, cancel_mid_body);
    tcase_add_test(c, streamed_body_bound);
    tcase_add_test(c, max_affected_and_ignore_duplicates);
    tcase_add_test(c, no_temp_privilege_takes_the_body_whole);
    tcase_add_test(c, typed_json_rows_as_whole);
    tcase_add_test(c, typed_json_rows_refused);
    tcase_add_test(c, typed_json_rows_excluded);
    suite_add_tcase(s, c);
    return s;
}

int main(void)
{
    return check_run(suite());
}
