/* Embedding: which relationship findRel picks for `target!hint` and the
 * PGRST200 hint (Error.hs noRelBetweenHint over Data.FuzzySet). Planned
 * against a small hand-written snapshot, no database. Expected texts come
 * from PostgREST's Plan.hs/Error.hs (their doctests where there are). */
#include <check.h>

#include "check_run.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/context.h"
#include "plan/fuzzyset.h"
#include "schema/schema_cache.h"
#include "util/arena.h"

#define INT_COL(n, pos) "{\"name\":\"" n "\",\"type\":\"integer\",\"position\":" #pos "}"
#define FK(name, tbl, col, ref) \
    "{\"name\":\"" name "\",\"schema\":\"api\",\"table\":\"" tbl "\"," \
    "\"columns\":[\"" col "\"],\"ref_schema\":\"api\",\"ref_table\":\"" ref "\"," \
    "\"ref_columns\":[\"id\"],\"one_to_one\":false}"
/* a junction in the internal schema "private": outside the cache */
#define PRIVATE_FK(name, col, ref) \
    "{\"name\":\"" name "\",\"schema\":\"private\",\"table\":\"junction\"," \
    "\"columns\":[\"" col "\"],\"ref_schema\":\"api\",\"ref_table\":\"" ref "\"," \
    "\"ref_columns\":[\"id\"],\"one_to_one\":false," \
    "\"table_pk\":[\"end_1_id\",\"end_2_id\"]}"

static const char snapshot[] =
    "{\"pg_version\": 150000, \"tables\": ["
    "{\"schema\":\"api\",\"name\":\"actors\",\"kind\":\"r\",\"pk\":[\"id\"],"
    " \"columns\":[" INT_COL("id", 1) "]},"
    "{\"schema\":\"api\",\"name\":\"directors\",\"kind\":\"r\",\"pk\":[\"id\"],"
    " \"columns\":[" INT_COL("id", 1) "]},"
    "{\"schema\":\"api\",\"name\":\"end_1\",\"kind\":\"r\",\"pk\":[\"id\"],"
    " \"columns\":[" INT_COL("id", 1) "]},"
    "{\"schema\":\"api\",\"name\":\"end_2\",\"kind\":\"r\",\"pk\":[\"id\"],"
    " \"columns\":[" INT_COL("id", 1) "]},"
    "{\"schema\":\"api\",\"name\":\"family\",\"kind\":\"r\",\"pk\":[\"id\"],"
    " \"columns\":[" INT_COL("id", 1) "," INT_COL("parent", 2) "]},"
    "{\"schema\":\"api\",\"name\":\"filmz\",\"kind\":\"r\",\"pk\":[\"id\"],"
    " \"columns\":[" INT_COL("id", 1) "]},"
    "{\"schema\":\"api\",\"name\":\"films\",\"kind\":\"r\",\"pk\":[\"id\"],"
    " \"columns\":[" INT_COL("id", 1) "," INT_COL("director_id", 2) "]},"
    "{\"schema\":\"api\",\"name\":\"roles\",\"kind\":\"r\",\"pk\":[\"film_id\",\"actor_id\"],"
    " \"columns\":[" INT_COL("film_id", 1) "," INT_COL("actor_id", 2) "]},"
    "{\"schema\":\"api\",\"name\":\"send_1\",\"kind\":\"r\",\"pk\":[\"id\"],"
    " \"columns\":[" INT_COL("id", 1) "," INT_COL("film_id", 2) "]}],"
    " \"foreign_keys\": ["
    FK("films_director_id_fkey", "films", "director_id", "directors") ","
    FK("roles_film_id_fkey", "roles", "film_id", "films") ","
    FK("roles_actor_id_fkey", "roles", "actor_id", "actors") ","
    FK("send_1_film_id_fkey", "send_1", "film_id", "films") ","
    FK("family_parent_fkey", "family", "parent", "family") ","
    PRIVATE_FK("junction_end_1", "end_1_id", "end_1") ","
    PRIVATE_FK("junction_end_2", "end_2_id", "end_2") "],"
    " \"computed_relationships\": [{\"function_schema\":\"api\",\"function\":\"director_id\","
    "  \"table_schema\":\"api\",\"table\":\"films\",\"target_schema\":\"api\","
    "  \"target\":\"directors\",\"to_one\":true}],"
    " \"routines\": [{\"schema\":\"api\",\"name\":\"sayhello\",\"params\":[],"
    "  \"return_type\":\"text\",\"return_kind\":\"scalar\",\"volatility\":\"s\"}]}";

