/* Schema introspection end to end: the schema cache PostgreSQL gives for
 * the introspect* schemas of tests/fixtures/test_schema.sql, and the
 * requests that depend on it. Expected values are what PostgREST's
 * SchemaCache.hs derives (each test names the query or step). */
#include <check.h>

#include "check_run.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/context.h"
#include "harness.h"
#include "schema/schema_cache.h"

static pgrest_ctx *ctx_for(const char *extra_search_path)
{
    const char *opts[] = {"db-schemas", "introspect", "db-extra-search-path",
                          extra_search_path, NULL};
    return harness_ctx(opts);
}

static const pgr_table *table_of(pgr_schema_cache *sc, const char *name)
{
    const pgr_table *t = pgr_find_table(sc, "introspect", name);
    ck_assert_msg(t != NULL, "introspect.%s not in the schema cache", name);
    return t;
}

static void expect(pgrest_ctx *ctx, const char *path, const char *query, int status,
                   const char *body)
{
    test_response r;
    harness_request(ctx, "GET", path, query, NULL, NULL, &r);
    ck_assert_msg(r.status == status, "%s?%s: status %d, body %s", path, query, r.status,
                  r.body);
    if (body != NULL)
        ck_assert_str_eq(r.body, body);
    harness_free(&r);
}

static void expect_code(pgrest_ctx *ctx, const char *path, const char *query, int status,
                        const char *code)
{
    test_response r;
    harness_request(ctx, "GET", path, query, NULL, NULL, &r);
    ck_assert_msg(r.status == status, "%s?%s: status %d, body %s", path, query, r.status,
                  r.body);
    char want[64];
    snprintf(want, sizeof want, "\"code\":\"%s\"", code);
    ck_assert_msg(strstr(r.body, want) != NULL, "%s?%s: %s", path, query, r.body);
    harness_free(&r);
}

/* tablesSqlQuery tbl_pk_cols: array_agg(a.attname ORDER BY a.attname) */
START_TEST(table_pk_columns_by_name)
{
    pgrest_ctx *ctx = ctx_for("public");
    pgr_schema_cache *sc = pgr_ctx_schema(ctx);
    const pgr_table *t = table_of(sc, "readings"); /* PRIMARY KEY (zone, id) */
    ck_assert_uint_eq(t->n_pk, 2);
    ck_assert_str_eq(t->pk[0], "id");
    ck_assert_str_eq(t->pk[1], "zone");
    pgr_schema_cache_release(sc);
    pgrest_ctx_free(ctx);
}
END_TEST

/* funcsSqlQuery arguments: COUNT(*) - COUNT(name) counts NULL names only;
 * an unnamed argument beside named ones is '' in proargnames, so the
 * function is callable and kept, with a parameter named "". */
START_TEST(unnamed_argument_beside_named_ones)
{
    pgrest_ctx *ctx = ctx_for("public");
    pgr_schema_cache *sc = pgr_ctx_schema(ctx);
    const pgr_routine *r[2];
    ck_assert_uint_eq(pgr_find_routines(sc, "introspect", "mixed_args", r, 2), 1);
    ck_assert_uint_eq(r[0]->n_params, 2);
    ck_assert_str_eq(r[0]->params[0].name, "");
    ck_assert_str_eq(r[0]->params[1].name, "b");
    pgr_schema_cache_release(sc);
    /* Error.hs noRpcHint: the overload's parameters, sorted */
    test_response res;
    harness_request(ctx, "GET", "/rpc/mixed_args", "b=1", NULL, NULL, &res);
    ck_assert_int_eq(res.status, 404);
    ck_assert_msg(strstr(res.body, "\"hint\":\"Perhaps you meant to call the function "
                                   "introspect.mixed_args(, b)\"") != NULL, "%s", res.body);
    harness_free(&res);
    pgrest_ctx_free(ctx);
}
END_TEST

/* Routine.hs funcReturnsVoid matches Single (Scalar void) only: a SETOF
 * void function returns a (here empty) JSON array, a void one no body. */
START_TEST(setof_void_is_a_set_of_scalars)
{
    pgrest_ctx *ctx = ctx_for("public");
    expect(ctx, "/rpc/no_rows", "", 200, "[]");
    expect(ctx, "/rpc/nothing", "", 204, "");
    pgrest_ctx_free(ctx);
}
END_TEST

static const pgr_relationship *computed_named(pgr_schema_cache *sc, const pgr_table *t,
                                              const char *function)
{
    const pgr_relationship *rels[64];
    size_t n = pgr_table_relationships(sc, t, rels, 64);
    for (size_t i = 0; i < n; i++)
        if (rels[i]->is_computed && strcmp(rels[i]->function_name, function) == 0)
            return rels[i];
    return NULL;
}

/* allComputedRels reads every pg_proc row: a function in a schema that is
 * not exposed is filed under its schema's key (deformedRelMap), so it is
 * not found from the exposed one; an aggregate over the row type counts. */
START_TEST(computed_relationships_of_every_function)
{
    pgrest_ctx *ctx = ctx_for("public");
    pgr_schema_cache *sc = pgr_ctx_schema(ctx);
    const pgr_table *sensors = table_of(sc, "sensors");
    const pgr_relationship *r = computed_named(sc, sensors, "sensor_readings");
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(r->function_schema, "introspect_private");
    ck_assert_int_eq(r->cardinality, PGR_REL_O2M);
    ck_assert(pgr_table_has_rel_key(sc, sensors, "introspect_private"));
    r = computed_named(sc, sensors, "last_sensor");
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->cardinality, PGR_REL_M2O); /* not SETOF: to-one */
    ck_assert(r->is_self);
    pgr_schema_cache_release(sc);
    expect_code(ctx, "/sensors", "select=sensor_readings(*)", 400, "PGRST200");
    pgrest_ctx_free(ctx);
}
END_TEST

