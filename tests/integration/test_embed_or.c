/* or/and across embeds (pgrest's extension, docs/embed-or.md): each answer
 * is compared with the same question asked of PostgreSQL directly, written
 * with EXISTS by hand. Chinook (PGREST_TEST_CHINOOK_URI, skipped when unset)
 * and tests/fixtures/test_schema.sql (PGREST_TEST_DB_URI). */
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

static void assert_same(json_object *ours, json_object *theirs)
{
    harness_assert_same_json(ours, theirs, true);
}

static json_object *sql_json(const char *sql)
{
    return harness_sql_json(direct, sql);
}

static long sql_long(const char *sql)
{
    return harness_sql_long(direct, sql);
}

/* GET path?query (headers: name, value pairs ended by NULL, may be NULL);
 * 200 expected (206 with range); the body parsed, the Content-Range copied to range. */
static json_object *get_json_h(const char *path, const char *query,
                               const char *const *headers, char *range, size_t range_len)
{
    test_response r;
    harness_request(ctx, "GET", path, query, headers, NULL, &r);
    /* 206 when a count shows the page is partial */
    ck_assert_msg(r.status == (range != NULL ? 206 : 200), "%s?%s -> %d %s", path, query,
                  r.status, r.body);
    json_object *j = json_tokener_parse(r.body);
    ck_assert_ptr_nonnull(j);
    if (range != NULL) {
        const char *cr = harness_header(&r, "Content-Range");
        ck_assert_ptr_nonnull(cr);
        snprintf(range, range_len, "%s", cr);
    }
    harness_free(&r);
    return j;
}

static json_object *get_json(const char *path, const char *query)
{
    return get_json_h(path, query, NULL, NULL, 0);
}

/* details: NULL to leave them unchecked */
static void expect_error_d(const char *method, const char *path, const char *query,
                           const char *body, int status, const char *code, const char *message,
                           const char *details)
{
    static const char *const json[] = {"Content-Type", "application/json", NULL};
    test_response r;
    harness_request(ctx, method, path, query, body ? json : NULL, body, &r);
    ck_assert_msg(r.status == status, "%s?%s -> %d %s", path, query, r.status, r.body);
    json_object *j = json_tokener_parse(r.body);
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(j, "code")), code);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(j, "message")), message);
    if (details != NULL)
        ck_assert_str_eq(json_object_get_string(json_object_object_get(j, "details")), details);
    json_object_put(j);
    harness_free(&r);
}

static void expect_error(const char *method, const char *path, const char *query,
                         const char *body, int status, const char *code, const char *message)
{
    expect_error_d(method, path, query, body, status, code, message, NULL);
}

/* ------------------------------------------------------------ Chinook */


/* the extension shares the aggregates' gate (docs/embed-or.md) */
static const char *const gate_open[] = {"db-aggregates-enabled", "true", NULL};

static void chinook_setup(void)
{
    ctx = harness_chinook_ctx(gate_open);
    direct = harness_chinook_connect();
}

static void teardown(void)
{
    PQfinish(direct);
    pgrest_ctx_free(ctx);
}

#define ALBUM_TRACKS                                                               \
    "SELECT al.title, (SELECT coalesce(json_agg(t), '[]') FROM (SELECT tr.name"    \
    " FROM track tr WHERE tr.album_id = al.album_id) t) AS track FROM album al"

/* albums whose title matches or that have a track matching */
START_TEST(albums_title_or_track)
{
    json_object *ours = get_json(
        "/album", "select=title,track(name)&or=(title.ilike.*rock*,track.name.ilike.*rock*)");
    json_object *theirs = sql_json(
        "SELECT json_agg(x) FROM (" ALBUM_TRACKS " WHERE al.title ILIKE '%rock%' OR EXISTS"
        " (SELECT 1 FROM track tr WHERE tr.album_id = al.album_id AND tr.name ILIKE '%rock%')) x");
    /* both branches contribute: 7 titles match, 30 albums have such a track */
    ck_assert_int_gt((int)json_object_array_length(theirs), 30);
    assert_same(ours, theirs);
}
END_TEST

#define ARTIST_ALBUMS                                                              \
    "SELECT a.name, (SELECT coalesce(json_agg(t), '[]') FROM (SELECT al.title"     \
    " FROM album al WHERE al.artist_id = a.artist_id) t) AS album FROM artist a"

/* artists with no album matching: the whole tree negated */
START_TEST(artists_without_matching_album)
{
    json_object *ours = get_json("/artist", "select=name,album(title)&not.or=(album.title.ilike.*a*)");
    json_object *theirs = sql_json(
        "SELECT json_agg(x) FROM (" ARTIST_ALBUMS " WHERE NOT EXISTS"
        " (SELECT 1 FROM album al WHERE al.artist_id = a.artist_id AND al.title ILIKE '%a%')) x");
    ck_assert_int_gt((int)json_object_array_length(theirs), 0);
    assert_same(ours, theirs);
}
END_TEST

