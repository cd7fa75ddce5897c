/* Mutations (PostgREST Plan/MutatePlan.hs mutatePlan + Plan.hs
 * mutateReadPlan): the written columns, the conflict target, the filters,
 * what RETURNING must carry for the representation, and the post-checks. */
#include "plan/mutate_plan.h"

#include <stdlib.h>
#include <string.h>

#include "engine/stage_view.h"
#include "plan/embed.h"
#include "plan/fuzzy.h"
#include "plan/nested_insert.h"
#include "plan/per_row_update.h"
#include "util/error.h"

/* ApiRequest.hs getRanges: limit/offset make no sense for a single-row
 * upsert. */
static int check_put_range(const pgrest_api_request *api, pgrest_error *err)
{
    for (const pgr_path_range *r = api->qp.ranges; r; r = r->next)
        if (r->path.n == 0 && (r->limit >= 0 || r->offset > 0))
            return pgr_error(err, 400, "PGRST114",
                             "limit/offset querystring parameters are not allowed for PUT",
                             NULL, NULL);
    return PGREST_OK;
}

static bool is_pk_column(const pgr_table *t, const char *name)
{
    for (size_t i = 0; i < t->n_pk; i++)
        if (strcmp(t->pk[i], name) == 0)
            return true;
    return false;
}

static bool is_plain_eq(const pgr_filter *f)
{
    return f->expr.op == PGR_OP_EQ && !f->expr.negated &&
           f->expr.quant == PGR_QUANT_NONE && f->field.json_path == NULL;
}

/* Plan.hs mutatePlan (MutationSingleUpsert): no logic tree (root or
 * embedded), and the filtered fields, as written in the query string
 * (an embedded "rel.col" counts), are exactly the PK columns, each with a
 * plain eq. */
static bool only_root_filters(const pgrest_api_request *api)
{
    if (api->qp.logic != NULL)
        return false;
    for (const pgr_path_filter *f = api->qp.filters; f != NULL; f = f->next)
        if (f->path.n > 0)
            return false;
    return true;
}

static int check_put_filters(const pgrest_api_request *api, const pgr_table *t,
                             const pgr_read_node *target, pgrest_error *err)
{
    bool ok = t->n_pk > 0 && target->n_logic == 0 && only_root_filters(api);
    for (size_t i = 0; ok && i < target->n_filters; i++)
        ok = is_plain_eq(target->filters[i]) &&
             is_pk_column(t, target->filters[i]->field.name);
    for (size_t k = 0; ok && k < t->n_pk; k++) {
        bool found = false;
        for (size_t i = 0; i < target->n_filters; i++)
            found = found || strcmp(target->filters[i]->field.name, t->pk[k]) == 0;
        ok = found;
    }
    if (!ok)
        return pgr_error(err, 405, "PGRST105",
                         "Filters must include all and only primary key columns with 'eq' operators",
                         NULL, NULL);
    return PGREST_OK;
}

/* The body keys that are columns; the others name nested rows' relationships
 * (a POST's JSON body) or are PostgREST's PGRST204. */
static int resolve_columns(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_api_request *api,
                           const pgrest_query_plan *plan, pgr_mutate_plan *mp,
                           pgrest_error *err)
{
    const pgr_table *t = mp->table;
    if (api->action == PGR_ACTION_DELETE)
        return PGREST_OK;
    mp->columns = PGR_NEW_ARRAY(a, const pgr_column *, api->n_payload_keys + 1);
    const char **others = PGR_NEW_ARRAY(a, const char *, api->n_payload_keys + 1);
    if (mp->columns == NULL || others == NULL)
        return pgr_error_oom(err);
    size_t n_others = 0;
    bool nested = pgr_nested_inserts_apply(api);
    for (size_t i = 0; i < api->n_payload_keys; i++) {
        const pgr_column *c = pgr_find_column(t, api->payload_keys[i]);
        if (c == NULL && !nested)
            return pgr_errorf(err, a, 400, "PGRST204", NULL, NULL,
                              "Could not find the '%s' column of '%s' in the schema cache",
                              api->payload_keys[i], t->name);
        if (c == NULL)
            others[n_others++] = api->payload_keys[i];
        else
            mp->columns[mp->n_columns++] = c;
    }
    if (n_others == 0)
        return PGREST_OK;
    int rc = pgr_plan_nested_inserts(ctx, a, api, plan->schema, t, others, n_others,
                                     &mp->nested, err);
    if (rc != PGREST_OK)
        return rc;
    /* a many-to-one row's key fills the foreign key, whatever the body says */
    size_t kept = 0;
    for (size_t i = 0; i < mp->n_columns; i++)
        if (!pgr_nested_fills_column(NULL, mp->nested, mp->columns[i]->name))
            mp->columns[kept++] = mp->columns[i];
    mp->n_columns = kept;
    return pgr_nested_bind_representation(a, mp->nested, plan->read, err);
}

