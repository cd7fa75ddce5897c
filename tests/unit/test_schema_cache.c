/* Schema cache: snapshot loading, lookups and relationship derivation.
 * Input: tests/unit/fixtures/schema_snapshot.json, produced once by
 * pgr_introspect on tests/fixtures/test_schema.sql (exposed schema "api",
 * extra search path "public"). Expected relationships are what PostgREST's
 * SchemaCache.hs derives for that schema. No database. */
#include <check.h>

#include "check_run.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "plan/fuzzy.h"
#include "schema/schema_cache.h"
#include "util/arena.h"

#define MAX_RELS 64

static pgr_schema_cache *sc;

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf != NULL)
        buf[n] = '\0';
    fclose(f);
    return buf;
}

static char *read_snapshot(void)
{
    const char *dir = getenv("PGREST_TEST_FIXTURES");
    char path[4096];
    snprintf(path, sizeof(path), "%s/schema_snapshot.json",
             dir != NULL ? dir : "tests/unit/fixtures");
    char *json = read_file(path);
    ck_assert_msg(json != NULL, "cannot read %s", path);
    return json;
}

static void load_fixture(void)
{
    const char *exposed[] = {"api", NULL};
    char *json = read_snapshot();
    pgrest_error err = {0};
    sc = pgr_schema_cache_from_json(json, exposed, &err);
    ck_assert_msg(sc != NULL, "%s: %s", err.message ? err.message : "?",
                  err.details ? err.details : "");
    free(json);
}

static void unload_fixture(void)
{
    pgr_schema_cache_release(sc);
    sc = NULL;
}

static const pgr_table *table(const char *name)
{
    const pgr_table *t = pgr_find_table(sc, "api", name);
    ck_assert_msg(t != NULL, "table api.%s not found", name);
    return t;
}

/* Relationships from `from` to `to` with the given cardinality. */
static size_t rels_to(const char *from, const char *to, pgr_cardinality card,
                      const pgr_relationship **out, size_t max)
{
    const pgr_relationship *all[MAX_RELS];
    size_t n = pgr_table_relationships(sc, table(from), all, MAX_RELS);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(all[i]->foreign_table->name, to) != 0 ||
            all[i]->cardinality != card)
            continue;
        if (k < max)
            out[k] = all[i];
        k++;
    }
    return k;
}

static const pgr_relationship *one_rel(const char *from, const char *to,
                                       pgr_cardinality card)
{
    const pgr_relationship *r[4];
    size_t n = rels_to(from, to, card, r, 4);
    ck_assert_msg(n == 1, "%s -> %s: expected 1 relationship, got %zu", from,
                  to, n);
    return r[0];
}

/* ------------------------------------------------------------ tables */

START_TEST(tables_are_loaded)
{
    ck_assert_int_ge(sc->pg_version, 150000);
    ck_assert_uint_eq(sc->n_tables, 15);
    ck_assert_ptr_null(pgr_find_table(sc, "api", "plays_2024")); /* partition */
    ck_assert_ptr_null(pgr_find_table(sc, "api", "nope"));
    ck_assert_ptr_null(pgr_find_table(sc, "private", "labels"));
    ck_assert_ptr_null(pgr_find_table(sc, "public", "artists"));
    ck_assert_int_eq(table("artists")->kind, 'r');
    ck_assert_int_eq(table("album_view")->kind, 'v');
    ck_assert_int_eq(table("track_lengths")->kind, 'm');
    ck_assert_int_eq(table("plays")->kind, 'p');
    ck_assert_str_eq(table("artists")->description, "People and bands");
    for (size_t i = 1; i < sc->n_tables; i++) /* sorted for bsearch */
        ck_assert_int_lt(strcmp(sc->tables[i - 1].name, sc->tables[i].name), 0);
}
END_TEST

START_TEST(mutability_flags)
{
    const pgr_table *v = table("album_view");
    ck_assert(v->insertable && v->updatable && v->deletable);
    const pgr_table *s = table("artist_stats");
    ck_assert(!s->insertable && !s->updatable && !s->deletable);
    const pgr_table *m = table("track_lengths");
    ck_assert(!m->insertable && !m->updatable && !m->deletable);
    ck_assert(table("plays")->insertable);
}
END_TEST

START_TEST(primary_keys)
{
    const pgr_table *pt = table("playlist_track");
    ck_assert_uint_eq(pt->n_pk, 2);
    ck_assert_str_eq(pt->pk[0], "playlist_id");
    ck_assert_str_eq(pt->pk[1], "track_id");
    /* views inherit the PK of their base table (addViewPrimaryKeys) */
    ck_assert_uint_eq(table("album_view")->n_pk, 1);
    ck_assert_str_eq(table("album_view")->pk[0], "album_id");
    ck_assert_str_eq(table("album_titles")->pk[0], "album_id");
    ck_assert_uint_eq(table("label_artists")->n_pk, 2);
    ck_assert_uint_eq(table("artist_profiles")->n_pk, 1);
}
END_TEST

