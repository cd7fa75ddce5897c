/* INSERT / UPDATE / DELETE statements (PostgREST Query/QueryBuilder.hs
 * mutatePlanToQuery, Query/SqlFragment.hs fromJsonBodyF / locationF,
 * Query/Statements.hs mainWrite). The request body is one $n parameter
 * expanded by json_to_recordset in SQL: one statement whatever the number
 * of rows, so a failing row leaves nothing behind. */
#include <string.h>

#include "plan/mutate_plan.h"
#include "sql/emit_embed.h"
#include "sql/emit_filter.h"
#include "sql/emit_import.h"
#include "sql/emit_main.h"
#include "sql/emit_read.h"
#include "sql/emit_nested.h"
#include "sql/emit_stream.h"
#include "sql/emit_write.h"
#include "util/error.h"

#define SOURCE "pgrst_source"

/* pgrst.inserted counts inserted rows in upserts: +1 per candidate row,
 * -1 when ON CONFLICT updates instead (SqlFragment.hs
 * addConfigPgrstInserted). */
static void inserted_counter(pgr_sql *q, bool add)
{
    pgr_sql_put(q, "pg_catalog.set_config('pgrst.inserted', (coalesce(nullif("
                   "pg_catalog.current_setting('pgrst.inserted', true), '')::int, 0) ");
    pgr_sql_put(q, add ? "+ 1)::text, true) <> '0'" : "- 1)::text, true) <> '-1'");
}

static void column_list(pgr_sql *q, const pgr_mutate_plan *mp)
{
    for (size_t i = 0; i < mp->n_columns; i++) {
        if (i > 0)
            pgr_sql_put(q, ", ");
        pgr_sql_ident(q, mp->columns[i]->name);
    }
}

/* SqlFragment.hs fromJsonBodyF isJsonObject: the body looks like an
 * object when its first byte after insignificant whitespace is '{'; the
 * SQL then reads one record, else a recordset (a scalar body, which only
 * ?columns= lets through, fails there as it does in PostgREST). */
static bool body_is_object(const char *json)
{
    if (json == NULL)
        return false;
    while (*json == ' ' || *json == '\t' || *json == '\n' || *json == '\r')
        json++;
    return *json == '{';
}

/* FROM (SELECT $1 AS json_data) pgrst_payload, [defaults,] LATERAL (...)
 * pgrst_body, as SqlFragment.hs fromJsonBodyF builds it for writes: no
 * LIMIT (includeLimitOne is for calls), so an UPDATE's plan costs what
 * PostgREST's does. A streamed body's rows come from the table its COPY
 * filled, one object per row in the order they came: the same per-row
 * conversion as the object body's; or, typed rows, from its columns,
 * which COPY converted as json_to_record would. */
static void from_json_body(pgr_sql *q, const pgrest_query_plan *plan)
{
    const pgr_mutate_plan *mp = plan->mutate;
    if (plan->streamed_columns != NULL) {
        /* typed rows: every row has every written column, so no default
         * applies (missing=default); a column held as text is cast */
        pgr_sql_put(q, "FROM (SELECT ");
        for (size_t i = 0; i < plan->n_streamed_columns; i++) {
            const pgr_column *c = plan->streamed_columns[i];
            pgr_sql_put(q, i > 0 ? ", " : "");
            bool cast;
            pgr_sql_ident(q, c->name);
            pgr_import_column_type(plan->schema, c, &cast);
            if (cast) {
                pgr_sql_put(q, "::");
                pgr_sql_put(q, pgr_record_column_type(plan->schema, c));
                pgr_sql_put(q, " AS ");
                pgr_sql_ident(q, c->name);
            }
        }
        pgr_sql_put(q, " FROM " PGR_IMPORT_TABLE ") pgrst_body");
        return;
    }
    bool defaults = mp->apply_defaults;
    bool object = plan->streamed_body || body_is_object(plan->api->payload_json);
    const char *j = defaults ? "jsonb" : "json";
    const char *body = defaults ? "pgrst_json_defs.val" : "pgrst_payload.json_data";
    pgr_sql_put(q, "FROM (SELECT ");
    if (plan->streamed_body) {
        pgr_sql_put(q, "json_data::");
        pgr_sql_put(q, j);
        pgr_sql_put(q, " AS json_data FROM " PGR_IMPORT_TABLE ") pgrst_payload, ");
    } else {
        pgr_sql_param_cast(q, plan->api->payload_json, j);
        pgr_sql_put(q, " AS json_data) pgrst_payload, ");
    }
    if (defaults) {
        pgr_sql_put(q, object ? "LATERAL (SELECT " : "LATERAL (SELECT jsonb_agg(");
        pgr_emit_defaults_object(q, mp->columns, mp->n_columns);
        pgr_sql_put(q, object ? " || pgrst_payload.json_data AS val) pgrst_json_defs, "
                              : " || elem) AS val FROM jsonb_array_elements("
                                "pgrst_payload.json_data) elem) pgrst_json_defs, ");
    }
    pgr_sql_put(q, "LATERAL (SELECT ");
    if (mp->n_columns == 0) {
        /* no keys ({} or [{},...]): one row of defaults per object */
        if (object)
            pgr_sql_put(q, "FROM (values(1)) _");
        else {
            pgr_sql_put(q, "FROM ");
            pgr_sql_put(q, j);
            pgr_sql_put(q, "_array_elements(");
            pgr_sql_put(q, body);
            pgr_sql_put(q, ") _");
        }
    } else {
        pgr_sql_put(q, "* FROM ");
        pgr_sql_put(q, j);
        pgr_sql_put(q, object ? "_to_record(" : "_to_recordset(");
        pgr_sql_put(q, body);
        pgr_sql_put(q, ") AS _(");
        pgr_emit_record_columns(q, plan->schema, mp->columns, mp->n_columns);
        pgr_sql_put(q, ")");
    }
    pgr_sql_put(q, ") pgrst_body");
}

