#include "sql/emit_filter.h"

#include <stdio.h>
#include <string.h>

#include "plan/aggregate_names.h"
#include "sql/emit_embed.h"
#include "sql/emit_read.h"
#include "sql/emit_related_exists.h"
#include "util/error.h"

void pgr_emit_node_ref(pgr_sql *q, const pgr_read_node *node)
{
    if (node->sql_alias != NULL)
        pgr_sql_ident(q, node->sql_alias);
    else
        pgr_sql_qualified(q, node->table->schema, node->table->name);
}

static const pgr_column *column_of(const pgr_read_node *node, const char *name)
{
    return pgr_find_typed_column(node->table, name);
}

static void emit_json_path(pgr_sql *q, const pgr_json_op *op)
{
    for (; op != NULL; op = op->next) {
        pgr_sql_put(q, op->as_text ? "->>" : "->");
        /* keys stay untyped like PostgREST's unknown-typed literals, so
         * PostgreSQL resolves json ->/->> text and reports its own
         * operator errors; array indexes are integers */
        if (op->is_index)
            pgr_sql_param_cast(q, op->key, "integer");
        else
            pgr_sql_param(q, op->key);
    }
}

/* Rows of a CTE (returned by a write, or by a function) are records, so a
 * computed field f(table) cannot be reached by attribute notation on them:
 * the row is cast back to its table type first. */
static bool via_row_cast(const pgr_read_node *node, const pgr_field *f)
{
    return node->rows_are_records && node->table != NULL &&
           node->table->kind != 'F' && pgr_find_column(node->table, f->name) == NULL;
}

/* A json path reads json and jsonb columns directly (so their indexes
 * apply); every other value, of a known column or not, goes through
 * to_jsonb first (PostgREST Plan.resolveTypeOrUnknown). */
static bool path_via_jsonb(const pgr_read_node *node, const pgr_field *f)
{
    if (f->json_path == NULL)
        return false;
    const pgr_column *col = column_of(node, f->name);
    return col == NULL || col->nominal_type == NULL ||
           (strcmp(col->nominal_type, "json") != 0 &&
            strcmp(col->nominal_type, "jsonb") != 0);
}

void pgr_emit_field(pgr_sql *q, const pgr_read_node *node, const pgr_field *f)
{
    bool via_jsonb = path_via_jsonb(node, f);
    if (via_jsonb)
        pgr_sql_put(q, "to_jsonb(");
    if (via_row_cast(node, f)) {
        pgr_sql_put(q, "(");
        pgr_emit_node_ref(q, node);
        pgr_sql_put(q, "::");
        pgr_sql_qualified(q, node->table->schema, node->table->name);
        pgr_sql_put(q, ").");
    } else {
        pgr_emit_node_ref(q, node);
        pgr_sql_put(q, ".");
    }
    pgr_sql_ident(q, f->name);
    if (via_jsonb)
        pgr_sql_put(q, ")");
    emit_json_path(q, f->json_path);
}

static const char *operator_sql(pgr_operator op)
{
    switch (op) {
    case PGR_OP_EQ: return "=";
    case PGR_OP_NEQ: return "<>";
    case PGR_OP_GT: return ">";
    case PGR_OP_GTE: return ">=";
    case PGR_OP_LT: return "<";
    case PGR_OP_LTE: return "<=";
    case PGR_OP_LIKE: return "like";
    case PGR_OP_ILIKE: return "ilike";
    case PGR_OP_MATCH: return "~";
    case PGR_OP_IMATCH: return "~*";
    case PGR_OP_ISDISTINCT: return "IS DISTINCT FROM";
    case PGR_OP_CS: return "@>";
    case PGR_OP_CD: return "<@";
    case PGR_OP_OV: return "&&";
    case PGR_OP_SL: return "<<";
    case PGR_OP_SR: return ">>";
    case PGR_OP_NXR: return "&<";
    case PGR_OP_NXL: return "&>";
    case PGR_OP_ADJ: return "-|-";
    default: return "=";
    }
}

