/* Embedded resources as LATERAL subqueries, following PostgREST's
 * QueryBuilder (getJoins, getJoinSelects, readPlanToCountQuery):
 *
 *   to-one:   LEFT JOIN LATERAL (<child>) AS "a" ON TRUE
 *             select to_jsonb("a".*) AS "name"
 *   to-many:  LEFT JOIN LATERAL (SELECT jsonb_agg("a") AS "a"
 *                                FROM (<child>) AS "a") AS "a" ON TRUE
 *             select COALESCE("a"."a", '[]') AS "name"
 *   spread:   to-one lifts "a"."col"; to-many aggregates each column
 *             into its own array (jsonb_agg("a"."col")).
 *   !inner:   INNER JOIN LATERAL, ON "a"."a" IS NOT NULL for to-many.
 *
 * jsonb (as PostgREST) keeps embeds groupable for aggregates. PostgREST
 * writes row_to_json(..)::jsonb and json_agg(..)::jsonb: the same values,
 * built as jsonb directly instead of as text parsed again, which costs
 * PostgreSQL 0-11% less per embed request (bench/README.md, issue 34
 * item 4: 751 bodies over Chinook and hostile values, byte-identical).
 * Where the whole select tree allows it (sql/emit_embed_text.c), the
 * embeds are built as text in jsonb's bytes instead (q->embed_text). */
#include "sql/emit_embed.h"
#include "sql/emit_embed_text.h"

#include "plan/embed.h"
#include "sql/emit_filter.h"
#include "sql/emit_read.h"
#include "util/error.h"

/* ------------------------------------------------------------ spreads */

typedef struct name_list {
    const char **v;
    const pgr_plan_field **f;  /* the field behind a name, NULL for `*` */
    size_t n, cap;
    pgrest_arena *a;
} name_list;

static void add_name(name_list *l, const char *name, const pgr_plan_field *f)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        const char **v = pgr_realloc(l->a, l->v, sizeof(*v) * l->cap,
                                     sizeof(*v) * cap);
        const pgr_plan_field **fs = pgr_realloc(l->a, l->f, sizeof(*fs) * l->cap,
                                                sizeof(*fs) * cap);
        if (v == NULL || fs == NULL)
            return;  /* the arena is exhausted: the builder fails too */
        l->v = v;
        l->f = fs;
        l->cap = cap;
    }
    l->f[l->n] = f;
    l->v[l->n++] = name;
}

/* The output columns of a node's SELECT list, in emission order: `*`
 * (the relation's columns), fields, then embeds -- a nested spread's
 * columns lifted in place. */
static void add_star_names(const pgr_read_node *node, name_list *out)
{
    if (node->select_star && node->table != NULL)
        for (size_t i = 0; i < node->table->n_columns; i++)
            add_name(out, node->table->columns[i].name, NULL);
}

static void collect_names(const pgr_read_node *node, name_list *out)
{
    if (node->star_after == NULL)
        add_star_names(node, out);
    for (const pgr_plan_field *f = node->fields; f; f = f->next) {
        add_name(out, f->output_name, f);
        if (node->star_after == f)
            add_star_names(node, out);
    }
    for (const pgr_embed *e = node->embeds; e; e = e->next) {
        if (e->hidden)
            continue;
        if (e->spread)
            collect_names(e->node, out);
        else
            add_name(out, e->output_name, NULL);
    }
}

static name_list spread_names(pgr_sql *q, const pgr_embed *e)
{
    name_list l = {NULL, NULL, 0, 0, q->arena};
    if (e->spread && !e->hidden)
        collect_names(e->node, &l);
    return l;
}

/* hoistSpreadAggFunctions: aggregates in a to-one spread are computed by
 * the first ancestor that is not a to-one spread, over the lifted column
 * (the spread itself selects the plain value). */
bool pgr_embed_hoists(const pgr_read_node *node)
{
    return node->embed != NULL && node->embed->spread && node->embed->is_to_one;
}

static bool is_agg(const pgr_plan_field *f)
{
    return f != NULL && f->item->aggregate != NULL;
}

bool pgr_embed_has_hoisted_aggregate(pgr_sql *q, const pgr_read_node *node)
{
    for (const pgr_embed *e = node->embeds; e != NULL; e = e->next) {
        if (!e->spread || !e->is_to_one)
            continue;
        name_list names = spread_names(q, e);
        for (size_t i = 0; i < names.n; i++)
            if (is_agg(names.f[i]))
                return true;
    }
    return false;
}

/* ------------------------------------------------------------ pieces */