/* PUT: the body row must match the URL's PK filters, evaluated against
 * pgrst_body (QueryBuilder.hs putConditions). */
static void put_conditions(pgr_sql *q, const pgr_mutate_plan *mp)
{
    pgr_read_node body = *mp->target;
    body.sql_alias = "pgrst_body";
    for (size_t i = 0; i < body.n_filters; i++) {
        pgr_sql_put(q, " AND ");
        pgr_emit_filter(q, &body, body.filters[i]);
    }
}

static void on_conflict(pgr_sql *q, const pgr_mutate_plan *mp, bool is_put)
{
    if (mp->resolution == PGR_PREF_RESOLUTION_NONE || mp->n_conflict_cols == 0)
        return;
    pgr_sql_put(q, " ON CONFLICT(");
    for (size_t i = 0; i < mp->n_conflict_cols; i++) {
        if (i > 0)
            pgr_sql_put(q, ", ");
        pgr_sql_ident(q, mp->conflict_cols[i]);
    }
    pgr_sql_put(q, ") ");
    if (mp->resolution == PGR_PREF_RESOLUTION_IGNORE || mp->n_columns == 0) {
        pgr_sql_put(q, "DO NOTHING");
        return;
    }
    pgr_sql_put(q, "DO UPDATE SET ");
    for (size_t i = 0; i < mp->n_columns; i++) {
        if (i > 0)
            pgr_sql_put(q, ", ");
        pgr_sql_ident(q, mp->columns[i]->name);
        pgr_sql_put(q, " = EXCLUDED.");
        pgr_sql_ident(q, mp->columns[i]->name);
    }
    if (mp->count_inserted || is_put) {
        pgr_sql_put(q, " WHERE ");
        inserted_counter(q, false);
    }
}

static void emit_insert(pgr_sql *q, const pgrest_query_plan *plan)
{
    const pgr_mutate_plan *mp = plan->mutate;
    bool is_put = plan->action == PGR_ACTION_UPSERT;
    pgr_sql_put(q, "INSERT INTO ");
    pgr_sql_qualified(q, mp->table->schema, mp->table->name);
    if (mp->n_columns > 0) {
        pgr_sql_put(q, "(");
        column_list(q, mp);
        pgr_sql_put(q, ")");
    }
    pgr_sql_put(q, " SELECT ");
    pgr_emit_body_values(q, plan->schema, mp->columns, mp->n_columns);
    pgr_sql_put(q, mp->n_columns > 0 ? " " : "");
    from_json_body(q, plan);
    if (mp->count_inserted) {
        pgr_sql_put(q, " WHERE ");
        inserted_counter(q, true);
        if (is_put)
            put_conditions(q, mp);
    }
    on_conflict(q, mp, is_put);
    pgr_emit_returning(q, mp);
}

static bool is_row_key(const pgr_mutate_plan *mp, const char *name)
{
    for (size_t i = 0; i < mp->n_row_keys; i++)
        if (strcmp(mp->row_keys[i], name) == 0)
            return true;
    return false;
}

/* A per-row update (plan/per_row_update.h) joins on the key instead of
 * setting it; a body of nothing but the key sets it to itself, so the
 * matched rows are still the ones written (triggers, RETURNING). */
static bool sets_column(const pgr_mutate_plan *mp, const char *name)
{
    return !is_row_key(mp, name) || mp->n_row_keys == mp->n_columns;
}

/* " WHERE "s"."t"."k" = "pgrst_body"."k" AND ...": each row with its own
 * element */
