/* Resource embedding (PostgREST Plan/ReadPlan.hs: addRels + findRel,
 * updateNode, addRelatedOrders, addNullEmbedFilters; errors from Error.hs
 * NoRelBetween, AmbiguousRelBetween, NotEmbedded, RelatedOrderNotToOne,
 * UnacceptableFilter). */
#include "plan/embed.h"

#include <string.h>

#include "plan/distinct_plan.h"
#include "plan/fuzzyset.h"
#include "util/error.h"
#include "util/strbuf.h"

/* ------------------------------------------------------------ findRel */

static bool is_view(const pgr_table *t)
{
    return t->kind == 'v' || t->kind == 'm';
}

static bool has_fk(const pgr_relationship *r)
{
    return !r->is_computed && r->cardinality != PGR_REL_M2M;
}

/* matchConstraint: the FK name of an O2M/M2O/O2O relationship */
static bool match_constraint(const pgr_relationship *r, const char *name)
{
    return has_fk(r) && r->constraint_name != NULL &&
           strcmp(r->constraint_name, name) == 0;
}

/* matchFKSingleCol: the single FK column on the origin side */
static bool match_fk_col(const pgr_relationship *r, const char *name)
{
    return has_fk(r) && r->n_cols == 1 && strcmp(r->cols[0], name) == 0;
}

/* matchFKRefSingleCol: the single column on the target side */
static bool match_fk_ref_col(const pgr_relationship *r, const char *name)
{
    return has_fk(r) && r->n_cols == 1 && strcmp(r->fcols[0], name) == 0;
}

static bool match_junction(const pgr_relationship *r, const char *name)
{
    return r->cardinality == PGR_REL_M2M && !r->is_computed &&
           r->junction != NULL && strcmp(r->junction->name, name) == 0;
}

/* findRel's candidates for `target!hint`, branch by branch. Computed
 * relationships are found by function name (the hint plays no part). On a
 * self reference (one FK, an O2M and an M2O) the table name selects the
 * O2M (`children:family_tree(*)`), narrowed by a hint naming its FK
 * column (`auditees:organizations!auditor(*)`), and the FK column selects
 * the M2O (`parent(*)`). Otherwise the target names the table -- or,
 * deprecated since v11.1, the FK constraint or single FK column, never
 * through a view of the referenced table -- and a hint must name the FK,
 * an FK column on either side or the junction. */
static bool rel_matches(const pgr_relationship *r, const char *target,
                        const char *hint)
{
    if (r->is_computed)
        return strcmp(r->function_name, target) == 0;
    bool by_table = strcmp(r->foreign_table->name, target) == 0;
    if (r->is_self) {
        if (hint != NULL)
            return by_table && r->cardinality == PGR_REL_O2M &&
                   match_fk_ref_col(r, hint);
        return (by_table && r->cardinality == PGR_REL_O2M) ||
               (match_fk_col(r, target) && r->cardinality == PGR_REL_M2O);
    }
    if (hint != NULL)
        return by_table && (match_constraint(r, hint) || match_fk_col(r, hint) ||
                            match_fk_ref_col(r, hint) || match_junction(r, hint));
    return by_table || (!is_view(r->foreign_table) &&
                        (match_constraint(r, target) || match_fk_col(r, target)));
}

static const char *cardinality_name(pgr_cardinality c)
{
    switch (c) {
    case PGR_REL_M2O: return "many-to-one";
    case PGR_REL_O2M: return "one-to-many";
    case PGR_REL_O2O: return "one-to-one";
    case PGR_REL_M2M: return "many-to-many";
    }
    return "";
}

static void put_cols(pgr_sb *sb, const char *const *cols, size_t n)
{
    pgr_sb_putc(sb, '(');
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            pgr_sb_puts(sb, ", ");
        pgr_sb_puts(sb, cols[i]);
    }
    pgr_sb_putc(sb, ')');
}

