#include "sql/emit_read.h"

#include <ctype.h>
#include <string.h>

#include "sql/emit_embed.h"
#include "sql/emit_embed_text.h"
#include "sql/emit_filter.h"
#include "util/error.h"

/* Type names in casts are written as SQL text (so `int`, `bigint[]`
 * work), hence restricted to PostgREST's [A-Za-z0-9_ $] plus [] here. */
static bool safe_type_name(const char *t)
{
    if (t == NULL || *t == '\0')
        return false;
    for (; *t; t++)
        if (!isalnum((unsigned char)*t) && strchr("_ $[]", *t) == NULL)
            return false;
    return true;
}

static int bad_cast(pgr_sql *q, const char *type, pgrest_error *err)
{
    return pgr_errorf(err, q->arena, 400, "PGRST100", NULL, NULL,
                      "invalid cast type: %s", type ? type : "");
}

static void emit_value_expr(pgr_sql *q, const pgr_read_node *node,
                            const pgr_plan_field *f)
{
    const pgr_select_item *it = f->item;
    if (f->computed != NULL) {
        pgr_sql_qualified(q, f->computed->schema, f->computed->name);
        pgr_sql_put(q, "(");
        pgr_emit_node_row(q, node);
        pgr_sql_put(q, ")");
        return;
    }
    pgr_emit_field(q, node, &it->field);
}

static bool is_count_star(const pgr_select_item *it)
{
    return it->field.name == NULL || strcmp(it->field.name, "*") == 0;
}

/* The value a field reads: through its domain's output function, then
 * its cast (PostgREST SqlFragment.pgFmtSelectItem). */
static void emit_cast_value(pgr_sql *q, const pgr_read_node *node,
                            const pgr_plan_field *f)
{
    const pgr_select_item *it = f->item;
    if (it->cast != NULL)
        pgr_sql_put(q, "CAST(");
    if (f->out_fn != NULL) {
        pgr_sql_qualified_text(q, f->out_fn);
        pgr_sql_put(q, "(");
    }
    emit_value_expr(q, node, f);
    if (f->out_fn != NULL)
        pgr_sql_put(q, ")");
    if (it->cast != NULL) {
        pgr_sql_put(q, " AS ");
        pgr_sql_put(q, it->cast);
        pgr_sql_put(q, ")");
    }
}

/* agg(value) with the output cast: count() counts rows */
static void emit_aggregate(pgr_sql *q, const pgr_read_node *node,
                           const pgr_plan_field *f)
{
    const pgr_select_item *it = f->item;
    if (it->agg_cast != NULL)
        pgr_sql_put(q, "CAST(");
    pgr_sql_put(q, it->aggregate);
    pgr_sql_put(q, "(");
    if (is_count_star(it))
        pgr_sql_put(q, "*");
    else
        emit_cast_value(q, node, f);
    pgr_sql_put(q, ")");
    if (it->agg_cast != NULL) {
        pgr_sql_put(q, " AS ");
        pgr_sql_put(q, it->agg_cast);
        pgr_sql_put(q, ")");
    }
}

void pgr_emit_aggregate_value(pgr_sql *q, const pgr_read_node *node,
                              const pgr_plan_field *f)
{
    for (const pgr_plan_field *own = node->fields; own != NULL; own = own->next)
        if (own == f) {
            emit_aggregate(q, node, f);
            return;
        }
    pgr_emit_lifted_aggregate(q, node, f);
}

int pgr_emit_select_field(pgr_sql *q, const pgr_read_node *node,
                          const pgr_plan_field *f, pgrest_error *err)
{
    const pgr_select_item *it = f->item;
    if (it->cast != NULL && !safe_type_name(it->cast))
        return bad_cast(q, it->cast, err);
    if (it->agg_cast != NULL && !safe_type_name(it->agg_cast))
        return bad_cast(q, it->agg_cast, err);
    if (it->aggregate != NULL && pgr_embed_hoists(node)) {
        /* the spread's ancestor aggregates this column; count() counts
         * the rows that matched */
        if (is_count_star(it))
            pgr_sql_put(q, "1");
        else
            emit_cast_value(q, node, f);
    } else if (it->aggregate != NULL) {
        emit_aggregate(q, node, f);
    } else {
        emit_cast_value(q, node, f);
    }
    pgr_sql_put(q, " AS ");
    pgr_sql_ident(q, f->output_name);
    return PGREST_OK;
}

/* Aggregated here: own aggregates (unless hoisted to an ancestor) or
 * aggregates hoisted from to-one spreads below. */
static bool has_aggregate(pgr_sql *q, const pgr_read_node *node)
{
    if (pgr_embed_hoists(node))
        return false;
    for (const pgr_plan_field *f = node->fields; f; f = f->next)
        if (f->item->aggregate != NULL)
            return true;
    return pgr_embed_has_hoisted_aggregate(q, node);
}

/* SqlFragment pgFmtGroup: a field with an alias -- its own, or the one
 * addAliases gives a JSON path or a domain representation -- groups by
 * that name, a plain column by its qualified reference (a bare name could
 * also be a column of an embed's lateral subquery). */
static void emit_group_term(pgr_sql *q, const pgr_read_node *node,
                            const pgr_plan_field *f)
{
    const pgr_select_item *it = f->item;
    if (it->alias != NULL || it->field.json_path != NULL || f->out_fn != NULL)
        pgr_sql_ident(q, f->output_name);
    else
        emit_value_expr(q, node, f);
}

/* Implicit GROUP BY: every non-aggregated output (PostgREST api/aggregate_
 * functions "Automatic GROUP BY"). */
