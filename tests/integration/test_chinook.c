/* PostgREST's benchmark requests on the Chinook database
 * (../shared/bench/chinook.sql), each compared with the same data read by a
 * direct SQL query. Skipped when PGREST_TEST_CHINOOK_URI is not set. The
 * published runs serve schema public with db-anon-role postgres. */
#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "harness.h"
#include "pgrest/pgrest.h"

static const char *chinook_uri(void)
{
    const char *uri = getenv("PGREST_TEST_CHINOOK_URI");
    if (uri == NULL || *uri == '\0') {
        fprintf(stderr, "PGREST_TEST_CHINOOK_URI not set: skipping Chinook tests\n");
        exit(77);
    }
    return uri;
}

static pgrest_ctx *ctx;
static PGconn *direct;

static void setup(void)
{
    ctx = pgrest_ctx_new();
    pgrest_error err = {0};
    const char *opts[][2] = {{"db-uri", chinook_uri()}, {"db-schemas", "public"},
                             {"db-anon-role", "postgres"}, {"db-pool", "2"}};
    for (size_t i = 0; i < 4; i++)
        ck_assert_int_eq(pgrest_ctx_set(ctx, opts[i][0], opts[i][1], &err), PGREST_OK);
    ck_assert_msg(pgrest_ctx_load_schema(ctx, &err) == PGREST_OK, "%s", err.message);
    direct = PQconnectdb(chinook_uri());
    ck_assert_int_eq(PQstatus(direct), CONNECTION_OK);
}

static void teardown(void)
{
    PQfinish(direct);
    pgrest_ctx_free(ctx);
}

static json_object *get_json(const char *path, const char *query)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = pgrest_request_new(a, "GET", path, query);
    pgrest_response *resp = pgrest_handle(ctx, a, req);
    size_t len;
    const char *body = pgrest_response_body(resp, &len);
    ck_assert_msg(pgrest_response_status(resp) == 200, "%s?%s -> %d %.*s", path, query,
                  pgrest_response_status(resp), (int)len, body);
    char *text = strndup(body, len);
    json_object *j = json_tokener_parse(text);
    free(text);
    pgrest_arena_free(a);
    ck_assert_ptr_nonnull(j);
    return j;
}

static json_object *sql_json(const char *sql)
{
    PGresult *r = PQexec(direct, sql);
    ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "%s", PQerrorMessage(direct));
    json_object *j = json_tokener_parse(PQgetvalue(r, 0, 0));
    PQclear(r);
    ck_assert_ptr_nonnull(j);
    return j;
}

static void assert_same(json_object *ours, json_object *theirs)
{
    char *a = harness_json_canonical(ours, true), *b = harness_json_canonical(theirs, true);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    json_object_put(ours);
    json_object_put(theirs);
}

/* Issue 4: GET /album?select=*,track(*,genre(*))&artist_id=eq.127 */
START_TEST(albums_with_tracks_and_genres)
{
    json_object *ours = get_json("/album", "select=*,track(*,genre(*))&artist_id=eq.127");
    ck_assert_int_gt((int)json_object_array_length(ours), 0);
    json_object *theirs = sql_json(
        "SELECT json_agg(a) FROM ("
        " SELECT al.*, (SELECT coalesce(json_agg(t), '[]') FROM ("
        "   SELECT tr.*, (SELECT row_to_json(g) FROM genre g WHERE g.genre_id = tr.genre_id) AS genre"
        "   FROM track tr WHERE tr.album_id = al.album_id) t) AS track"
        " FROM album al WHERE al.artist_id = 127) a");
    assert_same(ours, theirs);
}
END_TEST

/* Issue 6: the benchmark's RPC requests. */
START_TEST(rpc_add_them)
{
    json_object *ours = get_json("/rpc/add_them", "a=1&b=2&c=3&d=4&e=5");
    ck_assert_int_eq(json_object_get_int(ours), 15);
    json_object_put(ours);
}
END_TEST

START_TEST(rpc_ret_artists_filtered)
{
    json_object *ours = get_json("/rpc/ret_artists", "select=*&artist_id=eq.3");
    json_object *theirs = sql_json("SELECT json_agg(a) FROM artist a WHERE artist_id = 3");
    assert_same(ours, theirs);
}
END_TEST

START_TEST(rpc_ret_albums_with_embeds)
{
    json_object *ours = get_json("/rpc/ret_albums",
                                 "select=album_id,title,artist_id,track(*,genre(*))&artist_id=eq.127");
    ck_assert_int_gt((int)json_object_array_length(ours), 0);
    json_object *theirs = sql_json(
        "SELECT json_agg(a) FROM ("
        " SELECT al.album_id, al.title, al.artist_id, (SELECT coalesce(json_agg(t), '[]') FROM ("
        "   SELECT tr.*, (SELECT row_to_json(g) FROM genre g WHERE g.genre_id = tr.genre_id) AS genre"
        "   FROM track tr WHERE tr.album_id = al.album_id) t) AS track"
        " FROM album al WHERE al.artist_id = 127) a");
    assert_same(ours, theirs);
}
END_TEST

int main(void)
{
    chinook_uri();
    Suite *s = suite_create("chinook");
    TCase *tc = tcase_create("chinook");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, albums_with_tracks_and_genres);
    tcase_add_test(tc, rpc_add_them);
    tcase_add_test(tc, rpc_ret_artists_filtered);
    tcase_add_test(tc, rpc_ret_albums_with_embeds);
    suite_add_tcase(s, tc);
    return check_run(s);
}