/* Error.hs compressedRel: {"cardinality","embedding","relationship"} */
static void put_rel_detail(pgr_sb *sb, pgrest_arena *a, const pgr_relationship *r)
{
    if (r->is_computed) {
        pgr_sb_puts(sb, "{}");
        return;
    }
    pgr_sb sb2;
    pgr_sb_init(&sb2, a, 64);
    if (r->cardinality == PGR_REL_M2M) {
        pgr_sb_puts(&sb2, r->junction->name);
        pgr_sb_puts(&sb2, " using ");
        pgr_sb_puts(&sb2, r->junction_constraint1);
        put_cols(&sb2, r->jcols1, r->n_jcols1);
        pgr_sb_puts(&sb2, " and ");
        pgr_sb_puts(&sb2, r->junction_constraint2);
        put_cols(&sb2, r->jcols2, r->n_jcols2);
    } else {
        pgr_sb_puts(&sb2, r->constraint_name);
        pgr_sb_puts(&sb2, " using ");
        pgr_sb_puts(&sb2, r->table->name);
        put_cols(&sb2, r->cols, r->n_cols);
        pgr_sb_puts(&sb2, " and ");
        pgr_sb_puts(&sb2, r->foreign_table->name);
        put_cols(&sb2, r->fcols, r->n_cols);
    }
    pgr_sb_puts(sb, "{\"cardinality\":");
    pgr_sb_put_json_string(sb, cardinality_name(r->cardinality));
    pgr_sb_puts(sb, ",\"embedding\":");
    const char *emb = pgr_asprintf(a, "%s with %s", r->table->name,
                                   r->foreign_table->name);
    pgr_sb_put_json_string(sb, emb ? emb : "");
    pgr_sb_puts(sb, ",\"relationship\":");
    const char *text = pgr_sb_finish(&sb2);
    pgr_sb_put_json_string(sb, text ? text : "");
    pgr_sb_putc(sb, '}');
}

/* Error.hs relHint: 'target!fk' or 'target!junction' per candidate, an
 * empty entry for a computed relationship */
static void put_rel_hint(pgr_sb *sb, const pgr_relationship *r)
{
    if (r->is_computed)
        return;
    pgr_sb_putc(sb, '\'');
    pgr_sb_puts(sb, r->foreign_table->name);
    pgr_sb_putc(sb, '!');
    pgr_sb_puts(sb, r->cardinality == PGR_REL_M2M ? r->junction->name
                                                  : r->constraint_name);
    pgr_sb_putc(sb, '\'');
}

/* 300 PGRST201; details is a JSON array (error.c renders it as such). */
static int ambiguous(pgrest_arena *a, const char *origin, const char *target,
                     const pgr_relationship *const *rels, size_t n,
                     pgrest_error *err)
{
    pgr_sb details, hint;
    pgr_sb_init(&details, a, 256);
    pgr_sb_init(&hint, a, 128);
    pgr_sb_putc(&details, '[');
    pgr_sb_puts(&hint, "Try changing '");
    pgr_sb_puts(&hint, target);
    pgr_sb_puts(&hint, "' to one of the following: ");
    for (size_t i = 0; i < n; i++) {
        if (i > 0) {
            pgr_sb_putc(&details, ',');
            pgr_sb_puts(&hint, ", ");
        }
        put_rel_detail(&details, a, rels[i]);
        put_rel_hint(&hint, rels[i]);
    }
    pgr_sb_putc(&details, ']');
    pgr_sb_puts(&hint, ". Find the desired relationship in the 'details' key.");
    const char *d = pgr_sb_finish(&details), *h = pgr_sb_finish(&hint);
    if (d == NULL || h == NULL)
        return pgr_error_oom(err);
    return pgr_errorf(err, a, 300, "PGRST201", d, h,
                      "Could not embed because more than one relationship was found for '%s' and '%s'",
                      origin, target);
}

/* Data.FuzzySet's default minimum score (Fuzzy.get / Fuzzy.getOne). */
#define FUZZY_MIN_SCORE 0.33

/* Error.hs noRelBetweenHint: when the relationships map has the origin's
 * key, a close target among its relationships (an exact one gives no
 * hint); otherwise a close origin among the tables having a key in the
 * schema. */