static void agg_col(pgr_sql *q, const pgr_embed *e, const char *col)
{
    pgr_sql_ident(q, e->agg_alias);
    pgr_sql_put(q, ".");
    pgr_sql_ident(q, col);
}

/* Null test of an embed's result: a to-one lateral row is NULL as a whole
 * when nothing matched (so a matched row of NULL columns still counts as
 * present, PostgREST RelatedQueriesSpec); a to-many aggregate is NULL when
 * there were no rows. */
static void emit_null_check(pgr_sql *q, const pgr_embed *e, bool is_null)
{
    if (e->is_to_one) {
        pgr_sql_ident(q, e->agg_alias);
        pgr_sql_put(q, is_null ? " IS NOT DISTINCT FROM NULL"
                               : " IS DISTINCT FROM NULL");
        return;
    }
    name_list names = spread_names(q, e);
    agg_col(q, e, names.n > 0 ? names.v[0] : e->agg_alias);
    pgr_sql_put(q, is_null ? " IS NULL" : " IS NOT NULL");
}

/* agg("a"."col") with the output cast; input casts were applied where
 * the spread selects the column. */
static void emit_hoisted_aggregate(pgr_sql *q, const pgr_embed *e,
                                   const char *col, const pgr_select_item *it)
{
    if (it->agg_cast != NULL)
        pgr_sql_put(q, "CAST(");
    pgr_sql_put(q, it->aggregate);
    pgr_sql_put(q, "(");
    agg_col(q, e, col);
    pgr_sql_put(q, ")");
    if (it->agg_cast != NULL) {
        pgr_sql_put(q, " AS ");
        pgr_sql_put(q, it->agg_cast);
        pgr_sql_put(q, ")");
    }
}

void pgr_emit_lifted_aggregate(pgr_sql *q, const pgr_read_node *node,
                               const pgr_plan_field *f)
{
    for (const pgr_embed *e = node->embeds; e != NULL; e = e->next) {
        if (!e->spread || !e->is_to_one)
            continue;
        name_list names = spread_names(q, e);
        for (size_t i = 0; i < names.n; i++)
            if (names.f[i] == f) {
                emit_hoisted_aggregate(q, e, names.v[i], f->item);
                return;
            }
    }
}

static void comma(pgr_sql *q, bool *first)
{
    if (!*first)
        pgr_sql_put(q, ", ");
    *first = false;
}

void pgr_emit_embed_selects(pgr_sql *q, const pgr_read_node *node, bool *first)
{
    for (const pgr_embed *e = node->embeds; e != NULL; e = e->next) {
        if (e->hidden)
            continue;
        if (e->spread) {
            name_list names = spread_names(q, e);
            for (size_t i = 0; i < names.n; i++) {
                comma(q, first);
                if (e->is_to_one && is_agg(names.f[i]) && !pgr_embed_hoists(node))
                    emit_hoisted_aggregate(q, e, names.v[i], names.f[i]->item);
                else if (!e->is_to_one) {
                    pgr_sql_put(q, "COALESCE(");
                    agg_col(q, e, names.v[i]);
                    pgr_sql_put(q, ", '[]')");
                } else {
                    agg_col(q, e, names.v[i]);
                }
                pgr_sql_put(q, " AS ");
                pgr_sql_ident(q, names.v[i]);
            }
            continue;
        }
        comma(q, first);
        if (e->is_to_one && q->embed_text) {
            pgr_emit_embed_text_object(q, e);
        } else if (e->is_to_one) {
            pgr_sql_put(q, "to_jsonb(");
            pgr_sql_ident(q, e->agg_alias);
            pgr_sql_put(q, ".*)");
        } else {
            pgr_sql_put(q, "COALESCE(");
            agg_col(q, e, e->agg_alias);
            pgr_sql_put(q, ", '[]')");
        }
        pgr_sql_put(q, " AS ");
        pgr_sql_ident(q, e->output_name);
    }
}

/* SELECT jsonb_agg(...) over the child rows of a to-many embed. */
static void emit_to_many_aggs(pgr_sql *q, const pgr_embed *e)
{
    name_list names = spread_names(q, e);
    pgr_sql_put(q, "SELECT ");
    if (names.n == 0) {
        pgr_sql_put(q, "jsonb_agg(");
        pgr_sql_ident(q, e->agg_alias);
        pgr_sql_put(q, ") AS ");
        pgr_sql_ident(q, e->agg_alias);
        return;
    }
    for (size_t i = 0; i < names.n; i++) {
        if (i > 0)
            pgr_sql_put(q, ", ");
        pgr_sql_put(q, "jsonb_agg(");
        agg_col(q, e, names.v[i]);
        pgr_emit_spread_aggregate_order(q, e);
        pgr_sql_put(q, ") AS ");
        pgr_sql_ident(q, names.v[i]);
    }
}