static const char *is_sql(pgr_is_value v)
{
    switch (v) {
    case PGR_IS_NULL: return " IS NULL";
    case PGR_IS_NOT_NULL: return " IS NOT NULL";
    case PGR_IS_TRUE: return " IS TRUE";
    case PGR_IS_FALSE: return " IS FALSE";
    case PGR_IS_UNKNOWN: return " IS UNKNOWN";
    }
    return " IS NULL";
}

static const char *fts_function(pgr_operator op)
{
    switch (op) {
    case PGR_OP_PLFTS: return "plainto_tsquery";
    case PGR_OP_PHFTS: return "phraseto_tsquery";
    case PGR_OP_WFTS: return "websearch_to_tsquery";
    default: return "to_tsquery";
    }
}

/* PostgREST wraps every known column whose base type is not tsvector in
 * to_tsvector(), json paths included; a name that is not a column (a
 * computed field) is used as it is (Plan.resolveTableFieldName). */
static bool needs_to_tsvector(const pgr_read_node *node, const pgr_field *f)
{
    const pgr_column *c = column_of(node, f->name);
    if (c == NULL || c->type == NULL)
        return false;
    return strcmp(c->type, "tsvector") != 0;
}

/* pgFmtFtsLang: the language is an untyped literal like the query, so
 * PostgreSQL resolves the overload (to_tsvector(regconfig, text|json|
 * jsonb)) and names `unknown` when none fits. */
static void emit_fts_language(pgr_sql *q, const char *language)
{
    if (language == NULL)
        return;
    pgr_sql_param(q, language);
    pgr_sql_put(q, ", ");
}

/* Where a filter applies: to the rows (WHERE; the count query's WHERE,
 * where embeds are not joined) or to the groups (HAVING, whose fields are
 * the select's aggregates: pgrest's extension, docs/aggregates.md). */
typedef enum filter_scope { SCOPE_WHERE, SCOPE_COUNT, SCOPE_HAVING } filter_scope;

/* The left side of a filter: a column (with its JSON path), or in HAVING
 * the aggregate the field names, checked by the plan */
static void emit_operand(pgr_sql *q, const pgr_read_node *node, const pgr_field *field,
                         filter_scope scope)
{
    if (scope == SCOPE_HAVING)
        pgr_emit_aggregate_value(q, node, pgr_find_aggregate_output(node, field->name));
    else
        pgr_emit_field(q, node, field);
}

static void emit_fts(pgr_sql *q, const pgr_read_node *node, const pgr_filter *f,
                     filter_scope scope)
{
    const pgr_op_expr *e = &f->expr;
    bool wrap = scope != SCOPE_HAVING && needs_to_tsvector(node, &f->field);
    if (wrap) {
        pgr_sql_put(q, "to_tsvector(");
        emit_fts_language(q, e->language);
    }
    emit_operand(q, node, &f->field, scope);
    if (wrap)
        pgr_sql_put(q, ")");
    pgr_sql_put(q, " @@ ");
    pgr_sql_put(q, fts_function(e->op));
    pgr_sql_put(q, "(");
    emit_fts_language(q, e->language);
    pgr_sql_param(q, e->value);
    pgr_sql_put(q, ")");
}

/* A domain with a `CREATE CAST (text AS domain)` function reads filter
 * values through it (PostgREST api/domain_representations, "Domain Filter
 * Format"); the column's type decides, with or without a json path
 * (Plan.resolveQueryInputField). */
static const char *input_function(const pgr_read_node *node, const pgr_field *f)
{
    if (node->schema == NULL)
        return NULL;
    const pgr_column *c = column_of(node, f->name);
    if (c == NULL || c->nominal_type == NULL)
        return NULL;
    const pgr_representation *r =
        pgr_find_representation(node->schema, "text", c->nominal_type);
    return r ? r->function : NULL;
}

