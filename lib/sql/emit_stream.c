/* Statements of a streamed read (sql/emit_stream.h). */
#include "sql/emit_stream.h"

#include "exec/stream.h"
#include "plan/call_plan.h"
#include "sql/emit_embed_text.h"
#include "sql/emit_main.h"
#include "sql/emit_read.h"
#include "sql/sql_builder.h"
#include "util/error.h"

/* A function's rows stream when the transaction only reads (its outcome
 * cannot change after the head), the result is a set of rows (a single
 * row or value is one JSON value, not an array of them), nothing checks
 * their number (max-affected), and the output is JSON or NDJSON: CSV and
 * GeoJSON of a call take their header / geometry from the function's
 * columns, not from the selected ones (asCsvF over pgrst_source). */
static bool call_streams(const pgrest_query_plan *plan)
{
    const pgr_call_plan *cp = plan->call;
    return cp != NULL && cp->routine != NULL && cp->routine->returns_set &&
           cp->result == PGR_CALL_RESULT_ROWS && !cp->check_max_affected &&
           plan->read_only && (plan->output == PGR_OUT_JSON || plan->output == PGR_OUT_NDJSON);
}

bool pgr_stream_eligible(const pgrest_query_plan *plan)
{
    pgr_stream_format format;
    if (plan->read == NULL || plan->api == NULL || plan->api->is_head ||
        plan->count != PGR_PREF_COUNT_NONE || !pgr_stream_format_of(plan, &format))
        return false;
    return plan->action == PGR_ACTION_READ ||
           (plan->action == PGR_ACTION_CALL && call_streams(plan));
}

/* What one row of the main statement carries: its JSON text (the
 * element the buffered aggregate would take), or for CSV the columns
 * themselves, encoded by exec/stream.c as record_out does. */
static const char *row_expression(const pgrest_query_plan *plan)
{
    switch (plan->output) {
    case PGR_OUT_CSV:
        return "_postgrest_t.*";
    case PGR_OUT_GEOJSON:
        return "ST_AsGeoJSON(_postgrest_t)::json::text";
    default:
        return plan->nulls_stripped ? "json_strip_nulls(to_json(_postgrest_t))::text"
                                    : "to_json(_postgrest_t)::text";
    }
}

void pgr_emit_stream_row(pgr_sql *q, const pgrest_query_plan *plan)
{
    if (q->embed_text)
        pgr_emit_row_text(q, plan->read);
    else
        pgr_sql_put(q, row_expression(plan));
}

/* Statements.hs mainRead's source, read row by row; for a call
 * (mainCall), the read node over the function's rows. */
static int emit_main(pgr_sql *q, const pgrest_query_plan *plan, pgrest_error *err)
{
    int rc;
    if (plan->action == PGR_ACTION_CALL) {
        if ((rc = pgr_emit_call_source(q, plan, err)) != PGREST_OK)
            return rc;
        pgr_sql_put(q, " SELECT ");
        pgr_emit_stream_row(q, plan);
        pgr_sql_put(q, " FROM (");
        if ((rc = pgr_emit_read_node(q, plan->read, plan->max_rows, err)) != PGREST_OK)
            return rc;
        pgr_sql_put(q, ") _postgrest_t");
        return PGREST_OK;
    }
    pgr_sql_put(q, "WITH pgrst_source AS (");
    if ((rc = pgr_emit_read_node(q, plan->read, plan->max_rows, err)) != PGREST_OK)
        return rc;
    pgr_sql_put(q, ") SELECT ");
    pgr_emit_stream_row(q, plan);
    pgr_sql_put(q, " FROM (SELECT * FROM pgrst_source) _postgrest_t");
    return PGREST_OK;
}

static pgr_stmt finished_stmt(pgr_stmt_role role, pgr_sql *q, bool prepare)
{
    return (pgr_stmt){.role = role, .sql = pgr_sb_finish(&q->sb), .params = q->params,
                      .n_params = q->n_params, .prepare = prepare};
}

int pgr_emit_stream_statements(pgrest_arena *a, const pgrest_statements *st,
                               pgrest_statements **out, pgrest_error *err)
{
    /* the main statement becomes two: the rows, then the response GUCs */
    pgrest_statements *copy = pgr_statements_rewrite(a, st, 1);
    if (copy == NULL)
        return pgr_error_oom(err);
    pgr_stmt *items = copy->items;
    for (size_t i = 0; i < st->n; i++) {
        const pgr_stmt *s = &st->items[i];
        if (s->role != PGR_STMT_MAIN) {
            items[copy->n++] = *s;
            continue;
        }
        pgr_sql main_q, gucs_q;
        pgr_sql_init(&main_q, a);
        main_q.embed_text = st->embed_text;
        int rc = emit_main(&main_q, st->plan, err);
        if (rc != PGREST_OK)
            return rc;
        items[copy->n++] = finished_stmt(PGR_STMT_MAIN, &main_q, s->prepare);
        pgr_sql_init(&gucs_q, a);
        pgr_sql_put(&gucs_q, "SELECT " RESPONSE_GUCS);
        items[copy->n++] = finished_stmt(PGR_STMT_GUCS, &gucs_q, s->prepare);
    }
    for (size_t i = 0; i < copy->n; i++)
        if (items[i].sql == NULL)
            return pgr_error_oom(err);
    *out = copy;
    return PGREST_OK;
}