void pgr_emit_group_by(pgr_sql *q, const pgr_read_node *node)
{
    if (!has_aggregate(q, node))
        return;
    bool first = true;
    for (const pgr_plan_field *f = node->fields; f; f = f->next) {
        if (f->item->aggregate != NULL)
            continue;
        pgr_sql_put(q, first ? " GROUP BY " : ", ");
        first = false;
        emit_group_term(q, node, f);
    }
    pgr_emit_embed_group_refs(q, node, &first);
}

static void emit_star(pgr_sql *q, const pgr_read_node *node, bool *first)
{
    if (!*first)
        pgr_sql_put(q, ", ");
    *first = false;
    pgr_emit_node_ref(q, node);
    pgr_sql_put(q, ".*");
}

int pgr_emit_select_fields(pgr_sql *q, const pgr_read_node *node, bool *first,
                           pgrest_error *err)
{
    if (node->select_star && node->star_after == NULL)
        emit_star(q, node, first);
    for (const pgr_plan_field *f = node->fields; f; f = f->next) {
        if (!*first)
            pgr_sql_put(q, ", ");
        *first = false;
        int rc = pgr_emit_select_field(q, node, f, err);
        if (rc != PGREST_OK)
            return rc;
        if (node->select_star && node->star_after == f)
            emit_star(q, node, first);
    }
    return PGREST_OK;
}

static int emit_select_list(pgr_sql *q, const pgr_read_node *node,
                            pgrest_error *err)
{
    bool first = true;
    int rc = pgr_emit_select_fields(q, node, &first, err);
    if (rc != PGREST_OK)
        return rc;
    pgr_emit_spread_order_selects(q, node, &first);
    pgr_emit_embed_selects(q, node, &first);
    if (q->embed_text && node->embed != NULL && node->embed->is_to_one)
        pgr_sql_put(q, ", true AS " PGR_EMBED_TEXT_MATCH);
    return PGREST_OK;
}

static void emit_from(pgr_sql *q, const pgr_read_node *node)
{
    pgr_sql_put(q, " FROM ");
    if (node->source_cte != NULL) {
        /* RPC: the rows of the call's CTE (sql/emit_call.c) */
        pgr_sql_ident(q, node->source_cte);
        if (node->junction_cte != NULL) {
            pgr_sql_put(q, " AS ");
            pgr_sql_ident(q, node->sql_alias);
            pgr_sql_put(q, ", ");
            pgr_sql_ident(q, node->junction_cte);
            return;
        }
        if (node->sql_alias == NULL || strcmp(node->sql_alias, node->source_cte) == 0)
            return;
    } else {
        if (pgr_emit_embed_from(q, node))
            return;
        pgr_sql_qualified(q, node->table->schema, node->table->name);
    }
    if (node->sql_alias != NULL) {
        pgr_sql_put(q, " AS ");
        pgr_sql_ident(q, node->sql_alias);
    }
}

/* distinct= (docs/distinct.md): "DISTINCT " or "DISTINCT ON (a, b) "
 * over the node's own columns (unknown ones are PostgreSQL's 42703). */
static void emit_distinct(pgr_sql *q, const pgr_read_node *node)
{
    if (node->distinct_all)
        pgr_sql_put(q, "DISTINCT ");
    if (node->n_distinct_on == 0)
        return;
    pgr_sql_put(q, "DISTINCT ON (");
    for (size_t i = 0; i < node->n_distinct_on; i++) {
        pgr_field f = {.name = node->distinct_on[i]};
        if (i > 0)
            pgr_sql_put(q, ", ");
        pgr_emit_field(q, node, &f);
    }
    pgr_sql_put(q, ") ");
}

/* The node's rows; unordered ones (no ORDER BY, no range) for a count. */
static int emit_rows(pgr_sql *q, const pgr_read_node *node, long long max_rows,
                     bool ordered, pgrest_error *err)
{
    pgr_sql_put(q, "SELECT ");
    emit_distinct(q, node);
    int rc = emit_select_list(q, node, err);
    if (rc != PGREST_OK)
        return rc;
    emit_from(q, node);
    if ((rc = pgr_emit_embed_joins(q, node, max_rows, err)) != PGREST_OK)
        return rc;
    pgr_emit_where(q, node, false);
    pgr_emit_embed_join_condition(q, node, node->n_filters > 0 || node->n_logic > 0);
    pgr_emit_group_by(q, node);
    pgr_emit_having(q, node);
    if (!ordered)
        return PGREST_OK;
    pgr_emit_order(q, node);
    pgr_emit_range(q, node->offset, node->limit, max_rows);
    return PGREST_OK;
}

int pgr_emit_read_node(pgr_sql *q, const pgr_read_node *node,
                       long long max_rows, pgrest_error *err)
{
    return emit_rows(q, node, max_rows, true, err);
}

int pgr_emit_count_node(pgr_sql *q, const pgr_read_node *node,
                        pgrest_error *err)
{
    /* The root's count counts its distinct rows: SELECT DISTINCT compares
     * the whole select list, and a grouped DISTINCT ON its groups (having=
     * may drop some), so those are counted over the rows themselves; else
     * DISTINCT ON needs only its columns. An embed's count only tests
     * whether it has rows (EXISTS), which distinct does not change. */
    bool root = node->parent == NULL;
    if (root && (node->distinct_all || (node->n_distinct_on > 0 && has_aggregate(q, node))))
        return emit_rows(q, node, -1, false, err);
    pgr_sql_put(q, "SELECT ");
    if (root)
        emit_distinct(q, node);
    pgr_sql_put(q, "1");
    emit_from(q, node);
    pgr_emit_where_count(q, node, false);
    bool have_where = node->n_filters > 0 || node->n_logic > 0;
    have_where = pgr_emit_embed_join_condition(q, node, have_where) || have_where;
    return pgr_emit_embed_exists(q, node, have_where, err);
}