/* like/ilike patterns and isdistinct values are left as untyped literals
 * (SqlFragment.pgFmtFilter), so e.g. ilike on a domain fails in
 * PostgreSQL; every other operator reads its value through the parser. */
static bool parses_value(pgr_operator op)
{
    switch (op) {
    case PGR_OP_LIKE: case PGR_OP_ILIKE: case PGR_OP_ISDISTINCT:
        return false;
    default:
        return true;
    }
}

static void emit_value(pgr_sql *q, const char *fn, const char *value)
{
    if (fn == NULL) {
        pgr_sql_param(q, value);
        return;
    }
    pgr_sql_qualified_text(q, fn);
    pgr_sql_put(q, "(");
    pgr_sql_param_cast(q, value, "text");
    pgr_sql_put(q, ")");
}

static void emit_in(pgr_sql *q, const pgr_read_node *node, const pgr_filter *f,
                    filter_scope scope)
{
    const char *fn = scope == SCOPE_HAVING ? NULL : input_function(node, &f->field);
    const char *array = pgr_pg_array_literal(q->arena, f->expr.list, f->expr.n_list);
    emit_operand(q, node, &f->field, scope);
    pgr_sql_put(q, " = ANY (");
    if (fn == NULL) {
        pgr_sql_param(q, array);
    } else {
        pgr_sql_put(q, "SELECT ");
        pgr_sql_qualified_text(q, fn);
        pgr_sql_put(q, "(unnest(");
        pgr_sql_param_cast(q, array, "text[]");
        pgr_sql_put(q, "))");
    }
    pgr_sql_put(q, ")");
}

static void emit_expr(pgr_sql *q, const pgr_read_node *node, const pgr_filter *f,
                      filter_scope scope)
{
    const pgr_op_expr *e = &f->expr;
    switch (e->op) {
    case PGR_OP_IS:
        emit_operand(q, node, &f->field, scope);
        pgr_sql_put(q, is_sql(e->is_value));
        return;
    case PGR_OP_IN:
        emit_in(q, node, f, scope);
        return;
    case PGR_OP_FTS: case PGR_OP_PLFTS: case PGR_OP_PHFTS: case PGR_OP_WFTS:
        emit_fts(q, node, f, scope);
        return;
    default:
        break;
    }
    const char *fn = scope != SCOPE_HAVING && parses_value(e->op)
                         ? input_function(node, &f->field) : NULL;
    emit_operand(q, node, &f->field, scope);
    pgr_sql_put(q, " ");
    pgr_sql_put(q, operator_sql(e->op));
    if (e->quant != PGR_QUANT_NONE) {
        pgr_sql_put(q, e->quant == PGR_QUANT_ANY ? " ANY (" : " ALL (");
        emit_value(q, fn, e->n_list > 0 || e->list != NULL
                              ? pgr_pg_array_literal(q->arena, e->list, e->n_list)
                              : e->value);
        pgr_sql_put(q, ")");
        return;
    }
    pgr_sql_put(q, " ");
    emit_value(q, fn, e->value);
}

/* count: inside readPlanToCountQuery, where embeds are not joined and a
 * null filter on an embed becomes [NOT] EXISTS (its count query). */
static void emit_filter_in(pgr_sql *q, const pgr_read_node *node,
                           const pgr_filter *f, filter_scope scope)
{
    if (scope != SCOPE_HAVING &&
        pgr_emit_embed_null_filter(q, node, f, scope == SCOPE_COUNT))
        return;
    if (f->expr.negated)
        pgr_sql_put(q, "NOT ");
    emit_expr(q, node, f, scope);
}

void pgr_emit_filter(pgr_sql *q, const pgr_read_node *node, const pgr_filter *f)
{
    emit_filter_in(q, node, f, SCOPE_WHERE);
}