static const char *no_rel_hint(pgrest_arena *a, const pgr_schema_cache *sc,
                               const char *schema, const char *origin,
                               const char *target)
{
    const pgr_table *t = pgr_find_table(sc, schema, origin);
    double score = 0;
    if (t != NULL && pgr_table_has_rel_key(sc, t, schema)) {
        size_t n = pgr_table_relationships(sc, t, NULL, 0), m = 0;
        const pgr_relationship **rels = PGR_NEW_ARRAY(a, const pgr_relationship *, n + 1);
        const char **names = PGR_NEW_ARRAY(a, const char *, n + 1);
        if (rels == NULL || names == NULL)
            return NULL;
        pgr_table_relationships(sc, t, rels, n);
        for (size_t i = 0; i < n; i++)
            if (strcmp(pgr_rel_key_schema(rels[i]), schema) == 0)
                names[m++] = rels[i]->foreign_table->name;
        const char *best = pgr_fuzzyset_best(a, target, names, m, FUZZY_MIN_SCORE, &score);
        return best != NULL && score < 1.0
            ? pgr_asprintf(a, "Perhaps you meant '%s' instead of '%s'.", best, target)
            : NULL;
    }
    const char **names = PGR_NEW_ARRAY(a, const char *, sc->n_tables + 1);
    size_t m = 0;
    if (names == NULL)
        return NULL;
    for (size_t i = 0; i < sc->n_tables; i++)
        if (pgr_table_has_rel_key(sc, &sc->tables[i], schema))
            names[m++] = sc->tables[i].name;
    const char *best = pgr_fuzzyset_best(a, origin, names, m, FUZZY_MIN_SCORE, &score);
    return best ? pgr_asprintf(a, "Perhaps you meant '%s' instead of '%s'.", best, origin)
                : NULL;
}

int pgr_no_relationship(pgrest_arena *a, const pgr_schema_cache *sc,
                        const char *schema, const char *origin_name,
                        const pgr_select_item *item, pgrest_error *err)
{
    const char *hint_part = item->hint
        ? pgr_asprintf(a, "' using the hint '%s", item->hint) : "";
    const char *details = pgr_asprintf(
        a, "Searched for a foreign key relationship between '%s' and '%s%s' in the schema '%s', but no matches were found.",
        origin_name, item->relation, hint_part ? hint_part : "", schema);
    const char *hint = no_rel_hint(a, sc, schema, origin_name, item->relation);
    return pgr_errorf(err, a, 400, "PGRST200", details, hint,
                      "Could not find a relationship between '%s' and '%s' in the schema cache",
                      origin_name, item->relation);
}

int pgr_find_relationship(pgrest_arena *a, const pgr_schema_cache *sc,
                          const char *schema, const pgr_read_node *node,
                          const pgr_select_item *item, const pgr_relationship **out,
                          pgrest_error *err)
{
    const pgr_table *origin = node->table;
    /* A call's rows that are no table's (a scalar, a composite type,
     * RETURNS TABLE's "record") are named as Plan.hs callReadPlan's
     * relIdentifier: the root's SQL alias */
    bool no_table = origin == NULL || origin->kind == 'F';
    const char *origin_name = !no_table ? origin->name
                              : node->sql_alias ? node->sql_alias
                              : node->name_in_request ? node->name_in_request : "";
    size_t n = origin ? pgr_table_relationships(sc, origin, NULL, 0) : 0;
    const pgr_relationship **all = PGR_NEW_ARRAY(a, const pgr_relationship *, n + 1);
    const pgr_relationship **found = PGR_NEW_ARRAY(a, const pgr_relationship *, n + 1);
    if (all == NULL || found == NULL)
        return pgr_error_oom(err);
    if (origin != NULL)
        pgr_table_relationships(sc, origin, all, n);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        /* Both ends must be in the request's schema (findRel's lookup key) */
        if (strcmp(pgr_rel_key_schema(all[i]), schema) != 0)
            continue;
        if (rel_matches(all[i], item->relation, item->hint))
            found[m++] = all[i];
    }
    if (m == 0)
        return pgr_no_relationship(a, sc, schema, origin_name, item, err);
    if (m > 1)
        return ambiguous(a, origin_name, item->relation, found, m, err);
    *out = found[0];
    return PGREST_OK;
}

/* ------------------------------------------------------------ addRels */

