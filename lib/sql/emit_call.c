/* Function calls (PostgREST QueryBuilder callPlanToQuery,
 * Statements.mainCall):
 *
 *   WITH pgrst_source AS (SELECT pgrst_call.* FROM
 *          (SELECT $1 AS json_data) pgrst_payload,
 *          LATERAL (SELECT "a" FROM json_to_record(pgrst_payload.json_data)
 *                   AS _("a" integer) LIMIT 1) pgrst_body,
 *          LATERAL "s"."f"("a" := pgrst_body."a") pgrst_call)
 *   [, pgrst_source_count AS (<count query over pgrst_source>)]
 *   SELECT <count>, <page count>, <body>, <response GUCs>
 *   FROM (<read tree over "pgrst_source" AS "<table or function>">) _postgrest_t
 *
 * A JSON body reaches the function as one JSON parameter typed by
 * json_to_record(set) with the parameters' types; GET and form arguments as
 * one text parameter each, cast to its parameter's type ("a" := $1::int,
 * QueryBuilder fmtArgs). Either way the SQL text depends only on which
 * parameters are given (and whether the body is an array), never on their
 * values. The same shape as PostgREST's keeps EXPLAIN's costs the same. */
#include <string.h>

#include "plan/call_plan.h"
#include "sql/emit_embed_text.h"
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

/* fromJsonBodyF (no defaults, LIMIT 1): the JSON args as one typed
 * record, the first object of an array body. */
static void emit_json_body(pgr_sql *q, const pgr_call_plan *cp)
{
    pgr_sql_put(q, "(SELECT ");
    pgr_sql_param_cast(q, cp->arg_value, "json");
    pgr_sql_put(q, " AS json_data) pgrst_payload, LATERAL (SELECT ");
    for (size_t i = 0; i < cp->n_params; i++) {
        if (i > 0)
            pgr_sql_put(q, ", ");
        pgr_sql_ident(q, cp->params[i]->name);
    }
    pgr_sql_put(q, cp->args_array ? " FROM json_to_recordset(pgrst_payload.json_data) AS _("
                                  : " FROM json_to_record(pgrst_payload.json_data) AS _(");
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
    pgr_sql_put(q, ") LIMIT 1) pgrst_body, LATERAL ");
}

/* A set of column names kept sorted and unique (PostgREST's Set FieldName,
 * whose toList is in code point order: byte order of UTF-8). */
typedef struct name_set {
    const char **names;
    size_t n, cap;
    bool star;        /* "*" (or a column we cannot name): all columns */
} name_set;

static void name_set_add(name_set *set, pgrest_arena *a, const char *name)
{
    if (set->star)
        return;
    if (name == NULL || strcmp(name, "*") == 0) {
        set->star = true;
        return;
    }
    size_t i = 0;
    while (i < set->n && strcmp(set->names[i], name) < 0)
        i++;
    if (i < set->n && strcmp(set->names[i], name) == 0)
        return;
    if (set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 8;
        const char **grown = PGR_NEW_ARRAY(a, const char *, cap);
        if (grown == NULL) {
            set->star = true;   /* out of memory: the builder's sticky error reports it */
            return;
        }
        if (set->n > 0)
            memcpy(grown, set->names, set->n * sizeof *grown);
        set->names = grown;
        set->cap = cap;
    }
    memmove(set->names + i + 1, set->names + i, (set->n - i) * sizeof *set->names);
    set->names[i] = name;
    set->n++;
}

/* A name the read tree needs from the call: a column of the root's
 * relation (or any name when the columns are unknown). A root name that is
 * no column (a computed field, evaluated on whole rows here) needs all
 * columns; a name from an embedded node that is no root column is that
 * node's own, left out (PostgREST adds it too, and then fails). */
static void add_needed(name_set *set, pgrest_arena *a, const pgr_read_node *root,
                       bool at_root, const char *name)
{
    if (name != NULL && root->table != NULL && pgr_find_column(root->table, name) == NULL) {
        if (at_root)
            set->star = true;
        return;
    }
    name_set_add(set, a, name);
}

