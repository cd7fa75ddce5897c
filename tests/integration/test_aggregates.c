/* Aggregates beyond PostgREST (docs/aggregates.md): order= by an
 * aggregate's output name or alias, having=(...). Every answer is compared
 * with the same question asked of PostgreSQL directly, on the Chinook database
 * (../shared/bench/chinook.sql; skipped when PGREST_TEST_CHINOOK_URI is not
 * set). Arrays are compared in order: ties are broken in both. */
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

static const char *const gate_open[] = {"db-aggregates-enabled", "true", NULL};

static void setup(void)
{
    ctx = harness_chinook_ctx(gate_open);
    direct = harness_chinook_connect();
}

/* the test schema (tests/fixtures/test_schema.sql), aggregates enabled */
static void schema_setup(void)
{
    ctx = harness_ctx(gate_open);
    direct = harness_admin_connect();
}

static void teardown(void)
{
    PQfinish(direct);
    pgrest_ctx_free(ctx);
}

/* GET path?query: the status and the body as JSON (NULL if not JSON). */
static int get(const char *path, const char *query, json_object **body)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = pgrest_request_new(a, "GET", path, query);
    pgrest_response *resp = pgrest_handle(ctx, a, req);
    size_t len;
    const char *text = pgrest_response_body(resp, &len);
    char *copy = strndup(text, len);
    *body = json_tokener_parse(copy);
    free(copy);
    int status = pgrest_response_status(resp);
    pgrest_arena_free(a);
    return status;
}

/* pgrest's answer to path?query equals the rows of sql, in their order. */
static void assert_answer(const char *path, const char *query, const char *sql)
{
    json_object *ours;
    int status = get(path, query, &ours);
    ck_assert_msg(status == 200, "%s?%s -> %d %s", path, query, status,
                  ours ? json_object_to_json_string(ours) : "(not JSON)");
    char *want_sql = NULL;
    ck_assert_int_gt(asprintf(&want_sql, "SELECT coalesce(json_agg(x), '[]') FROM (%s) x", sql), 0);
    json_object *theirs = harness_sql_json(direct, want_sql);
    free(want_sql);
    ck_assert_int_gt((int)json_object_array_length(theirs), 1);
    harness_assert_same_json(ours, theirs, false);
}

static void assert_error(const char *path, const char *query, int status, const char *code)
{
    json_object *body;
    int got = get(path, query, &body);
    ck_assert_msg(got == status, "%s?%s -> %d", path, query, got);
    ck_assert_ptr_nonnull(body);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(body, "code")), code);
    json_object_put(body);
}

/* ------------------------------------------------------------ order= */

START_TEST(top_artists_by_album_count)
{
    assert_answer("/album", "select=artist_id,n:count()&order=n.desc,artist_id&limit=5",
                  "SELECT artist_id, count(*) AS n FROM album GROUP BY artist_id"
                  " ORDER BY n DESC, artist_id LIMIT 5");
}
END_TEST

/* `count` is PostgREST's own reading, count("album") : the same order */
START_TEST(count_by_its_name)
{
    assert_answer("/album", "select=artist_id,count()&order=count.desc,artist_id&limit=5",
                  "SELECT artist_id, count(*) AS count FROM album GROUP BY artist_id"
                  " ORDER BY count DESC, artist_id LIMIT 5");
}
END_TEST

START_TEST(by_output_name_nulls_last)
{
    assert_answer("/customer", "select=country,state.min()&order=min.desc.nullslast,country",
                  "SELECT country, min(state) AS min FROM customer GROUP BY country"
                  " ORDER BY min DESC NULLS LAST, country");
    assert_answer("/customer", "select=country,state.min()&order=min.asc.nullsfirst,country",
                  "SELECT country, min(state) AS min FROM customer GROUP BY country"
                  " ORDER BY min ASC NULLS FIRST, country");
}
END_TEST

START_TEST(by_alias_of_a_cast_aggregate)
{
    assert_answer("/track", "select=album_id,ms:milliseconds.avg()::int&order=ms.desc,album_id&limit=7",
                  "SELECT album_id, avg(milliseconds)::int AS ms FROM track GROUP BY album_id"
                  " ORDER BY ms DESC, album_id LIMIT 7");
}
END_TEST

