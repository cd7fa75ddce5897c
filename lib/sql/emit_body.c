/* The columns every main statement selects after its source: the body
 * aggregate for the negotiated output and the counts (PostgREST
 * Query/SqlFragment.hs asJsonF, customFuncF, Statements.hs countF). Reads,
 * writes and calls all use them, so they are here rather than in the
 * dispatching emit.c, which calls those actions' files. */
#include "sql/emit_body.h"

#include <string.h>

#include "sql/emit_filter.h"
#include "sql/emit_read.h"
#include "util/error.h"

/* SqlFragment.hs asJsonF / asJsonSingleF: nulls=stripped strips the
 * aggregate once (which also drops json_agg's separators). */
const char *pgr_body_expression(const pgrest_query_plan *plan)
{
    switch (plan->output) {
    case PGR_OUT_NONE:
        return "''::text";
    case PGR_OUT_OBJECT:
        return plan->nulls_stripped
                   ? "coalesce(json_strip_nulls(json_agg(_postgrest_t)->0), 'null')"
                   : "coalesce(json_agg(_postgrest_t)->0, 'null')";
    case PGR_OUT_GEOJSON:
        /* PostgREST SqlFragment asGeoJsonF */
        return "json_build_object('type', 'FeatureCollection', 'features',"
               " coalesce(json_agg(ST_AsGeoJSON(_postgrest_t)::json), '[]'))";
    case PGR_OUT_NDJSON:
        /* one JSON object per line, each line ended (docs/streaming.md) */
        return "coalesce(string_agg(to_json(_postgrest_t)::text, '\n') || '\n', '')";
    case PGR_OUT_CSV:
        /* SqlFragment.hs asCsvF: the header from the first row of
         * pgrst_source; the line ends are literals (constants to the
         * planner, as PostgREST's) */
        return "(SELECT coalesce(string_agg(a.k, ','), '') FROM (SELECT json_object_keys(r)::text AS k"
               " FROM (SELECT row_to_json(hh) AS r FROM pgrst_source AS hh LIMIT 1) s) a)"
               " || '\n' || coalesce(string_agg(substring(_postgrest_t::text, 2,"
               " length(_postgrest_t::text) - 2), '\n'), '')";
    default:
        return plan->nulls_stripped
                   ? "coalesce(json_strip_nulls(json_agg(_postgrest_t)), '[]')"
                   : "coalesce(json_agg(_postgrest_t), '[]')";
    }
}

/* SqlFragment.hs customFuncF: the handler over the rows cast to the
 * target's row type (the rows as they are for anyelement), or over the
 * single value of a scalar function; wrapped in the base type's send
 * function when the body is read as bytes (plan->body_bytes). */
static void emit_custom_body(pgr_sql *q, const pgrest_query_plan *plan)
{
    const pgr_media_handler *h = plan->handler;
    bool send = plan->body_bytes && h->send_fn != NULL &&
                (h->base_type == NULL || strcmp(h->base_type, "bytea") != 0);
    if (send) {
        /* introspection prints regproc with search_path '': unqualified
         * names are pg_catalog's */
        if (strchr(h->send_fn, '.') == NULL)
            pgr_sql_qualified(q, "pg_catalog", h->send_fn);
        else
            pgr_sql_qualified_text(q, h->send_fn);
        pgr_sql_put(q, "(");
    }
    pgr_sql_qualified(q, h->handler_schema, h->handler_name);
    if (plan->handler_on_scalar) {
        pgr_sql_put(q, "(_postgrest_t.pgrst_scalar)");
    } else if (h->any_element) {
        pgr_sql_put(q, "(_postgrest_t)");
    } else {
        pgr_sql_put(q, "(_postgrest_t::");
        pgr_sql_qualified(q, h->target_schema, h->target_name);
        pgr_sql_put(q, ")");
    }
    if (send)
        pgr_sql_put(q, ")");
}

void pgr_emit_body(pgr_sql *q, const pgrest_query_plan *plan)
{
    if (plan->output == PGR_OUT_CUSTOM && plan->handler != NULL)
        emit_custom_body(q, plan);
    else
        pgr_sql_put(q, pgr_body_expression(plan));
}

bool pgr_count_needs_cte(const pgrest_query_plan *plan)
{
    const pgr_read_node *root = plan->read;
    return plan->max_rows >= 0 || root->offset > 0 || root->limit >= 0;
}

int pgr_emit_count_total(pgr_sql *q, const pgrest_query_plan *plan,
                         bool cap_estimate, const char *page_count,
                         pgrest_error *err)
{
    bool count = plan->count == PGR_PREF_COUNT_EXACT ||
                 plan->count == PGR_PREF_COUNT_ESTIMATED;
    bool cte = count && pgr_count_needs_cte(plan);
    if (cte) {
        pgr_sql_put(q, ", pgrst_source_count AS (");
        int rc = pgr_emit_count_node(q, plan->read, err);
        if (rc != PGREST_OK)
            return rc;
        /* estimated: count exactly only up to db-max-rows + 1 */
        if (cap_estimate && plan->count == PGR_PREF_COUNT_ESTIMATED &&
            plan->max_rows >= 0)
            pgr_emit_range(q, 0, plan->max_rows + 1, -1);
        pgr_sql_put(q, ")");
    }
    pgr_sql_put(q, " SELECT ");
    pgr_sql_put(q, cte ? "(SELECT pg_catalog.count(*) FROM pgrst_source_count)"
                   : count ? page_count : "null::bigint");
    pgr_sql_put(q, " AS total_result_set, ");
    pgr_sql_put(q, page_count);
    pgr_sql_put(q, " AS page_total, ");
    return PGREST_OK;
}