START_TEST(columns)
{
    const pgr_table *al = table("albums");
    ck_assert_uint_eq(al->n_columns, 7);
    ck_assert_str_eq(al->columns[0].name, "id"); /* position order */
    ck_assert_int_eq(al->columns[0].position, 1);
    const pgr_column *title = pgr_find_column(al, "title");
    ck_assert_ptr_nonnull(title);
    ck_assert_str_eq(title->type, "character varying");
    ck_assert_str_eq(title->nominal_type, "character varying(200)");
    ck_assert_int_eq(title->max_length, 200);
    ck_assert(!title->nullable);
    const pgr_column *rating = pgr_find_column(al, "rating");
    ck_assert_str_eq(rating->type, "smallint");
    ck_assert_str_eq(rating->nominal_type, "api.rating");
    ck_assert_int_eq(rating->max_length, -1);
    ck_assert(rating->nullable);
    ck_assert(pgr_find_column(al, "tags")->is_array);
    ck_assert_str_eq(pgr_find_column(al, "id")->default_expr,
                     "nextval('api.albums_id_seq')");
    ck_assert_ptr_null(pgr_find_column(al, "nope"));
    ck_assert_ptr_null(pgr_find_column(al, "Title"));

    const pgr_table *ar = table("artists");
    const pgr_column *genre = pgr_find_column(ar, "genre");
    ck_assert_str_eq(genre->type, "api.genre");
    ck_assert_uint_eq(genre->n_enum_values, 4);
    ck_assert_str_eq(genre->enum_values[0], "rock");
    ck_assert_str_eq(genre->enum_values[3], "pop");
    ck_assert_str_eq(genre->default_expr, "'rock'::api.genre");
    ck_assert_str_eq(pgr_find_column(ar, "name")->description, "Display name");
    ck_assert_ptr_null(pgr_find_column(ar, "name")->default_expr);
    ck_assert_str_eq(pgr_find_column(ar, "country")->type, "character");
    ck_assert_int_eq(pgr_find_column(ar, "country")->max_length, 2);
    ck_assert_uint_eq(pgr_find_column(ar, "formed")->n_enum_values, 0);
}
END_TEST

/* ----------------------------------------------------- relationships */

START_TEST(many_to_one_and_inverse)
{
    const pgr_relationship *r = one_rel("albums", "artists", PGR_REL_M2O);
    ck_assert_str_eq(r->constraint_name, "albums_artist_id_fkey");
    ck_assert_uint_eq(r->n_cols, 1);
    ck_assert_str_eq(r->cols[0], "artist_id");
    ck_assert_str_eq(r->fcols[0], "id");
    ck_assert(!r->is_self && !r->is_computed);
    ck_assert_ptr_eq(r->table, table("albums"));
    ck_assert_ptr_eq(r->foreign_table, table("artists"));

    r = one_rel("artists", "albums", PGR_REL_O2M);
    ck_assert_str_eq(r->constraint_name, "albums_artist_id_fkey");
    ck_assert_str_eq(r->cols[0], "id");
    ck_assert_str_eq(r->fcols[0], "artist_id");

    /* the FK relationship comes before the computed one (long_tracks) */
    const pgr_relationship *x[4];
    ck_assert_uint_eq(rels_to("albums", "tracks", PGR_REL_O2M, x, 4), 2);
    ck_assert_str_eq(x[0]->constraint_name, "tracks_album_id_fkey");
}
END_TEST

START_TEST(one_to_one_both_ways)
{
    const pgr_relationship *r =
        one_rel("artist_profiles", "artists", PGR_REL_O2O);
    ck_assert(!r->is_parent);
    ck_assert_str_eq(r->cols[0], "artist_id");
    ck_assert_str_eq(r->fcols[0], "id");
    r = one_rel("artists", "artist_profiles", PGR_REL_O2O);
    ck_assert(r->is_parent);
    ck_assert_str_eq(r->constraint_name, "artist_profiles_artist_id_fkey");
    const pgr_relationship *x[2];
    ck_assert_uint_eq(rels_to("artists", "artist_profiles", PGR_REL_O2M, x, 2),
                      0);
}
END_TEST

START_TEST(many_to_many_through_junction)
{
    const pgr_relationship *r = one_rel("playlists", "tracks", PGR_REL_M2M);
    ck_assert_ptr_eq(r->junction, table("playlist_track"));
    ck_assert_str_eq(r->junction_constraint1, "playlist_track_playlist_id_fkey");
    ck_assert_str_eq(r->junction_constraint2, "playlist_track_track_id_fkey");
    ck_assert_uint_eq(r->n_cols, 1);
    ck_assert_str_eq(r->cols[0], "id");
    ck_assert_str_eq(r->jcols1[0], "playlist_id");
    ck_assert_uint_eq(r->n_jcols2, 1);
    ck_assert_str_eq(r->jcols2[0], "track_id");
    ck_assert_str_eq(r->cols2[0], "id");
    r = one_rel("tracks", "playlists", PGR_REL_M2M);
    ck_assert_str_eq(r->junction_constraint1, "playlist_track_track_id_fkey");
    /* track_notes has two FKs to artists but none is in its PK */
    const pgr_relationship *x[2];
    ck_assert_uint_eq(rels_to("tracks", "artists", PGR_REL_M2M, x, 2), 0);
    ck_assert_uint_eq(rels_to("artists", "artists", PGR_REL_M2M, x, 2), 0);
}
END_TEST

START_TEST(self_reference)
{
    const pgr_relationship *r = one_rel("employees", "employees", PGR_REL_M2O);
    ck_assert(r->is_self);
    ck_assert_str_eq(r->cols[0], "manager_id");
    r = one_rel("employees", "employees", PGR_REL_O2M);
    ck_assert(r->is_self);
    ck_assert_str_eq(r->fcols[0], "manager_id");
    ck_assert_uint_eq(pgr_table_relationships(sc, table("employees"), NULL, 0),
                      2);
}
END_TEST