START_TEST(inside_an_embed)
{
    assert_answer("/genre",
                  "select=name,track(media_type_id,n:count())&track.order=n.desc,media_type_id"
                  "&genre_id=lte.6&order=genre_id",
                  "SELECT g.name, (SELECT coalesce(json_agg(t), '[]') FROM ("
                  "  SELECT media_type_id, count(*) AS n FROM track"
                  "  WHERE track.genre_id = g.genre_id GROUP BY media_type_id"
                  "  ORDER BY n DESC, media_type_id) t) AS track"
                  " FROM genre g WHERE g.genre_id <= 6 ORDER BY g.genre_id");
}
END_TEST

/* `count` inside an embed: PostgREST's count("track") gives the same order */
START_TEST(inside_an_embed_by_count)
{
    assert_answer("/genre",
                  "select=name,track(media_type_id,count())&track.order=count.desc,media_type_id"
                  "&genre_id=lte.6&order=genre_id",
                  "SELECT g.name, (SELECT coalesce(json_agg(t), '[]') FROM ("
                  "  SELECT media_type_id, count(*) AS count FROM track"
                  "  WHERE track.genre_id = g.genre_id GROUP BY media_type_id"
                  "  ORDER BY count(*) DESC, media_type_id) t) AS track"
                  " FROM genre g WHERE g.genre_id <= 6 ORDER BY g.genre_id");
}
END_TEST

START_TEST(hoisted_from_a_to_one_spread)
{
    assert_answer("/track", "select=...album(artist_id,n:count())&order=n.desc,album(artist_id)&limit=5",
                  "SELECT al.artist_id, count(*) AS n FROM track tr"
                  " JOIN album al ON al.album_id = tr.album_id GROUP BY al.artist_id"
                  " ORDER BY n DESC, al.artist_id LIMIT 5");
}
END_TEST

START_TEST(over_a_function_result)
{
    assert_answer("/rpc/ret_albums", "select=artist_id,n:count()&order=n.desc,artist_id&limit=5",
                  "SELECT artist_id, count(*) AS n FROM album GROUP BY artist_id"
                  " ORDER BY n DESC, artist_id LIMIT 5");
}
END_TEST

/* A name that is no aggregate of the select and no column: PostgREST's
 * reading, PostgreSQL's 42703 */
START_TEST(unknown_name)
{
    assert_error("/album", "select=artist_id,n:count()&order=m.desc", 400, "42703");
}
END_TEST

/* A column keeps PostgREST's meaning even when an alias shadows it: here
 * the ungrouped column album.title (PostgreSQL's 42803) */
START_TEST(column_name_wins)
{
    assert_error("/album", "select=title:album_id.max()&order=title", 400, "42803");
}
END_TEST

/* ------------------------------------------------------------ having= */

START_TEST(genres_having_more_than_100_tracks)
{
    assert_answer("/track", "select=genre_id,n:count()&having=(n.gt.100)&order=genre_id",
                  "SELECT genre_id, count(*) AS n FROM track GROUP BY genre_id"
                  " HAVING count(*) > 100 ORDER BY genre_id");
}
END_TEST

START_TEST(having_nested_or_not)
{
    assert_answer("/invoice",
                  "select=customer_id,total.sum()&having=(not.or(sum.lt.38,sum.gt.45))"
                  "&order=customer_id",
                  "SELECT customer_id, sum(total) AS sum FROM invoice GROUP BY customer_id"
                  " HAVING NOT (sum(total) < 38 OR sum(total) > 45) ORDER BY customer_id");
    assert_answer("/invoice",
                  "select=billing_country,n:count(),total.max()"
                  "&having=(or(n.gte.20,and(max.gt.20,n.not.in.(7,14))))&order=n.desc,billing_country",
                  "SELECT billing_country, count(*) AS n, max(total) AS max FROM invoice"
                  " GROUP BY billing_country HAVING (count(*) >= 20 OR"
                  " (max(total) > 20 AND NOT count(*) IN (7, 14))) ORDER BY n DESC, billing_country");
}
END_TEST

