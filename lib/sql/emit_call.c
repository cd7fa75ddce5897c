/* Function calls (PostgREST QueryBuilder callPlanToQuery,
 * Statements.mainCall):
 *
 *   WITH pgrst_call_source AS (SELECT pgrst_call.* FROM
 *          (SELECT * FROM json_to_record($1::json) AS _("a" integer)) pgrst_body,
 *          LATERAL "s"."f"("a" := pgrst_body."a") pgrst_call),
 *        pgrst_source AS (<read tree over pgrst_call_source>)
 *   SELECT <count>, <page count>, <body>, <response GUCs>
 *   FROM (SELECT * FROM pgrst_source) _postgrest_t
 *
 * A JSON body reaches the function as one JSON parameter typed by
 * json_to_record with the parameters' types; GET and form arguments as
 * one text parameter each, cast to its parameter's type ("a" := $1::int,
 * QueryBuilder fmtArgs). Either way the SQL text depends only on which
 * parameters are given, never on their values. */
#include <string.h>

#include "plan/call_plan.h"
#include "sql/emit_main.h"
#include "sql/emit_read.h"
#include "util/error.h"

static bool returns_scalar(const pgr_call_plan *cp)
{
    return cp->result == PGR_CALL_RESULT_SCALAR ||
           cp->result == PGR_CALL_RESULT_SETOF_SCALAR ||
           cp->result == PGR_CALL_RESULT_VOID;
}

/* "name" := pgrst_body."name", VARIADIC for the variadic param. */
static void emit_named_args(pgr_sql *q, const pgr_call_plan *cp)
{
    for (size_t i = 0; i < cp->n_params; i++) {
        const pgr_routine_param *p = cp->params[i];
        if (i > 0)
            pgr_sql_put(q, ", ");
        if (p->variadic)
            pgr_sql_put(q, "VARIADIC ");
        pgr_sql_ident(q, p->name);
        pgr_sql_put(q, " := pgrst_body.");
        pgr_sql_ident(q, p->name);
    }
}

static const char *param_type(const pgr_routine_param *p)
{
    return p->cast_type ? p->cast_type : p->type;
}

/* QueryBuilder.hs fmtArgs: "name" := $n::type; the VARIADIC values
 * arrive as a text[] cast to the parameter's array type. */
static void emit_direct_args(pgr_sql *q, const pgr_call_plan *cp,
                             const char *variadic)
{
    for (size_t i = 0; i < cp->n_params; i++) {
        const pgr_routine_param *p = cp->params[i];
        if (i > 0)
            pgr_sql_put(q, ", ");
        if (p->variadic)
            pgr_sql_put(q, "VARIADIC ");
        pgr_sql_ident(q, p->name);
        pgr_sql_put(q, " := ");
        if (p->variadic) {
            pgr_sql_param_cast(q, variadic, "text[]");
            pgr_sql_put(q, "::");
            pgr_sql_put(q, param_type(p));
        } else {
            pgr_sql_param_cast(q, cp->arg_values[i], param_type(p));
        }
    }
}

static void emit_args(pgr_sql *q, const pgr_call_plan *cp, const char *variadic)
{
    switch (cp->args) {
    case PGR_CALL_ARGS_DIRECT:
        emit_direct_args(q, cp, variadic);
        break;
    case PGR_CALL_ARGS_SINGLE:
        /* type text comes from the schema cache (format_type) */
        pgr_sql_param_cast(q, cp->arg_value, cp->routine->params[0].type);
        break;
    case PGR_CALL_ARGS_JSON:
        emit_named_args(q, cp);
        break;
    case PGR_CALL_ARGS_NONE:
        break;
    }
}

/* callIt: composite results expand to columns; scalars become one column
 * named pgrst_scalar; a domain over a composite needs (f()).*. */
static void emit_call_it(pgr_sql *q, const pgr_call_plan *cp, const char *variadic)
{
    const pgr_routine *r = cp->routine;
    if (cp->composite_alias)
        pgr_sql_put(q, "(SELECT (");
    else if (returns_scalar(cp))
        pgr_sql_put(q, "(SELECT ");
    pgr_sql_qualified(q, r->schema, r->name);
    pgr_sql_put(q, "(");
    emit_args(q, cp, variadic);
    pgr_sql_put(q, ")");
    if (cp->composite_alias)
        pgr_sql_put(q, ").*)");
    else if (returns_scalar(cp))
        pgr_sql_put(q, " pgrst_scalar)");
    pgr_sql_put(q, " pgrst_call");
}

/* fromJsonBodyF: the JSON args as one typed record; an array body is read
 * as a record set of which only the first object counts. */
static void emit_json_body(pgr_sql *q, const pgr_call_plan *cp)
{
    pgr_sql_put(q, cp->args_array ? "(SELECT * FROM json_to_recordset("
                                  : "(SELECT * FROM json_to_record(");
    pgr_sql_param_cast(q, cp->arg_value, "json");
    pgr_sql_put(q, ") AS _(");
    for (size_t i = 0; i < cp->n_params; i++) {
        const pgr_routine_param *p = cp->params[i];
        if (i > 0)
            pgr_sql_put(q, ", ");
        pgr_sql_ident(q, p->name);
        pgr_sql_put(q, " ");
        /* ppTypeMaxLength: char/bit params read as varying so that the
         * function, not the record, reports a too long value */
        pgr_sql_put(q, param_type(p));
    }
    pgr_sql_put(q, cp->args_array ? ") LIMIT 1) pgrst_body, LATERAL "
                                  : ")) pgrst_body, LATERAL ");
}

