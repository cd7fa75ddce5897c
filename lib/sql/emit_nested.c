/* A POST with nested rows (plan/nested_insert.h) as one statement of
 * data-modifying CTEs, so the request keeps its one pipeline and a
 * failing row anywhere leaves nothing behind:
 *
 *   WITH pgrst_payload AS (SELECT $1::json AS json_data),
 *   pgrst_rows_0 AS MATERIALIZED (<the body's objects WITH ORDINALITY>),
 *   pgrst_source AS (INSERT INTO <table> SELECT ... FROM pgrst_rows_0,
 *                    LATERAL json_to_record(elem) ... ORDER BY ord RETURNING ...),
 *   pgrst_keys_0 AS (SELECT row_number() OVER () AS ord, <keys> FROM pgrst_source),
 *   pgrst_rows_1 AS MATERIALIZED (<each parent's objects under its key,
 *                                  numbered in parent, then body order>),
 *   pgrst_ins_1 AS (INSERT INTO <child>(..., <fk>) SELECT ..., <parent key>
 *                   FROM pgrst_rows_1, pgrst_keys_0, LATERAL ... ORDER BY ord ...),
 *   ...
 *
 * An INSERT ... SELECT ... ORDER BY inserts, and returns, its rows in that
 * order, so the n-th returned row is the n-th object: that is how a child
 * finds its own parent's key. A parent row that is not inserted (a BEFORE
 * trigger returning NULL) would break the count, so its children's insert
 * then fails instead of binding them to another parent. */
#include <stdio.h>

#include "plan/nested_insert.h"
#include "sql/emit_write.h"

/* Objects under a key: an array's elements, one object, or none (null). */
static void rows_of(pgr_sql *q, const char *value)
{
    pgr_sql_put(q, "CASE json_typeof(");
    pgr_sql_put(q, value);
    pgr_sql_put(q, ") WHEN 'array' THEN ");
    pgr_sql_put(q, value);
    pgr_sql_put(q, " WHEN 'object' THEN json_build_array(");
    pgr_sql_put(q, value);
    pgr_sql_put(q, ") ELSE '[]'::json END");
}

static void put_id(pgr_sql *q, const char *prefix, int id)
{
    char buf[48];
    snprintf(buf, sizeof buf, "%s%d", prefix, id);
    pgr_sql_put(q, buf);
}

/* The rows of the level as a record, through missing=default's object
 * when the request asks for defaults. */
static void record_of(pgr_sql *q, const pgrest_query_plan *plan, int id,
                      const pgr_column *const *columns, size_t n)
{
    bool defaults = plan->mutate->apply_defaults;
    pgr_sql_put(q, ", LATERAL ");
    if (n == 0) {
        pgr_sql_put(q, "(SELECT) pgrst_body");
        return;
    }
    pgr_sql_put(q, defaults ? "jsonb_to_record(" : "json_to_record(");
    if (defaults) {
        pgr_emit_defaults_object(q, columns, n);
        pgr_sql_put(q, " || ");
    }
    put_id(q, "pgrst_rows_", id);
    pgr_sql_put(q, defaults ? ".elem::jsonb" : ".elem");
    pgr_sql_put(q, ") AS pgrst_body(");
    pgr_emit_record_columns(q, plan->schema, columns, n);
    pgr_sql_put(q, ")");
}

static void root_rows(pgr_sql *q, const pgrest_query_plan *plan)
{
    pgr_sql_put(q, "WITH pgrst_payload AS (SELECT ");
    pgr_sql_param_cast(q, plan->api->payload_json, "json");
    pgr_sql_put(q, " AS json_data), pgrst_rows_0 AS MATERIALIZED (SELECT pgrst_e.ord, "
                   "pgrst_e.elem FROM pgrst_payload, json_array_elements(");
    rows_of(q, "pgrst_payload.json_data");
    pgr_sql_put(q, ") WITH ORDINALITY AS pgrst_e(elem, ord))");
}

static void root_insert(pgr_sql *q, const pgrest_query_plan *plan)
{
    const pgr_mutate_plan *mp = plan->mutate;
    pgr_sql_put(q, ", pgrst_source AS (INSERT INTO ");
    pgr_sql_qualified(q, mp->table->schema, mp->table->name);
    if (mp->n_columns > 0) {
        pgr_sql_put(q, "(");
        for (size_t i = 0; i < mp->n_columns; i++) {
            if (i > 0)
                pgr_sql_put(q, ", ");
            pgr_sql_ident(q, mp->columns[i]->name);
        }
        pgr_sql_put(q, ")");
    }
    pgr_sql_put(q, " SELECT ");
    pgr_emit_body_values(q, plan->schema, mp->columns, mp->n_columns);
    pgr_sql_put(q, " FROM pgrst_rows_0");
    record_of(q, plan, 0, mp->columns, mp->n_columns);
    pgr_sql_put(q, " ORDER BY pgrst_rows_0.ord");
    pgr_emit_returning(q, mp);
    pgr_sql_put(q, ")");
}

static void inserted_rows(pgr_sql *q, int id)
{
    if (id == 0)
        pgr_sql_put(q, "pgrst_source");
    else
        put_id(q, "pgrst_ins_", id);
}

/* pgrst_keys_<id>: the inserted rows of a level, numbered in insertion
 * order, with the columns its children's foreign keys reference. */