/* ON CONFLICT target: ?on_conflict= or the primary key; without one
 * there is no ON CONFLICT and Response.hs leaves resolution out of
 * Preference-Applied, but merge-duplicates still counts the inserted rows
 * (QueryBuilder.hs mergeDups: the pgrst.inserted WHERE), so an empty body
 * answers 200 as PostgREST's does. PUT always merges on the PK. */
static void plan_conflict(const pgrest_api_request *api, const pgr_table *t,
                          pgr_mutate_plan *mp)
{
    const pgr_query_params *qp = &api->qp;
    mp->conflict_cols = qp->n_on_conflict > 0 ? qp->on_conflict : t->pk;
    mp->n_conflict_cols = qp->n_on_conflict > 0 ? qp->n_on_conflict : t->n_pk;
    if (api->action == PGR_ACTION_UPSERT) {
        mp->conflict_cols = t->pk;
        mp->n_conflict_cols = t->n_pk;
        mp->resolution = PGR_PREF_RESOLUTION_MERGE;
        mp->count_inserted = true;
        return;
    }
    if (api->action != PGR_ACTION_CREATE)
        return;
    mp->resolution = api->prefs.resolution;
    mp->resolution_applied = mp->resolution != PGR_PREF_RESOLUTION_NONE &&
                             mp->n_conflict_cols > 0;
    mp->count_inserted = mp->resolution == PGR_PREF_RESOLUTION_MERGE;
}

/* ------------------------------------------------------------ RETURNING */