static void row_key_join(pgr_sql *q, const pgr_mutate_plan *mp)
{
    for (size_t i = 0; i < mp->n_row_keys; i++) {
        pgr_sql_put(q, i == 0 ? " WHERE " : " AND ");
        pgr_sql_qualified(q, mp->table->schema, mp->table->name);
        pgr_sql_put(q, ".");
        pgr_sql_ident(q, mp->row_keys[i]);
        pgr_sql_put(q, " = \"pgrst_body\".");
        pgr_sql_ident(q, mp->row_keys[i]);
    }
}

static void emit_update(pgr_sql *q, const pgrest_query_plan *plan)
{
    const pgr_mutate_plan *mp = plan->mutate;
    const pgr_table *t = mp->table;
    if (mp->n_columns == 0) {
        /* UPDATE ... SET <nothing> is not SQL: select no rows with the
         * returned columns instead (QueryBuilder.hs, empty body) */
        pgr_sql_put(q, "SELECT ");
        if (mp->returning_star) {
            pgr_sql_ident(q, t->name);
            pgr_sql_put(q, ".*");
        } else if (mp->n_returning == 0)
            pgr_sql_put(q, "NULL");
        for (size_t i = 0; !mp->returning_star && i < mp->n_returning; i++) {
            if (i > 0)
                pgr_sql_put(q, ", ");
            pgr_sql_ident(q, t->name);
            pgr_sql_put(q, ".");
            pgr_sql_ident(q, mp->returning[i]);
        }
        pgr_sql_put(q, " FROM ");
        pgr_sql_qualified(q, t->schema, t->name);
        pgr_sql_put(q, " WHERE false");
        return;
    }
    pgr_sql_put(q, "UPDATE ");
    pgr_sql_qualified(q, t->schema, t->name);
    pgr_sql_put(q, " SET ");
    bool first = true;
    for (size_t i = 0; i < mp->n_columns; i++) {
        if (!sets_column(mp, mp->columns[i]->name))
            continue;
        pgr_sql_put(q, first ? "" : ", ");
        first = false;
        pgr_sql_ident(q, mp->columns[i]->name);
        pgr_sql_put(q, " = ");
        pgr_emit_body_value(q, plan->schema, mp->columns[i]);
    }
    pgr_sql_put(q, " ");
    from_json_body(q, plan);
    row_key_join(q, mp);
    pgr_emit_mutation_where(q, mp->target, mp->n_row_keys > 0);
    pgr_emit_returning(q, mp);
}

static void emit_delete(pgr_sql *q, const pgrest_query_plan *plan)
{
    const pgr_mutate_plan *mp = plan->mutate;
    pgr_sql_put(q, "DELETE FROM ");
    pgr_sql_qualified(q, mp->table->schema, mp->table->name);
    pgr_emit_mutation_where(q, mp->target, false);
    pgr_emit_returning(q, mp);
}

/* Statements.hs mainWrite locF: for an insert answering headers only,
 * "col=eq.value" (is.null for nulls) for the PK columns of the single
 * inserted row as a text[] (SqlFragment.hs locationF), else an empty
 * array (noLocationF). */
static void location(pgr_sql *q, const pgrest_query_plan *plan)
{
    const pgr_mutate_plan *mp = plan->mutate;
    /* PUT's Insert carries no PK columns (Plan.hs mutatePlan) */
    size_t n_pk = plan->action == PGR_ACTION_CREATE ? mp->table->n_pk : 0;
    if (!mp->location) {
        pgr_sql_put(q, NO_LOCATION);
        return;
    }
    pgr_sql_put(q, "CASE WHEN pg_catalog.count(_postgrest_t) = 1 THEN coalesce((WITH data AS "
                   "(SELECT row_to_json(_) AS row FROM " SOURCE " AS _ LIMIT 1) "
                   "SELECT array_agg(json_data.key || '=' || coalesce('eq.' || "
                   "json_data.value, 'is.null')) FROM data CROSS JOIN "
                   "json_each_text(data.row) AS json_data WHERE json_data.key IN (");
    for (size_t i = 0; i < n_pk; i++) {
        if (i > 0)
            pgr_sql_put(q, ", ");
        pgr_sb_put_literal(&q->sb, mp->table->pk[i]);
    }
    /* no primary key: IN ('') as fmtPKeys gives, which matches no key */
    if (n_pk == 0)
        pgr_sql_put(q, "''");
    pgr_sql_put(q, ")), " NO_LOCATION ") ELSE " NO_LOCATION " END");
}

/* The representation: the read tree over the returned rows, the CTE
 * taking the table's name (QueryBuilder.hs readPlanToQuery on
 * pgrst_source). */
