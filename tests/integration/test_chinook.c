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
    const char *uri = harness_chinook_uri();
    if (uri == NULL) {
        fprintf(stderr, "PGREST_TEST_CHINOOK_URI not set: skipping Chinook tests\n");
        exit(77);
    }
    return uri;
}

static pgrest_ctx *ctx;
static PGconn *direct;

static void setup(void)
{
    ctx = harness_chinook_ctx(NULL);
    direct = harness_chinook_connect();
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
    return harness_sql_json(direct, sql);
}

static void assert_same(json_object *ours, json_object *theirs)
{
    harness_assert_same_json(ours, theirs, true);
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

/* ------------------------------------------------------------ nested inserts
 * (pgrest's extension, docs/nested-inserts.md): what the response says is
 * what the database holds afterwards; the rows are removed again. */

static int by_track_id(const void *x, const void *y)
{
    json_object *const *a = x, *const *b = y;
    return json_object_get_int(json_object_object_get(*a, "track_id")) -
           json_object_get_int(json_object_object_get(*b, "track_id"));
}

static json_object *post_json(const char *path, const char *query, const char *body,
                              int want_status)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = pgrest_request_new(a, "POST", path, query);
    pgrest_request_add_header(req, "Content-Type", "application/json");
    pgrest_request_add_header(req, "Prefer", "return=representation");
    pgrest_request_set_body(req, body, strlen(body));
    pgrest_response *resp = pgrest_handle(ctx, a, req);
    size_t len;
    const char *out = pgrest_response_body(resp, &len);
    ck_assert_msg(pgrest_response_status(resp) == want_status, "%s -> %d %.*s", body,
                  pgrest_response_status(resp), (int)len, out);
    char *text = strndup(out, len);
    json_object *j = json_tokener_parse(text);
    free(text);
    pgrest_arena_free(a);
    ck_assert_ptr_nonnull(j);
    return j;
}

static void sql_exec(const char *sql)
{
    harness_admin_exec(direct, sql);
}

static int sql_int(const char *sql)
{
    return (int)harness_sql_long(direct, sql);
}

#define NESTED_SELECT "select=album_id,title,artist_id,track(name,milliseconds,album_id)"
#define NESTED_FROM_DB                                                                \
    "SELECT json_agg(a ORDER BY a.album_id) FROM ("                                   \
    " SELECT al.album_id, al.title, al.artist_id, (SELECT coalesce(json_agg(t), '[]')" \
    "  FROM (SELECT name, milliseconds, album_id FROM track tr"                       \
    "        WHERE tr.album_id = al.album_id ORDER BY track_id) t) AS track"            \
    " FROM album al WHERE al.title LIKE 'pgrest nested %') a"
#define NESTED_CLEANUP                                                                  \
    "DELETE FROM track WHERE album_id IN (SELECT album_id FROM album WHERE title LIKE "  \
    "'pgrest nested %'); DELETE FROM album WHERE title LIKE 'pgrest nested %'"

static void assert_nested_in_db(json_object *ours)
{
    assert_same(ours, sql_json(NESTED_FROM_DB));
    sql_exec(NESTED_CLEANUP);
}

#define TRACK(name, ms)                                                           \
    "{\"name\":\"" name "\",\"media_type_id\":1,\"milliseconds\":" #ms         \
    ",\"unit_price\":0.99}"

START_TEST(nested_album_with_two_new_tracks)
{
    json_object *ours = post_json(
        "/album", NESTED_SELECT, "{\"title\":\"pgrest nested 1\",\"artist_id\":1,\"track\":["
        TRACK("a", 1000) "," TRACK("b", 2000) "]}", 201);
    json_object *tracks = json_object_object_get(json_object_array_get_idx(ours, 0), "track");
    ck_assert_int_eq((int)json_object_array_length(tracks), 2);
    assert_nested_in_db(ours);
}
END_TEST

START_TEST(nested_bulk_albums_each_with_their_tracks)
{
    json_object *ours = post_json(
        "/album", NESTED_SELECT,
        "[{\"title\":\"pgrest nested 1\",\"artist_id\":1,\"track\":[" TRACK("1a", 1) "]},"
        " {\"title\":\"pgrest nested 2\",\"artist_id\":2,\"track\":[" TRACK("2a", 2) ","
        TRACK("2b", 3) "]},"
        " {\"title\":\"pgrest nested 3\",\"artist_id\":3,\"track\":[]}]", 201);
    ck_assert_int_eq((int)json_object_array_length(ours), 3);
    assert_nested_in_db(ours);
}
END_TEST

START_TEST(nested_failing_third_track_writes_nothing)
{
    int albums = sql_int("SELECT count(*) FROM album"), tracks = sql_int("SELECT count(*) FROM track");
    json_object *err = post_json(
        "/album", NESTED_SELECT, "{\"title\":\"pgrest nested 1\",\"artist_id\":1,\"track\":["
        TRACK("a", 1) "," TRACK("b", 2) ",{\"name\":\"c\",\"milliseconds\":3}]}", 400);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(err, "code")), "23502");
    json_object_put(err);
    ck_assert_int_eq(sql_int("SELECT count(*) FROM album"), albums);
    ck_assert_int_eq(sql_int("SELECT count(*) FROM track"), tracks);
}
END_TEST

/* A track with a new album with a new artist: the chain is written from
 * its far end, each key filling the next row's foreign key. */