static bool rel_is_to_one(const pgr_relationship *r)
{
    return r->cardinality == PGR_REL_M2O || r->cardinality == PGR_REL_O2O;
}

/* Plan.hs generateRelSelectField rsEmptyEmbed (hasOnlyNullEmbed): an
 * embed selecting no columns, whose own embeds select none either, at any
 * depth (`rel()`, `rel(sub())`), only joins: it adds no output. */
static bool is_empty_embed(const pgr_select_item *item, const pgr_read_node *child)
{
    for (const pgr_select_item *it = item->children; it != NULL; it = it->next)
        if (it->kind == PGR_SELECT_FIELD || it->kind == PGR_SELECT_STAR)
            return false;
    for (const pgr_embed *e = child->embeds; e != NULL; e = e->next)
        if (!e->hidden)
            return false;
    return true;
}

int pgr_plan_embed(pgrest_ctx *ctx, pgrest_arena *a,
                   const pgrest_api_request *api, const pgr_schema_cache *sc,
                   pgr_read_node *node, const pgr_select_item *item,
                   const char **path, size_t depth, pgr_embed ***tail,
                   pgrest_error *err)
{
    const pgr_relationship *rel = NULL;
    int rc = pgr_find_relationship(a, sc, api->schema, node, item, &rel, err);
    if (rc != PGREST_OK)
        return rc;
    if (depth + 1 >= PGR_EMBED_MAX_DEPTH)
        return pgr_error(err, 400, "PGRST100", "Embedding is nested too deeply",
                         NULL, NULL);
    pgr_embed *e = PGR_NEW(a, pgr_embed);
    pgr_read_node *child = PGR_NEW(a, pgr_read_node);
    if (e == NULL || child == NULL)
        return pgr_error_oom(err);
    int cdepth = node->depth + 1;
    child->table = rel->foreign_table;
    child->depth = cdepth;
    /* addRels: a many-to-many target keeps its own name (the junction is
     * joined beside it, fromF), so PostgreSQL's errors name "tasks", not
     * an alias; every other embed is aliased table_depth. */
    bool unaliased = !rel->is_computed && rel->cardinality == PGR_REL_M2M;
    child->sql_alias = unaliased ? NULL
                                 : pgr_asprintf(a, "%s_%d", rel->foreign_table->name, cdepth);
    child->name_in_request = item->relation;
    child->alias_in_request = item->alias;
    child->parent = node;
    child->embed = e;
    e->rel = rel;
    e->node = child;
    e->output_name = item->alias ? item->alias : item->relation;
    e->join = item->join;
    e->spread = item->kind == PGR_SELECT_SPREAD;
    e->is_to_one = rel_is_to_one(rel);
    e->hidden = item->children == NULL;
    e->legacy_names = pgr_cfg(ctx, a)->url_use_legacy_target_names;
    /* addRels' aggAlias: origin, output name and depth, so two embeds of
     * one name clash as in PostgREST (42712) and errors name it alike. */
    e->agg_alias = pgr_asprintf(a, "%s_%s_%d", rel->table->name,
                                e->output_name, cdepth);
    if ((!unaliased && child->sql_alias == NULL) || e->agg_alias == NULL)
        return pgr_error_oom(err);
    /* Linked before recursing: siblings stay in request order. */
    **tail = e;
    *tail = &e->next;
    path[depth] = e->output_name;
    rc = pgr_plan_node(ctx, a, api, sc, child, item->children, path,
                       depth + 1, err);
    if (rc == PGREST_OK)
        e->hidden = is_empty_embed(item, child);
    return rc;
}

/* ------------------------------------------------------------ params */

const pgr_embed *pgr_find_embed(const pgr_read_node *node, const char *name)
{
    for (const pgr_embed *e = node->embeds; e != NULL; e = e->next)
        if (strcmp(e->output_name, name) == 0)
            return e;
    return NULL;
}

/* updateNode's findNode: with legacy target names the relation name also
 * matches an aliased embed; the first match wins. */
static pgr_read_node *find_child(const pgr_read_node *node, const char *name)
{
    for (const pgr_embed *e = node->embeds; e != NULL; e = e->next) {
        if (strcmp(e->output_name, name) == 0)
            return e->node;
        if (e->legacy_names && strcmp(e->node->name_in_request, name) == 0)
            return e->node;
    }
    return NULL;
}

