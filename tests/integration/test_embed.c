/* Resource embedding end to end against PostgreSQL. Expected bodies follow
 * PostgREST's documented shapes (api/resource_embedding, ref/errors) over
 * the rows of tests/fixtures/test_schema.sql: to-one embeds are an object
 * or null, to-many an array ([] when empty); embeds are jsonb, so their
 * text is PostgreSQL's jsonb rendering ({"k": v}, [a, b]). */
#include <check.h>

#include "check_run.h"
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "engine/context.h"
#include "harness.h"
#include "schema/schema_cache.h"

static pgrest_ctx *ctx;

static void setup(void)
{
    static const char *const opts[] = {"db-aggregates-enabled", "true", NULL};
    ctx = harness_ctx(opts);
}

static void teardown(void)
{
    pgrest_ctx_free(ctx);
}

/* GET path?query and compare status and body. */
static void expect(const char *path, const char *query, int status,
                   const char *body)
{
    test_response r;
    harness_request(ctx, "GET", path, query, NULL, NULL, &r);
    ck_assert_msg(r.status == status, "%s?%s: status %d, body %s", path,
                  query, r.status, r.body);
    ck_assert_str_eq(r.body, body);
    harness_free(&r);
}

/* Plan.hs expandStars: with an aggregate the star lists the columns, so
 * the implicit GROUP BY names each (one row per artist, counted once);
 * and the star keeps its place among the selected fields. */
START_TEST(star_with_aggregates_and_fields)
{
    expect("/artists", "select=*,count()&id=lt.3&order=id", 200,
           "[{\"id\":1,\"name\":\"The Quiet Ones\",\"country\":\"GB\",\"formed\":1991,"
           "\"genre\":\"rock\",\"count\":1}, \n"
           " {\"id\":2,\"name\":\"Blue Note Trio\",\"country\":\"US\",\"formed\":1958,"
           "\"genre\":\"jazz\",\"count\":1}]");
    expect("/artists", "select=name,*,albums(count())&id=eq.2", 200,
           "[{\"name\":\"Blue Note Trio\",\"id\":2,\"name\":\"Blue Note Trio\",\"country\":\"US\","
           "\"formed\":1958,\"genre\":\"jazz\",\"albums\":[{\"count\": 1}]}]");
}
END_TEST

START_TEST(many_to_one_and_one_to_many)
{
    expect("/albums", "select=title,artists(name)&id=in.(1,3)&order=id", 200,
           "[{\"title\":\"First Light\",\"artists\":{\"name\": \"The Quiet Ones\"}}, \n"
           " {\"title\":\"Late Set\",\"artists\":{\"name\": \"Blue Note Trio\"}}]");
    /* embedded order and limit apply per parent row */
    expect("/artists", "select=name,albums(title)&id=eq.1&albums.order=released.desc&albums.limit=1",
           200, "[{\"name\":\"The Quiet Ones\",\"albums\":[{\"title\": \"Second Wind\"}]}]");
    /* embedded filter: parents stay, arrays may be empty */
    expect("/artists", "select=name,albums(title)&albums.rating=gte.5&order=id", 200,
           "[{\"name\":\"The Quiet Ones\",\"albums\":[]}, \n"
           " {\"name\":\"Blue Note Trio\",\"albums\":[{\"title\": \"Late Set\"}]}, \n"
           " {\"name\":\"Solo Pianist\",\"albums\":[]}]");
    /* nested two levels */
    expect("/artists", "select=name,albums(title,tracks(title))&id=eq.2", 200,
           "[{\"name\":\"Blue Note Trio\",\"albums\":[{\"title\": \"Late Set\", "
           "\"tracks\": [{\"title\": \"Midnight\"}, {\"title\": \"Encore\"}]}]}]");
}
END_TEST

START_TEST(inner_join_and_exact_count)
{
    test_response r;
    const char *h[] = {"Prefer", "count=exact", NULL};
    harness_request(ctx, "GET", "/artists",
                    "select=name,albums!inner(title)&albums.rating=gte.5", h, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "[{\"name\":\"Blue Note Trio\",\"albums\":[{\"title\": \"Late Set\"}]}]");
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "0-0/1");
    harness_free(&r);
    expect("/albums", "select=title,artists!inner()&artists.country=eq.DE", 200,
           "[{\"title\":\"Preludes\"}]");
}
END_TEST

