/* PATCH with an array body whose elements carry the primary key: each row
 * takes its own element's values (pgrest's extension, docs/bulk-patch.md).
 * Each test compares the database afterwards with what the response said,
 * on Chinook (../shared/bench/chinook.sql, PGREST_TEST_CHINOOK_URI; skipped
 * without it) and on the test schema. Chinook rows are put back after each
 * test from a copy taken before. */
#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "harness.h"
#include "pgrest/pgrest.h"

static pgrest_ctx *ctx;
static PGconn *direct;

static void sql_exec(const char *sql)
{
    harness_admin_exec(direct, sql);
}

static long sql_long(const char *sql)
{
    return harness_sql_long(direct, sql);
}

static void chinook_setup(void)
{
    ctx = harness_chinook_ctx(NULL);
    direct = harness_chinook_connect();
    sql_exec("DROP TABLE IF EXISTS pgrest_track_copy;"
             "CREATE TABLE pgrest_track_copy AS SELECT track_id, composer, name FROM track");
}

static void chinook_teardown(void)
{
    sql_exec("UPDATE track t SET composer = c.composer, name = c.name FROM pgrest_track_copy c"
             " WHERE t.track_id = c.track_id AND (t.composer IS DISTINCT FROM c.composer"
             " OR t.name IS DISTINCT FROM c.name); DROP TABLE pgrest_track_copy");
    PQfinish(direct);
    pgrest_ctx_free(ctx);
}

static void patch(const char *path, const char *query, const char *prefer, const char *body,
                  test_response *out)
{
    const char *headers[] = {"Content-Type", "application/json", "Prefer", prefer, NULL};
    if (prefer == NULL)
        headers[2] = NULL;
    harness_request(ctx, "PATCH", path, query, headers, body, out);
}

/* [{"track_id":1,"composer":"pgrest 1"}, ...] for track ids first..last */
static char *composers_body(int first, int last)
{
    size_t cap = (size_t)(last - first + 1) * 64 + 8, len = 0;
    char *s = malloc(cap);
    s[len++] = '[';
    for (int id = first; id <= last; id++)
        len += (size_t)snprintf(s + len, cap - len, "%s{\"track_id\":%d,\"composer\":\"pgrest %d\"}",
                                id == first ? "" : ",", id, id);
    s[len++] = ']';
    s[len] = '\0';
    return s;
}

/* The case: PostgREST answers it 409 (every row takes one
 * arbitrary element, track_id included). */
START_TEST(thousand_tracks_each_their_own_composer)
{
    char *body = composers_body(1, 1000);
    test_response r;
    patch("/track", "select=track_id,composer", "return=representation,count=exact", body, &r);
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.body);
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "0-999/1000");
    json_object *rows = json_tokener_parse(r.body);
    ck_assert_int_eq((int)json_object_array_length(rows), 1000);
    for (size_t i = 0; i < 1000; i++) {
        json_object *row = json_object_array_get_idx(rows, i);
        int id = json_object_get_int(json_object_object_get(row, "track_id"));
        char want[32];
        snprintf(want, sizeof want, "pgrest %d", id);
        ck_assert_str_eq(json_object_get_string(json_object_object_get(row, "composer")), want);
    }
    json_object_put(rows);
    harness_free(&r);
    free(body);
    /* the database holds what the response said, and nothing else moved */
    ck_assert_int_eq(sql_long("SELECT count(*) FROM track WHERE track_id BETWEEN 1 AND 1000"
                              " AND composer = 'pgrest ' || track_id"), 1000);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM track t JOIN pgrest_track_copy c USING (track_id)"
                              " WHERE t.track_id > 1000 AND t.composer IS DISTINCT FROM c.composer"), 0);
}
END_TEST

/* URL filters restrict which rows may change: the others stay, and are
 * not counted */
START_TEST(restricted_by_a_url_filter)
{
    long in_album = sql_long("SELECT count(*) FROM track WHERE album_id = 1 AND track_id <= 30");
    ck_assert_int_gt(in_album, 0);
    char *body = composers_body(1, 30);
    test_response r;
    patch("/track", "album_id=eq.1", "count=exact", body, &r);
    ck_assert_msg(r.status == 204, "%d %s", r.status, r.body);
    char want[64];
    snprintf(want, sizeof want, "0-%ld/%ld", in_album - 1, in_album);
    ck_assert_str_eq(harness_header(&r, "Content-Range"), want);
    harness_free(&r);
    free(body);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM track WHERE track_id <= 30"
                              " AND composer = 'pgrest ' || track_id"), in_album);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM track WHERE track_id <= 30 AND album_id <> 1"
                              " AND composer LIKE 'pgrest %'"), 0);
}
END_TEST

/* Rows that are not there are not created */
START_TEST(missing_rows_not_created)
{
    long before = sql_long("SELECT count(*) FROM track");
    test_response r;
    patch("/track", NULL, "return=representation",
          "[{\"track_id\":1,\"name\":\"pgrest one\"},{\"track_id\":999999,\"name\":\"ghost\"}]", &r);
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.body);
    json_object *rows = json_tokener_parse(r.body);
    ck_assert_int_eq((int)json_object_array_length(rows), 1);
    json_object_put(rows);
    harness_free(&r);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM track"), before);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM track WHERE track_id = 1 AND name = 'pgrest one'"), 1);
}
END_TEST

