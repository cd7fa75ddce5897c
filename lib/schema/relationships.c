/* Relationship derivation, following PostgREST's SchemaCache.hs:
 *
 *   rels = addInverseRels $ addM2MRels tables $ addViewM2OAndO2ORels keyDeps
 *          m2oRels
 *   then getOverrideRelationshipsMap (computed relationships replace the
 *   detected ones with the same (table, name) key, each list is sorted)
 *   and removeInternal (exposed schemas only, no internal junctions).
 *
 * The work happens on "raw" relationships that name their tables by
 * (schema, name), because foreign keys and view mappings may involve tables
 * outside the cache (e.g. a view in an exposed schema over a private
 * table). Only relationships whose tables are in the cache are kept. */
#include "schema/relationships.h"

#include <stdlib.h>
#include <string.h>

#include "util/arena.h"
#include "util/error.h"

typedef struct qi {
    const char *schema;
    const char *name;
} qi;

typedef struct raw_rel {
    qi table, ftable;
    pgr_cardinality card;
    bool is_self, is_parent, table_is_view, ftable_is_view;
    bool computed, dropped;
    const char *cons;
    /* table.cols[i] = ftable.fcols[i]; M2M: cols are table's columns */
    const char **cols, **fcols;
    size_t n;
    /* an FK's: the PK of a table outside the cache */
    const char **table_pk;
    size_t n_table_pk;
    /* M2M */
    qi junction;
    const char *cons2;
    const char **jcols1, **jcols2, **cols2;
    size_t n2;
    /* computed */
    qi function;
} raw_rel;

typedef struct rel_vec {
    pgrest_arena *a;
    raw_rel *items;
    size_t len, cap;
    bool oom;
} rel_vec;

/* A view's columns for one base-table key: vcols[i] stands for the key's
 * i-th column. */
typedef struct expansion {
    qi view;
    const char **vcols;
} expansion;

typedef struct exp_vec {
    expansion *items;
    size_t len, cap;
} exp_vec;

typedef struct derive_ctx {
    pgr_schema_cache *sc;
    const pgr_rel_input *in;
    pgrest_arena *tmp;
    rel_vec rels;
    const pgr_view_col_def **vidx;  /* view columns sorted by base table */
    bool oom;
} derive_ctx;

/* ------------------------------------------------------------ helpers */

static int qi_cmp(qi a, qi b)
{
    int c = strcmp(a.schema, b.schema);
    return c != 0 ? c : strcmp(a.name, b.name);
}

static bool qi_eq(qi a, qi b)
{
    return qi_cmp(a, b) == 0;
}

static qi mkqi(const char *schema, const char *name)
{
    qi q = {schema, name};
    return q;
}

static raw_rel *rel_push(derive_ctx *cx)
{
    rel_vec *v = &cx->rels;
    if (v->len == v->cap) {
        size_t ncap = v->cap ? v->cap * 2 : 64;
        raw_rel *n = pgr_realloc(cx->tmp, v->items, v->cap * sizeof(raw_rel),
                                 ncap * sizeof(raw_rel));
        if (n == NULL) {
            cx->oom = true;
            return NULL;
        }
        v->items = n;
        v->cap = ncap;
    }
    raw_rel *r = &v->items[v->len++];
    memset(r, 0, sizeof(*r));
    return r;
}

static bool exp_push(derive_ctx *cx, exp_vec *v, qi view, const char **vcols)
{
    if (v->len == v->cap) {
        size_t ncap = v->cap ? v->cap * 2 : 8;
        expansion *n = pgr_realloc(cx->tmp, v->items,
                                   v->cap * sizeof(expansion),
                                   ncap * sizeof(expansion));
        if (n == NULL) {
            cx->oom = true;
            return false;
        }
        v->items = n;
        v->cap = ncap;
    }
    v->items[v->len].view = view;
    v->items[v->len].vcols = vcols;
    v->len++;
    return true;
}

static bool schema_exposed(const char *const *exposed, const char *schema)
{
    if (exposed == NULL)
        return true;
    for (size_t i = 0; exposed[i] != NULL; i++)
        if (strcmp(exposed[i], schema) == 0)
            return true;
    return false;
}