static void level_keys(pgr_sql *q, int id, const pgr_nested_insert *children)
{
    pgr_sql_put(q, ", ");
    put_id(q, "pgrst_keys_", id);
    pgr_sql_put(q, " AS (SELECT row_number() OVER () AS ord");
    for (const pgr_nested_insert *n = children; n != NULL; n = n->next)
        for (size_t i = 0; i < n->rel->n_cols; i++) {
            pgr_sql_put(q, ", ");
            pgr_sql_ident(q, n->rel->cols[i]);
            pgr_sql_put(q, " AS ");
            char alias[64];
            snprintf(alias, sizeof alias, "pgrst_%d_%zu", n->id, i);
            pgr_sql_ident(q, alias);
        }
    pgr_sql_put(q, " FROM ");
    inserted_rows(q, id);
    pgr_sql_put(q, ")");
}

/* pgrst_rows_<id>: each parent's objects under the key, in parent order,
 * then in the order the body gives them. */
static void child_rows(pgr_sql *q, const pgr_nested_insert *n)
{
    pgr_sql_put(q, ", ");
    put_id(q, "pgrst_rows_", n->id);
    pgr_sql_put(q, " AS MATERIALIZED (SELECT pgrst_p.ord AS parent_ord, row_number() OVER "
                   "(ORDER BY pgrst_p.ord, pgrst_e.ord) AS ord, pgrst_e.elem FROM ");
    put_id(q, "pgrst_rows_", n->parent_id);
    /* the key is the request's: a parameter, like every value */
    pgr_sql_put(q, " AS pgrst_p, LATERAL (SELECT pgrst_p.elem -> ");
    pgr_sql_param_cast(q, n->key, "text");
    pgr_sql_put(q, " AS v) pgrst_v, json_array_elements(");
    rows_of(q, "pgrst_v.v");
    pgr_sql_put(q, ") WITH ORDINALITY AS pgrst_e(elem, ord))");
}

/* A parent row skipped by a trigger leaves fewer inserted rows than
 * objects: then the children cannot be bound to their parents, and the
 * statement fails (an unset setting is an error) rather than guessing. */
static void parents_all_inserted(pgr_sql *q, int parent_id)
{
    pgr_sql_put(q, " WHERE CASE WHEN (SELECT pg_catalog.count(*) FROM ");
    inserted_rows(q, parent_id);
    pgr_sql_put(q, ") = (SELECT pg_catalog.count(*) FROM ");
    put_id(q, "pgrst_rows_", parent_id);
    pgr_sql_put(q, ") THEN true ELSE pg_catalog.current_setting("
                   "'pgrst.nested_insert_parent_row_not_inserted')::boolean END");
}

static void child_returning(pgr_sql *q, const pgr_nested_insert *n)
{
    pgr_sql_put(q, " RETURNING ");
    if (n->represented) {
        pgr_sql_qualified(q, n->table->schema, n->table->name);
        pgr_sql_put(q, ".*");
        return;
    }
    bool first = true;
    for (const pgr_nested_insert *c = n->children; c != NULL; c = c->next)
        for (size_t i = 0; i < c->rel->n_cols; i++) {
            if (!first)
                pgr_sql_put(q, ", ");
            first = false;
            pgr_sql_qualified(q, n->table->schema, n->table->name);
            pgr_sql_put(q, ".");
            pgr_sql_ident(q, c->rel->cols[i]);
        }
    if (first)
        pgr_sql_put(q, "1");
}

static void child_insert(pgr_sql *q, const pgrest_query_plan *plan, const pgr_nested_insert *n)
{
    pgr_sql_put(q, ", ");
    put_id(q, "pgrst_ins_", n->id);
    pgr_sql_put(q, " AS (INSERT INTO ");
    pgr_sql_qualified(q, n->table->schema, n->table->name);
    pgr_sql_put(q, "(");
    for (size_t i = 0; i < n->n_columns; i++) {
        pgr_sql_ident(q, n->columns[i]->name);
        pgr_sql_put(q, ", ");
    }
    for (size_t i = 0; i < n->rel->n_cols; i++) {
        if (i > 0)
            pgr_sql_put(q, ", ");
        pgr_sql_ident(q, n->rel->fcols[i]);
    }
    pgr_sql_put(q, ") SELECT ");
    pgr_emit_body_values(q, plan->schema, n->columns, n->n_columns);
    for (size_t i = 0; i < n->rel->n_cols; i++) {
        char alias[64];
        snprintf(alias, sizeof alias, "pgrst_%d_%zu", n->id, i);
        pgr_sql_put(q, n->n_columns > 0 || i > 0 ? ", pgrst_k." : "pgrst_k.");
        pgr_sql_ident(q, alias);
    }
    pgr_sql_put(q, " FROM ");
    put_id(q, "pgrst_rows_", n->id);
    pgr_sql_put(q, " JOIN ");
    put_id(q, "pgrst_keys_", n->parent_id);
    pgr_sql_put(q, " AS pgrst_k ON pgrst_k.ord = ");
    put_id(q, "pgrst_rows_", n->id);
    pgr_sql_put(q, ".parent_ord");
    record_of(q, plan, n->id, n->columns, n->n_columns);
    parents_all_inserted(q, n->parent_id);
    pgr_sql_put(q, " ORDER BY ");
    put_id(q, "pgrst_rows_", n->id);
    pgr_sql_put(q, ".ord");
    child_returning(q, n);
    pgr_sql_put(q, ")");
}

/* A level's children, each followed by its own descendants. */
static void nested_levels(pgr_sql *q, const pgrest_query_plan *plan, int parent_id,
                          const pgr_nested_insert *children)
{
    if (children == NULL)
        return;
    level_keys(q, parent_id, children);
    for (const pgr_nested_insert *n = children; n != NULL; n = n->next) {
        child_rows(q, n);
        child_insert(q, plan, n);
        nested_levels(q, plan, n->id, n->children);
    }
}

void pgr_emit_nested_insert(pgr_sql *q, const pgrest_query_plan *plan)
{
    root_rows(q, plan);
    root_insert(q, plan);
    nested_levels(q, plan, 0, plan->mutate->nested);
}