START_TEST(composite_and_ambiguous_fks)
{
    const pgr_relationship *r = one_rel("track_notes", "tracks", PGR_REL_M2O);
    ck_assert_str_eq(r->constraint_name, "track_notes_track_fkey");
    ck_assert_uint_eq(r->n_cols, 2);
    ck_assert_str_eq(r->cols[0], "album_id");
    ck_assert_str_eq(r->cols[1], "position");
    ck_assert_str_eq(r->fcols[1], "position");
    const pgr_relationship *x[4];
    ck_assert_uint_eq(rels_to("track_notes", "artists", PGR_REL_M2O, x, 4), 2);
    ck_assert_str_eq(x[0]->constraint_name, "track_notes_author_id_fkey");
    ck_assert_str_eq(x[1]->constraint_name, "track_notes_editor_fkey");
    ck_assert_uint_eq(rels_to("artists", "track_notes", PGR_REL_O2M, x, 4), 2);
}
END_TEST

START_TEST(view_relationships)
{
    /* view as origin: album_view.artist comes from albums.artist_id */
    const pgr_relationship *r = one_rel("album_view", "artists", PGR_REL_M2O);
    ck_assert_str_eq(r->constraint_name, "albums_artist_id_fkey");
    ck_assert_str_eq(r->cols[0], "artist");
    ck_assert_str_eq(r->fcols[0], "id");
    ck_assert(!r->is_self);
    /* view as target */
    r = one_rel("artists", "album_view", PGR_REL_O2M);
    ck_assert_str_eq(r->fcols[0], "artist");
    r = one_rel("album_view", "tracks", PGR_REL_O2M);
    ck_assert_str_eq(r->cols[0], "album_id");
    ck_assert_str_eq(r->fcols[0], "album_id");
    /* view of a view */
    r = one_rel("album_titles", "artists", PGR_REL_M2O);
    ck_assert_str_eq(r->cols[0], "artist");
    one_rel("tracks", "album_titles", PGR_REL_M2O);
    /* view to view: album_view -> artist_stats (both over base tables) */
    r = one_rel("album_view", "artist_stats", PGR_REL_M2O);
    ck_assert_str_eq(r->cols[0], "artist");
    ck_assert_str_eq(r->fcols[0], "id");
    /* one-to-one propagates to views */
    one_rel("artist_stats", "artist_profiles", PGR_REL_O2O);
    /* materialized view */
    one_rel("track_lengths", "albums", PGR_REL_M2O);
}
END_TEST

START_TEST(view_over_private_tables)
{
    /* api.labels and api.label_artists are views over private tables: the
     * private FKs give them relationships, and label_artists (PK from its
     * base table) is an M2M junction between labels and artists. */
    one_rel("label_artists", "labels", PGR_REL_M2O);
    one_rel("labels", "label_artists", PGR_REL_O2M);
    one_rel("label_artists", "artists", PGR_REL_M2O);
    const pgr_relationship *r = one_rel("labels", "artists", PGR_REL_M2M);
    ck_assert_ptr_eq(r->junction, table("label_artists"));
    ck_assert_str_eq(r->junction_constraint1, "label_artists_label_id_fkey");
    ck_assert_str_eq(r->jcols1[0], "label_id");
    ck_assert_str_eq(r->jcols2[0], "artist_id");
    one_rel("artists", "labels", PGR_REL_M2M);
}
END_TEST

START_TEST(computed_relationships)
{
    /* api.albums(api.tracks) ROWS 1 overrides the FK tracks -> albums */
    const pgr_relationship *x[4];
    const pgr_relationship *all[MAX_RELS];
    size_t n = pgr_table_relationships(sc, table("tracks"), all, MAX_RELS);
    size_t to_albums = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(all[i]->foreign_table->name, "albums") != 0)
            continue;
        to_albums++;
        ck_assert(all[i]->is_computed);
        ck_assert_int_eq(all[i]->cardinality, PGR_REL_M2O);
        ck_assert_str_eq(all[i]->function_name, "albums");
        ck_assert_str_eq(all[i]->function_schema, "api");
    }
    ck_assert_uint_eq(to_albums, 1);
    /* to-one (not SETOF) */
    ck_assert_uint_eq(rels_to("artists", "albums", PGR_REL_M2O, x, 4), 1);
    ck_assert(x[0]->is_computed);
    ck_assert_str_eq(x[0]->function_name, "first_album");
    /* to-many (SETOF) next to the FK relationship to the same table */
    ck_assert_uint_eq(rels_to("albums", "tracks", PGR_REL_O2M, x, 4), 2);
    ck_assert(!x[0]->is_computed);
    ck_assert(x[1]->is_computed);
    ck_assert_str_eq(x[1]->function_name, "long_tracks");
    ck_assert_ptr_null(x[1]->constraint_name);
}
END_TEST

