/* application/x-ndjson request bodies (docs/bulk-import.md): a POST or
 * PATCH whose body is one JSON object per line is the request of the JSON
 * array of those objects. Each test sends both and compares the responses
 * and the table afterwards (read back from PostgreSQL), and checks the
 * table against values written out here. A table and a view of their own,
 * created before the schema cache is loaded, committed to and dropped at
 * the end. */
#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>
#include <string.h>

#include "check_run.h"
#include "harness.h"
#include "pgrest/pgrest.h"

#define ND "application/x-ndjson"
#define JS "application/json"
#define TABLE_JSON "SELECT json_agg(t ORDER BY id) FROM api.nd_items t"

static pgrest_ctx *ctx;
static PGconn *admin;

static void setup(void)
{
    admin = harness_admin_connect();
    harness_admin_exec(admin,
                       "DROP TABLE IF EXISTS api.nd_items CASCADE;"
                       "CREATE TABLE api.nd_items (id integer PRIMARY KEY, name text NOT NULL,"
                       " score numeric, tags jsonb, note text DEFAULT 'none');"
                       "CREATE VIEW api.nd_items_view AS SELECT * FROM api.nd_items;"
                       "GRANT ALL ON api.nd_items, api.nd_items_view TO web_user");
    const char *opts[] = {"db-anon-role", "web_user", "db-tx-end", "commit", NULL};
    ctx = harness_ctx(opts);
}

static void teardown(void)
{
    pgrest_ctx_free(ctx);
    harness_admin_exec(admin, "DROP TABLE api.nd_items CASCADE");
    PQfinish(admin);
}

static void reset_rows(const char *insert_values)
{
    harness_admin_exec(admin, "TRUNCATE api.nd_items");
    if (insert_values != NULL) {
        char sql[512];
        snprintf(sql, sizeof sql, "INSERT INTO api.nd_items (id, name, score) VALUES %s",
                 insert_values);
        harness_admin_exec(admin, sql);
    }
}

static void send(const char *method, const char *path, const char *query, const char *ctype,
                 const char *prefer, const char *body, test_response *out)
{
    const char *headers[] = {"Content-Type", ctype, "Prefer", prefer, NULL};
    if (prefer == NULL)
        headers[2] = NULL;
    harness_request(ctx, method, path, query, headers, body, out);
}

static void assert_same_header(const test_response *x, const test_response *y, const char *name)
{
    const char *a = harness_header(x, name), *b = harness_header(y, name);
    ck_assert_msg((a == NULL) == (b == NULL) && (a == NULL || strcmp(a, b) == 0),
                  "%s: %s vs %s", name, a ? a : "(none)", b ? b : "(none)");
}

static void assert_same_response(const test_response *nd, const test_response *js)
{
    ck_assert_int_eq(nd->status, js->status);
    ck_assert_str_eq(nd->body, js->body);
    assert_same_header(nd, js, "Content-Range");
    assert_same_header(nd, js, "Content-Type");
    assert_same_header(nd, js, "Location");
    assert_same_header(nd, js, "Preference-Applied");
}

/* Sends the JSON array and the NDJSON body to the same starting table
 * (`seed`, VALUES of id, name, score, or NULL): the responses and the
 * tables afterwards must be the same. The NDJSON response is kept in
 * *nd for the caller's own checks; the table holds the NDJSON's writes. */
static void same_as_array(const char *method, const char *path, const char *query,
                          const char *prefer, const char *seed, const char *array,
                          const char *ndjson, test_response *nd)
{
    test_response js;
    reset_rows(seed);
    send(method, path, query, JS, prefer, array, &js);
    json_object *after_json = harness_sql_json(admin, TABLE_JSON);
    reset_rows(seed);
    send(method, path, query, ND, prefer, ndjson, nd);
    ck_assert_msg(nd->status < 300, "%d %s", nd->status, nd->body);
    assert_same_response(nd, &js);
    harness_assert_same_json(harness_sql_json(admin, TABLE_JSON), after_json, false);
    harness_free(&js);
}

static const char rows_array[] =
    "[{\"id\":1,\"name\":\"caf\\u00e9 \\\"one\\\"\",\"score\":1.50,\"tags\":{\"k\":[1,2]}},"
    "{\"id\":2,\"name\":\"two\",\"score\":null,\"tags\":null},"
    "{\"id\":3,\"name\":\"line\\nbreak\",\"score\":-3e2,\"tags\":[]}]";