START_TEST(many_to_many_and_one_to_one)
{
    expect("/playlists", "select=name,tracks(title)&tracks.order=id&order=id", 200,
           "[{\"name\":\"Morning\",\"tracks\":[{\"title\": \"Dawn\"}, {\"title\": \"Gust\"}]}, \n"
           " {\"name\":\"Evening\",\"tracks\":[{\"title\": \"Midnight\"}, {\"title\": \"Encore\"}]}]");
    expect("/artists", "select=id,artist_profiles(biography)&order=id", 200,
           "[{\"id\":1,\"artist_profiles\":{\"biography\": \"Formed in a garage.\"}}, \n"
           " {\"id\":2,\"artist_profiles\":null}, \n"
           " {\"id\":3,\"artist_profiles\":null}]");
    expect("/artist_profiles", "select=artist_id,artists(name)", 200,
           "[{\"artist_id\":1,\"artists\":{\"name\": \"The Quiet Ones\"}}]");
    /* M2M through a view junction over a private table */
    expect("/labels", "select=name,artists(name)", 200,
           "[{\"name\":\"Indie Co\",\"artists\":[{\"name\": \"The Quiet Ones\"}]}]");
}
END_TEST

START_TEST(self_reference)
{
    /* the FK column names the parent (M2O), the table name the children */
    expect("/employees", "select=name,manager_id(name),reports:employees(name)&order=id", 200,
           "[{\"name\":\"Boss\",\"manager_id\":null,\"reports\":[{\"name\": \"Alice\"}]}, \n"
           " {\"name\":\"Alice\",\"manager_id\":{\"name\": \"Boss\"},\"reports\":[{\"name\": \"Bob\"}]}, \n"
           " {\"name\":\"Bob\",\"manager_id\":{\"name\": \"Alice\"},\"reports\":[]}]");
}
END_TEST

START_TEST(disambiguation)
{
    expect("/artists", "select=*,track_notes(*)", 300,
           "{\"code\":\"PGRST201\",\"details\":["
           "{\"cardinality\":\"one-to-many\",\"embedding\":\"artists with track_notes\","
           "\"relationship\":\"track_notes_author_id_fkey using artists(id) and track_notes(author_id)\"},"
           "{\"cardinality\":\"one-to-many\",\"embedding\":\"artists with track_notes\","
           "\"relationship\":\"track_notes_editor_fkey using artists(id) and track_notes(editor_id)\"}],"
           "\"hint\":\"Try changing 'track_notes' to one of the following: "
           "'track_notes!track_notes_author_id_fkey', 'track_notes!track_notes_editor_fkey'. "
           "Find the desired relationship in the 'details' key.\","
           "\"message\":\"Could not embed because more than one relationship was found for "
           "'artists' and 'track_notes'\"}");
    expect("/artists", "select=name,edited:track_notes!editor_id(note)&order=id", 200,
           "[{\"name\":\"The Quiet Ones\",\"edited\":[]}, \n"
           " {\"name\":\"Blue Note Trio\",\"edited\":[{\"note\": \"Opener\"}]}, \n"
           " {\"name\":\"Solo Pianist\",\"edited\":[]}]");
    expect("/artists", "select=name,track_notes!track_notes_author_id_fkey(note)&id=eq.1", 200,
           "[{\"name\":\"The Quiet Ones\",\"track_notes\":[{\"note\": \"Opener\"}]}]");
}
END_TEST

START_TEST(embedding_errors)
{
    expect("/artists", "select=name,albumz(title)", 400,
           "{\"code\":\"PGRST200\",\"details\":\"Searched for a foreign key relationship "
           "between 'artists' and 'albumz' in the schema 'api', but no matches were found.\","
           "\"hint\":\"Perhaps you meant 'albums' instead of 'albumz'.\","
           "\"message\":\"Could not find a relationship between 'artists' and 'albumz' in the schema cache\"}");
    expect("/artists", "select=name&albums.title=eq.x", 400,
           "{\"code\":\"PGRST108\",\"details\":null,"
           "\"hint\":\"Verify that 'albums' is included in the 'select' query parameter.\","
           "\"message\":\"'albums' is not an embedded resource in this request\"}");
    expect("/artists", "select=name,albums(title)&order=albums(title)", 400,
           "{\"code\":\"PGRST118\",\"details\":\"'artists' and 'albums' do not form a "
           "many-to-one or one-to-one relationship\",\"hint\":null,"
           "\"message\":\"A related order on 'albums' is not possible\"}");
    /* Plan.hs addNullEmbedFilters turns only [not.]is.null on an embed's
     * name into an embed test: any other operator stays a filter on a
     * column of that name, which PostgreSQL reports (PGRST120 is never
     * raised by PostgREST) */
    expect("/artists", "select=name,albums(title)&albums=eq.1", 400,
           "{\"code\":\"42703\",\"details\":null,\"hint\":null,"
           "\"message\":\"column artists.albums does not exist\"}");
    /* fromF: a many-to-many target is not aliased (only its junction is
     * joined beside it), so PostgreSQL names the table itself */
    expect("/playlists", "select=name,tracks(nope)", 400,
           "{\"code\":\"42703\",\"details\":null,\"hint\":null,"
           "\"message\":\"column tracks.nope does not exist\"}");
}
END_TEST

