/* Nested inserts (pgrest's extension; docs/nested-inserts.md): a POST body
 * key that is not a column of the target but names a relationship
 * embeddable from it (`tracks`, `tracks!album_id`, `songs:tracks`, or the
 * alias of an embed of select=) holds related rows.
 * One-to-many: inserted after their parent, the foreign key taken from the
 * parent's inserted row. Many-to-one: the referenced row is inserted first
 * (or, given by its key alone, only referenced), and its key fills the
 * row's foreign key. Many-to-many: the target rows are inserted (or, given
 * by their key alone, only referenced) and the junction rows created.
 * PostgREST answers such a body PGRST204; every body it accepts plans
 * exactly as before. */
#ifndef PGR_NESTED_INSERT_H
#define PGR_NESTED_INSERT_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/stage_view.h"
#include "plan/plan.h"

/* The rows under one body key, at one level of the tree. */
typedef struct pgr_nested_insert {
    const char *key;                   /* the body key holding the rows */
    const pgr_relationship *rel;       /* parent table -> table */
    /* many-to-one (or one-to-one from the foreign key's side): written
     * before the row that references it */
    bool to_one;
    bool many_to_many;                 /* through rel->junction */
    const pgr_table *table;
    /* written columns: the union of the nested objects' keys that are
     * columns, in name order, without the foreign keys that related rows
     * fill (pgr_nested_fills_column) */
    const pgr_column **columns;
    size_t n_columns;
    int id;                            /* CTEs pgrst_rows_<id>, pgrst_ins_<id> */
    int parent_id;                     /* 0: the request's own rows */
    bool represented;                  /* read back by the representation */
    struct pgr_nested_insert *children;
    struct pgr_nested_insert *next;    /* siblings under the same parent */
} pgr_nested_insert;

/* Splits the body keys of a POST on table into columns and nested
 * relationships. keys[0..n) are the keys that are not columns of table.
 * Sets *out to the nested tree (NULL when there is none to plan). A key that names no relationship is
 * PostgREST's PGRST204 for it, unless written with a !hint (PGRST200); an
 * ambiguous one is PGRST201. */
int pgr_plan_nested_inserts(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_api_request *api,
                            const pgr_schema_cache *sc, const pgr_table *table,
                            const char *const *keys, size_t n, pgr_nested_insert **out,
                            pgrest_error *err);

/* Whether a POST's body keys (or ?columns=) may name relationships: a
 * JSON body and no ON CONFLICT resolution (a skipped parent row would
 * leave its children without their parent). */
bool pgr_nested_inserts_apply(const pgrest_api_request *api);

/* Whether column of a level's table is a foreign key that a nested
 * relationship fills: the one-to-many parent's (rel of the level itself)
 * or a many-to-one child's (under children). */
bool pgr_nested_fills_column(const pgr_relationship *own, const pgr_nested_insert *children,
                             const char *column);

/* The columns of the related row an object may name an existing row by
 * (many-to-one: the referenced key; many-to-many: the target's key the
 * junction references); NULL for one-to-many. */
const char *const *pgr_nested_reference_columns(const pgr_nested_insert *n, size_t *count);

/* The body again, as a tree released with the arena: the parser keeps
 * none (a big bulk body is scanned one element at a time); only a body
 * with nested rows gets here. It was validated already unless ?columns=
 * sent it unparsed (Payload.hs RawJSON): then 400 PGRST102 when it is not
 * an object or array. */
struct json_object;
int pgr_nested_parse_body(pgrest_arena *a, const char *json, int max_depth,
                          struct json_object **out, pgrest_error *err);

/* An object holding nothing but the reference columns names an existing
 * row: nothing is inserted for it (the SQL decides alike, emit_nested.c). */
bool pgr_nested_is_reference(struct json_object *row, const pgr_nested_insert *n);

/* The path of the nested row a PostgreSQL error (its SQLSTATE, table,
 * column and details) is about, for the error's details: "tracks[2]",
 * "[1].tracks[0].track_notes[1]", the level alone ("tracks") when no row
 * can be told; NULL when the error is not about a nested level's table
 * (plan/nested_error.c). */
const char *pgr_nested_error_path(pgrest_arena *a, const pgrest_query_plan *plan,
                                  const char *schema, const char *table,
                                  const char *sqlstate, const char *column,
                                  const char *detail);

/* Marks the embeds of the representation's tree that read what a nested
 * insert wrote: they read the insert's CTE instead of the table (a
 * statement's data-modifying CTEs are invisible to its other parts). */
int pgr_nested_bind_representation(pgrest_arena *a, pgr_nested_insert *nested,
                                   pgr_read_node *node, pgrest_error *err);

/* The name of the CTE holding n's inserted rows. */
const char *pgr_nested_insert_cte(pgrest_arena *a, const pgr_nested_insert *n);

#endif