/* ------------------------------------------------- FK (M2O / O2O) rels */

/* PostgREST allM2OandO2ORels: one M2O (or O2O, not parent) per FK. */
static void add_fk_rels(derive_ctx *cx)
{
    for (size_t i = 0; i < cx->in->n_fks; i++) {
        const pgr_fk_def *fk = &cx->in->fks[i];
        raw_rel *r = rel_push(cx);
        if (r == NULL)
            return;
        r->table = mkqi(fk->schema, fk->table);
        r->ftable = mkqi(fk->ref_schema, fk->ref_table);
        r->card = fk->one_to_one ? PGR_REL_O2O : PGR_REL_M2O;
        r->is_self = qi_eq(r->table, r->ftable);
        r->cons = fk->name;
        r->cols = fk->columns;
        r->fcols = fk->ref_columns;
        r->n = fk->n_columns;
        r->table_pk = fk->table_pk;
        r->n_table_pk = fk->n_table_pk;
    }
}

/* ----------------------------------------------------------- view rels */

static qi vcol_table(const pgr_view_col_def *v)
{
    return mkqi(v->table_schema, v->table);
}

static qi vcol_view(const pgr_view_col_def *v)
{
    return mkqi(v->view_schema, v->view);
}

static int vidx_cmp(const void *pa, const void *pb)
{
    const pgr_view_col_def *a = *(const pgr_view_col_def *const *)pa;
    const pgr_view_col_def *b = *(const pgr_view_col_def *const *)pb;
    int c = qi_cmp(vcol_table(a), vcol_table(b));
    if (c == 0)
        c = qi_cmp(vcol_view(a), vcol_view(b));
    if (c == 0) /* keep snapshot order (view column order) */
        c = (a > b) - (a < b);
    return c;
}

static bool build_view_index(derive_ctx *cx)
{
    size_t n = cx->in->n_view_cols;
    if (n == 0)
        return true;
    cx->vidx = PGR_NEW_ARRAY(cx->tmp, const pgr_view_col_def *, n);
    if (cx->vidx == NULL)
        return false;
    for (size_t i = 0; i < n; i++)
        cx->vidx[i] = &cx->in->view_cols[i];
    qsort(cx->vidx, n, sizeof(*cx->vidx), vidx_cmp);
    return true;
}