static int not_embedded(pgrest_arena *a, const char *name, pgrest_error *err)
{
    const char *hint = pgr_asprintf(
        a, "Verify that '%s' is included in the 'select' query parameter.", name);
    return pgr_errorf(err, a, 400, "PGRST108", NULL, hint,
                      "'%s' is not an embedded resource in this request", name);
}

/* Without legacy target names, the relation name of an aliased embed
 * does not match it: Error.hs NotEmbedded with (name, alias), found by
 * updateNode's findLegacyUsage. */
static const pgr_embed *aliased_embed(const pgr_read_node *node, const char *name)
{
    for (const pgr_embed *e = node->embeds; e != NULL; e = e->next)
        if (!e->legacy_names && strcmp(e->node->name_in_request, name) == 0 &&
            strcmp(e->output_name, name) != 0)
            return e;
    return NULL;
}

static int not_embedded_alias(pgrest_arena *a, const char *name, const char *alias,
                              pgrest_error *err)
{
    const char *hint = pgr_asprintf(
        a, "Change '%s' to '%s' in filters, orders or limits.", name, alias);
    return pgr_errorf(err, a, 400, "PGRST108",
                      "Target names are not allowed in filters if they have an alias",
                      hint, "'%s' is not an embedded resource in this request", name);
}

static int resolve_path(pgrest_arena *a, pgr_read_node *root,
                        const pgr_embed_path *p, pgr_read_node **out,
                        pgrest_error *err)
{
    pgr_read_node *n = root;
    for (size_t i = 0; i < p->n; i++) {
        pgr_read_node *parent = n;
        n = find_child(n, p->names[i]);
        const pgr_embed *aliased = n == NULL ? aliased_embed(parent, p->names[i]) : NULL;
        if (aliased != NULL)
            return not_embedded_alias(a, p->names[i], aliased->output_name, err);
        if (n == NULL)
            return not_embedded(a, p->names[i], err);
        /* updateNode's updateLegacyAttrs */
        if (n->alias_in_request != NULL && strcmp(n->name_in_request, p->names[i]) == 0 &&
            strcmp(n->alias_in_request, p->names[i]) != 0)
            n->legacy_match = true;
    }
    *out = n;
    return PGREST_OK;
}

/* Plan.hs addRanges: a mutation's representation takes no ranges, not
 * even on its embeds (the paths are not resolved either). */
static bool takes_ranges(pgr_action action)
{
    return action != PGR_ACTION_CREATE && action != PGR_ACTION_UPDATE &&
           action != PGR_ACTION_UPSERT && action != PGR_ACTION_DELETE;
}

/* ------------------------------------------------------------ paths */

/* updateNode's findNode over the select tree: an embed by its output
 * name, or with legacy target names also by its relation name. */
static const pgr_select_item *select_child(const pgr_select_item *items,
                                           const char *name, bool legacy)
{
    for (const pgr_select_item *it = items; it != NULL; it = it->next) {
        if (it->kind != PGR_SELECT_EMBED && it->kind != PGR_SELECT_SPREAD)
            continue;
        const char *out = it->alias != NULL ? it->alias : it->relation;
        if (strcmp(out, name) == 0 || (legacy && strcmp(it->relation, name) == 0))
            return it;
    }
    return NULL;
}

static int check_path(pgrest_arena *a, const pgr_select_item *select,
                      const pgr_embed_path *p, bool legacy, pgrest_error *err)
{
    const pgr_select_item *level = select;
    for (size_t i = 0; i < p->n; i++) {
        const pgr_select_item *it = select_child(level, p->names[i], legacy);
        if (it == NULL) {
            const pgr_select_item *aliased = legacy ? NULL
                : select_child(level, p->names[i], true);
            return aliased != NULL
                ? not_embedded_alias(a, p->names[i], aliased->alias, err)
                : not_embedded(a, p->names[i], err);
        }
        level = it->children;
    }
    return PGREST_OK;
}

/* The paths of one kind of parameter, as foldr reaches them: the last
 * failing one is reported. */