static filter_scope where_scope(bool count)
{
    return count ? SCOPE_COUNT : SCOPE_WHERE;
}

void pgr_emit_filter_count(pgr_sql *q, const pgr_read_node *node,
                           const pgr_filter *f)
{
    emit_filter_in(q, node, f, SCOPE_COUNT);
}

static void emit_logic_in(pgr_sql *q, const pgr_read_node *node,
                          const pgr_logic_tree *t, filter_scope scope)
{
    if (t->is_leaf && t->relation != NULL) {
        pgr_emit_related_exists(q, node, t);
        return;
    }
    if (t->is_leaf) {
        emit_filter_in(q, node, &t->filter, scope);
        return;
    }
    if (t->negated)
        pgr_sql_put(q, "NOT ");
    pgr_sql_put(q, "(");
    if (t->children == NULL)
        pgr_sql_put(q, t->is_or ? "false" : "true");
    for (const pgr_logic_tree *c = t->children; c != NULL; c = c->next) {
        if (c != t->children)
            pgr_sql_put(q, t->is_or ? " OR " : " AND ");
        emit_logic_in(q, node, c, scope);
    }
    pgr_sql_put(q, ")");
}

void pgr_emit_logic_tree(pgr_sql *q, const pgr_read_node *node,
                         const pgr_logic_tree *t)
{
    emit_logic_in(q, node, t, SCOPE_WHERE);
}

void pgr_emit_having(pgr_sql *q, const pgr_read_node *node)
{
    for (size_t i = 0; i < node->n_having; i++) {
        pgr_sql_put(q, i == 0 ? " HAVING " : " AND ");
        emit_logic_in(q, node, node->having[i], SCOPE_HAVING);
    }
}

static bool emit_filters_in(pgr_sql *q, const pgr_read_node *node,
                            bool have_where, bool count)
{
    for (size_t i = 0; i < node->n_filters; i++) {
        pgr_sql_put(q, have_where ? " AND " : " WHERE ");
        have_where = true;
        emit_filter_in(q, node, node->filters[i], where_scope(count));
    }
    return have_where;
}

static bool emit_logic_trees_in(pgr_sql *q, const pgr_read_node *node,
                                bool have_where, bool count)
{
    for (size_t i = 0; i < node->n_logic; i++) {
        pgr_sql_put(q, have_where ? " AND " : " WHERE ");
        have_where = true;
        emit_logic_in(q, node, node->logic[i], where_scope(count));
    }
    return have_where;
}

/* A ReadPlan's where_: addLogicTrees prepends the and/or trees to the
 * filters addFilters put there, so they come first (which decides what
 * PostgreSQL reports when both are wrong). */
static void emit_where_in(pgr_sql *q, const pgr_read_node *node,
                          bool have_where, bool count)
{
    have_where = emit_logic_trees_in(q, node, have_where, count);
    emit_filters_in(q, node, have_where, count);
}

void pgr_emit_where(pgr_sql *q, const pgr_read_node *node, bool have_where)
{
    emit_where_in(q, node, have_where, false);
}

void pgr_emit_mutation_where(pgr_sql *q, const pgr_read_node *node, bool have_where)
{
    /* MutatePlan: the root filters are folded onto the logic trees */
    have_where = emit_filters_in(q, node, have_where, false);
    emit_logic_trees_in(q, node, have_where, false);
}

void pgr_emit_where_count(pgr_sql *q, const pgr_read_node *node,
                          bool have_where)
{
    emit_where_in(q, node, have_where, true);
}