static int emit_join(pgr_sql *q, const pgr_embed *e, long long max_rows,
                     pgrest_error *err)
{
    bool inner = e->join == PGR_JOIN_INNER;
    pgr_sql_put(q, inner ? " INNER JOIN LATERAL (" : " LEFT JOIN LATERAL (");
    int rc;
    if (e->is_to_one) {
        rc = pgr_emit_read_node(q, e->node, max_rows, err);
    } else {
        if (q->embed_text)
            pgr_emit_embed_text_agg(q, e);
        else
            emit_to_many_aggs(q, e);
        pgr_sql_put(q, " FROM (");
        rc = pgr_emit_read_node(q, e->node, max_rows, err);
        pgr_sql_put(q, ") AS ");
        pgr_sql_ident(q, e->agg_alias);
    }
    if (rc != PGREST_OK)
        return rc;
    pgr_sql_put(q, ") AS ");
    pgr_sql_ident(q, e->agg_alias);
    pgr_sql_put(q, " ON ");
    /* A to-one subquery yields no row when nothing matches, so INNER JOIN
     * alone drops the parent; the to-many aggregate always yields one. */
    if (inner && !e->is_to_one)
        emit_null_check(q, e, false);
    else
        pgr_sql_put(q, "TRUE");
    return PGREST_OK;
}

int pgr_emit_embed_joins(pgr_sql *q, const pgr_read_node *node,
                         long long max_rows, pgrest_error *err)
{
    for (const pgr_embed *e = node->embeds; e != NULL; e = e->next) {
        int rc = emit_join(q, e, max_rows, err);
        if (rc != PGREST_OK)
            return rc;
    }
    return PGREST_OK;
}

/* ------------------------------------------------------------ FROM / WHERE */

/* A whole-row reference: PostgreSQL accepts a relation's alias or bare
 * name, not "schema"."table" (that is read as table.column). */
void pgr_emit_node_row(pgr_sql *q, const pgr_read_node *node)
{
    pgr_sql_ident(q, node->sql_alias != NULL ? node->sql_alias
                                             : node->table->name);
}

bool pgr_emit_embed_from(pgr_sql *q, const pgr_read_node *node)
{
    const pgr_embed *e = node->embed;
    if (e == NULL)
        return false;
    const pgr_relationship *r = e->rel;
    if (r->is_computed) {
        /* fromF: "s"."fn"(parent::"s"."t") -- the cast picks the overload
         * taking the parent's row type. */
        pgr_sql_qualified(q, r->function_schema, r->function_name);
        pgr_sql_put(q, "(");
        pgr_emit_node_row(q, node->parent);
        pgr_sql_put(q, "::");
        pgr_sql_qualified(q, r->table->schema, r->table->name);
        pgr_sql_put(q, ")");
    } else {
        pgr_sql_qualified(q, node->table->schema, node->table->name);
    }
    if (node->sql_alias != NULL) {
        pgr_sql_put(q, " AS ");
        pgr_sql_ident(q, node->sql_alias);
    }
    if (!r->is_computed && r->cardinality == PGR_REL_M2M) {
        pgr_sql_put(q, ", ");
        pgr_sql_qualified(q, r->junction->schema, r->junction->name);
    }
    return true;
}

static void junction_col(pgr_sql *q, const pgr_read_node *node, const pgr_relationship *r,
                         const char *col)
{
    if (node->junction_cte != NULL)
        pgr_sql_ident(q, node->junction_cte);
    else
        pgr_sql_qualified(q, r->junction->schema, r->junction->name);
    pgr_sql_put(q, ".");
    pgr_sql_ident(q, col);
}

static void node_col(pgr_sql *q, const pgr_read_node *node, const char *col)
{
    pgr_emit_node_ref(q, node);
    pgr_sql_put(q, ".");
    pgr_sql_ident(q, col);
}

static void and_sep(pgr_sql *q, bool *first)
{
    if (!*first)
        pgr_sql_put(q, " AND ");
    *first = false;
}

/* getJoinConditions: child.fcol = parent.col for each FK column pair
 * (toJoinCondition puts the embedded side first); for many-to-many the
 * junction's columns, the target's pairs before the source's; none for
 * computed (the function call already correlates). They follow the
 * node's filters (QueryBuilder.hs readPlanToQuery). */