START_TEST(related_order_and_null_filters)
{
    expect("/albums", "select=title,artists(name)&order=artists(name).desc,id", 200,
           "[{\"title\":\"First Light\",\"artists\":{\"name\": \"The Quiet Ones\"}}, \n"
           " {\"title\":\"Second Wind\",\"artists\":{\"name\": \"The Quiet Ones\"}}, \n"
           " {\"title\":\"Preludes\",\"artists\":{\"name\": \"Solo Pianist\"}}, \n"
           " {\"title\":\"Late Set\",\"artists\":{\"name\": \"Blue Note Trio\"}}]");
    test_response r;
    const char *h[] = {"Prefer", "count=exact", NULL};
    harness_request(ctx, "GET", "/artists",
                    "select=name,artist_profiles()&artist_profiles=is.null&order=id", h, NULL, &r);
    ck_assert_str_eq(r.body, "[{\"name\":\"Blue Note Trio\"}, \n {\"name\":\"Solo Pianist\"}]");
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "0-1/2");
    harness_free(&r);
    /* a profile row whose selected columns are all NULL is still there */
    expect("/artists", "select=name,artist_profiles(website)&artist_profiles=not.is.null", 200,
           "[{\"name\":\"The Quiet Ones\",\"artist_profiles\":{\"website\": null}}]");
    expect("/artists",
           "select=name,albums(),artist_profiles()&or=(artist_profiles.not.is.null,name.eq.Solo%20Pianist)&order=id",
           200, "[{\"name\":\"The Quiet Ones\"}, \n {\"name\":\"Solo Pianist\"}]");
    /* to-many: no albums rated 3 */
    expect("/artists", "select=name,albums()&albums.rating=eq.3&albums=is.null&order=id", 200,
           "[{\"name\":\"Blue Note Trio\"}, \n {\"name\":\"Solo Pianist\"}]");
}
END_TEST

/* Plan.hs generateRelSelectField rsEmptyEmbed: an embed selecting no
 * columns whose embeds select none either, at any depth, only filters. */
START_TEST(empty_embeds_at_any_depth)
{
    expect("/artists", "select=name,albums(tracks())&albums.tracks.seconds=gt.400"
           "&albums.tracks=not.is.null&albums=not.is.null", 200,
           "[{\"name\":\"Blue Note Trio\"}]");
    expect("/artists", "select=name,albums(tracks(title))&albums.tracks.seconds=gt.400"
           "&albums.tracks=not.is.null&albums=not.is.null", 200,
           "[{\"name\":\"Blue Note Trio\",\"albums\":[{\"tracks\": [{\"title\": \"Midnight\"}]}]}]");
}
END_TEST

START_TEST(spreads)
{
    expect("/albums", "select=title,...artists(artist:name)&id=eq.3", 200,
           "[{\"title\":\"Late Set\",\"artist\":\"Blue Note Trio\"}]");
    expect("/artists", "select=name,...albums(titles:title)&albums.order=id&id=eq.1", 200,
           "[{\"name\":\"The Quiet Ones\",\"titles\":[\"First Light\", \"Second Wind\"]}]");
    expect("/artists", "select=name,...albums(titles:title)&albums.rating=eq.0&id=eq.1", 200,
           "[{\"name\":\"The Quiet Ones\",\"titles\":[]}]");
}
END_TEST

START_TEST(computed_relationships_and_views)
{
    expect("/artists", "select=name,first_album(title)&id=eq.1", 200,
           "[{\"name\":\"The Quiet Ones\",\"first_album\":{\"title\": \"First Light\"}}]");
    expect("/albums", "select=title,long_tracks(title)&id=eq.1", 200,
           "[{\"title\":\"First Light\",\"long_tracks\":[{\"title\": \"Noon\"}]}]");
    expect("/album_view", "select=title,artists(name)&album_id=eq.2", 200,
           "[{\"title\":\"Second Wind\",\"artists\":{\"name\": \"The Quiet Ones\"}}]");
}
END_TEST

