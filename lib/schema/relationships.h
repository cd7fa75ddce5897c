/* Relationship derivation (PostgREST SchemaCache.hs: addViewM2OAndO2ORels,
 * addM2MRels, addInverseRels, getOverrideRelationshipsMap, removeInternal):
 * the snapshot's raw foreign keys, view column mappings and computed
 * relationships become the cache's pgr_relationship list. */
#ifndef PGR_RELATIONSHIPS_H
#define PGR_RELATIONSHIPS_H

#include <stdbool.h>
#include <stddef.h>

#include "schema/schema_cache.h"

/* One foreign key constraint: schema.table(columns) references
 * ref_schema.ref_table(ref_columns), columns in constraint order. */
typedef struct pgr_fk_def {
    const char *name;
    const char *schema, *table;
    const char *ref_schema, *ref_table;
    const char **columns;
    const char **ref_columns;
    size_t n_columns;
    bool one_to_one;
    /* the PK of schema.table, for a table outside the cache (a junction
     * in an internal schema); NULL when absent */
    const char **table_pk;
    size_t n_table_pk;
} pgr_fk_def;

/* view_schema.view.view_column comes from table_schema.table.table_column. */
typedef struct pgr_view_col_def {
    const char *view_schema, *view, *view_column;
    const char *table_schema, *table, *table_column;
} pgr_view_col_def;

/* function_schema.function(table) returns target rows. */
typedef struct pgr_computed_def {
    const char *function_schema, *function;
    const char *table_schema, *table;
    const char *target_schema, *target;
    bool to_one;
} pgr_computed_def;

typedef struct pgr_rel_input {
    const pgr_fk_def *fks;
    size_t n_fks;
    const pgr_view_col_def *view_cols;
    size_t n_view_cols;
    const pgr_computed_def *computed;
    size_t n_computed;
    /* NULL-terminated; NULL keeps every relation of the cache */
    const char *const *exposed_schemas;
} pgr_rel_input;

/* Fills sc->relationships, sc->n_relationships and sc->rel_offsets in
 * sc->arena. Requires sc->tables sorted by (schema, name) (pgr_find_table
 * works) with their pk lists. Strings of `in` must outlive the cache (they
 * are referenced, not copied). Returns PGREST_OK or pgr_error_oom(err). */
int pgr_derive_relationships(pgr_schema_cache *sc, const pgr_rel_input *in,
                             pgrest_error *err);

#endif
