/* The read tree for GET/HEAD (PostgREST Plan/ReadPlan.hs): one node per
 * relation, embeds as children, filters/order/range attached by path. */
#include <string.h>

#include "engine/stage_view.h"
#include "plan/aggregate_names.h"
#include "plan/distinct_plan.h"
#include "plan/embed.h"
#include "plan/plan.h"
#include "plan/fuzzy.h"
#include "util/error.h"

static const char *output_name(const pgr_select_item *it)
{
    if (it->alias != NULL)
        return it->alias;
    /* an aggregate is named after its function (api/aggregate_functions) */
    if (it->aggregate != NULL)
        return it->aggregate;
    if (it->field.json_path != NULL) {
        /* the last key that is not an array index (PostgREST's
         * fieldName for json paths), else the column itself */
        const char *name = it->field.name;
        for (const pgr_json_op *op = it->field.json_path; op; op = op->next)
            if (!op->is_index)
                name = op->key;
        return name;
    }
    return it->field.name;
}

/* The function of a `CREATE CAST (domain AS json)`: selected columns of
 * that domain are rendered through it (PostgREST api/domain_
 * representations), before any cast or aggregate is applied on top
 * (Plan.resolveOutputField, SqlFragment.pgFmtSelectItem). */
static const char *output_function(const pgr_schema_cache *sc,
                                   const pgr_column *c)
{
    if (c == NULL || c->nominal_type == NULL)
        return NULL;
    const pgr_representation *r = pgr_find_representation(sc, c->nominal_type, "json");
    return r ? r->function : NULL;
}

static bool has_output_functions(const pgr_schema_cache *sc, const pgr_table *t)
{
    for (size_t i = 0; t != NULL && t->kind != 'F' && i < t->n_columns; i++)
        if (output_function(sc, &t->columns[i]) != NULL)
            return true;
    return false;
}

static int add_field(pgrest_arena *a, const pgr_schema_cache *sc,
                     pgr_read_node *node, const pgr_select_item *it,
                     pgr_plan_field ***tail, pgrest_error *err)
{
    pgr_plan_field *f = PGR_NEW(a, pgr_plan_field);
    if (f == NULL)
        return pgr_error_oom(err);
    f->item = it;
    f->output_name = output_name(it);
    /* A name that is not a column may be a computed field f(row): the
     * relation-qualified reference "s"."t"."f" is PostgreSQL's attribute
     * notation for f("s"."t"), so it needs no special SQL (PostgREST
     * api/computed_fields). */
    if (node->table != NULL && it->field.name != NULL &&
        strcmp(it->field.name, "*") != 0)
        f->column = pgr_find_column(node->table, it->field.name);
    f->out_fn = output_function(sc, pgr_find_typed_column(node->table, it->field.name));
    **tail = f;
    *tail = &f->next;
    return PGREST_OK;
}