static int representation(pgr_sql *q, const pgrest_query_plan *plan,
                          pgrest_error *err)
{
    const pgr_read_node *root = plan->read;
    if (plan->output == PGR_OUT_NONE || root == NULL) {
        pgr_sql_put(q, "SELECT * FROM " SOURCE);
        return PGREST_OK;
    }
    pgr_sql_put(q, "SELECT ");
    bool first = true;
    int rc = pgr_emit_select_fields(q, root, &first, err);
    if (rc != PGREST_OK)
        return rc;
    pgr_emit_embed_selects(q, root, &first);
    pgr_sql_put(q, " FROM \"" SOURCE "\" AS ");
    pgr_sql_ident(q, root->sql_alias);
    /* Plan.hs treeRestrictRange: db-max-rows does not limit the embeds
     * of a mutation's representation */
    rc = pgr_emit_embed_joins(q, root, -1, err);
    if (rc != PGREST_OK)
        return rc;
    pgr_emit_where(q, root, false);
    /* readPlanToQuery over the CTE: aggregates group as in a read */
    pgr_emit_group_by(q, root);
    pgr_emit_having(q, root);
    pgr_emit_order(q, root);
    return PGREST_OK;
}

/* WITH ... pgrst_source AS (<the write>): what the main SELECT reads */
static void write_ctes(pgr_sql *q, const pgrest_query_plan *plan)
{
    if (plan->mutate->nested != NULL) {
        pgr_emit_nested_insert(q, plan);
        return;
    }
    pgr_sql_put(q, "WITH " SOURCE " AS (");
    switch (plan->action) {
    case PGR_ACTION_CREATE:
    case PGR_ACTION_UPSERT:
        emit_insert(q, plan);
        break;
    case PGR_ACTION_UPDATE:
        emit_update(q, plan);
        break;
    default:
        emit_delete(q, plan);
        break;
    }
    pgr_sql_put(q, ")");
}

static bool needs_post_check(const pgrest_query_plan *plan)
{
    const pgr_mutate_plan *mp = plan->mutate;
    return mp->singular || mp->check_max_affected ||
           plan->action == PGR_ACTION_UPSERT;
}

static void inserted_count(pgr_sql *q, const pgr_mutate_plan *mp)
{
    pgr_sql_put(q, mp->count_inserted
                       ? "nullif(current_setting('pgrst.inserted', true), '')::int"
                       : "''");
}

/* A streamed body's representation (plan->streamed_representation): each
 * row's text, as a streamed read's, goes to the returned rows' table as
 * the write goes, in the representation's order, and the statement
 * answers the rest of what mainWrite does, with an empty body; the rows
 * are read back after it (sql/emit_import.c). */
static int streamed_representation(pgr_sql *q, const pgrest_query_plan *plan,
                                   pgrest_error *err)
{
    write_ctes(q, plan);
    pgr_sql_put(q, ", pgrst_lines AS (INSERT INTO " PGR_RETURNED_TABLE " SELECT ");
    pgr_emit_stream_row(q, plan);
    pgr_sql_put(q, " FROM (");
    int rc = representation(q, plan, err);
    if (rc != PGREST_OK)
        return rc;
    pgr_sql_put(q, ") _postgrest_t RETURNING 1) SELECT '' AS total_result_set, "
                   "pg_catalog.count(*) AS page_total, " NO_LOCATION " AS response_location, "
                   "'' AS body, " RESPONSE_GUCS ", ");
    inserted_count(q, plan->mutate);
    pgr_sql_put(q, " AS response_inserted FROM pgrst_lines");
    return PGREST_OK;
}

int pgr_emit_main_mutation(pgr_sql *q, const pgrest_ctx *ctx,
                           const pgrest_query_plan *plan,
                           pgrest_statements *st, pgrest_error *err)
{
    (void)ctx;
    const pgr_mutate_plan *mp = plan->mutate;
    if (mp == NULL)
        return pgr_error_internal(err, "mutation without a plan");
    if (plan->streamed_representation)
        return streamed_representation(q, plan, err);
    write_ctes(q, plan);
    /* Statements.hs mainWrite: no total ('' as text, as PostgREST's, which
     * keeps the plan's row width the same) */
    pgr_sql_put(q, " SELECT '' AS total_result_set, "
                   "pg_catalog.count(_postgrest_t) AS page_total, ");
    location(q, plan);
    pgr_sql_put(q, " AS response_location, ");
    pgr_emit_body(q, plan);
    pgr_sql_put(q, " AS body, " RESPONSE_GUCS ", ");
    inserted_count(q, mp);
    pgr_sql_put(q, " AS response_inserted FROM (");
    int rc = representation(q, plan, err);
    if (rc != PGREST_OK)
        return rc;
    pgr_sql_put(q, ") _postgrest_t");
    if (needs_post_check(plan))
        st->end_after_check = true;
    return PGREST_OK;
}