static int check_paths(pgrest_arena *a, const pgr_select_item *select,
                       const pgr_embed_path *const *paths, size_t n,
                       bool legacy, pgrest_error *err)
{
    for (size_t i = n; i-- > 0;) {
        int rc = check_path(a, select, paths[i], legacy, err);
        if (rc != PGREST_OK)
            return rc;
    }
    return PGREST_OK;
}

#define COLLECT_PATHS(list, type, out, n)                                   \
    do {                                                                    \
        for (const type *x_ = (list); x_ != NULL; x_ = x_->next)            \
            if (x_->path.n > 0)                                             \
                (out)[(n)++] = &x_->path;                                   \
    } while (0)

static size_t count_params(const pgr_query_params *qp)
{
    size_t n = 0;
    for (const pgr_path_filter *f = qp->filters; f; f = f->next)
        n++;
    for (const pgr_path_order *o = qp->orders; o; o = o->next)
        n++;
    for (const pgr_path_range *r = qp->ranges; r; r = r->next)
        n++;
    for (const pgr_path_logic *l = qp->logic; l; l = l->next)
        n++;
    for (const pgr_path_logic *h = qp->havings; h; h = h->next)
        n++;
    for (const pgr_path_distinct *d = qp->distincts; d; d = d->next)
        n++;
    return n;
}

int pgr_check_embed_paths(pgrest_arena *a, const pgrest_api_request *api,
                          const pgr_select_item *select, bool legacy,
                          pgrest_error *err)
{
    const pgr_query_params *qp = &api->qp;
    const pgr_embed_path **v = PGR_NEW_ARRAY(a, const pgr_embed_path *,
                                             count_params(qp) + 1);
    if (v == NULL)
        return pgr_error_oom(err);
    size_t n = 0;
    int rc;
    COLLECT_PATHS(qp->filters, pgr_path_filter, v, n);
    if ((rc = check_paths(a, select, v, n, legacy, err)) != PGREST_OK)
        return rc;
    n = 0;
    COLLECT_PATHS(qp->orders, pgr_path_order, v, n);
    if ((rc = check_paths(a, select, v, n, legacy, err)) != PGREST_OK)
        return rc;
    n = 0;
    if (takes_ranges(api->action))
        COLLECT_PATHS(qp->ranges, pgr_path_range, v, n);
    if ((rc = check_paths(a, select, v, n, legacy, err)) != PGREST_OK)
        return rc;
    n = 0;
    COLLECT_PATHS(qp->logic, pgr_path_logic, v, n);
    if ((rc = check_paths(a, select, v, n, legacy, err)) != PGREST_OK)
        return rc;
    n = 0;
    COLLECT_PATHS(qp->havings, pgr_path_logic, v, n);
    if ((rc = check_paths(a, select, v, n, legacy, err)) != PGREST_OK)
        return rc;
    /* distinct (pgrest's own) after PostgREST's parameters */
    n = 0;
    COLLECT_PATHS(qp->distincts, pgr_path_distinct, v, n);
    return check_paths(a, select, v, n, legacy, err);
}

static bool push_ptr(pgrest_arena *a, void ***arr, size_t *n, void *item)
{
    size_t old = *arr != NULL ? sizeof(void *) * (*n + 1) : 0;
    void **grown = pgr_realloc(a, *arr, old, sizeof(void *) * (*n + 2));
    if (grown == NULL)
        return false;
    grown[(*n)++] = item;
    grown[*n] = NULL;
    *arr = grown;
    return true;
}

static int attach_filters(pgrest_arena *a, const pgr_query_params *qp,
                          pgr_read_node *root, pgrest_error *err)
{
    pgr_read_node *n;
    int rc;
    for (const pgr_path_filter *f = qp->filters; f; f = f->next) {
        if (f->path.n == 0)
            continue;
        if ((rc = resolve_path(a, root, &f->path, &n, err)) != PGREST_OK)
            return rc;
        if (!push_ptr(a, (void ***)&n->filters, &n->n_filters, (void *)&f->filter))
            return pgr_error_oom(err);
    }
    for (const pgr_path_logic *l = qp->logic; l; l = l->next) {
        if (l->path.n == 0)
            continue;
        if ((rc = resolve_path(a, root, &l->path, &n, err)) != PGREST_OK)
            return rc;
        if (!push_ptr(a, (void ***)&n->logic, &n->n_logic, l->tree))
            return pgr_error_oom(err);
    }
    for (const pgr_path_logic *h = qp->havings; h; h = h->next) {
        if (h->path.n == 0)
            continue;
        if ((rc = resolve_path(a, root, &h->path, &n, err)) != PGREST_OK)
            return rc;
        if (!push_ptr(a, (void ***)&n->having, &n->n_having, h->tree))
            return pgr_error_oom(err);
    }
    return PGREST_OK;
}