static void logic_field_names(name_set *set, pgrest_arena *a, const pgr_read_node *root,
                              bool at_root, const pgr_logic_tree *t)
{
    for (; t != NULL; t = t->next) {
        if (!t->is_leaf)
            logic_field_names(set, a, root, at_root, t->children);
        /* a related leaf (docs/embed-or.md) filters the embed's rows,
         * which need only the join columns returned_names adds */
        else if (t->relation == NULL)
            add_needed(set, a, root, at_root, t->filter.field.name);
    }
}

/* Plan.hs getFilterFieldNames: the filtered columns of every node of the
 * tree, embedded ones included. */
static void filter_field_names(name_set *set, pgrest_arena *a, const pgr_read_node *root,
                               const pgr_read_node *node)
{
    bool at_root = node == root;
    for (size_t i = 0; i < node->n_filters; i++)
        add_needed(set, a, root, at_root, node->filters[i]->field.name);
    for (size_t i = 0; i < node->n_logic; i++)
        logic_field_names(set, a, root, at_root, node->logic[i]);
    for (const pgr_embed *e = node->embeds; e != NULL; e = e->next)
        filter_field_names(set, a, root, e->node);
}

/* Plan.hs inferColsEmbedNeeds: the selected columns plus the parent-side
 * columns of the embeds' relationships; all columns for "*" or a
 * computed relationship. A field that is no column (a computed field) is
 * evaluated by the read tree on whole rows here, so it needs all columns
 * too. */
static void returned_names(name_set *set, pgrest_arena *a, const pgr_read_node *root)
{
    if (root->select_star)
        set->star = true;
    for (const pgr_plan_field *f = root->fields; f != NULL; f = f->next)
        name_set_add(set, a, f->column == NULL ? NULL : f->item->field.name);
    for (const pgr_embed *e = root->embeds; e != NULL; e = e->next) {
        const pgr_relationship *r = e->rel;
        if (r->is_computed) {
            set->star = true;
            continue;
        }
        size_t n = r->cardinality == PGR_REL_M2M ? r->n_jcols1 : r->n_cols;
        for (size_t i = 0; i < n; i++)
            name_set_add(set, a, r->cols[i]);
    }
}

/* The root's ordered columns. PostgREST leaves them out of returnedColumns,
 * so that ordering by a column that is not selected fails there with
 * 42703; pgrest returns them so that such a request works. */
static void order_field_names(name_set *set, pgrest_arena *a, const pgr_read_node *root)
{
    for (const pgr_order_term *o = root->order; o != NULL; o = o->next)
        if (o->relation == NULL && !o->by_aggregate)
            add_needed(set, a, root, true, o->field.name);
}

/* QueryBuilder.hs returnedColumns: the columns the read tree needs from
 * the call (returnings plus the filtered columns), or all of them. */
static void emit_returned_columns(pgr_sql *q, const pgrest_query_plan *plan)
{
    name_set set = {0};
    returned_names(&set, q->arena, plan->read);
    if (set.star) {
        pgr_sql_put(q, "pgrst_call.*");
        return;
    }
    if (set.n == 0) {
        pgr_sql_put(q, "*");
        return;
    }
    filter_field_names(&set, q->arena, plan->read, plan->read);
    order_field_names(&set, q->arena, plan->read);
    if (set.star) {
        pgr_sql_put(q, "pgrst_call.*");
        return;
    }
    for (size_t i = 0; i < set.n; i++) {
        if (i > 0)
            pgr_sql_put(q, ", ");
        pgr_sql_put(q, "pgrst_call.");
        pgr_sql_ident(q, set.names[i]);
    }
}

static void emit_call_query(pgr_sql *q, const pgrest_query_plan *plan,
                            const char *variadic)
{
    const pgr_call_plan *cp = plan->call;
    pgr_sql_put(q, "SELECT ");
    if (returns_scalar(cp))
        pgr_sql_put(q, "pgrst_call.pgrst_scalar");
    else
        emit_returned_columns(q, plan);
    pgr_sql_put(q, " FROM ");
    if (cp->args == PGR_CALL_ARGS_JSON)
        emit_json_body(q, cp);
    emit_call_it(q, cp, variadic);
}