static int cmp_name(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

typedef struct returning_set {
    pgrest_arena *a;
    const pgr_table *table;
    bool *want;            /* by column index */
    bool star;
} returning_set;

static void want_column(returning_set *rs, const char *name)
{
    for (size_t i = 0; i < rs->table->n_columns; i++)
        if (strcmp(rs->table->columns[i].name, name) == 0) {
            rs->want[i] = true;
            return;
        }
    /* not a column: a computed field, which needs the whole row */
    rs->star = true;
}

/* The columns the representation reads from pgrst_source (PostgREST
 * inferColsEmbedNeeds): selected fields, join columns of embeds, order
 * columns. Computed fields and * need the whole row. */
static void collect_returning(returning_set *rs, const pgr_read_node *root)
{
    if (root->select_star)
        rs->star = true;
    for (const pgr_plan_field *f = root->fields; f; f = f->next) {
        if (f->computed != NULL || f->item->field.name == NULL)
            rs->star = true;
        else
            want_column(rs, f->item->field.name);
    }
    for (const pgr_embed *e = root->embeds; e; e = e->next) {
        if (e->rel == NULL || e->rel->is_computed)
            rs->star = true;
        else
            for (size_t i = 0; i < e->rel->n_cols; i++)
                want_column(rs, e->rel->cols[i]);
    }
    for (const pgr_order_term *o = root->order; o; o = o->next)
        if (o->relation == NULL)
            want_column(rs, o->field.name);
}

/* Plan.hs mutatePlan returnings: nothing (RETURNING 1) for return=minimal
 * or no preference; otherwise inferColsEmbedNeeds: * when the select has
 * it, else the selected fields, the embeds' join columns and the PK, as a
 * Data.Set (name order, which the Location header follows). Headers-only
 * returns them too, so their privileges are checked alike. */
static int plan_returning(pgrest_arena *a, const pgrest_api_request *api,
                          pgr_mutate_plan *mp, const pgr_read_node *root,
                          pgrest_error *err)
{
    const pgr_table *t = mp->table;
    returning_set rs = {a, t, PGR_NEW_ARRAY(a, bool, t->n_columns + 1), false};
    if (rs.want == NULL)
        return pgr_error_oom(err);
    /* an explicit empty ?select= selects nothing, so only the PK is
     * returned (and read back as *), unless the star was expanded into
     * columns for their representations */
    bool empty_select = api->qp.has_select && api->qp.select == NULL &&
                        root->fields == NULL;
    if (mp->representation || api->prefs.ret == PGR_PREF_RETURN_HEADERS_ONLY) {
        if (!empty_select)
            collect_returning(&rs, root);
        for (size_t i = 0; i < t->n_pk; i++)
            want_column(&rs, t->pk[i]);
    }
    /* the keys the one-to-many rows' foreign keys take from the inserted rows */
    for (const pgr_nested_insert *n = mp->nested; n != NULL; n = n->next)
        for (size_t i = 0; !n->to_one && i < n->rel->n_cols; i++)
            want_column(&rs, n->rel->cols[i]);
    mp->returning_star = rs.star;
    mp->returning = PGR_NEW_ARRAY(a, const char *, t->n_columns + 1);
    if (mp->returning == NULL)
        return pgr_error_oom(err);
    for (size_t i = 0; i < t->n_columns; i++)
        if (rs.want[i])
            mp->returning[mp->n_returning++] = t->columns[i].name;
    qsort(mp->returning, mp->n_returning, sizeof *mp->returning, cmp_name);
    return PGREST_OK;
}

/* ------------------------------------------------------------ read tree */

/* The representation: the select tree over the returned rows. Root
 * filters belong to the write, limit/offset are ignored on writes
 * (PostgREST removed limited updates/deletes); order stays. */
static int plan_representation(pgrest_ctx *ctx, pgrest_arena *a,
                               const pgrest_api_request *api,
                               pgrest_query_plan *plan, pgr_mutate_plan *mp,
                               pgrest_error *err)
{
    pgr_read_node *root = PGR_NEW(a, pgr_read_node);
    pgr_read_node *target = PGR_NEW(a, pgr_read_node);
    if (root == NULL || target == NULL)
        return pgr_error_oom(err);
    root->table = mp->table;
    root->sql_alias = mp->table->name;
    root->rows_are_records = true;
    root->name_in_request = api->name;
    int rc = pgr_plan_tree(ctx, a, api, plan->schema, root, api->qp.select, err);
    if (rc != PGREST_OK)
        return rc;
    target->table = mp->table;
    target->filters = root->filters;
    target->n_filters = root->n_filters;
    target->logic = root->logic;
    target->n_logic = root->n_logic;
    target->limit = -1;
    root->n_filters = 0;
    root->n_logic = 0;
    root->offset = 0;
    root->limit = -1;
    mp->target = target;
    plan->read = root;
    return PGREST_OK;
}

static void plan_output(const pgrest_api_request *api, pgrest_query_plan *plan,
                        pgr_mutate_plan *mp)
{
    const pgr_preferences *p = &api->prefs;
    mp->singular = plan->output == PGR_OUT_OBJECT;
    mp->representation = p->ret == PGR_PREF_RETURN_REPRESENTATION;
    /* Statements.hs mainWrite: every insert (PUT's too) answering
     * headers only computes it; only POST's response shows it */
    mp->location = (api->action == PGR_ACTION_CREATE || api->action == PGR_ACTION_UPSERT) &&
                   p->ret == PGR_PREF_RETURN_HEADERS_ONLY;
    if (!mp->representation)
        plan->output = PGR_OUT_NONE;
    /* Preferences.hs: max-affected is any Int64, a negative one fails
     * every write (MainTx.hs failExceedsMaxAffectedPref) */
    mp->max_affected = p->max_affected;
    mp->check_max_affected =
        p->handling == PGR_PREF_HANDLING_STRICT && p->has_max_affected &&
        (api->action == PGR_ACTION_UPDATE || api->action == PGR_ACTION_DELETE);
}

int pgr_plan_mutation(pgrest_ctx *ctx, pgrest_arena *a,
                      const pgrest_api_request *api, pgrest_query_plan *plan,
                      pgrest_error *err)
{
    int rc;
    if (api->action == PGR_ACTION_UPSERT &&
        (rc = check_put_range(api, err)) != PGREST_OK)
        return rc;
    const pgr_table *t = pgr_find_table(plan->schema, api->schema, api->name);
    if (t == NULL)
        return pgr_table_not_found(a, plan->schema, api->schema, api->name, err);
    pgr_mutate_plan *mp = PGR_NEW(a, pgr_mutate_plan);
    if (mp == NULL)
        return pgr_error_oom(err);
    mp->table = t;
    plan->table = t;
    plan->mutate = mp;
    plan->read_only = false;
    plan->count = api->prefs.count;
    /* Plan.hs mutatePlan: missing=default applies to POST and PATCH; the
     * single-row upsert of PUT inserts what the body gives */
    mp->apply_defaults = api->prefs.missing == PGR_PREF_MISSING_DEFAULT &&
                         api->action != PGR_ACTION_UPSERT;
    /* Plan.hs mutateReadPlan: the read plan first, then mutatePlan, where
     * PUT checks its filters before the payload columns are resolved */
    if ((rc = plan_representation(ctx, a, api, plan, mp, err)) != PGREST_OK)
        return rc;
    if (api->action == PGR_ACTION_UPSERT &&
        (rc = check_put_filters(api, t, mp->target, err)) != PGREST_OK)
        return rc;
    if ((rc = resolve_columns(ctx, a, api, plan, mp, err)) != PGREST_OK ||
        (rc = pgr_plan_per_row_update(a, api, mp, err)) != PGREST_OK)
        return rc;
    plan_conflict(api, t, mp);
    return PGREST_OK;
}

int pgr_plan_mutation_output(pgrest_arena *a, const pgrest_api_request *api,
                             pgrest_query_plan *plan, pgrest_error *err)
{
    pgr_mutate_plan *mp = plan->mutate;
    plan_output(api, plan, mp);
    return plan_returning(a, api, mp, plan->read, err);
}