static pgrest_ctx *ctx;
static char snapshot_path[] = "/tmp/pgrest_embed_errors_XXXXXX";

static void setup(void)
{
    int fd = mkstemp(snapshot_path);
    ck_assert_int_ge(fd, 0);
    ck_assert(write(fd, snapshot, sizeof snapshot - 1) == (ssize_t)(sizeof snapshot - 1));
    close(fd);
    ctx = pgrest_ctx_new();
    pgrest_error err;
    pgrest_ctx_set(ctx, "db-schemas", "api", &err);
    pgrest_ctx_set(ctx, "db-anon-role", "web_anon", &err);
    ck_assert_msg(pgrest_ctx_load_schema_file(ctx, snapshot_path, &err) == PGREST_OK,
                  "snapshot: %s %s", err.message, err.details ? err.details : "");
}

static void teardown(void)
{
    pgrest_ctx_free(ctx);
    unlink(snapshot_path);
    strcpy(snapshot_path + strlen(snapshot_path) - 6, "XXXXXX");
}

/* Plans GET path?query; returns the error code ("" when planned), and
 * copies hint and details (or "null"). */
static const char *plan_get(const char *path, const char *query, char *hint,
                            char *details)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = pgrest_request_new(a, "GET", path, query);
    pgrest_api_request *api;
    pgrest_query_plan *plan;
    pgrest_error err = {0};
    static char code[16];
    code[0] = '\0';
    strcpy(hint, "null");
    strcpy(details, "null");
    if (pgrest_parse_request(ctx, a, req, &api, &err) != PGREST_OK ||
        pgrest_plan(ctx, a, api, &plan, &err) != PGREST_OK) {
        snprintf(code, sizeof code, "%s", err.code);
        if (err.hint != NULL)
            snprintf(hint, 256, "%s", err.hint);
        if (err.details != NULL)
            snprintf(details, 512, "%s", err.details);
    }
    pgrest_arena_free(a);
    return code;
}

static void expect_hint(const char *path, const char *query, const char *hint)
{
    char h[256], d[512];
    ck_assert_str_eq(plan_get(path, query, h, d), "PGRST200");
    ck_assert_str_eq(h, hint);
}

static void expect_planned(const char *path, const char *query)
{
    char h[256], d[512];
    const char *code = plan_get(path, query, h, d);
    ck_assert_msg(code[0] == '\0', "%s?%s: %s %s", path, query, code, d);
}

/* noRelBetweenHint doctests: the origin has relationships, so a close
 * target among them is suggested, never the exact one. */
START_TEST(hint_suggests_close_target)
{
    expect_hint("/films", "select=role(*)", "Perhaps you meant 'roles' instead of 'role'.");
    expect_hint("/films", "select=actors!nope(*)", "null");
    expect_hint("/films", "select=noclosealternative(*)", "null");
}
END_TEST

/* Without a key for the origin, a close origin among the tables that
 * have one. */
START_TEST(hint_suggests_close_origin)
{
    expect_hint("/filmz", "select=directors(*)", "Perhaps you meant 'films' instead of 'filmz'.");
}
END_TEST

/* removeInternal empties end_1's key (its only relationship goes through
 * a private junction) but keeps it: no suggestion, not even send_1. */
START_TEST(emptied_key_gives_no_hint)
{
    char h[256], d[512];
    ck_assert_str_eq(plan_get("/end_1", "select=end_2(*)", h, d), "PGRST200");
    ck_assert_str_eq(h, "null");
    ck_assert_str_eq(d, "Searched for a foreign key relationship between 'end_1' and "
                        "'end_2' in the schema 'api', but no matches were found.");
    pgr_schema_cache *sc = pgr_ctx_schema(ctx);
    const pgr_table *end_1 = pgr_find_table(sc, "api", "end_1");
    ck_assert_uint_eq(pgr_table_relationships(sc, end_1, NULL, 0), 0);
    ck_assert(pgr_table_has_rel_key(sc, end_1, "api"));
    ck_assert(!pgr_table_has_rel_key(sc, pgr_find_table(sc, "api", "filmz"), "api"));
    pgr_schema_cache_release(sc);
}
END_TEST