START_TEST(nested_track_with_new_album_with_new_artist)
{
    json_object *ours = post_json(
        "/track", "select=track_id,name,album(title,artist(name))",
        "{\"name\":\"pgrest nested chain\",\"media_type_id\":1,\"milliseconds\":5,"
        "\"unit_price\":1,\"album\":{\"title\":\"pgrest nested chain album\","
        "\"artist\":{\"name\":\"pgrest nested chain artist\"}}}", 201);
    json_object *theirs = sql_json(
        "SELECT json_agg(x) FROM (SELECT t.track_id, t.name, json_build_object('title', al.title,"
        " 'artist', json_build_object('name', ar.name)) AS album FROM track t JOIN album al"
        " USING (album_id) JOIN artist ar USING (artist_id) WHERE t.name = 'pgrest nested chain') x");
    assert_same(ours, theirs);
    sql_exec("DELETE FROM track WHERE name = 'pgrest nested chain';"
             " DELETE FROM album WHERE title = 'pgrest nested chain album';"
             " DELETE FROM artist WHERE name = 'pgrest nested chain artist'");
}
END_TEST

/* A playlist with two existing tracks (named by key) and a new one, linked
 * through playlist_track. */
START_TEST(nested_playlist_with_existing_and_new_tracks)
{
    json_object *ours = post_json(
        "/playlist", "select=playlist_id,name,track(track_id,name)",
        "{\"name\":\"pgrest nested playlist\",\"track\":[{\"track_id\":1},{\"track_id\":2},"
        TRACK("pgrest nested new track", 7) "]}", 201);
    json_object *theirs = sql_json(
        "SELECT json_agg(x) FROM (SELECT p.playlist_id, p.name, (SELECT json_agg(t ORDER BY"
        " t.track_id) FROM (SELECT t.track_id, t.name FROM playlist_track pt JOIN track t USING"
        " (track_id) WHERE pt.playlist_id = p.playlist_id) t) AS track FROM playlist p"
        " WHERE p.name = 'pgrest nested playlist') x");
    /* the response's embed has no order of its own: compare it sorted */
    json_object *tracks = json_object_object_get(json_object_array_get_idx(ours, 0), "track");
    json_object_array_sort(tracks, by_track_id);
    ck_assert_int_eq((int)json_object_array_length(tracks), 3);
    assert_same(ours, theirs);
    sql_exec("DELETE FROM playlist_track WHERE playlist_id IN (SELECT playlist_id FROM playlist"
             " WHERE name = 'pgrest nested playlist');"
             " DELETE FROM playlist WHERE name = 'pgrest nested playlist';"
             " DELETE FROM track WHERE name = 'pgrest nested new track'");
}
END_TEST

/* A new target row of a many-to-many key nests rows of its own: the new
 * track of a playlist references a new album (many-to-one under the
 * target); the body names the tracks by select='s alias. */
START_TEST(nested_playlist_with_a_track_on_a_new_album)
{
    json_object *ours = post_json(
        "/playlist", "select=name,songs:track(name,album(title))",
        "{\"name\":\"pgrest nested deep playlist\",\"songs\":[{\"track_id\":1},"
        "{\"name\":\"pgrest nested deep track\",\"media_type_id\":1,\"milliseconds\":5,"
        "\"unit_price\":1,\"album\":{\"title\":\"pgrest nested deep album\",\"artist_id\":1}}]}",
        201);
    json_object *theirs = sql_json(
        "SELECT json_agg(x) FROM (SELECT p.name, (SELECT json_agg(json_build_object('name',"
        " t.name, 'album', json_build_object('title', al.title)) ORDER BY t.track_id)"
        " FROM playlist_track pt JOIN track t USING (track_id) JOIN album al USING (album_id)"
        " WHERE pt.playlist_id = p.playlist_id) AS songs FROM playlist p"
        " WHERE p.name = 'pgrest nested deep playlist') x");
    json_object *songs = json_object_object_get(json_object_array_get_idx(ours, 0), "songs");
    ck_assert_int_eq((int)json_object_array_length(songs), 2);
    /* no order of its own: the existing track 1 is the one on another album */
    json_object *first = json_object_array_get_idx(songs, 0);
    if (strcmp(json_object_get_string(json_object_object_get(first, "name")),
               "pgrest nested deep track") == 0) {
        json_object *second = json_object_get(json_object_array_get_idx(songs, 1));
        json_object_array_del_idx(songs, 1, 1);
        json_object_array_put_idx(songs, 0, second);
        json_object_array_put_idx(songs, 1, json_object_get(first));
    }
    assert_same(ours, theirs);
    ck_assert_int_eq(sql_int("SELECT count(*) FROM track t JOIN album al USING (album_id)"
                             " WHERE t.name = 'pgrest nested deep track'"
                             " AND al.title = 'pgrest nested deep album'"), 1);
    sql_exec("DELETE FROM playlist_track WHERE playlist_id IN (SELECT playlist_id FROM playlist"
             " WHERE name = 'pgrest nested deep playlist');"
             " DELETE FROM playlist WHERE name = 'pgrest nested deep playlist';"
             " DELETE FROM track WHERE name = 'pgrest nested deep track';"
             " DELETE FROM album WHERE title = 'pgrest nested deep album'");
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
    tcase_add_test(tc, nested_album_with_two_new_tracks);
    tcase_add_test(tc, nested_bulk_albums_each_with_their_tracks);
    tcase_add_test(tc, nested_failing_third_track_writes_nothing);
    tcase_add_test(tc, nested_track_with_new_album_with_new_artist);
    tcase_add_test(tc, nested_playlist_with_existing_and_new_tracks);
    tcase_add_test(tc, nested_playlist_with_a_track_on_a_new_album);
    suite_add_tcase(s, tc);
    return check_run(s);
}