/* the same objects, with CRLF, a blank line, spaces and no final newline */
static const char rows_ndjson[] =
    "{\"id\":1,\"name\":\"caf\\u00e9 \\\"one\\\"\",\"score\":1.50,\"tags\":{\"k\":[1,2]}}\r\n"
    "\r\n"
    "  {\"tags\":null,\"id\":2,\"name\":\"two\",\"score\":null}\t\n"
    " \n"
    "{\"id\":3,\"name\":\"line\\nbreak\",\"score\":-3e2,\"tags\":[]}";

START_TEST(insert_is_the_array_insert)
{
    test_response r;
    same_as_array("POST", "/nd_items", "select=id,name,score,tags,note",
                  "return=representation,count=exact", NULL, rows_array, rows_ndjson, &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "*/3");
    harness_free(&r);
    /* what PostgreSQL holds, written out: the column default for note */
    ck_assert_int_eq(harness_sql_long(admin,
                                      "SELECT count(*) FROM api.nd_items WHERE note = 'none' AND ("
                                      "(id = 1 AND name = 'café \"one\"' AND score = 1.5"
                                      " AND tags = '{\"k\":[1,2]}')"
                                      " OR (id = 2 AND name = 'two' AND score IS NULL"
                                      " AND tags IS NULL)"
                                      " OR (id = 3 AND name = E'line\\nbreak' AND score = -300"
                                      " AND tags = '[]'))"), 3);
    /* return=minimal and an insertable view */
    same_as_array("POST", "/nd_items_view", "", NULL, NULL, rows_array, rows_ndjson, &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_str_eq(r.body, "");
    harness_free(&r);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.nd_items"), 3);
}
END_TEST

/* columns= and missing=default: keys the lines lack take the column
 * default, as for the array */
START_TEST(insert_with_columns_and_missing_default)
{
    test_response r;
    same_as_array("POST", "/nd_items", "columns=id,name,note&select=id,note",
                  "return=representation,missing=default", NULL,
                  "[{\"id\":1,\"name\":\"a\"},{\"id\":2,\"name\":\"b\",\"note\":\"x\"}]",
                  "{\"id\":1,\"name\":\"a\"}\n{\"id\":2,\"name\":\"b\",\"note\":\"x\"}\n", &r);
    ck_assert_str_eq(r.body, "[{\"id\":1,\"note\":\"none\"}, \n {\"id\":2,\"note\":\"x\"}]");
    harness_free(&r);
}
END_TEST

/* on_conflict / resolution over existing keys: merge updates them, ignore
 * keeps them; the new key is inserted either way */
START_TEST(upsert_over_existing_keys)
{
    static const char seed[] = "(1, 'old one', 1), (2, 'old two', 2)";
    static const char array[] = "[{\"id\":2,\"name\":\"new two\"},{\"id\":3,\"name\":\"three\"}]";
    static const char lines[] = "{\"id\":2,\"name\":\"new two\"}\n{\"id\":3,\"name\":\"three\"}\n";
    test_response r;
    same_as_array("POST", "/nd_items", "on_conflict=id&select=id,name",
                  "resolution=merge-duplicates,return=representation", seed, array, lines, &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_str_eq(r.body, "[{\"id\":2,\"name\":\"new two\"}, \n {\"id\":3,\"name\":\"three\"}]");
    harness_free(&r);
    json_object *merged = harness_sql_json(admin, "SELECT json_agg(json_build_array(id, name,"
                                                  " score) ORDER BY id) FROM api.nd_items");
    harness_assert_same_json(merged, json_tokener_parse("[[1,\"old one\",1],[2,\"new two\",2],"
                                                        "[3,\"three\",null]]"), false);
    same_as_array("POST", "/nd_items", "", "resolution=ignore-duplicates", seed, array, lines, &r);
    ck_assert_int_eq(r.status, 201);
    harness_free(&r);
    json_object *kept = harness_sql_json(admin, "SELECT json_agg(json_build_array(id, name)"
                                                " ORDER BY id) FROM api.nd_items");
    harness_assert_same_json(kept, json_tokener_parse("[[1,\"old one\"],[2,\"old two\"],"
                                                      "[3,\"three\"]]"), false);
}
END_TEST

/* pgrest's bulk PATCH (docs/bulk-patch.md): lines carrying the primary
 * key update their own rows */
START_TEST(bulk_patch_per_row)
{
    static const char seed[] = "(1, 'a', 1), (2, 'b', 2), (3, 'c', 3)";
    test_response r;
    same_as_array("PATCH", "/nd_items", "select=id,name,score",
                  "return=representation,count=exact", seed,
                  "[{\"id\":1,\"score\":10},{\"id\":3,\"score\":30}]",
                  "{\"id\":1,\"score\":10}\r\n{\"id\":3,\"score\":30}\r\n", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "0-1/2");
    harness_free(&r);
    json_object *rows = harness_sql_json(admin, "SELECT json_agg(json_build_array(id, score)"
                                                " ORDER BY id) FROM api.nd_items");
    harness_assert_same_json(rows, json_tokener_parse("[[1,10],[2,2],[3,30]]"), false);
    /* max-affected with handling=strict counts the rows of the lines */
    same_as_array("PATCH", "/nd_items", "", "handling=strict,max-affected=5", seed,
                  "[{\"id\":2,\"name\":\"B\"}]", "{\"id\":2,\"name\":\"B\"}", &r);
    ck_assert_int_eq(r.status, 204);
    harness_free(&r);
}
END_TEST

/* A bad line: 400 PGRST102 naming it, and nothing written */
START_TEST(bad_line_writes_nothing)
{
    reset_rows("(1, 'a', 1)");
    test_response r;
    send("POST", "/nd_items", "", ND, NULL, "{\"id\":5,\"name\":\"e\"}\n\n{\"id\":6,name}\n", &r);
    ck_assert_int_eq(r.status, 400);
    json_object *want = json_tokener_parse(
        "{\"code\":\"PGRST102\",\"message\":\"Empty or invalid json\","
        "\"details\":\"line 3: invalid JSON\",\"hint\":null}");
    harness_assert_same_json(json_tokener_parse(r.body), want, false);
    harness_free(&r);
    send("POST", "/nd_items", "", ND, NULL, "{\"id\":5,\"name\":\"e\"}\n{\"id\":6}\n", &r);
    ck_assert_int_eq(r.status, 400);
    ck_assert_ptr_nonnull(strstr(r.body, "All object keys must match"));
    harness_free(&r);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.nd_items"), 1);
}
END_TEST

/* Where NDJSON means nothing to pgrest either, PostgREST's answer stays:
 * a call and a PUT refuse the type as Payload.hs does */
START_TEST(call_and_put_keep_their_answer)
{
    test_response r;
    send("POST", "/rpc/add", "", ND, NULL, "{\"a\":1,\"b\":2}\n", &r);
    ck_assert_int_eq(r.status, 400);
    json_object *want = json_tokener_parse(
        "{\"code\":\"PGRST102\",\"message\":\"Content-Type not acceptable: "
        "application/x-ndjson\",\"details\":null,\"hint\":null}");
    harness_assert_same_json(json_tokener_parse(r.body), want, false);
    harness_free(&r);
    reset_rows(NULL);
    send("PUT", "/nd_items", "id=eq.1", ND "; charset=utf-8", NULL,
         "{\"id\":1,\"name\":\"a\"}", &r);
    ck_assert_int_eq(r.status, 400);
    want = json_tokener_parse("{\"code\":\"PGRST102\",\"message\":\"Content-Type not "
                              "acceptable: application/x-ndjson; charset=utf-8\","
                              "\"details\":null,\"hint\":null}");
    harness_assert_same_json(json_tokener_parse(r.body), want, false);
    harness_free(&r);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.nd_items"), 0);
}
END_TEST

/* Nested inserts need a JSON body (docs/nested-inserts.md): in a line, a
 * key naming a relationship is a column the table lacks, as in CSV */
START_TEST(nested_insert_keys_are_columns)
{
    long albums = harness_sql_long(admin, "SELECT count(*) FROM api.albums");
    test_response r;
    send("POST", "/albums", "", ND, NULL,
         "{\"title\":\"N\",\"artist_id\":1,\"tracks\":[{\"title\":\"t\",\"position\":1}]}\n",
         &r);
    ck_assert_int_eq(r.status, 400);
    json_object *want = json_tokener_parse(
        "{\"code\":\"PGRST204\",\"message\":\"Could not find the 'tracks' column of "
        "'albums' in the schema cache\",\"details\":null,\"hint\":null}");
    harness_assert_same_json(json_tokener_parse(r.body), want, false);
    harness_free(&r);
    ck_assert_int_eq(harness_sql_long(admin, "SELECT count(*) FROM api.albums"), albums);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ndjson");
    TCase *tc = tcase_create("ndjson");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, insert_is_the_array_insert);
    tcase_add_test(tc, insert_with_columns_and_missing_default);
    tcase_add_test(tc, upsert_over_existing_keys);
    tcase_add_test(tc, bulk_patch_per_row);
    tcase_add_test(tc, bad_line_writes_nothing);
    tcase_add_test(tc, call_and_put_keep_their_answer);
    tcase_add_test(tc, nested_insert_keys_are_columns);
    suite_add_tcase(s, tc);
    return check_run(s);
}