/* Without the key: PostgREST's one UPDATE ... FROM over every element
 * (each matched row takes one of the elements' values) */
START_TEST(without_the_key_as_postgrest)
{
    test_response r;
    patch("/track", "track_id=in.(1,2,3)", NULL,
          "[{\"composer\":\"pgrest x\"},{\"composer\":\"pgrest y\"}]", &r);
    ck_assert_msg(r.status == 204, "%d %s", r.status, r.body);
    harness_free(&r);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM track WHERE track_id IN (1, 2, 3)"
                              " AND composer IN ('pgrest x', 'pgrest y')"), 3);
}
END_TEST

/* Two elements for one row: 400, nothing written */
START_TEST(duplicate_keys)
{
    test_response r;
    patch("/track", NULL, NULL,
          "[{\"track_id\":5,\"composer\":\"pgrest a\"},{\"track_id\":6,\"composer\":\"pgrest b\"},"
          "{\"track_id\":5,\"composer\":\"pgrest c\"}]", &r);
    ck_assert_int_eq(r.status, 400);
    json_object *e = json_tokener_parse(r.body);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(e, "code")), "PGRST102");
    ck_assert_str_eq(json_object_get_string(json_object_object_get(e, "details")),
                     "Elements 0 and 2 have the same (track_id).");
    json_object_put(e);
    harness_free(&r);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM track WHERE composer LIKE 'pgrest %'"), 0);
}
END_TEST

/* handling=strict with max-affected counts the rows really updated */
START_TEST(max_affected)
{
    char *body = composers_body(1, 3);
    test_response r;
    patch("/track", NULL, "handling=strict,max-affected=2", body, &r);
    ck_assert_int_eq(r.status, 400);
    ck_assert_ptr_nonnull(strstr(r.body, "PGRST124"));
    harness_free(&r);
    patch("/track", "track_id=lte.2", "handling=strict,max-affected=2", body, &r);
    ck_assert_msg(r.status == 204, "%d %s", r.status, r.body);
    harness_free(&r);
    free(body);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM track WHERE composer LIKE 'pgrest %'"), 2);
}
END_TEST

/* ------------------------------------------------------------ test schema */

/* a table of the test's own (other tests read the fixture's rows in
 * their physical order, which any update moves) */
static void schema_setup(void)
{
    direct = harness_admin_connect();
    sql_exec("DROP TABLE IF EXISTS api.pgrest_pairs;"
             "CREATE TABLE api.pgrest_pairs (a int, b int, v text, PRIMARY KEY (a, b));"
             "INSERT INTO api.pgrest_pairs VALUES (1, 1, 'x'), (1, 2, 'x'), (2, 1, 'x');"
             "GRANT SELECT, UPDATE ON api.pgrest_pairs TO web_user");
    static const char *const writer[] = {"db-anon-role", "web_user", NULL};
    ctx = harness_ctx(writer);
}

static void schema_teardown(void)
{
    sql_exec("DROP TABLE api.pgrest_pairs");
    PQfinish(direct);
    pgrest_ctx_free(ctx);
}

/* a composite key: each row its own value, the third row untouched */
START_TEST(composite_key_on_the_test_schema)
{
    const char *headers[] = {"Content-Type", "application/json",
                             "Prefer", "return=representation", NULL};
    test_response r;
    harness_request(ctx, "PATCH", "/pgrest_pairs", "select=a,b,v&order=a,b", headers,
                    "[{\"a\":1,\"b\":2,\"v\":\"one-two\"},{\"a\":1,\"b\":1,\"v\":\"one-one\"}]",
                    &r);
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.body);
    ck_assert_str_eq(r.body, "[{\"a\":1,\"b\":1,\"v\":\"one-one\"}, \n"
                             " {\"a\":1,\"b\":2,\"v\":\"one-two\"}]");
    harness_free(&r);
    ck_assert_int_eq(sql_long("SELECT count(*) FROM api.pgrest_pairs WHERE (a, b, v) IN"
                              " ((1, 1, 'one-one'), (1, 2, 'one-two'), (2, 1, 'x'))"), 3);
}
END_TEST

int main(void)
{
    harness_db_uri();
    Suite *s = suite_create("bulk_patch");
    TCase *schema = tcase_create("test_schema");
    tcase_add_checked_fixture(schema, schema_setup, schema_teardown);
    tcase_add_test(schema, composite_key_on_the_test_schema);
    suite_add_tcase(s, schema);
    if (harness_chinook_uri() != NULL) {
        TCase *tc = tcase_create("chinook");
        tcase_set_timeout(tc, 60);
        tcase_add_checked_fixture(tc, chinook_setup, chinook_teardown);
        tcase_add_test(tc, thousand_tracks_each_their_own_composer);
        tcase_add_test(tc, restricted_by_a_url_filter);
        tcase_add_test(tc, missing_rows_not_created);
        tcase_add_test(tc, without_the_key_as_postgrest);
        tcase_add_test(tc, duplicate_keys);
        tcase_add_test(tc, max_affected);
        suite_add_tcase(s, tc);
    } else {
        fprintf(stderr, "PGREST_TEST_CHINOOK_URI not set: skipping the Chinook cases\n");
    }
    return check_run(s);
}