START_TEST(relationship_order_and_counts)
{
    /* PostgREST's order: target (schema, name), is_self, O2M < M2O < O2O <
     * M2M, constraint; computed relationships last. */
    const pgr_relationship *r[MAX_RELS];
    size_t n = pgr_table_relationships(sc, table("artists"), r, MAX_RELS);
    ck_assert_uint_eq(n, 9);
    const char *expect[] = {"album_titles", "album_view", "albums",
                            "artist_profiles", "label_artists", "labels",
                            "track_notes", "track_notes", "albums"};
    for (size_t i = 0; i < n; i++)
        ck_assert_str_eq(r[i]->foreign_table->name, expect[i]);
    ck_assert(r[8]->is_computed);
    ck_assert_str_eq(r[6]->constraint_name, "track_notes_author_id_fkey");
    /* count-only and truncation */
    ck_assert_uint_eq(pgr_table_relationships(sc, table("artists"), NULL, 0), 9);
    ck_assert_uint_eq(pgr_table_relationships(sc, table("artists"), r, 3), 3);
    ck_assert_str_eq(r[2]->foreign_table->name, "albums");
    ck_assert_uint_eq(pgr_table_relationships(sc, table("playlists"), NULL, 0),
                      3);
    ck_assert_uint_eq(sc->n_relationships, 66);
}
END_TEST

/* ---------------------------------------------------------- routines */

START_TEST(routines)
{
    const pgr_routine *r[4];
    ck_assert_uint_eq(pgr_find_routines(sc, "api", "add", r, 4), 1);
    ck_assert_uint_eq(r[0]->n_params, 2);
    ck_assert_str_eq(r[0]->params[0].name, "a");
    ck_assert_str_eq(r[0]->params[0].type, "integer");
    ck_assert(r[0]->params[0].required);
    ck_assert(!r[0]->params[1].required);
    ck_assert_int_eq(r[0]->return_kind, PGR_RETURN_SCALAR);
    ck_assert_str_eq(r[0]->return_schema, "pg_catalog");
    ck_assert_str_eq(r[0]->return_type, "int4");
    ck_assert_int_eq(r[0]->volatility, 'i');
    ck_assert(!r[0]->returns_set);

    ck_assert_uint_eq(pgr_find_routines(sc, "api", "album_tracks", r, 4), 1);
    ck_assert(r[0]->returns_set);
    ck_assert_int_eq(r[0]->return_kind, PGR_RETURN_COMPOSITE);
    ck_assert_str_eq(r[0]->return_schema, "api");
    ck_assert_str_eq(r[0]->return_type, "tracks");
    ck_assert_str_eq(r[0]->description, "Tracks of an album");
    ck_assert_int_eq(r[0]->volatility, 's');

    ck_assert_uint_eq(pgr_find_routines(sc, "api", "touch", r, 4), 1);
    ck_assert_int_eq(r[0]->return_kind, PGR_RETURN_VOID);
    ck_assert_str_eq(r[0]->isolation_level, "serializable");
    ck_assert_uint_eq(r[0]->n_settings, 2);
    ck_assert_str_eq(r[0]->setting_names[0], "statement_timeout");
    ck_assert_str_eq(r[0]->setting_values[0], "5s");
    ck_assert_int_eq(r[0]->volatility, 'v');

    ck_assert_uint_eq(pgr_find_routines(sc, "api", "sum_all", r, 4), 1);
    ck_assert(r[0]->params[0].variadic);
    ck_assert_str_eq(r[0]->params[0].type, "integer[]");

    ck_assert_uint_eq(pgr_find_routines(sc, "api", "artist_summary", r, 4), 1);
    ck_assert(r[0]->has_out_params);
    ck_assert_int_eq(r[0]->return_kind, PGR_RETURN_COMPOSITE);
    ck_assert_uint_eq(r[0]->n_params, 1); /* OUT params are not inputs */
    ck_assert_ptr_null(r[0]->isolation_level);

    /* one unnamed json param is callable (PostgREST single unnamed param) */
    ck_assert_uint_eq(pgr_find_routines(sc, "api", "json_to_colour", r, 4), 1);
    ck_assert_str_eq(r[0]->params[0].name, "");
    /* an unnamed row-type param is not (computed field / relationship) */
    ck_assert_uint_eq(pgr_find_routines(sc, "api", "duration", NULL, 0), 0);
    ck_assert_uint_eq(pgr_find_routines(sc, "api", "nope", r, 4), 0);
    ck_assert_uint_eq(pgr_find_routines(sc, "private", "add", r, 4), 0);
}
END_TEST

START_TEST(representations)
{
    const pgr_representation *r =
        pgr_find_representation(sc, "api.colour", "json");
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(r->function, "api.colour_to_json");
    r = pgr_find_representation(sc, "json", "api.colour");
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(r->function, "api.json_to_colour");
    ck_assert_ptr_null(pgr_find_representation(sc, "api.rating", "json"));
}
END_TEST

START_TEST(media_handlers)
{
    const pgr_media_handler *h =
        pgr_find_media_handler(sc, "api", "artists", "text/x-roster");
    ck_assert_ptr_nonnull(h);
    ck_assert_str_eq(h->handler_name, "roster");
    ck_assert(!h->any_element);
    /* bound to artists only; anyelement handlers are looked up apart */
    ck_assert_ptr_null(pgr_find_media_handler(sc, "api", "albums", "text/x-roster"));
    ck_assert_ptr_null(pgr_find_media_handler(sc, NULL, NULL, "text/x-roster"));
    h = pgr_find_media_handler(sc, NULL, NULL, "application/x-jsonb-lines");
    ck_assert_ptr_nonnull(h);
    ck_assert(h->any_element);
    ck_assert_ptr_null(h->target_name);
    ck_assert_str_eq(h->send_fn, "jsonb_send");
}
END_TEST