/* findRel on a self reference: the table name takes the O2M (narrowed by
 * a hint naming its FK column), the FK column the M2O; an FK name
 * selects neither. */
START_TEST(self_reference_candidates)
{
    char h[256], d[512];
    expect_planned("/family", "select=parent(*)");
    expect_planned("/family", "select=children:family(*)");
    expect_planned("/family", "select=children:family!parent(*)");
    ck_assert_str_eq(plan_get("/family", "select=family!family_parent_fkey(*)", h, d), "PGRST200");
    ck_assert_str_eq(plan_get("/family", "select=family_parent_fkey(*)", h, d), "PGRST200");
    ck_assert_str_eq(plan_get("/family", "select=children:family!id(*)", h, d), "PGRST200");
}
END_TEST

/* With a hint the target must name the table; without one it may name
 * the FK or the FK column (deprecated). */
START_TEST(hint_needs_table_target)
{
    char h[256], d[512];
    expect_planned("/films", "select=films_director_id_fkey(*)");
    expect_planned("/films", "select=directors!films_director_id_fkey(*)");
    expect_planned("/films", "select=directors!director_id(*)");
    expect_planned("/films", "select=actors!roles(*)");
    ck_assert_str_eq(plan_get("/films", "select=films_director_id_fkey!director_id(*)", h, d),
                     "PGRST200");
    ck_assert_str_eq(d, "Searched for a foreign key relationship between 'films' and "
                        "'films_director_id_fkey' using the hint 'director_id' in the "
                        "schema 'api', but no matches were found.");
}
END_TEST

/* callReadPlan plans a scalar function's select against relIdentifier,
 * the function's name: an embed has no relationship from it. */
START_TEST(scalar_function_embed)
{
    char h[256], d[512];
    ck_assert_str_eq(plan_get("/rpc/sayhello", "select=*,films(*)", h, d), "PGRST200");
    ck_assert_str_eq(d, "Searched for a foreign key relationship between 'sayhello' and "
                        "'films' in the schema 'api', but no matches were found.");
}
END_TEST

/* A computed relationship named like an FK column competes with the FK
 * (column as target): Error.hs lists it as {} with an empty hint entry,
 * after the detected relationship (Relationship sorts before
 * ComputedRelationship). */
START_TEST(ambiguous_with_computed)
{
    char h[256], d[512];
    ck_assert_str_eq(plan_get("/films", "select=director_id(*)", h, d), "PGRST201");
    ck_assert_str_eq(h, "Try changing 'director_id' to one of the following: "
                        "'directors!films_director_id_fkey', . Find the desired "
                        "relationship in the 'details' key.");
    ck_assert_str_eq(d, "[{\"cardinality\":\"many-to-one\",\"embedding\":\"films with directors\","
                        "\"relationship\":\"films_director_id_fkey using films(director_id) and "
                        "directors(id)\"},{}]");
}
END_TEST

/* Error.hs tableNotFoundHint: Data.FuzzySet over the schema's relations
 * with a minimum of 0.75 -- case-insensitive, so another case of a name
 * is suggested whole. */
START_TEST(table_hint_uses_fuzzyset)
{
    char h[256], d[512];
    ck_assert_str_eq(plan_get("/DIRECTORS", "", h, d), "PGRST205");
    ck_assert_str_eq(h, "Perhaps you meant the table 'api.directors'");
    ck_assert_str_eq(plan_get("/dirctors", "", h, d), "PGRST205");
    ck_assert_str_eq(h, "Perhaps you meant the table 'api.directors'");
    ck_assert_str_eq(plan_get("/nothing_close", "", h, d), "PGRST205");
    ck_assert_str_eq(h, "null");
}
END_TEST

/* readPlan's order: updateNode's PGRST108 for the parameters' paths
 * (filters first; among them foldr reaches the last one first) before
 * addRels' PGRST200, and validateAggFunctions' PGRST123 after it. */