/* SqlFragment.hs asJsonF / asJsonSingleF over the value of a scalar
 * function: json_agg of the value, json_strip_nulls for nulls=stripped. */
static const char *scalar_json(bool first, bool strip)
{
    if (first)
        return strip ? "coalesce(json_strip_nulls(json_agg(_postgrest_t.pgrst_scalar)->0), 'null')"
                     : "coalesce(json_agg(_postgrest_t.pgrst_scalar)->0, 'null')";
    return strip ? "coalesce(json_strip_nulls(json_agg(_postgrest_t.pgrst_scalar)), '[]')"
                 : "coalesce(json_agg(_postgrest_t.pgrst_scalar), '[]')";
}

/* The body (SqlFragment.hs handlerF with the routine): the JSON handlers
 * depend on the result shape, CSV and GeoJSON aggregate the rows as for
 * a table whatever the shape. */
static const char *call_body(const pgrest_query_plan *plan)
{
    const pgr_call_plan *cp = plan->call;
    /* a void function is a scalar one to the SQL (Routine.hs
     * funcReturnsScalar); only its response drops the body */
    if (plan->output == PGR_OUT_NONE)
        return "''::text";
    bool scalar = cp->result == PGR_CALL_RESULT_SCALAR || cp->result == PGR_CALL_RESULT_VOID;
    bool strip = plan->nulls_stripped;
    if (plan->output == PGR_OUT_OBJECT) {
        /* asJsonSingleF: the value of a scalar function, else the first
         * row (a SETOF scalar's row included) */
        return scalar ? scalar_json(true, strip)
                                                     : pgr_body_expression(plan);
    }
    if (plan->output != PGR_OUT_JSON)
        return pgr_body_expression(plan);
    /* asJsonF */
    switch (cp->result) {
    case PGR_CALL_RESULT_SCALAR:
    case PGR_CALL_RESULT_VOID:
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

int pgr_emit_call_source(pgr_sql *q, const pgrest_query_plan *plan, pgrest_error *err)
{
    const pgr_call_plan *cp = plan->call;
    /* the VARIADIC values of GET / form args as one text[] literal */
    const char *variadic = NULL;
    if (cp->variadic_values != NULL &&
        (variadic = pgr_pg_array_literal(q->arena, cp->variadic_values,
                                         cp->n_variadic_values)) == NULL)
        return pgr_error_oom(err);
    pgr_sql_put(q, "WITH pgrst_source AS (");
    emit_call_query(q, plan, variadic);
    pgr_sql_put(q, ")");
    return PGREST_OK;
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
    int rc = pgr_emit_call_source(q, plan, err);
    if (rc != PGREST_OK)
        return rc;
    /* SqlFragment.hs pageCountSelectF: a function returning a single
     * value or row counts as one row, whatever the filters left; a call
     * runs no EXPLAIN, so count=planned gives no total (MainTx
     * actionResult) */
    const char *page_count = cp->routine->returns_set ? "pg_catalog.count(_postgrest_t)" : "1";
    rc = pgr_emit_count_total(q, plan, false, page_count, err);
    if (rc != PGREST_OK)
        return rc;
    if (q->embed_text)
        pgr_emit_body_text(q, plan->read);
    else if (plan->output == PGR_OUT_CUSTOM)
        pgr_emit_body(q, plan);
    else
        pgr_sql_put(q, call_body(plan));
    pgr_sql_put(q, " AS body, " RESPONSE_GUCS ", " NOT_INSERTED " FROM (");
    if ((rc = pgr_emit_read_node(q, plan->read, plan->max_rows, err)) != PGREST_OK)
        return rc;
    pgr_sql_put(q, ") _postgrest_t");
    return PGREST_OK;
}