START_TEST(refcount_and_json_text)
{
    ck_assert_int_eq(atomic_load(&sc->refcount), 1);
    pgr_schema_cache_retain(sc);
    ck_assert_int_eq(atomic_load(&sc->refcount), 2);
    pgr_schema_cache_release(sc);
    ck_assert_int_eq(atomic_load(&sc->refcount), 1);
    ck_assert_ptr_nonnull(sc->json);
    ck_assert_ptr_nonnull(strstr(sc->json, "\"playlist_track\""));
    pgr_schema_cache_retain(NULL);
    pgr_schema_cache_release(NULL);
}
END_TEST

/* ------------------------------------------- hand-written snapshots */

static pgr_schema_cache *from_json(const char *json,
                                   const char *const *exposed)
{
    pgrest_error err = {0};
    pgr_schema_cache *c = pgr_schema_cache_from_json(json, exposed, &err);
    ck_assert_msg(c != NULL, "%s: %s", err.message ? err.message : "?",
                  err.details ? err.details : "");
    return c;
}

/* x and y in schema a, junction j in schema b. */
static const char junction_json[] =
    "{\"tables\":["
    "{\"schema\":\"a\",\"name\":\"x\",\"kind\":\"r\",\"pk\":[\"id\"],"
    " \"columns\":[{\"name\":\"id\",\"type\":\"integer\"}]},"
    "{\"schema\":\"a\",\"name\":\"y\",\"kind\":\"r\",\"pk\":[\"id\"],"
    " \"columns\":[{\"name\":\"id\",\"type\":\"integer\"}]},"
    "{\"schema\":\"b\",\"name\":\"j\",\"kind\":\"r\",\"pk\":[\"x_id\",\"y_id\"],"
    " \"columns\":[{\"name\":\"x_id\",\"type\":\"integer\"},"
    "              {\"name\":\"y_id\",\"type\":\"integer\"}]}],"
    "\"foreign_keys\":["
    "{\"name\":\"j_x\",\"schema\":\"b\",\"table\":\"j\",\"columns\":[\"x_id\"],"
    " \"ref_schema\":\"a\",\"ref_table\":\"x\",\"ref_columns\":[\"id\"],"
    " \"one_to_one\":false},"
    "{\"name\":\"j_y\",\"schema\":\"b\",\"table\":\"j\",\"columns\":[\"y_id\"],"
    " \"ref_schema\":\"a\",\"ref_table\":\"y\",\"ref_columns\":[\"id\"],"
    " \"one_to_one\":false}]}";

START_TEST(junction_must_be_exposed)
{
    pgr_schema_cache *all = from_json(junction_json, NULL);
    const pgr_table *x = pgr_find_table(all, "a", "x");
    const pgr_relationship *r[8];
    ck_assert_uint_eq(pgr_table_relationships(all, x, r, 8), 2);
    /* sorted by target (schema, name): a.y before b.j */
    ck_assert_int_eq(r[0]->cardinality, PGR_REL_M2M); /* x -> a.y */
    ck_assert_ptr_eq(r[0]->junction, pgr_find_table(all, "b", "j"));
    ck_assert_int_eq(r[1]->cardinality, PGR_REL_O2M); /* x -> b.j */
    pgr_schema_cache_release(all);

    const char *exposed[] = {"a", NULL};
    pgr_schema_cache *only_a = from_json(junction_json, exposed);
    x = pgr_find_table(only_a, "a", "x");
    ck_assert_uint_eq(pgr_table_relationships(only_a, x, r, 8), 0);
    pgr_schema_cache_release(only_a);
}
END_TEST

/* removeInternal filters x's relationships to b away but keeps the key
 * (x, "b") of the relationship map -- keyed by the target's schema, so it
 * is no (x, "a") key for Error.noRelBetweenHint's lookup; a table no
 * relationship starts from is no key. */
START_TEST(hidden_relationships_keep_the_key)
{
    static const char json[] =
        "{\"tables\":["
        "{\"schema\":\"a\",\"name\":\"x\",\"kind\":\"r\",\"pk\":[\"id\"],"
        " \"columns\":[{\"name\":\"id\",\"type\":\"integer\"}]},"
        "{\"schema\":\"a\",\"name\":\"lone\",\"kind\":\"r\",\"pk\":[\"id\"],"
        " \"columns\":[{\"name\":\"id\",\"type\":\"integer\"}]}],"
        "\"foreign_keys\":["
        "{\"name\":\"j_x\",\"schema\":\"b\",\"table\":\"j\",\"columns\":[\"x_id\"],"
        " \"ref_schema\":\"a\",\"ref_table\":\"x\",\"ref_columns\":[\"id\"],"
        " \"one_to_one\":false}]}";
    const char *exposed[] = {"a", NULL};
    pgr_schema_cache *c = from_json(json, exposed);
    const pgr_table *x = pgr_find_table(c, "a", "x");
    ck_assert_uint_eq(pgr_table_relationships(c, x, NULL, 0), 0);
    ck_assert(pgr_table_has_rel_key(c, x, "b"));
    ck_assert(!pgr_table_has_rel_key(c, x, "a"));
    ck_assert(!pgr_table_has_rel_key(c, pgr_find_table(c, "a", "lone"), "b"));
    pgr_schema_cache_release(c);
}
END_TEST