/* a leaf with not.: an album whose title does not match */
START_TEST(artists_with_an_album_not_matching)
{
    json_object *ours = get_json("/artist", "select=name,album(title)&or=(album.title.not.ilike.*a*)");
    json_object *theirs = sql_json(
        "SELECT json_agg(x) FROM (" ARTIST_ALBUMS " WHERE EXISTS"
        " (SELECT 1 FROM album al WHERE al.artist_id = a.artist_id AND NOT al.title ILIKE '%a%')) x");
    ck_assert_int_gt((int)json_object_array_length(theirs), 0);
    assert_same(ours, theirs);
}
END_TEST

/* count=exact counts the same rows the tree keeps, beyond the limit */
START_TEST(exact_count_with_limit)
{
    static const char *const prefer[] = {"Prefer", "count=exact", NULL};
    char range[64];
    json_object *ours = get_json_h("/artist",
                                   "select=name,album(title)&not.or=(album.title.ilike.*a*)"
                                   "&order=artist_id&limit=5",
                                   prefer, range, sizeof range);
    long total = sql_long("SELECT count(*) FROM artist a WHERE NOT EXISTS (SELECT 1 FROM album al"
                          " WHERE al.artist_id = a.artist_id AND al.title ILIKE '%a%')");
    ck_assert_int_gt(total, 5);
    char want[64];
    snprintf(want, sizeof want, "0-4/%ld", total);
    ck_assert_str_eq(range, want);
    json_object *theirs = sql_json(
        "SELECT json_agg(x) FROM (" ARTIST_ALBUMS " WHERE NOT EXISTS"
        " (SELECT 1 FROM album al WHERE al.artist_id = a.artist_id AND al.title ILIKE '%a%')"
        " ORDER BY a.artist_id LIMIT 5) x");
    assert_same(ours, theirs);
}
END_TEST

/* many-to-many through playlist_track */
START_TEST(playlists_with_a_matching_track)
{
    json_object *ours = get_json("/playlist",
                                 "select=name,track(name)&or=(track.composer.ilike.*dylan*)");
    json_object *theirs = sql_json(
        "SELECT json_agg(x) FROM (SELECT p.name, (SELECT coalesce(json_agg(t), '[]') FROM"
        " (SELECT tr.name FROM track tr JOIN playlist_track pt ON pt.track_id = tr.track_id"
        "  WHERE pt.playlist_id = p.playlist_id) t) AS track FROM playlist p WHERE EXISTS"
        " (SELECT 1 FROM track tr JOIN playlist_track pt ON pt.track_id = tr.track_id"
        "  WHERE pt.playlist_id = p.playlist_id AND tr.composer ILIKE '%dylan%')) x");
    ck_assert_int_gt((int)json_object_array_length(theirs), 0);
    assert_same(ours, theirs);
}
END_TEST

/* album.or=(track.name...): the tree filters the embedded albums; the
 * empty embed track() names the relationship without adding output */
START_TEST(embedded_level_tree)
{
    json_object *ours = get_json(
        "/artist", "select=name,album(title,track())&artist_id=lt.60"
                   "&album.or=(track.name.ilike.*love*,title.ilike.*live*)");
    json_object *theirs = sql_json(
        "SELECT json_agg(x) FROM (SELECT a.name, (SELECT coalesce(json_agg(t), '[]') FROM"
        " (SELECT al.title FROM album al WHERE al.artist_id = a.artist_id AND (EXISTS"
        "  (SELECT 1 FROM track tr WHERE tr.album_id = al.album_id AND tr.name ILIKE '%love%')"
        "  OR al.title ILIKE '%live%')) t) AS album FROM artist a WHERE a.artist_id < 60) x");
    assert_same(ours, theirs);
}
END_TEST

/* ------------------------------------------------------------ test schema */

static void schema_setup(void)
{
    ctx = harness_ctx(gate_open);
    direct = harness_admin_connect();
}

/* and(or()) mixing a column and two related leaves, to-one and to-many */
START_TEST(nested_trees_on_test_schema)
{
    json_object *ours = get_json(
        "/albums", "select=title,artists(name),tracks(title)"
                   "&and=(rating.not.is.null,or(artists.country.eq.US,tracks.title.ilike.*i*))");
    json_object *theirs = sql_json(
        "SELECT json_agg(x) FROM (SELECT al.title,"
        " (SELECT row_to_json(r) FROM (SELECT ar.name FROM api.artists ar WHERE ar.id = al.artist_id) r)"
        "   AS artists,"
        " (SELECT coalesce(json_agg(t), '[]') FROM (SELECT tr.title FROM api.tracks tr"
        "   WHERE tr.album_id = al.id) t) AS tracks"
        " FROM api.albums al WHERE al.rating IS NOT NULL AND ("
        "  EXISTS (SELECT 1 FROM api.artists ar WHERE ar.id = al.artist_id AND ar.country = 'US')"
        "  OR EXISTS (SELECT 1 FROM api.tracks tr WHERE tr.album_id = al.id AND tr.title ILIKE '%i%'))) x");
    assert_same(ours, theirs);
}
END_TEST