/* First index in vidx whose base table is >= t. */
static size_t vidx_lower_bound(const derive_ctx *cx, qi t)
{
    size_t lo = 0, hi = cx->in->n_view_cols;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (qi_cmp(vcol_table(cx->vidx[mid]), t) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Number of columns of the view group [lo, hi) that come from col. */
static size_t count_refs(const derive_ctx *cx, size_t lo, size_t hi,
                         const char *col)
{
    size_t k = 0;
    for (size_t i = lo; i < hi; i++)
        if (strcmp(cx->vidx[i]->table_column, col) == 0)
            k++;
    return k;
}

/* The j-th view column of the group [lo, hi) that comes from col. */
static const char *nth_ref(const derive_ctx *cx, size_t lo, size_t hi,
                           const char *col, size_t j)
{
    for (size_t i = lo; i < hi; i++)
        if (strcmp(cx->vidx[i]->table_column, col) == 0 && j-- == 0)
            return cx->vidx[i]->view_column;
    return NULL;
}

/* One view group: if the view has every key column, append one expansion
 * per combination of repeated references (PostgREST expandKeyDepCols:
 * `traverse snd`, the last column varying fastest). */
static void expand_group(derive_ctx *cx, size_t lo, size_t hi,
                         const char **cols, size_t n, exp_vec *out)
{
    size_t *counts = PGR_NEW_ARRAY(cx->tmp, size_t, n);
    size_t *digits = PGR_NEW_ARRAY(cx->tmp, size_t, n);
    if (counts == NULL || digits == NULL) {
        cx->oom = true;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        counts[i] = count_refs(cx, lo, hi, cols[i]);
        if (counts[i] == 0)
            return; /* partial keys do not count */
    }
    qi view = vcol_view(cx->vidx[lo]);
    for (;;) {
        const char **vc = PGR_NEW_ARRAY(cx->tmp, const char *, n);
        if (vc == NULL) {
            cx->oom = true;
            return;
        }
        for (size_t i = 0; i < n; i++)
            vc[i] = nth_ref(cx, lo, hi, cols[i], digits[i]);
        if (!exp_push(cx, out, view, vc))
            return;
        size_t i = n;
        while (i > 0 && ++digits[i - 1] == counts[i - 1])
            digits[--i] = 0;
        if (i == 0)
            return;
    }
}

/* Views exposing all of table(cols), as PostgREST's ViewKeyDependency. */
static exp_vec view_expansions(derive_ctx *cx, qi table, const char **cols,
                               size_t n)
{
    exp_vec out = {NULL, 0, 0};
    size_t total = cx->in->n_view_cols;
    size_t i = vidx_lower_bound(cx, table);
    while (n > 0 && i < total && qi_eq(vcol_table(cx->vidx[i]), table)) {
        size_t j = i + 1;
        while (j < total && qi_eq(vcol_table(cx->vidx[j]), table) &&
               qi_eq(vcol_view(cx->vidx[j]), vcol_view(cx->vidx[i])))
            j++;
        expand_group(cx, i, j, cols, n, &out);
        i = j;
    }
    return out;
}

static void push_view_rel(derive_ctx *cx, const raw_rel *fk, qi table,
                          const char **cols, qi ftable, const char **fcols,
                          bool table_is_view, bool ftable_is_view)
{
    raw_rel *r = rel_push(cx);
    if (r == NULL)
        return;
    r->table = table;
    r->ftable = ftable;
    r->card = fk->card;
    r->cons = fk->cons;
    r->cols = cols;
    r->fcols = fcols;
    r->n = fk->n;
    r->table_is_view = table_is_view;
    r->ftable_is_view = ftable_is_view;
    /* PostgREST: view -> table and table -> view are never self */
    r->is_self = table_is_view && ftable_is_view && qi_eq(table, ftable);
}

/* PostgREST addViewM2OAndO2ORels: each FK is repeated for views whose
 * columns cover the FK columns (as origin), the referenced columns (as
 * target), or both. */
static void add_view_rels(derive_ctx *cx)
{
    size_t n_fk_rels = cx->rels.len;
    for (size_t i = 0; i < n_fk_rels && !cx->oom; i++) {
        raw_rel fk = cx->rels.items[i]; /* copy: pushes may move items */
        exp_vec vt = view_expansions(cx, fk.table, fk.cols, fk.n);
        exp_vec tv = view_expansions(cx, fk.ftable, fk.fcols, fk.n);
        for (size_t a = 0; a < vt.len; a++)
            push_view_rel(cx, &fk, vt.items[a].view, vt.items[a].vcols,
                          fk.ftable, fk.fcols, true, false);
        for (size_t b = 0; b < tv.len; b++)
            push_view_rel(cx, &fk, fk.table, fk.cols, tv.items[b].view,
                          tv.items[b].vcols, false, true);
        for (size_t a = 0; a < vt.len; a++)
            for (size_t b = 0; b < tv.len; b++)
                push_view_rel(cx, &fk, vt.items[a].view, vt.items[a].vcols,
                              tv.items[b].view, tv.items[b].vcols, true, true);
    }
}

/* ------------------------------------------------------------ M2M rels */

static bool in_list(const char *const *list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], s) == 0)
            return true;
    return false;
}

/* Every junction column of both FKs is part of the junction's PK (known
 * from the cache, or for a junction outside it from its FKs). */
static bool junction_pk_covers(const pgr_table *jt, const raw_rel *r1,
                               const raw_rel *r2)
{
    const char **pk = jt != NULL ? jt->pk : r1->table_pk;
    size_t n_pk = jt != NULL ? jt->n_pk : r1->n_table_pk;
    for (size_t i = 0; i < r1->n; i++)
        if (!in_list(pk, n_pk, r1->cols[i]))
            return false;
    for (size_t i = 0; i < r2->n; i++)
        if (!in_list(pk, n_pk, r2->cols[i]))
            return false;
    return true;
}