START_TEST(overloads_keep_order)
{
    static const char json[] =
        "{\"routines\":["
        "{\"schema\":\"s\",\"name\":\"f\",\"params\":[{\"name\":\"a\",\"type\":\"text\"}]},"
        "{\"schema\":\"s\",\"name\":\"e\",\"params\":[]},"
        "{\"schema\":\"s\",\"name\":\"f\",\"params\":[]},"
        "{\"schema\":\"r\",\"name\":\"f\",\"params\":[]}]}";
    pgr_schema_cache *c = from_json(json, NULL);
    const pgr_routine *r[4];
    ck_assert_uint_eq(pgr_find_routines(c, "s", "f", r, 4), 2);
    ck_assert_uint_eq(r[0]->n_params, 1);
    ck_assert_uint_eq(r[1]->n_params, 0);
    ck_assert_uint_eq(pgr_find_routines(c, "s", "f", r, 1), 1);
    ck_assert_uint_eq(pgr_find_routines(c, "s", "f", NULL, 0), 2);
    ck_assert_uint_eq(pgr_find_routines(c, "r", "f", NULL, 0), 1);
    ck_assert_uint_eq(c->n_tables, 0);
    ck_assert_ptr_null(pgr_find_table(c, "s", "f"));
    pgr_schema_cache_release(c);
}
END_TEST

START_TEST(invalid_snapshots)
{
    const char *bad[] = {
        "{not json",
        "[1,2]",
        "{\"tables\":[{\"schema\":\"a\"}]}",
        "{\"tables\":[{\"schema\":\"a\",\"name\":\"t\",\"columns\":[{}]}]}",
        "{\"foreign_keys\":[{\"name\":\"f\"}]}",
        "{\"routines\":[{\"schema\":\"s\",\"name\":\"f\",\"params\":[{}]}]}",
        "{\"tables\":[{\"schema\":1,\"name\":\"t\"}]}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        pgrest_error err = {0};
        ck_assert_ptr_null(pgr_schema_cache_from_json(bad[i], NULL, &err));
        ck_assert_int_eq(err.http_status, 503);
        ck_assert_str_eq(err.code, "PGRST002");
        ck_assert_ptr_nonnull(err.details);
    }
    pgrest_error err = {0};
    ck_assert_ptr_null(pgr_schema_cache_from_json(NULL, NULL, &err));
}
END_TEST

/* SchemaCache.showSummary counts map keys: relationships by (origin,
 * target schema) -- four relationships here, two keys --, routines by
 * qualified name (overloads once). */
START_TEST(summary_counts_as_postgrest)
{
    const char *json =
        "{\"pg_version\": 150000,"
        " \"tables\": ["
        "  {\"schema\":\"api\",\"name\":\"a\",\"kind\":\"r\",\"pk\":[\"id\"],"
        "   \"columns\":[{\"name\":\"id\",\"type\":\"integer\",\"position\":1},"
        "                {\"name\":\"b_id\",\"type\":\"integer\",\"position\":2},"
        "                {\"name\":\"b2_id\",\"type\":\"integer\",\"position\":3}]},"
        "  {\"schema\":\"api\",\"name\":\"b\",\"kind\":\"r\",\"pk\":[\"id\"],"
        "   \"columns\":[{\"name\":\"id\",\"type\":\"integer\",\"position\":1}]},"
        "  {\"schema\":\"api\",\"name\":\"c\",\"kind\":\"r\",\"pk\":[],"
        "   \"columns\":[{\"name\":\"id\",\"type\":\"integer\",\"position\":1}]}],"
        " \"foreign_keys\": [{\"name\":\"a_b\",\"schema\":\"api\",\"table\":\"a\","
        "   \"columns\":[\"b_id\"],\"ref_schema\":\"api\",\"ref_table\":\"b\","
        "   \"ref_columns\":[\"id\"],\"one_to_one\":false},"
        "  {\"name\":\"a_b2\",\"schema\":\"api\",\"table\":\"a\",\"columns\":[\"b2_id\"],"
        "   \"ref_schema\":\"api\",\"ref_table\":\"b\",\"ref_columns\":[\"id\"],"
        "   \"one_to_one\":false}],"
        " \"routines\": ["
        "  {\"schema\":\"api\",\"name\":\"f\",\"params\":[],\"return_type\":\"integer\","
        "   \"return_kind\":\"scalar\",\"volatility\":\"v\"},"
        "  {\"schema\":\"api\",\"name\":\"f\",\"params\":[{\"name\":\"x\",\"type\":\"integer\","
        "   \"required\":true}],\"return_type\":\"integer\",\"return_kind\":\"scalar\","
        "   \"volatility\":\"v\"},"
        "  {\"schema\":\"api\",\"name\":\"g\",\"params\":[],\"return_type\":\"integer\","
        "   \"return_kind\":\"scalar\",\"volatility\":\"v\"}]}";
    const char *exposed[] = {"api", NULL};
    pgrest_error err = {0};
    pgr_schema_cache *small = pgr_schema_cache_from_json(json, exposed, &err);
    ck_assert_msg(small != NULL, "%s: %s", err.message ? err.message : "?",
                  err.details ? err.details : "");
    pgrest_arena *a = pgrest_arena_new(0);
    ck_assert_str_eq(pgr_schema_cache_summary(small, a),
                     "3 Relations, 2 Relationships, 2 RPCs, 0 Domain Representations, "
                     "0 Media Type Handlers");
    pgrest_arena_free(a);
    pgr_schema_cache_release(small);
}
END_TEST