START_TEST(having_inside_an_embed)
{
    assert_answer("/genre",
                  "select=name,track(media_type_id,n:count())&track.having=(n.gt.20)"
                  "&track.order=media_type_id&genre_id=lte.6&order=genre_id",
                  "SELECT g.name, (SELECT coalesce(json_agg(t), '[]') FROM ("
                  "  SELECT media_type_id, count(*) AS n FROM track"
                  "  WHERE track.genre_id = g.genre_id GROUP BY media_type_id"
                  "  HAVING count(*) > 20 ORDER BY media_type_id) t) AS track"
                  " FROM genre g WHERE g.genre_id <= 6 ORDER BY g.genre_id");
}
END_TEST

START_TEST(having_lifted_from_a_to_one_spread)
{
    assert_answer("/track", "select=...album(artist_id,n:count())&having=(n.gt.40)&order=n.desc",
                  "SELECT al.artist_id, count(*) AS n FROM track tr"
                  " JOIN album al ON al.album_id = tr.album_id GROUP BY al.artist_id"
                  " HAVING count(*) > 40 ORDER BY n DESC");
}
END_TEST

/* A field that is no aggregate of the select: 400 with the names */
START_TEST(having_a_column)
{
    json_object *body;
    ck_assert_int_eq(get("/album", "select=artist_id,n:count()&having=(artist_id.gt.1)", &body), 400);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(body, "code")), "PGRST100");
    ck_assert_ptr_nonnull(strstr(json_object_get_string(json_object_object_get(body, "hint")), ": n."));
    json_object_put(body);
}
END_TEST

/* A value PostgREST's filter grammar accepts stays a filter on a column
 * named having: Chinook has none, so PostgreSQL's 42703 */
START_TEST(having_as_postgrests_filter)
{
    assert_error("/album", "select=artist_id,n:count()&having=eq.3", 400, "42703");
}
END_TEST

/* ------------------------------------------------------------ test schema */

START_TEST(order_and_having_on_the_test_schema)
{
    assert_answer("/albums", "select=artist_id,n:count(),best:rating.max()&having=(n.gte.1)"
                             "&order=best.desc.nullslast,artist_id",
                  "SELECT artist_id, count(*) AS n, max(rating) AS best FROM api.albums"
                  " GROUP BY artist_id HAVING count(*) >= 1 ORDER BY best DESC NULLS LAST, artist_id");
    assert_answer("/artists", "select=name,albums(n:count())&albums.having=(n.gt.1)&order=id",
                  "SELECT a.name, (SELECT coalesce(json_agg(t), '[]') FROM ("
                  "  SELECT count(*) AS n FROM api.albums al WHERE al.artist_id = a.id"
                  "  HAVING count(*) > 1) t) AS albums FROM api.artists a ORDER BY a.id");
}
END_TEST

static void add_chinook_cases(Suite *s)
{
    TCase *tc = tcase_create("order");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, top_artists_by_album_count);
    tcase_add_test(tc, count_by_its_name);
    tcase_add_test(tc, by_output_name_nulls_last);
    tcase_add_test(tc, by_alias_of_a_cast_aggregate);
    tcase_add_test(tc, inside_an_embed);
    tcase_add_test(tc, inside_an_embed_by_count);
    tcase_add_test(tc, hoisted_from_a_to_one_spread);
    tcase_add_test(tc, over_a_function_result);
    tcase_add_test(tc, unknown_name);
    tcase_add_test(tc, column_name_wins);
    suite_add_tcase(s, tc);
    TCase *having = tcase_create("having");
    tcase_add_checked_fixture(having, setup, teardown);
    tcase_set_timeout(having, 60);
    tcase_add_test(having, genres_having_more_than_100_tracks);
    tcase_add_test(having, having_nested_or_not);
    tcase_add_test(having, having_inside_an_embed);
    tcase_add_test(having, having_lifted_from_a_to_one_spread);
    tcase_add_test(having, having_a_column);
    tcase_add_test(having, having_as_postgrests_filter);
    suite_add_tcase(s, having);
}

int main(void)
{
    harness_db_uri();
    Suite *s = suite_create("aggregates");
    TCase *schema = tcase_create("test_schema");
    tcase_add_checked_fixture(schema, schema_setup, teardown);
    tcase_add_test(schema, order_and_having_on_the_test_schema);
    suite_add_tcase(s, schema);
    if (harness_chinook_uri() != NULL)
        add_chinook_cases(s);
    else
        fprintf(stderr, "PGREST_TEST_CHINOOK_URI not set: skipping the Chinook cases\n");
    return check_run(s);
}