static void emit_call_query(pgr_sql *q, const pgr_call_plan *cp, const char *variadic)
{
    pgr_sql_put(q, returns_scalar(cp) ? "SELECT pgrst_call.pgrst_scalar FROM "
                                      : "SELECT pgrst_call.* FROM ");
    if (cp->args == PGR_CALL_ARGS_JSON)
        emit_json_body(q, cp);
    emit_call_it(q, cp, variadic);
}

/* SqlFragment.hs asJsonF / asJsonSingleF over the value of a scalar
 * function: json_agg of the value, json_strip_nulls for nulls=stripped. */
static const char *scalar_json(bool first, bool strip)
{
    if (first)
        return strip ? "coalesce(json_strip_nulls(json_agg(_postgrest_t.pgrst_scalar)->0)::text, 'null')"
                     : "coalesce((json_agg(_postgrest_t.pgrst_scalar)->0)::text, 'null')";
    return strip ? "coalesce(json_strip_nulls(json_agg(_postgrest_t.pgrst_scalar)), '[]')"
                 : "coalesce(json_agg(_postgrest_t.pgrst_scalar), '[]')";
}

/* The body (SqlFragment.hs handlerF with the routine): the JSON handlers
 * depend on the result shape, CSV and GeoJSON aggregate the rows as for
 * a table whatever the shape. */
static const char *call_body(const pgrest_query_plan *plan)
{
    const pgr_call_plan *cp = plan->call;
    if (plan->output == PGR_OUT_NONE || cp->result == PGR_CALL_RESULT_VOID)
        return "''::text";
    bool strip = plan->nulls_stripped;
    if (plan->output == PGR_OUT_OBJECT) {
        /* asJsonSingleF: the value of a scalar function, else the first
         * row (a SETOF scalar's row included) */
        return cp->result == PGR_CALL_RESULT_SCALAR ? scalar_json(true, strip)
                                                     : pgr_body_expression(plan);
    }
    if (plan->output != PGR_OUT_JSON)
        return pgr_body_expression(plan);
    /* asJsonF */
    switch (cp->result) {
    case PGR_CALL_RESULT_SCALAR:
        return scalar_json(true, strip);
    case PGR_CALL_RESULT_SETOF_SCALAR:
        return scalar_json(false, strip);
    case PGR_CALL_RESULT_ROW: {
        pgrest_query_plan one = *plan;
        one.output = PGR_OUT_OBJECT;
        return pgr_body_expression(&one);
    }
    default:
        return pgr_body_expression(plan);
    }
}

int pgr_emit_main_call(pgr_sql *q, const pgrest_ctx *ctx,
                       const pgrest_query_plan *plan, pgrest_statements *st,
                       pgrest_error *err)
{
    (void)ctx;
    const pgr_call_plan *cp = plan->call;
    if (cp == NULL || plan->read == NULL)
        return pgr_error_internal(err, "call plan missing");
    /* MainTx.hs actionResult for CallReadPlan condemns the transaction
     * when failNotSingular / failExceedsMaxAffectedPref fail: a writing
     * call ends only after the response checked the row count. */
    if (!plan->read_only && (plan->output == PGR_OUT_OBJECT || cp->check_max_affected))
        st->end_after_check = true;
    /* Preferences.hs shouldCount: exact or estimated; a call runs no
     * EXPLAIN, so count=planned gives no total (MainTx actionResult) */
    bool count = plan->count == PGR_PREF_COUNT_EXACT ||
                 plan->count == PGR_PREF_COUNT_ESTIMATED;
    /* SqlFragment.hs pageCountSelectF: a function returning a single
     * value or row counts as one row, whatever the filters left; countF
     * reuses it as the total when neither a range nor db-max-rows limits
     * the page */
    const char *page_count = cp->routine->returns_set ? "pg_catalog.count(_postgrest_t)" : "1";
    const pgr_read_node *root = plan->read;
    bool whole = plan->max_rows < 0 && root->offset == 0 && root->limit < 0;
    /* the VARIADIC values of GET / form args as one text[] literal */
    const char *variadic = NULL;
    if (cp->variadic_values != NULL &&
        (variadic = pgr_pg_array_literal(q->arena, cp->variadic_values,
                                         cp->n_variadic_values)) == NULL)
        return pgr_error_oom(err);
    pgr_sql_put(q, "WITH " PGR_CALL_SOURCE " AS (");
    emit_call_query(q, cp, variadic);
    pgr_sql_put(q, "), ");
    int rc = pgr_emit_source_ctes(q, plan, count, false,
                                  count && whole && !cp->routine->returns_set ? "1" : NULL,
                                  err);
    if (rc != PGREST_OK)
        return rc;
    pgr_sql_put(q, page_count);
    pgr_sql_put(q, " AS page_total, ");
    if (plan->output == PGR_OUT_CUSTOM)
        pgr_emit_body(q, plan);
    else
        pgr_sql_put(q, call_body(plan));
    pgr_sql_put(q, BODY_FROM_SOURCE);
    return PGREST_OK;
}