static bool path_equals(const pgr_embed_path *p, const char *const *names,
                        size_t n)
{
    if (p->n != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (strcmp(p->names[i], names[i]) != 0)
            return false;
    return true;
}

/* Filters, logic trees, order and limit/offset written for this node's
 * path (root: empty path). */
static int attach_params(pgrest_arena *a, const pgrest_api_request *api,
                         pgr_read_node *node, const char *const *path,
                         size_t depth, pgrest_error *err)
{
    const pgr_query_params *qp = &api->qp;
    node->offset = 0;
    node->limit = -1;
    /* Embedded nodes get their params from pgr_check_embed_params, which
     * resolves paths by alias or relation name (PostgREST updateNode). */
    if (depth > 0)
        return PGREST_OK;
    size_t nf = 0, nl = 0;
    for (const pgr_path_filter *f = qp->filters; f; f = f->next)
        nf += path_equals(&f->path, path, depth);
    for (const pgr_path_logic *l = qp->logic; l; l = l->next)
        nl += path_equals(&l->path, path, depth);
    node->filters = PGR_NEW_ARRAY(a, pgr_filter *, nf + 1);
    node->logic = PGR_NEW_ARRAY(a, pgr_logic_tree *, nl + 1);
    if (node->filters == NULL || node->logic == NULL)
        return pgr_error_oom(err);
    for (const pgr_path_filter *f = qp->filters; f; f = f->next)
        if (path_equals(&f->path, path, depth))
            node->filters[node->n_filters++] = (pgr_filter *)&f->filter;
    for (const pgr_path_logic *l = qp->logic; l; l = l->next)
        if (path_equals(&l->path, path, depth))
            node->logic[node->n_logic++] = l->tree;
    size_t nh = 0;
    for (const pgr_path_logic *h = qp->havings; h; h = h->next)
        nh += path_equals(&h->path, path, depth);
    if ((node->having = PGR_NEW_ARRAY(a, pgr_logic_tree *, nh + 1)) == NULL)
        return pgr_error_oom(err);
    for (const pgr_path_logic *h = qp->havings; h; h = h->next)
        if (path_equals(&h->path, path, depth))
            node->having[node->n_having++] = h->tree;
    /* addOrders folds right: the first order= is applied last and wins */
    for (const pgr_path_order *o = qp->orders; o && node->order == NULL; o = o->next)
        if (path_equals(&o->path, path, depth))
            node->order = o->terms;
    node->offset = api->range_offset;
    node->limit = api->range_limit;
    for (const pgr_path_distinct *d = qp->distincts; d; d = d->next) {
        int rc = d->path.n == 0 ? pgr_plan_distinct(a, node, d, err) : PGREST_OK;
        if (rc != PGREST_OK)
            return rc;
    }
    return PGREST_OK;
}

/* "*" over a relation with represented domains lists every column, so
 * each can go through its function (PostgREST ReadPlan expandStars). */
static int expand_star(pgrest_arena *a, const pgr_schema_cache *sc,
                       pgr_read_node *node, pgr_plan_field ***ftail,
                       pgrest_error *err)
{
    for (size_t i = 0; i < node->table->n_columns; i++) {
        pgr_select_item *it = PGR_NEW(a, pgr_select_item);
        if (it == NULL)
            return pgr_error_oom(err);
        it->kind = PGR_SELECT_FIELD;
        it->field.name = node->table->columns[i].name;
        int rc = add_field(a, sc, node, it, ftail, err);
        if (rc != PGREST_OK)
            return rc;
    }
    return PGREST_OK;
}

static int add_star(pgrest_arena *a, const pgr_schema_cache *sc,
                    pgr_read_node *node, pgr_plan_field ***ftail,
                    pgrest_error *err)
{
    if (!has_output_functions(sc, node->table)) {
        if (!node->select_star)
            for (const pgr_plan_field *f = node->fields; f != NULL; f = f->next)
                node->star_after = f;
        node->select_star = true;
        return PGREST_OK;
    }
    return expand_star(a, sc, node, ftail, err);
}

int pgr_plan_node(pgrest_ctx *ctx, pgrest_arena *a,
                  const pgrest_api_request *api, const pgr_schema_cache *sc,
                  pgr_read_node *node, const pgr_select_item *items,
                  const char **path, size_t depth, pgrest_error *err)
{
    int rc;
    pgr_plan_field **ftail = &node->fields;
    pgr_embed **etail = &node->embeds;
    node->schema = sc;
    if (depth == 0 &&
        (rc = pgr_check_embed_paths(a, api, items, pgr_cfg(ctx, a)->url_use_legacy_target_names,
                                    err)) != PGREST_OK)
        return rc;
    if (items == NULL && (rc = add_star(a, sc, node, &ftail, err)) != PGREST_OK)
        return rc;
    for (const pgr_select_item *it = items; it != NULL; it = it->next) {
        switch (it->kind) {
        case PGR_SELECT_STAR:
            if ((rc = add_star(a, sc, node, &ftail, err)) != PGREST_OK)
                return rc;
            break;
        case PGR_SELECT_FIELD:
            if ((rc = add_field(a, sc, node, it, &ftail, err)) != PGREST_OK)
                return rc;
            break;
        case PGR_SELECT_EMBED:
        case PGR_SELECT_SPREAD:
            if ((rc = pgr_plan_embed(ctx, a, api, sc, node, it, path, depth,
                                     &etail, err)) != PGREST_OK)
                return rc;
            break;
        }
    }
    return attach_params(a, api, node, (const char *const *)path, depth, err);
}

static bool own_aggregate(const pgr_read_node *node)
{
    for (const pgr_plan_field *f = node->fields; f != NULL; f = f->next)
        if (f->item->aggregate != NULL)
            return true;
    return false;
}

/* Plan.hs expandStars: a "*" of a node that, or whose ancestor, selects
 * an aggregate lists the relation's columns, so the implicit GROUP BY
 * names each (`select=*,count()` counts per row). The columns take the
 * star's place. (A to-many spread, which
 * PostgREST expands too, keeps its star: sql/emit_embed.c lists it.) */
static int expand_aggregated_stars(pgrest_arena *a, const pgr_schema_cache *sc,
                                   pgr_read_node *node, bool has_agg,
                                   pgrest_error *err)
{
    has_agg = has_agg || own_aggregate(node);
    if (has_agg && node->select_star && node->table != NULL && node->table->kind != 'F') {
        pgr_plan_field **at = &node->fields;
        if (node->star_after != NULL)
            at = &((pgr_plan_field *)node->star_after)->next;
        pgr_plan_field *rest = *at, **tail = at;
        int rc = expand_star(a, sc, node, &tail, err);
        if (rc != PGREST_OK)
            return rc;
        *tail = rest;
        node->select_star = false;
        node->star_after = NULL;
    }
    /* an empty embed `rel()` selects nothing (its star is ours) */
    for (pgr_embed *e = node->embeds; e != NULL; e = e->next) {
        int rc = e->hidden ? PGREST_OK : expand_aggregated_stars(a, sc, e->node, has_agg, err);
        if (rc != PGREST_OK)
            return rc;
    }
    return PGREST_OK;
}

int pgr_plan_tree(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_api_request *api,
                  const pgr_schema_cache *sc, pgr_read_node *root,
                  const pgr_select_item *select, pgrest_error *err)
{
    const char *path[PGR_EMBED_MAX_DEPTH];
    int rc = pgr_plan_node(ctx, a, api, sc, root, select, path, 0, err);
    if (rc == PGREST_OK)
        rc = expand_aggregated_stars(a, sc, root, false, err);
    if (rc != PGREST_OK)
        return rc;
    rc = pgr_check_embed_params(a, api, pgr_cfg(ctx, a)->db_aggregates_enabled, root, err);
    if (rc != PGREST_OK)
        return rc;
    return pgr_resolve_aggregate_names(a, root, err);
}

int pgr_plan_read(pgrest_ctx *ctx, pgrest_arena *a,
                  const pgrest_api_request *api, pgrest_query_plan *plan,
                  pgrest_error *err)
{
    const pgr_schema_cache *sc = plan->schema;
    const pgr_table *t = pgr_find_table(sc, api->schema, api->name);
    if (t == NULL)
        return pgr_table_not_found(a, sc, api->schema, api->name, err);
    plan->table = t;
    pgr_read_node *root = PGR_NEW(a, pgr_read_node);
    if (root == NULL)
        return pgr_error_oom(err);
    root->table = t;
    root->name_in_request = api->name;
    int rc = pgr_plan_tree(ctx, a, api, sc, root, api->qp.select, err);
    if (rc != PGREST_OK)
        return rc;
    plan->read = root;
    plan->count = api->prefs.count;
    return PGREST_OK;
}