static int attach_order_range(pgrest_arena *a, const pgr_query_params *qp,
                              bool with_ranges, pgr_read_node *root,
                              pgrest_error *err)
{
    pgr_read_node *n;
    int rc;
    for (const pgr_path_order *o = qp->orders; o; o = o->next) {
        if (o->path.n == 0)
            continue;
        if ((rc = resolve_path(a, root, &o->path, &n, err)) != PGREST_OK)
            return rc;
        /* addOrders folds right: of two orders for one node the first in
         * the query string is applied last, so it wins */
        if (n->order == NULL)
            n->order = o->terms;
    }
    for (const pgr_path_range *r = qp->ranges; with_ranges && r; r = r->next) {
        if (r->path.n == 0)
            continue;
        if ((rc = resolve_path(a, root, &r->path, &n, err)) != PGREST_OK)
            return rc;
        n->offset = r->offset > 0 ? r->offset : 0;
        n->limit = r->limit;
    }
    return PGREST_OK;
}

/* After the orders: a DISTINCT ON order starts from them. */
static int attach_distinct(pgrest_arena *a, const pgr_query_params *qp,
                           pgr_read_node *root, pgrest_error *err)
{
    pgr_read_node *n;
    int rc;
    for (const pgr_path_distinct *d = qp->distincts; d; d = d->next) {
        if (d->path.n == 0)
            continue;
        if ((rc = resolve_path(a, root, &d->path, &n, err)) != PGREST_OK ||
            (rc = pgr_plan_distinct(a, n, d, err)) != PGREST_OK)
            return rc;
    }
    return PGREST_OK;
}

/* addRelatedOrders: order=rel(col) only through a to-one embed. */
static int check_related_orders(pgrest_arena *a, const pgr_read_node *node,
                                pgrest_error *err)
{
    for (const pgr_order_term *t = node->order; t != NULL; t = t->next) {
        if (t->relation == NULL)
            continue;
        const pgr_embed *e = pgr_find_embed(node, t->relation);
        if (e == NULL)
            return not_embedded(a, t->relation, err);
        if (!e->is_to_one) {
            /* the node's `from`: a mutation's or call's root reads the
             * pgrst_source CTE (Plan.hs addRels) */
            const char *origin = node->parent == NULL && node->rows_are_records
                                     ? "pgrst_source"
                                     : node->table ? node->table->name : "";
            const char *details = pgr_asprintf(
                a, "'%s' and '%s' do not form a many-to-one or one-to-one relationship",
                origin, t->relation);
            return pgr_errorf(err, a, 400, "PGRST118", details, NULL,
                              "A related order on '%s' is not possible", t->relation);
        }
    }
    return PGREST_OK;
}

const pgr_embed *pgr_find_related_embed(const pgr_read_node *node, const char *name)
{
    const pgr_read_node *child = find_child(node, name);
    return child != NULL ? child->embed : NULL;
}

/* pgrest's related leaves (docs/embed-or.md): rel names an embed of the
 * node as an embedded path would (resolve_path's errors). */
static int check_related_leaves(pgrest_arena *a, pgr_read_node *node,
                                const pgr_logic_tree *t, pgrest_error *err)
{
    if (t->is_leaf) {
        if (t->relation == NULL)
            return PGREST_OK;
        pgr_read_node *n;
        const char *names[1] = {t->relation};
        pgr_embed_path p = {names, 1};
        return resolve_path(a, node, &p, &n, err);
    }
    for (const pgr_logic_tree *c = t->children; c != NULL; c = c->next) {
        int rc = check_related_leaves(a, node, c, err);
        if (rc != PGREST_OK)
            return rc;
    }
    return PGREST_OK;
}