START_TEST(aggregates_with_embeds)
{
    expect("/albums", "select=n:id.count(),artists(name)&artist_id=eq.1", 200,
           "[{\"n\":2,\"artists\":{\"name\": \"The Quiet Ones\"}}]");
    /* aggregates in a to-one spread are computed at the parent level */
    expect("/tracks", "select=secs:seconds.sum(),...albums(artist_id)&album_id=in.(1,2)", 200,
           "[{\"secs\":704,\"artist_id\":1}]");
}
END_TEST

/* A mutation's representation is readPlanToQuery over the mutated rows:
 * its aggregates group by the other outputs as a read's do (groupF). */
START_TEST(aggregates_in_a_mutation_representation)
{
    static const char *const opts[] = {"db-aggregates-enabled", "true", "db-anon-role",
                                       "web_user", "db-tx-end", "rollback", NULL};
    pgrest_ctx *rb = harness_ctx(opts);
    const char *rep[] = {"Prefer", "return=representation", NULL};
    test_response r;
    harness_request(rb, "PATCH", "/tracks",
                    "album_id=in.(1,3)&select=album_id,n:id.count(),secs:seconds.sum()&order=album_id",
                    rep, "{\"seconds\":100}", &r);
    ck_assert_msg(r.status == 200, "status %d, body %s", r.status, r.body);
    ck_assert_str_eq(r.body, "[{\"album_id\":1,\"n\":2,\"secs\":200}, \n"
                             " {\"album_id\":3,\"n\":2,\"secs\":200}]");
    harness_free(&r);
    pgrest_ctx_free(rb);
}
END_TEST

START_TEST(max_rows_applies_to_embeds)
{
    static const char *const opts[] = {"db-max-rows", "1", NULL};
    pgrest_ctx *limited = harness_ctx(opts);
    test_response r;
    harness_request(limited, "GET", "/artists",
                    "select=name,albums(title)&id=eq.1&albums.order=id", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "[{\"name\":\"The Quiet Ones\",\"albums\":[{\"title\": \"First Light\"}]}]");
    harness_free(&r);
    pgrest_ctx_free(limited);
}
END_TEST

/* addM2MRels needs a junction's PK even outside the exposed schemas (so
 * removeInternal can empty, not lose, its keys): the introspected
 * snapshot carries it on the FKs of private.label_artists, and only on
 * those of tables outside the cache. */
START_TEST(private_junction_pk_is_introspected)
{
    pgr_schema_cache *sc = pgr_ctx_schema(ctx);
    json_object *doc = json_tokener_parse(sc->json), *fks = NULL;
    ck_assert(json_object_object_get_ex(doc, "foreign_keys", &fks));
    int private_fks = 0;
    for (size_t i = 0; i < json_object_array_length(fks); i++) {
        json_object *fk = json_object_array_get_idx(fks, i), *v, *pk;
        json_object_object_get_ex(fk, "schema", &v);
        bool private = strcmp(json_object_get_string(v), "private") == 0;
        bool has_pk = json_object_object_get_ex(fk, "table_pk", &pk) &&
                      json_object_is_type(pk, json_type_array);
        ck_assert_int_eq(has_pk, private);
        json_object_object_get_ex(fk, "table", &v);
        if (private && strcmp(json_object_get_string(v), "label_artists") == 0) {
            ck_assert_str_eq(json_object_to_json_string_ext(pk, JSON_C_TO_STRING_PLAIN),
                             "[\"label_id\",\"artist_id\"]");
            private_fks++;
        }
    }
    ck_assert_int_eq(private_fks, 2);
    json_object_put(doc);
    pgr_schema_cache_release(sc);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("embed");
    TCase *tc = tcase_create("embed");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, many_to_one_and_one_to_many);
    tcase_add_test(tc, star_with_aggregates_and_fields);
    tcase_add_test(tc, inner_join_and_exact_count);
    tcase_add_test(tc, many_to_many_and_one_to_one);
    tcase_add_test(tc, self_reference);
    tcase_add_test(tc, disambiguation);
    tcase_add_test(tc, embedding_errors);
    tcase_add_test(tc, related_order_and_null_filters);
    tcase_add_test(tc, spreads);
    tcase_add_test(tc, empty_embeds_at_any_depth);
    tcase_add_test(tc, computed_relationships_and_views);
    tcase_add_test(tc, aggregates_with_embeds);
    tcase_add_test(tc, aggregates_in_a_mutation_representation);
    tcase_add_test(tc, max_rows_applies_to_embeds);
    tcase_add_test(tc, private_junction_pk_is_introspected);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    harness_db_uri();
    return check_run(suite());
}