/* addM2MRels: both FKs' columns must be in the junction's PK; a UNIQUE
 * constraint over them does not make sensor_tags a junction. */
START_TEST(junction_needs_its_fks_in_the_pk)
{
    pgrest_ctx *ctx = ctx_for("public");
    expect_code(ctx, "/sensors", "select=tags(*)", 400, "PGRST200");
    expect(ctx, "/sensors", "select=name,sensor_tags(tags(label))&order=id", 200,
           "[{\"name\":\"north\",\"sensor_tags\":[{\"tags\": {\"label\": \"outdoor\"}}]}, \n"
           " {\"name\":\"south\",\"sensor_tags\":[]}]");
    pgrest_ctx_free(ctx);
}
END_TEST

/* addViewPrimaryKeys takeFirstPK: a PK column the view shows twice gives
 * the first; addViewM2OAndO2ORels expandKeyDepCols: one relationship per
 * reference, hence ambiguous. */
START_TEST(view_pk_column_referenced_twice)
{
    pgrest_ctx *ctx = ctx_for("public");
    pgr_schema_cache *sc = pgr_ctx_schema(ctx);
    const pgr_table *t = table_of(sc, "sensors_twice");
    ck_assert_uint_eq(t->n_pk, 1);
    ck_assert_str_eq(t->pk[0], "a");
    pgr_schema_cache_release(sc);
    expect_code(ctx, "/sensor_tags", "select=sensors_twice(*)", 300, "PGRST201");
    /* findRel: the hint names the view column on the target side */
    expect(ctx, "/sensor_tags", "select=id,sensors_twice!a(name)", 200,
           "[{\"id\":1,\"sensors_twice\":{\"name\": \"north\"}}]");
    pgrest_ctx_free(ctx);
}
END_TEST

/* allViewsKeyDependencies: a composite FK between two views with renamed
 * columns, one of them a view over a view in db-extra-search-path (the
 * recursion follows views of the exposed and extra schemas only). */
START_TEST(composite_fk_through_views_and_extra_search_path)
{
    pgrest_ctx *ctx = ctx_for("introspect_extra");
    pgr_schema_cache *sc = pgr_ctx_schema(ctx);
    const pgr_table *st = table_of(sc, "stations");
    ck_assert_uint_eq(st->n_pk, 2);
    ck_assert_str_eq(st->pk[0], "station_code");
    ck_assert_str_eq(st->pk[1], "station_num");
    pgr_schema_cache_release(sc);
    expect(ctx, "/samples", "select=id,stations(name)&order=id", 200,
           "[{\"id\":10,\"stations\":{\"name\": \"Xavier\"}}, \n"
           " {\"id\":11,\"stations\":{\"name\": \"Yonder\"}}]");
    expect(ctx, "/stations", "select=name,samples(id)&order=name", 200,
           "[{\"name\":\"Xavier\",\"samples\":[{\"id\": 10}]}, \n"
           " {\"name\":\"Yonder\",\"samples\":[{\"id\": 11}]}]");
    pgrest_ctx_free(ctx);

    ctx = ctx_for("public"); /* the middle view is not followed */
    sc = pgr_ctx_schema(ctx);
    ck_assert_uint_eq(table_of(sc, "stations")->n_pk, 0);
    pgr_schema_cache_release(sc);
    expect_code(ctx, "/samples", "select=id,stations(name)", 400, "PGRST200");
    pgrest_ctx_free(ctx);
}
END_TEST

/* A self-referencing view: view -> same view is self (vw1 == vw2), so the
 * FK column names the parent and the view's name its children. */
START_TEST(self_referencing_view)
{
    pgrest_ctx *ctx = ctx_for("public");
    expect(ctx, "/nodes", "select=id,parent(id)&order=id", 200,
           "[{\"id\":1,\"parent\":null}, \n"
           " {\"id\":2,\"parent\":{\"id\": 1}}, \n"
           " {\"id\":3,\"parent\":{\"id\": 1}}]");
    expect(ctx, "/nodes", "select=id,nodes(id)&id=eq.1&nodes.order=id", 200,
           "[{\"id\":1,\"nodes\":[{\"id\": 2}, {\"id\": 3}]}]");
    pgrest_ctx_free(ctx);
}
END_TEST

static Suite *schema_introspect_suite(void)
{
    Suite *s = suite_create("schema_introspect");
    TCase *tc = tcase_create("introspect");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, table_pk_columns_by_name);
    tcase_add_test(tc, unnamed_argument_beside_named_ones);
    tcase_add_test(tc, setof_void_is_a_set_of_scalars);
    tcase_add_test(tc, computed_relationships_of_every_function);
    tcase_add_test(tc, junction_needs_its_fks_in_the_pk);
    tcase_add_test(tc, view_pk_column_referenced_twice);
    tcase_add_test(tc, composite_fk_through_views_and_extra_search_path);
    tcase_add_test(tc, self_referencing_view);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(schema_introspect_suite());
}