/* n tables big.t0 .. and big.projects: a snapshot for the fuzzy hint. */
static pgr_schema_cache *big_schema(size_t n)
{
    size_t cap = 128 + n * 96;
    char *json = malloc(cap);
    ck_assert_ptr_nonnull(json);
    size_t len = (size_t)snprintf(json, cap, "{\"tables\":[");
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(json + len, cap - len,
                                "{\"schema\":\"big\",\"name\":\"t%zu\",\"kind\":\"r\","
                                "\"columns\":[]},", i);
    snprintf(json + len, cap - len,
             "{\"schema\":\"big\",\"name\":\"projects\",\"kind\":\"r\",\"columns\":[]}]}");
    pgr_schema_cache *c = from_json(json, NULL);
    free(json);
    return c;
}

/* SchemaCache.hs maxDbTablesForFuzzySearch: no fuzzy index (no hint) for
 * a schema of 500 tables or more. */
START_TEST(no_table_hint_in_a_big_schema)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgr_schema_cache *c = big_schema(498);
    ck_assert_str_eq(pgr_fuzzy_table(a, c, "big", "projectz"), "projects");
    pgr_schema_cache_release(c);
    c = big_schema(499);
    ck_assert_ptr_null(pgr_fuzzy_table(a, c, "big", "projectz"));
    pgr_schema_cache_release(c);
    pgrest_arena_free(a);
}
END_TEST

/* A config reload replaces the role settings of a copy of the cache. */
START_TEST(role_settings_replaced_in_a_copy)
{
    pgr_schema_cache *c = from_json(
        "{\"tables\":[{\"schema\":\"a\",\"name\":\"x\",\"kind\":\"r\",\"columns\":[]}],"
        "\"role_settings\":[{\"role\":\"web\",\"isolation_level\":null,"
        "\"settings\":[[\"statement_timeout\",\"1s\"]]}]}", NULL);
    pgrest_error err = {0};
    pgr_schema_cache *d = pgr_schema_cache_with_role_settings(
        c, "[{\"role\":\"web\",\"isolation_level\":\"serializable\","
           "\"settings\":[[\"statement_timeout\",\"5s\"]]}]", NULL, &err);
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_eq(d->n_tables, 1);
    const pgr_role_settings *rs = pgr_find_role_settings(d, "web");
    ck_assert_ptr_nonnull(rs);
    ck_assert_str_eq(rs->isolation_level, "serializable");
    ck_assert_str_eq(rs->setting_values[0], "5s");
    /* the original is unchanged */
    ck_assert_str_eq(pgr_find_role_settings(c, "web")->setting_values[0], "1s");
    ck_assert_ptr_null(pgr_schema_cache_with_role_settings(c, "{}", NULL, &err));
    pgr_schema_cache_release(d);
    pgr_schema_cache_release(c);
}
END_TEST

/* ------------------------------------------------ the cache as JSON */

/* The group of dbRelationships under the key (api.table, schema). */
static json_object *rel_group(json_object *rels, const char *table, const char *schema)
{
    for (size_t i = 0; i < json_object_array_length(rels); i++) {
        json_object *entry = json_object_array_get_idx(rels, i);
        json_object *key = json_object_array_get_idx(entry, 0);
        json_object *qi = json_object_array_get_idx(key, 0), *name;
        json_object_object_get_ex(qi, "qiName", &name);
        if (strcmp(json_object_get_string(name), table) == 0 &&
            strcmp(json_object_get_string(json_object_array_get_idx(key, 1)), schema) == 0)
            return json_object_array_get_idx(entry, 1);
    }
    return NULL;
}

static const char *field(json_object *o, const char *path)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    json_object *v = o;
    for (char *k = strtok(buf, "."); k != NULL && v != NULL; k = strtok(NULL, "."))
        if (!json_object_object_get_ex(v, k, &v))
            v = NULL;
    return v != NULL ? json_object_get_string(v) : NULL;
}

/* The relationship of group going to `to` with cardinality tag `card`. */
static json_object *rel_in(json_object *group, const char *to, const char *card)
{
    for (size_t i = 0; group != NULL && i < json_object_array_length(group); i++) {
        json_object *r = json_object_array_get_idx(group, i);
        const char *c = field(r, "relCardinality.tag");
        if (strcmp(field(r, "relForeignTable.qiName"), to) == 0 &&
            (card == NULL ? c == NULL : c != NULL && strcmp(c, card) == 0))
            return r;
    }
    return NULL;
}

/* PostgREST's SchemaCache ToJSON (aeson generic): the relationships
 * derived through views and junctions are listed, each under its key
 * (getOverrideRelationshipsMap: computed ones under the function's
 * schema), with PostgREST's flags; the media handlers start from
 * initialMediaHandlers; foreign tables are not views. */