static int check_node(pgrest_arena *a, pgr_read_node *node,
                      pgrest_error *err)
{
    int rc = PGREST_OK;
    for (size_t i = 0; rc == PGREST_OK && i < node->n_logic; i++)
        rc = check_related_leaves(a, node, node->logic[i], err);
    if (rc == PGREST_OK)
        rc = check_related_orders(a, node, err);
    for (const pgr_embed *e = node->embeds; rc == PGREST_OK && e; e = e->next)
        rc = check_node(a, e->node, err);
    return rc;
}

static bool selects_aggregate(const pgr_read_node *node)
{
    for (const pgr_plan_field *f = node->fields; f != NULL; f = f->next)
        if (f->item != NULL && f->item->aggregate != NULL)
            return true;
    return false;
}

/* hoistSpreadAggFunctions: the aggregates of to-one spreads rise to the
 * node above them (through nested to-one spreads). */
static bool hoists_aggregate(const pgr_read_node *node)
{
    for (const pgr_embed *e = node->embeds; e != NULL; e = e->next)
        if (e->spread && e->is_to_one &&
            (selects_aggregate(e->node) || hoists_aggregate(e->node)))
            return true;
    return false;
}

/* addToManyOrderSelects: a to-many spread cannot aggregate, neither its
 * own columns nor those hoisted from to-one spreads below it. */
static int check_to_many_spreads(const pgr_read_node *node, pgrest_error *err)
{
    for (const pgr_embed *e = node->embeds; e != NULL; e = e->next) {
        if (e->spread && !e->is_to_one &&
            (selects_aggregate(e->node) || hoists_aggregate(e->node)))
            return pgr_error(err, 400, "PGRST127", "Feature not implemented",
                             "Aggregates are not implemented for one-to-many or many-to-many spreads.",
                             NULL);
        int rc = check_to_many_spreads(e->node, err);
        if (rc != PGREST_OK)
            return rc;
    }
    return PGREST_OK;
}

static bool has_related_leaf(const pgr_logic_tree *t)
{
    if (t->is_leaf)
        return t->relation != NULL;
    for (const pgr_logic_tree *c = t->children; c != NULL; c = c->next)
        if (has_related_leaf(c))
            return true;
    return false;
}

/* pgrest's query extensions (docs/aggregates.md, docs/embed-or.md,
 * docs/distinct.md) share the aggregates' gate: like them they let a
 * request make the database do more work per row than filters do. */
static bool uses_query_extension(const pgr_read_node *node)
{
    if (node->n_having > 0 || pgr_node_is_distinct(node))
        return true;
    for (size_t i = 0; i < node->n_logic; i++)
        if (has_related_leaf(node->logic[i]))
            return true;
    return false;
}

/* validateAggFunctions: any node selecting an aggregate (or using one of
 * pgrest's extensions under the same gate). */
static bool tree_selects_aggregate(const pgr_read_node *node)
{
    if (selects_aggregate(node) || uses_query_extension(node))
        return true;
    for (const pgr_embed *e = node->embeds; e != NULL; e = e->next)
        if (tree_selects_aggregate(e->node))
            return true;
    return false;
}

int pgr_check_embed_params(pgrest_arena *a, const pgrest_api_request *api,
                           bool aggregates_enabled, pgr_read_node *root,
                           pgrest_error *err)
{
    int rc = attach_filters(a, &api->qp, root, err);
    if (rc == PGREST_OK)
        rc = attach_order_range(a, &api->qp, takes_ranges(api->action), root, err);
    if (rc == PGREST_OK)
        rc = attach_distinct(a, &api->qp, root, err);
    if (rc == PGREST_OK)
        rc = check_node(a, root, err);
    if (rc == PGREST_OK && !aggregates_enabled && tree_selects_aggregate(root))
        return pgr_error(err, 400, "PGRST123", "Use of aggregate functions is not allowed",
                         NULL, NULL);
    if (rc == PGREST_OK)
        rc = check_to_many_spreads(root, err);
    return rc;
}