bool pgr_emit_embed_join_condition(pgr_sql *q, const pgr_read_node *node,
                                   bool have_where)
{
    const pgr_embed *e = node->embed;
    if (e == NULL || e->rel->is_computed)
        return false;
    const pgr_relationship *r = e->rel;
    bool first = true;
    pgr_sql_put(q, have_where ? " AND " : " WHERE ");
    if (r->cardinality == PGR_REL_M2M) {
        for (size_t i = 0; i < r->n_jcols2; i++) {
            and_sep(q, &first);
            junction_col(q, node, r, r->jcols2[i]);
            pgr_sql_put(q, " = ");
            node_col(q, node, r->cols2[i]);
        }
        for (size_t i = 0; i < r->n_jcols1; i++) {
            and_sep(q, &first);
            junction_col(q, node, r, r->jcols1[i]);
            pgr_sql_put(q, " = ");
            node_col(q, node->parent, r->cols[i]);
        }
        return true;
    }
    for (size_t i = 0; i < r->n_cols; i++) {
        and_sep(q, &first);
        node_col(q, node, r->fcols[i]);
        pgr_sql_put(q, " = ");
        node_col(q, node->parent, r->cols[i]);
    }
    return true;
}

/* ------------------------------------------------------------ null filters */

/* Plan.hs addNullEmbedFilters: only `[not.]is.null` on an embed's name
 * tests the embed; any other filter on that name stays a column filter
 * (PostgreSQL reports the column if there is none). */
static const pgr_embed *null_filter_embed(const pgr_read_node *node,
                                          const pgr_filter *f)
{
    if (f->field.json_path != NULL || f->field.name == NULL ||
        f->expr.op != PGR_OP_IS || f->expr.is_value != PGR_IS_NULL)
        return NULL;
    return pgr_find_embed(node, f->field.name);
}

bool pgr_emit_embed_null_filter(pgr_sql *q, const pgr_read_node *node,
                                const pgr_filter *f, bool count)
{
    const pgr_embed *e = null_filter_embed(node, f);
    if (e == NULL)
        return false;
    bool want_null = f->expr.is_value == PGR_IS_NULL;
    if (f->expr.negated)
        want_null = !want_null;
    if (!count) {
        emit_null_check(q, e, want_null);
        return true;
    }
    pgr_sql_put(q, want_null ? "NOT EXISTS (" : "EXISTS (");
    pgrest_error ignored;
    /* only fails when the builder does, which the caller checks */
    (void)pgr_emit_count_node(q, e->node, &ignored);
    pgr_sql_put(q, ")");
    return true;
}

/* readPlanToCountQuery: an !inner embed keeps only parents for which its
 * own count query (join condition, filters, nested !inner) finds a row. */
int pgr_emit_embed_exists(pgr_sql *q, const pgr_read_node *node,
                          bool have_where, pgrest_error *err)
{
    for (const pgr_embed *e = node->embeds; e != NULL; e = e->next) {
        if (e->join != PGR_JOIN_INNER)
            continue;
        pgr_sql_put(q, have_where ? " AND EXISTS (" : " WHERE EXISTS (");
        have_where = true;
        int rc = pgr_emit_count_node(q, e->node, err);
        if (rc != PGREST_OK)
            return rc;
        pgr_sql_put(q, ")");
    }
    return PGREST_OK;
}

/* ------------------------------------------------------------ order / group */

void pgr_emit_embed_order_ref(pgr_sql *q, const pgr_read_node *node,
                              const char *relation)
{
    const pgr_embed *e = pgr_find_embed(node, relation);
    /* the planner rejected unknown relations (PGRST108) */
    pgr_sql_ident(q, e != NULL ? e->agg_alias : relation);
}

/* groupF: a JSON embed groups by its output column; a to-one spread by
 * each lifted column that is not aggregated here. */
void pgr_emit_embed_group_refs(pgr_sql *q, const pgr_read_node *node,
                               bool *first)
{
    for (const pgr_embed *e = node->embeds; e != NULL; e = e->next) {
        /* groupTermFromRelSelectField names a JSON embed even when it is
         * empty and not selected (PostgreSQL then reports the column) */
        if (!e->spread) {
            pgr_sql_put(q, *first ? " GROUP BY " : ", ");
            *first = false;
            pgr_sql_ident(q, e->output_name);
            continue;
        }
        name_list names = spread_names(q, e);
        for (size_t i = 0; i < names.n; i++) {
            if (e->is_to_one && is_agg(names.f[i]))
                continue;
            pgr_sql_put(q, *first ? " GROUP BY " : ", ");
            *first = false;
            agg_col(q, e, names.v[i]);
        }
    }
}