START_TEST(cache_json_in_postgrest_shape)
{
    pgrest_ctx *ctx = pgrest_ctx_new();
    pgrest_error err = {0};
    char path[4096];
    const char *dir = getenv("PGREST_TEST_FIXTURES");
    snprintf(path, sizeof path, "%s/schema_snapshot.json", dir ? dir : "tests/unit/fixtures");
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-schemas", "api", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_load_schema_file(ctx, path, &err), PGREST_OK);
    pgrest_arena *a = pgrest_arena_new(0);
    json_object *o = json_tokener_parse(pgrest_ctx_schema_cache_json(ctx, a));
    ck_assert_ptr_nonnull(o);
    json_object *rels, *tables, *handlers;
    ck_assert(json_object_object_get_ex(o, "dbRelationships", &rels));
    ck_assert(json_object_object_get_ex(o, "dbTables", &tables));
    ck_assert(json_object_object_get_ex(o, "dbMediaHandlers", &handlers));

    /* view -> table (addViewM2OAndO2ORels) */
    json_object *r = rel_in(rel_group(rels, "album_view", "api"), "artists", "M2O");
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(field(r, "relCardinality.relCons"), "albums_artist_id_fkey");
    ck_assert_str_eq(json_object_to_json_string_ext(json_object_array_get_idx(
                         json_object_object_get(json_object_object_get(r, "relCardinality"),
                                                "relColumns"), 0), JSON_C_TO_STRING_PLAIN),
                     "[\"artist\",\"id\"]");
    ck_assert_str_eq(field(r, "relTableIsView"), "true");
    ck_assert_str_eq(field(r, "relFTableIsView"), "false");
    /* M2M through a junction */
    r = rel_in(rel_group(rels, "playlists", "api"), "tracks", "M2M");
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(field(r, "relCardinality.contents.junTable.qiName"), "playlist_track");
    ck_assert_str_eq(field(r, "relCardinality.contents.junConstraint1"),
                     "playlist_track_playlist_id_fkey");
    /* M2M through a view over private tables */
    ck_assert_ptr_nonnull(rel_in(rel_group(rels, "labels", "api"), "artists", "M2M"));
    /* computed: keyed by the function's schema, no table alias yet */
    r = rel_in(rel_group(rels, "artists", "api"), "albums", NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(field(r, "tag"), "ComputedRelationship");
    ck_assert_str_eq(field(r, "relFunction.qiName"), "first_album");
    ck_assert_str_eq(field(r, "relTableAlias.qiName"), "");
    ck_assert_str_eq(field(r, "relTableAlias.qiSchema"), "");
    ck_assert_str_eq(field(r, "relToOne"), "true");

    /* initialMediaHandlers: (RelAnyElement, MTAny) -> BuiltinOvAggJson */
    bool any = false, custom = false;
    for (size_t i = 0; i < json_object_array_length(handlers); i++) {
        json_object *e = json_object_array_get_idx(handlers, i);
        json_object *key = json_object_array_get_idx(e, 0), *val = json_object_array_get_idx(e, 1);
        const char *rel = field(json_object_array_get_idx(key, 0), "tag");
        const char *mt = field(json_object_array_get_idx(key, 1), "tag");
        const char *h = field(json_object_array_get_idx(val, 0), "tag");
        if (strcmp(rel, "RelAnyElement") == 0 && strcmp(mt, "MTAny") == 0) {
            any = true;
            ck_assert_str_eq(h, "BuiltinOvAggJson");
            ck_assert_str_eq(field(json_object_array_get_idx(val, 1), "tag"), "MTApplicationJSON");
        }
        if (strcmp(mt, "MTOther") == 0 &&
            strcmp(field(json_object_array_get_idx(key, 1), "contents"), "text/x-roster") == 0) {
            custom = true;
            ck_assert_str_eq(rel, "RelId");
            ck_assert_str_eq(h, "CustomFunc");
        }
    }
    ck_assert(any && custom);
    json_object_put(o);
    pgrest_arena_free(a);
    pgrest_ctx_free(ctx);
}
END_TEST

static Suite *schema_cache_suite(void)
{
    Suite *s = suite_create("schema_cache");
    TCase *tc = tcase_create("snapshot");
    tcase_add_checked_fixture(tc, load_fixture, unload_fixture);
    tcase_add_test(tc, tables_are_loaded);
    tcase_add_test(tc, mutability_flags);
    tcase_add_test(tc, primary_keys);
    tcase_add_test(tc, columns);
    tcase_add_test(tc, many_to_one_and_inverse);
    tcase_add_test(tc, one_to_one_both_ways);
    tcase_add_test(tc, many_to_many_through_junction);
    tcase_add_test(tc, self_reference);
    tcase_add_test(tc, composite_and_ambiguous_fks);
    tcase_add_test(tc, view_relationships);
    tcase_add_test(tc, view_over_private_tables);
    tcase_add_test(tc, computed_relationships);
    tcase_add_test(tc, relationship_order_and_counts);
    tcase_add_test(tc, routines);
    tcase_add_test(tc, representations);
    tcase_add_test(tc, media_handlers);
    tcase_add_test(tc, refcount_and_json_text);
    suite_add_tcase(s, tc);
    TCase *hw = tcase_create("hand_written");
    tcase_add_test(hw, junction_must_be_exposed);
    tcase_add_test(hw, hidden_relationships_keep_the_key);
    tcase_add_test(hw, overloads_keep_order);
    tcase_add_test(hw, invalid_snapshots);
    tcase_add_test(hw, summary_counts_as_postgrest);
    tcase_add_test(hw, no_table_hint_in_a_big_schema);
    tcase_add_test(hw, role_settings_replaced_in_a_copy);
    tcase_add_test(hw, cache_json_in_postgrest_shape);
    suite_add_tcase(s, hw);
    return s;
}

int main(void)
{
    return check_run(schema_cache_suite());
}