START_TEST(error_precedence)
{
    char h[256], d[512];
    ck_assert_str_eq(plan_get("/films", "select=*,directorz(*)&other.x=eq.1", h, d), "PGRST108");
    ck_assert_str_eq(h, "Verify that 'other' is included in the 'select' query parameter.");
    ck_assert_str_eq(plan_get("/films", "select=*,roles(*)&a.x=eq.1&b.y=eq.2&order=c(x)", h, d),
                     "PGRST108");
    ck_assert_str_eq(h, "Verify that 'b' is included in the 'select' query parameter.");
    ck_assert_str_eq(plan_get("/films", "select=*,roles(*)&roles.order=x&z.limit=1", h, d),
                     "PGRST108");
    ck_assert_str_eq(h, "Verify that 'z' is included in the 'select' query parameter.");
    ck_assert_str_eq(plan_get("/films", "select=id.sum(),directorz(*)", h, d), "PGRST200");
    ck_assert_str_eq(plan_get("/films", "select=id.sum(),directors(*)", h, d), "PGRST123");
}
END_TEST

/* SchemaCache.showSummary counts keys, emptied ones too: end_1 and end_2
 * towards each other (through the private junction) and towards the
 * junction's schema. */
START_TEST(summary_counts_emptied_keys)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgr_schema_cache *sc = pgr_ctx_schema(ctx);
    const char *s = pgr_schema_cache_summary(sc, a);
    pgr_schema_cache_release(sc);
    /* films, roles, actors, directors, send_1, family + 2 x (end_1, end_2) */
    ck_assert_str_eq(s, "9 Relations, 10 Relationships, 1 RPCs, 0 Domain Representations, "
                        "0 Media Type Handlers");
    pgrest_arena_free(a);
}
END_TEST

/* Data.FuzzySet: exact (case-insensitive) wins with 1; otherwise the
 * Levenshtein-rescored best above the minimum. */
START_TEST(fuzzyset_scores)
{
    pgrest_arena *a = pgrest_arena_new(0);
    const char *const rels[] = {"directors", "roles", "actors"};
    double score = 0;
    ck_assert_str_eq(pgr_fuzzyset_best(a, "role", rels, 3, 0.33, &score), "roles");
    ck_assert(score > 0.79 && score < 0.81); /* 1 - 1/5 */
    ck_assert_str_eq(pgr_fuzzyset_best(a, "ACTORS", rels, 3, 0.33, &score), "actors");
    ck_assert(score == 1.0);
    ck_assert_ptr_null(pgr_fuzzyset_best(a, "noclosealternative", rels, 3, 0.33, &score));
    /* 1 - 3/8 passes getOne's 0.33, not getOneWithMinScore 0.75 */
    const char *const tables[] = {"second_1"};
    ck_assert_str_eq(pgr_fuzzyset_best(a, "end_1", tables, 1, 0.33, &score), "second_1");
    ck_assert_ptr_null(pgr_fuzzyset_best(a, "end_1", tables, 1, 0.75, &score));
    ck_assert_ptr_null(pgr_fuzzyset_best(a, "x", rels, 0, 0.33, &score));
    /* grams ignore '_' (only alphanumerics, spaces, commas count), the
     * rescoring Levenshtein does not: 1 - 1/5 */
    const char *const under[] = {"xyz", "end_1"};
    ck_assert_str_eq(pgr_fuzzyset_best(a, "end1", under, 2, 0.33, &score), "end_1");
    ck_assert(score > 0.79 && score < 0.81);
    /* nothing shares a gram with "_": no candidate at any gram size */
    ck_assert_ptr_null(pgr_fuzzyset_best(a, "_", under, 2, 0.0, &score));
    pgrest_arena_free(a);
}
END_TEST

static Suite *embed_errors_suite(void)
{
    Suite *s = suite_create("embed_errors");
    TCase *tc = tcase_create("find_rel");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, hint_suggests_close_target);
    tcase_add_test(tc, hint_suggests_close_origin);
    tcase_add_test(tc, emptied_key_gives_no_hint);
    tcase_add_test(tc, self_reference_candidates);
    tcase_add_test(tc, hint_needs_table_target);
    tcase_add_test(tc, scalar_function_embed);
    tcase_add_test(tc, ambiguous_with_computed);
    tcase_add_test(tc, table_hint_uses_fuzzyset);
    tcase_add_test(tc, error_precedence);
    tcase_add_test(tc, summary_counts_emptied_keys);
    suite_add_tcase(s, tc);
    TCase *fz = tcase_create("fuzzyset");
    tcase_add_test(fz, fuzzyset_scores);
    suite_add_tcase(s, fz);
    return s;
}

int main(void)
{
    return check_run(embed_errors_suite());
}