/* a computed relationship: the function call is the correlation */
START_TEST(computed_relationship)
{
    json_object *ours = get_json("/artists",
                                 "select=name,first_album(title)&or=(first_album.rating.gte.5,id.eq.3)");
    json_object *theirs = sql_json(
        "SELECT json_agg(x) FROM (SELECT a.name,"
        " (SELECT row_to_json(r) FROM (SELECT f.title FROM api.first_album(a) f) r) AS first_album"
        " FROM api.artists a WHERE EXISTS (SELECT 1 FROM api.first_album(a) f WHERE f.rating >= 5)"
        " OR a.id = 3) x");
    ck_assert_int_eq((int)json_object_array_length(theirs), 2);
    assert_same(ours, theirs);
}
END_TEST

/* without legacy target names an aliased embed is named by its alias
 * only: Error.hs NotEmbedded with the alias, as for embedded filters */
START_TEST(relation_name_of_an_aliased_embed)
{
    static const char *const opts[] = {"url-use-legacy-target-names", "false",
                                       "db-aggregates-enabled", "true", NULL};
    pgrest_ctx *dflt = ctx;
    ctx = harness_ctx(opts);
    json_object *ours = get_json("/artists", "select=name,recs:albums(title)&or=(recs.rating.gte.5)");
    assert_same(ours, sql_json("SELECT json_agg(x) FROM (SELECT a.name, (SELECT coalesce(json_agg(t),"
                               " '[]') FROM (SELECT al.title FROM api.albums al WHERE al.artist_id"
                               " = a.id) t) AS recs FROM api.artists a WHERE EXISTS (SELECT 1 FROM"
                               " api.albums al WHERE al.artist_id = a.id AND al.rating >= 5)) x"));
    expect_error_d("GET", "/artists", "select=name,recs:albums(title)&or=(albums.rating.gte.5)",
                   NULL, 400, "PGRST108", "'albums' is not an embedded resource in this request",
                   "Target names are not allowed in filters if they have an alias");
    pgrest_ctx_free(ctx);
    ctx = dflt;
}
END_TEST

/* with db-aggregates-enabled off (PostgREST's default) the extension
 * answers as the aggregates do */
START_TEST(closed_gate)
{
    pgrest_ctx *open = ctx;
    ctx = harness_ctx(NULL);
    expect_error("GET", "/artists", "select=name,albums(title)&or=(albums.title.eq.x)", NULL,
                 400, "PGRST123", "Use of aggregate functions is not allowed");
    pgrest_ctx_free(ctx);
    ctx = open;
}
END_TEST

START_TEST(errors)
{
    /* Error.hs NotEmbedded, as for a filter on a resource not selected */
    expect_error("GET", "/artists", "select=name&or=(albums.title.eq.x)", NULL, 400, "PGRST108",
                 "'albums' is not an embedded resource in this request");
    /* writes keep PostgREST's grammar: the leaf does not parse */
    expect_error("PATCH", "/artists", "select=name,albums(title)&or=(albums.title.eq.x)",
                 "{\"name\":\"y\"}", 400, "PGRST100",
                 "\"failed to parse logic tree ((albums.title.eq.x))\" (line 1, column 11)");
    /* no operator after the related column either: PostgREST's error */
    expect_error("GET", "/artists", "select=name,albums(title)&or=(albums.title.foo.x)", NULL,
                 400, "PGRST100",
                 "\"failed to parse logic tree ((albums.title.foo.x))\" (line 1, column 11)");
}
END_TEST

int main(void)
{
    harness_db_uri();
    Suite *s = suite_create("embed_or");
    TCase *schema = tcase_create("test_schema");
    tcase_add_checked_fixture(schema, schema_setup, teardown);
    tcase_add_test(schema, nested_trees_on_test_schema);
    tcase_add_test(schema, computed_relationship);
    tcase_add_test(schema, errors);
    tcase_add_test(schema, closed_gate);
    tcase_add_test(schema, relation_name_of_an_aliased_embed);
    suite_add_tcase(s, schema);
    if (harness_chinook_uri() != NULL) {
        TCase *tc = tcase_create("chinook");
        tcase_set_timeout(tc, 60);
        tcase_add_checked_fixture(tc, chinook_setup, teardown);
        tcase_add_test(tc, albums_title_or_track);
        tcase_add_test(tc, artists_without_matching_album);
        tcase_add_test(tc, artists_with_an_album_not_matching);
        tcase_add_test(tc, exact_count_with_limit);
        tcase_add_test(tc, playlists_with_a_matching_track);
        tcase_add_test(tc, embedded_level_tree);
        suite_add_tcase(s, tc);
    } else {
        fprintf(stderr, "PGREST_TEST_CHINOOK_URI not set: skipping the Chinook cases\n");
    }
    return check_run(s);
}