static void emit_order_expr(pgr_sql *q, const pgr_read_node *node,
                            const pgr_order_term *t)
{
    if (t->by_aggregate) {
        /* the aggregate's output column: a bare name in ORDER BY reads
         * the select list first (PostgreSQL's SQL-92 rule) */
        pgr_sql_ident(q, t->field.name);
        return;
    }
    if (t->relation == NULL) {
        pgr_emit_field(q, node, &t->field);
        return;
    }
    /* order=rel(col): the to-one embed's lateral row, its column read
     * as an unknown field (no to_jsonb for a json path) */
    pgr_emit_embed_order_ref(q, node, t->relation);
    pgr_sql_put(q, ".");
    pgr_sql_ident(q, t->field.name);
    emit_json_path(q, t->field.json_path);
}

static void emit_order_modifiers(pgr_sql *q, const pgr_order_term *t)
{
    if (t->dir == PGR_ORDER_ASC)
        pgr_sql_put(q, " ASC");
    else if (t->dir == PGR_ORDER_DESC)
        pgr_sql_put(q, " DESC");
    if (t->nulls == PGR_NULLS_FIRST)
        pgr_sql_put(q, " NULLS FIRST");
    else if (t->nulls == PGR_NULLS_LAST)
        pgr_sql_put(q, " NULLS LAST");
}

/* addToManyOrderSelects: a to-many spread orders inside the aggregates
 * that build its arrays, over columns its subquery selects for that. */
static bool orders_in_aggregate(const pgr_read_node *node)
{
    return node->embed != NULL && node->embed->spread && !node->embed->is_to_one;
}

/* selOrdAlias: "<agg alias>_<column>_<i>", i counting the terms from 1 */
static const char *order_select_alias(pgr_sql *q, const pgr_embed *e,
                                      const pgr_order_term *t, int i)
{
    return pgr_asprintf(q->arena, "%s_%s_%d", e->agg_alias, t->field.name, i);
}

void pgr_emit_order(pgr_sql *q, const pgr_read_node *node)
{
    /* DISTINCT ON keeps each group's first row: the subquery must be
     * ordered even where the aggregate orders its arrays again */
    if (orders_in_aggregate(node) && node->n_distinct_on == 0)
        return;
    for (const pgr_order_term *t = node->order; t != NULL; t = t->next) {
        pgr_sql_put(q, t == node->order ? " ORDER BY " : ", ");
        emit_order_expr(q, node, t);
        emit_order_modifiers(q, t);
    }
}

void pgr_emit_spread_order_selects(pgr_sql *q, const pgr_read_node *node,
                                   bool *first)
{
    if (!orders_in_aggregate(node))
        return;
    int i = 1;
    for (const pgr_order_term *t = node->order; t != NULL; t = t->next, i++) {
        if (!*first)
            pgr_sql_put(q, ", ");
        *first = false;
        emit_order_expr(q, node, t);
        pgr_sql_put(q, " AS ");
        pgr_sql_ident(q, order_select_alias(q, node->embed, t, i));
    }
}

void pgr_emit_spread_aggregate_order(pgr_sql *q, const pgr_embed *e)
{
    int i = 1;
    for (const pgr_order_term *t = e->node->order; t != NULL; t = t->next, i++) {
        pgr_sql_put(q, t == e->node->order ? " ORDER BY " : ", ");
        pgr_sql_ident(q, e->agg_alias);
        pgr_sql_put(q, ".");
        pgr_sql_ident(q, order_select_alias(q, e, t, i));
        emit_order_modifiers(q, t);
    }
}

static char *long_text(pgrest_arena *a, long long v)
{
    return pgr_asprintf(a, "%lld", v);
}

void pgr_emit_range(pgr_sql *q, long long offset, long long limit,
                    long long max_rows)
{
    if (max_rows >= 0 && (limit < 0 || limit > max_rows))
        limit = max_rows;
    if (limit >= 0) {
        pgr_sql_put(q, " LIMIT ");
        pgr_sql_param_cast(q, long_text(q->arena, limit), "bigint");
    }
    if (offset > 0) {
        pgr_sql_put(q, " OFFSET ");
        pgr_sql_param_cast(q, long_text(q->arena, offset), "bigint");
    }
}