static void push_m2m(derive_ctx *cx, const raw_rel *r1, const raw_rel *r2)
{
    raw_rel *r = rel_push(cx);
    if (r == NULL)
        return;
    r->table = r1->ftable;
    r->ftable = r2->ftable;
    r->card = PGR_REL_M2M;
    r->is_self = qi_eq(r1->ftable, r2->ftable);
    r->junction = r1->table;
    r->cons = r1->cons;
    r->cons2 = r2->cons;
    r->cols = r1->fcols;
    r->jcols1 = r1->cols;
    r->n = r1->n;
    r->cols2 = r2->fcols;
    r->jcols2 = r2->cols;
    r->n2 = r2->n;
    r->table_is_view = r1->ftable_is_view;
    r->ftable_is_view = r2->ftable_is_view;
}

typedef struct m2o_ref {
    qi table;
    size_t idx;
} m2o_ref;

static int m2o_ref_cmp(const void *pa, const void *pb)
{
    const m2o_ref *a = pa, *b = pb;
    int c = qi_cmp(a->table, b->table);
    return c != 0 ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

/* Indexes of the M2O relationships, grouped by origin (junction) table. */
static size_t *m2o_indexes(derive_ctx *cx, size_t *count)
{
    size_t n = cx->rels.len, k = 0;
    m2o_ref *refs = PGR_NEW_ARRAY(cx->tmp, m2o_ref, n ? n : 1);
    size_t *idx = PGR_NEW_ARRAY(cx->tmp, size_t, n ? n : 1);
    if (refs == NULL || idx == NULL) {
        cx->oom = true;
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (cx->rels.items[i].card != PGR_REL_M2O)
            continue;
        refs[k].table = cx->rels.items[i].table;
        refs[k].idx = i;
        k++;
    }
    qsort(refs, k, sizeof(*refs), m2o_ref_cmp);
    for (size_t i = 0; i < k; i++)
        idx[i] = refs[i].idx;
    *count = k;
    return idx;
}

/* PostgREST addM2MRels: two M2O relationships of the same junction with
 * different constraints, all their junction columns in the junction PK. */
static void add_m2m_rels(derive_ctx *cx)
{
    size_t k = 0;
    size_t *idx = m2o_indexes(cx, &k);
    if (idx == NULL)
        return;
    size_t g = 0;
    while (g < k && !cx->oom) {
        size_t e = g + 1;
        while (e < k && qi_eq(cx->rels.items[idx[e]].table,
                              cx->rels.items[idx[g]].table))
            e++;
        qi jq = cx->rels.items[idx[g]].table;
        const pgr_table *jt = pgr_find_table(cx->sc, jq.schema, jq.name);
        for (size_t i = g; i < e; i++) {
            for (size_t j = g; j < e; j++) {
                raw_rel r1 = cx->rels.items[idx[i]];
                raw_rel r2 = cx->rels.items[idx[j]];
                if (strcmp(r1.cons, r2.cons) != 0 &&
                    junction_pk_covers(jt, &r1, &r2))
                    push_m2m(cx, &r1, &r2);
            }
        }
        g = e;
    }
}

/* -------------------------------------------------------- inverse rels */

/* PostgREST addInverseRels: M2O -> O2M, O2O -> O2O with the parent flag
 * flipped, origin and target swapped. */
static void add_inverse_rels(derive_ctx *cx)
{
    size_t n = cx->rels.len;
    for (size_t i = 0; i < n && !cx->oom; i++) {
        raw_rel src = cx->rels.items[i];
        if (src.card != PGR_REL_M2O && src.card != PGR_REL_O2O)
            continue;
        raw_rel *r = rel_push(cx);
        if (r == NULL)
            return;
        *r = src;
        r->table = src.ftable;
        r->ftable = src.table;
        r->cols = src.fcols;
        r->fcols = src.cols;
        r->table_is_view = src.ftable_is_view;
        r->ftable_is_view = src.table_is_view;
        if (src.card == PGR_REL_M2O)
            r->card = PGR_REL_O2M;
        else
            r->is_parent = !src.is_parent;
    }
}

/* --------------------------------------------------- computed overrides */

static int computed_key_cmp(const pgr_computed_def *c, qi table, qi fn)
{
    int k = qi_cmp(mkqi(c->table_schema, c->table), table);
    return k != 0 ? k : qi_cmp(mkqi(c->function_schema, c->function), fn);
}

static int computed_sort_cmp(const void *pa, const void *pb)
{
    const pgr_computed_def *a = *(const pgr_computed_def *const *)pa;
    const pgr_computed_def *b = *(const pgr_computed_def *const *)pb;
    return computed_key_cmp(a, mkqi(b->table_schema, b->table),
                            mkqi(b->function_schema, b->function));
}

static bool has_computed(const pgr_computed_def **sorted, size_t n, qi table,
                         qi target)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = computed_key_cmp(sorted[mid], table, target);
        if (c == 0)
            return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* PostgREST getOverrideRelationshipsMap: a computed relationship keyed
 * (table, function) replaces the detected ones keyed (table, target). */
static void add_computed_rels(derive_ctx *cx)
{
    size_t n = cx->in->n_computed;
    if (n == 0)
        return;
    const pgr_computed_def **sorted =
        PGR_NEW_ARRAY(cx->tmp, const pgr_computed_def *, n);
    if (sorted == NULL) {
        cx->oom = true;
        return;
    }
    for (size_t i = 0; i < n; i++)
        sorted[i] = &cx->in->computed[i];
    qsort(sorted, n, sizeof(*sorted), computed_sort_cmp);
    for (size_t i = 0; i < cx->rels.len; i++) {
        raw_rel *r = &cx->rels.items[i];
        if (has_computed(sorted, n, r->table, r->ftable))
            r->dropped = true;
    }
    for (size_t i = 0; i < n; i++) {
        const pgr_computed_def *c = &cx->in->computed[i];
        raw_rel *r = rel_push(cx);
        if (r == NULL)
            return;
        r->computed = true;
        r->table = mkqi(c->table_schema, c->table);
        r->ftable = mkqi(c->target_schema, c->target);
        r->function = mkqi(c->function_schema, c->function);
        r->card = c->to_one ? PGR_REL_M2O : PGR_REL_O2M;
        r->is_self = qi_eq(r->table, r->ftable);
    }
}

/* -------------------------------------------------------------- sorting */

typedef struct sorted_rel {
    const raw_rel *r;
    const pgr_table *t, *ft, *jt;
    size_t tidx;
} sorted_rel;

static int bool_cmp(bool a, bool b)
{
    return (int)a - (int)b;
}

static int card_rank(pgr_cardinality c)
{
    switch (c) {
    case PGR_REL_O2M: return 0;
    case PGR_REL_M2O: return 1;
    case PGR_REL_O2O: return 2;
    case PGR_REL_M2M: return 3;
    }
    return 4;
}

/* Haskell's Ord on [(a, b)]: pairwise, then length. */
static int pairs_cmp(const char **a1, const char **b1, size_t n1,
                     const char **a2, const char **b2, size_t n2)
{
    size_t n = n1 < n2 ? n1 : n2;
    for (size_t i = 0; i < n; i++) {
        int c = strcmp(a1[i], a2[i]);
        if (c == 0)
            c = strcmp(b1[i], b2[i]);
        if (c != 0)
            return c;
    }
    return (n1 > n2) - (n1 < n2);
}

static int m2m_cmp(const raw_rel *a, const raw_rel *b)
{
    int c = qi_cmp(a->junction, b->junction);
    if (c == 0)
        c = strcmp(a->cons, b->cons);
    if (c == 0)
        c = strcmp(a->cons2, b->cons2);
    if (c == 0)
        c = pairs_cmp(a->cols, a->jcols1, a->n, b->cols, b->jcols1, b->n);
    if (c == 0)
        c = pairs_cmp(a->cols2, a->jcols2, a->n2, b->cols2, b->jcols2, b->n2);
    return c;
}

static int card_cmp(const raw_rel *a, const raw_rel *b)
{
    int c = card_rank(a->card) - card_rank(b->card);
    if (c != 0)
        return c;
    if (a->card == PGR_REL_M2M)
        return m2m_cmp(a, b);
    c = strcmp(a->cons, b->cons);
    if (c == 0)
        c = pairs_cmp(a->cols, a->fcols, a->n, b->cols, b->fcols, b->n);
    if (c == 0)
        c = bool_cmp(a->is_parent, b->is_parent);
    return c;
}

/* PostgREST's derived Ord of Relationship (same origin table). */
static int rel_order(const raw_rel *a, const raw_rel *b)
{
    int c = bool_cmp(a->computed, b->computed);
    if (c != 0)
        return c;
    if (a->computed) {
        c = qi_cmp(a->function, b->function);
        if (c == 0)
            c = qi_cmp(a->ftable, b->ftable);
        if (c == 0)
            c = bool_cmp(a->card == PGR_REL_M2O, b->card == PGR_REL_M2O);
        return c;
    }
    c = qi_cmp(a->ftable, b->ftable);
    if (c == 0)
        c = bool_cmp(a->is_self, b->is_self);
    if (c == 0)
        c = card_cmp(a, b);
    if (c == 0)
        c = bool_cmp(a->table_is_view, b->table_is_view);
    if (c == 0)
        c = bool_cmp(a->ftable_is_view, b->ftable_is_view);
    return c;
}

static int sorted_rel_cmp(const void *pa, const void *pb)
{
    const sorted_rel *a = pa, *b = pb;
    if (a->tidx != b->tidx)
        return a->tidx < b->tidx ? -1 : 1;
    int c = rel_order(a->r, b->r);
    if (c == 0) /* deterministic */
        c = (a->r > b->r) - (a->r < b->r);
    return c;
}

/* ------------------------------------------------------- materializing */

/* Resolves the tables of r in the cache and applies removeInternal. */
static bool resolve(const derive_ctx *cx, const raw_rel *r, sorted_rel *out)
{
    const char *const *ex = cx->in->exposed_schemas;
    if (r->dropped || !schema_exposed(ex, r->table.schema) ||
        !schema_exposed(ex, r->ftable.schema))
        return false;
    out->r = r;
    out->t = pgr_find_table(cx->sc, r->table.schema, r->table.name);
    out->ft = pgr_find_table(cx->sc, r->ftable.schema, r->ftable.name);
    out->jt = NULL;
    if (out->t == NULL || out->ft == NULL)
        return false;
    if (r->card == PGR_REL_M2M && !r->computed) {
        if (!schema_exposed(ex, r->junction.schema))
            return false;
        out->jt = pgr_find_table(cx->sc, r->junction.schema, r->junction.name);
        if (out->jt == NULL)
            return false;
    }
    out->tidx = (size_t)(out->t - cx->sc->tables);
    return true;
}

static void fill_rel(pgr_relationship *o, const sorted_rel *s)
{
    const raw_rel *r = s->r;
    memset(o, 0, sizeof(*o));
    o->table = s->t;
    o->foreign_table = s->ft;
    o->cardinality = r->card;
    o->is_self = r->is_self;
    o->is_parent = r->is_parent;
    if (r->computed) {
        o->is_computed = true;
        o->function_schema = r->function.schema;
        o->function_name = r->function.name;
        return;
    }
    o->constraint_name = r->cons;
    o->cols = r->cols;
    o->n_cols = r->n;
    if (r->card != PGR_REL_M2M) {
        o->fcols = r->fcols;
        return;
    }
    o->junction = s->jt;
    o->junction_constraint1 = r->cons;
    o->junction_constraint2 = r->cons2;
    o->jcols1 = r->jcols1;
    o->n_jcols1 = r->n;
    o->jcols2 = r->jcols2;
    o->n_jcols2 = r->n2;
    o->cols2 = r->cols2;
}

/* Copies the pointer arrays of raw relationships (which live in the
 * temporary arena) into the cache arena. */
static const char **keep_strv(pgrest_arena *a, const char **v, size_t n,
                              bool *oom)
{
    if (v == NULL || n == 0)
        return NULL;
    const char **c = PGR_NEW_ARRAY(a, const char *, n);
    if (c == NULL) {
        *oom = true;
        return NULL;
    }
    memcpy(c, v, n * sizeof(*c));
    return c;
}

static void persist_arrays(pgr_relationship *o, pgrest_arena *a, bool *oom)
{
    o->cols = keep_strv(a, o->cols, o->n_cols, oom);
    o->fcols = keep_strv(a, o->fcols, o->n_cols, oom);
    o->jcols1 = keep_strv(a, o->jcols1, o->n_jcols1, oom);
    o->jcols2 = keep_strv(a, o->jcols2, o->n_jcols2, oom);
    o->cols2 = keep_strv(a, o->cols2, o->n_jcols2, oom);
}

/* A relationship removeInternal drops -- its target or junction is
 * internal, or its target missing from the cache -- leaves its key
 * behind when the origin is exposed (the filter on keys only looks at
 * the origin). */
static const pgr_table *emptied_key_table(const derive_ctx *cx, const raw_rel *r)
{
    if (r->dropped || !schema_exposed(cx->in->exposed_schemas, r->table.schema))
        return NULL;
    return pgr_find_table(cx->sc, r->table.schema, r->table.name);
}

static bool keep_emptied_keys(derive_ctx *cx, const bool *kept)
{
    pgr_schema_cache *sc = cx->sc;
    size_t n = cx->rels.len, k = 0;
    for (size_t i = 0; i < n; i++)
        k += !kept[i] && emptied_key_table(cx, &cx->rels.items[i]) != NULL;
    sc->emptied_rel_keys = PGR_NEW_ARRAY(sc->arena, pgr_rel_key, k ? k : 1);
    sc->n_emptied_rel_keys = 0;
    if (sc->emptied_rel_keys == NULL)
        return false;
    for (size_t i = 0; i < n; i++) {
        const raw_rel *r = &cx->rels.items[i];
        const pgr_table *t = kept[i] ? NULL : emptied_key_table(cx, r);
        const char *schema = r->computed ? r->function.schema : r->ftable.schema;
        if (t != NULL && !pgr_table_has_rel_key(sc, t, schema))
            sc->emptied_rel_keys[sc->n_emptied_rel_keys++] = (pgr_rel_key){ t, schema };
    }
    return true;
}

static bool materialize(derive_ctx *cx)
{
    pgr_schema_cache *sc = cx->sc;
    size_t n = cx->rels.len, k = 0;
    sorted_rel *s = PGR_NEW_ARRAY(cx->tmp, sorted_rel, n ? n : 1);
    sc->rel_offsets = PGR_NEW_ARRAY(sc->arena, size_t, sc->n_tables + 1);
    if (s == NULL || sc->rel_offsets == NULL)
        return false;
    bool *kept = PGR_NEW_ARRAY(cx->tmp, bool, n ? n : 1);
    if (kept == NULL)
        return false;
    for (size_t i = 0; i < n; i++) {
        kept[i] = resolve(cx, &cx->rels.items[i], &s[k]);
        if (kept[i])
            k++;
    }
    qsort(s, k, sizeof(*s), sorted_rel_cmp);
    sc->relationships = PGR_NEW_ARRAY(sc->arena, pgr_relationship, k ? k : 1);
    if (sc->relationships == NULL)
        return false;
    bool oom = false;
    for (size_t i = 0; i < k; i++) {
        fill_rel(&sc->relationships[i], &s[i]);
        persist_arrays(&sc->relationships[i], sc->arena, &oom);
    }
    sc->n_relationships = k;
    size_t j = 0;
    for (size_t t = 0; t <= sc->n_tables; t++) {
        while (j < k && s[j].tidx < t)
            j++;
        sc->rel_offsets[t] = j;
    }
    return !oom && keep_emptied_keys(cx, kept);
}

int pgr_derive_relationships(pgr_schema_cache *sc, const pgr_rel_input *in,
                             pgrest_error *err)
{
    derive_ctx cx;
    memset(&cx, 0, sizeof(cx));
    cx.sc = sc;
    cx.in = in;
    cx.tmp = pgrest_arena_new((size_t)1 << 30);
    if (cx.tmp == NULL)
        return pgr_error_oom(err);
    bool ok = build_view_index(&cx);
    if (ok) {
        add_fk_rels(&cx);
        add_view_rels(&cx);
        add_m2m_rels(&cx);
        add_inverse_rels(&cx);
        add_computed_rels(&cx);
        ok = !cx.oom && materialize(&cx);
    }
    pgrest_arena_free(cx.tmp);
    return ok ? PGREST_OK : pgr_error_oom(err);
}
