/* Query string decoding (http-types parseQueryReplacePlus True) and the
 * classification of PostgREST src/ApiRequest/QueryParams.hs `parse`. */
#include "parse/query_string.h"

#include <stdlib.h>
#include <string.h>

#include "parse/distinct_parser.h"
#include "parse/filter_parser.h"
#include "parse/order_parser.h"
#include "parse/param_name.h"
#include "parse/ranges.h"
#include "parse/select_parser.h"
#include "util/error.h"
#include "util/number.h"
#include "util/str_list.h"
#include "util/strbuf.h"

/* ------------------------------------------------------------ decoding */

char *pgr_percent_decode_n(pgrest_arena *a, const char *s, size_t n,
                           bool plus_as_space, size_t *out_len)
{
    char *out = pgr_alloc(a, n + 1);
    if (out == NULL)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        int hi = s[i] == '%' && i + 2 < n ? pgr_hex_value(s[i + 1]) : -1;
        int lo = hi >= 0 ? pgr_hex_value(s[i + 2]) : -1;
        if (lo >= 0) {
            out[o++] = (char)(hi * 16 + lo);
            i += 2;
        } else if (s[i] == '+' && plus_as_space) {
            out[o++] = ' ';
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = '\0';
    if (out_len != NULL)
        *out_len = o;
    return out;
}

char *pgr_percent_decode(pgrest_arena *a, const char *s, size_t n,
                         bool plus_as_space)
{
    return pgr_percent_decode_n(a, s, n, plus_as_space, NULL);
}

static pgr_kv *decode_piece(pgrest_arena *a, const char *p, size_t n)
{
    pgr_kv *kv = PGR_NEW(a, pgr_kv);
    if (kv == NULL)
        return NULL;
    const char *eq = memchr(p, '=', n);
    size_t kn = eq ? (size_t)(eq - p) : n;
    kv->name = pgr_percent_decode_n(a, p, kn, true, &kv->name_len);
    if (eq != NULL)
        kv->value = pgr_percent_decode_n(a, eq + 1, n - kn - 1, true,
                                         &kv->value_len);
    if (kv->name == NULL || (eq != NULL && kv->value == NULL))
        return NULL;
    return kv;
}

/* http-types parseQueryString': break on '&' or ';' until nothing is
 * left, so an empty piece in the middle is the pair ("", Nothing) */
pgr_kv *pgr_query_string_decode(pgrest_arena *a, const char *qs)
{
    return qs != NULL ? pgr_query_string_decode_n(a, qs, strlen(qs)) : NULL;
}

pgr_kv *pgr_query_string_decode_n(pgrest_arena *a, const char *qs, size_t n)
{
    pgr_kv *head = NULL, **tail = &head;
    const char *end = qs + n;
    if (qs < end && *qs == '?')
        qs++;
    while (qs < end) {
        size_t k = 0;
        while (qs + k < end && qs[k] != '&' && qs[k] != ';')
            k++;
        pgr_kv *kv = decode_piece(a, qs, k);
        if (kv == NULL)
            return NULL;
        *tail = kv;
        tail = &kv->next;
        qs += k;
        if (qs < end)
            qs++;
    }
    return head;
}

/* ------------------------------------------------------------ helpers */


static bool name_is(const pgr_kv *p, const char *word)
{
    return p->name_len == strlen(word) && memcmp(p->name, word, p->name_len) == 0;
}

static bool is_reserved_embeddable(const pgr_kv *p)
{
    return pgr_param_ends_in(p, "order") || pgr_param_ends_in(p, "limit") ||
           pgr_param_ends_in(p, "offset") || pgr_param_ends_in(p, "and") || pgr_param_ends_in(p, "or");
}

static bool is_reserved_root(const pgr_kv *p)
{
    return name_is(p, "select") || name_is(p, "columns") ||
           name_is(p, "on_conflict");
}

/* pTreePath: pFieldName `sepBy1` pDelimiter, then a JSON path on the last
 * name (what follows is ignored: P.parse has no eof) */
static int tree_path(pgrest_arena *a, const char *key, size_t key_len,
                     pgr_embed_path *path, pgr_field *field, pgrest_error *err)
{
    pgr_pstate ps;
    pgr_ps_init(&ps, a, key, key_len);
    pgr_str_list l = {0};
    memset(field, 0, sizeof(*field));
    for (;;) {
        if (pgr_ps_field_name(&ps, &field->name) != PGR_P_OK || ps.oom)
            return pgr_ps_error_n(&ps, "tree path", key, key_len, err);
        if (ps.pos >= ps.len || ps.s[ps.pos] != '.')
            break;
        if (!pgr_str_list_push(a, &l, field->name))
            return pgr_error_oom(err);
        ps.pos++;
    }
    /* P.option [] pJsonPath on the last name; no eof after it */
    if (pgr_ps_json_path(&ps, &field->json_path) != PGR_P_OK || ps.oom)
        return pgr_ps_error_n(&ps, "tree path", key, key_len, err);
    if (ps.kept_nul)
        return pgr_ps_nul_error(err);
    path->names = l.items;
    path->n = l.n;
    return PGREST_OK;
}

/* pLogicPath: pFieldName `sepBy1` pDelimiter (no eof). The operator is
 * the last name ("or", "and", or whatever stopped there: pLogicTree then
 * fails on it), prefixed "not." when any name is "not"; the embed path is
 * the names before it without the "not"s. */
static int logic_path(pgrest_arena *a, const char *key, size_t key_len,
                      pgr_embed_path *path, const char **op, pgrest_error *err)
{
    pgr_pstate ps;
    pgr_ps_init(&ps, a, key, key_len);
    pgr_str_list l = {0};
    bool negated = false;
    const char *last = NULL;
    for (;;) {
        const char *name;
        if (pgr_ps_field_name(&ps, &name) != PGR_P_OK || ps.oom)
            return pgr_ps_error_n(&ps, "logic path", key, key_len, err);
        if (strcmp(name, "not") == 0)
            negated = true;
        if (last != NULL && strcmp(last, "not") != 0 &&
            !pgr_str_list_push(a, &l, last))
            return pgr_error_oom(err);
        last = name;
        if (ps.pos >= ps.len || ps.s[ps.pos] != '.')
            break;
        ps.pos++;
    }
    if (ps.kept_nul)
        return pgr_ps_nul_error(err);
    *op = negated ? pgr_asprintf(a, "not.%s", last) : last;
    if (*op == NULL)
        return pgr_error_oom(err);
    path->names = l.items;
    path->n = l.n;
    return PGREST_OK;
}

/* pColumns: pFieldName `sepBy1` lexeme (char ',') */
static int parse_columns(pgrest_arena *a, const char *what, const char *text,
                         size_t len, pgr_str_list *l, pgrest_error *err)
{
    pgr_pstate ps;
    pgr_ps_init(&ps, a, text, len);
    for (;;) {
        const char *name;
        if (pgr_ps_field_name(&ps, &name) != PGR_P_OK || ps.oom)
            return pgr_ps_error_n(&ps, what, text, len, err);
        if (ps.kept_nul)
            return pgr_ps_nul_error(err);
        if (!pgr_str_list_push(a, l, name))
            return pgr_error_oom(err);
        size_t save = ps.pos;
        pgr_ps_ws(&ps);
        /* sepBy1 without eof: what follows the last name is ignored */
        if (ps.pos >= ps.len || ps.s[ps.pos] != ',') {
            ps.pos = save;
            return PGREST_OK;
        }
        ps.pos++;
        pgr_ps_ws(&ps);
    }
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* qsColumns is a Set: sorted, without duplicates */
static void sort_unique(pgr_str_list *l)
{
    if (l->n == 0)
        return;
    qsort((void *)l->items, l->n, sizeof(*l->items), cmp_str);
    size_t o = 1;
    for (size_t i = 1; i < l->n; i++)
        if (strcmp(l->items[i], l->items[o - 1]) != 0)
            l->items[o++] = l->items[i];
    l->n = o;
}


/* ------------------------------------------------------------ classification */

typedef struct qp_state {
    pgrest_arena *a;
    pgr_query_params *out;
    pgr_path_filter **filters_tail;
    pgr_path_logic **logic_tail;
    pgr_path_logic **havings_tail;
    pgr_path_order **orders_tail;
    pgr_path_distinct **distincts_tail;
    pgr_kv **rpc_tail;
    const pgr_parse_limits *lim;
    int n_filters;                  /* filters + logic-tree leaves so far */
    bool is_rpc;                    /* params without operator: arguments */
    bool related_leaves;            /* pgrest's rel.col.op.value leaves */
    bool distinct;                  /* pgrest's distinct= where free */
} qp_state;

/* request-max-filters: each filter becomes SQL the database must plan, so
 * their number is bounded like PostgreSQL bounds its own inputs. */
static int count_filters(qp_state *st, int n, pgrest_error *err)
{
    st->n_filters += n;
    if (st->n_filters <= st->lim->max_filters)
        return PGREST_OK;
    return pgr_errorf(err, st->a, 400, "PGRST100",
                      pgr_asprintf(st->a, "The request has more than %d filters "
                                   "(including and/or conditions); the limit is "
                                   "set by request-max-filters",
                                   st->lim->max_filters),
                      NULL, "Too many filters");
}

/* Leaves of a logic tree; recursion is bounded by request-max-depth. */
static int logic_leaves(const pgr_logic_tree *t)
{
    if (t->is_leaf)
        return 1;
    int n = 0;
    for (const pgr_logic_tree *c = t->children; c != NULL; c = c->next)
        n += logic_leaves(c);
    return n;
}

/* lookupParam: the first pair with that name (a pair without '=' hides
 * later ones, as Data.List.lookup does) */
static const pgr_kv *first_param(const pgr_kv *params, const char *name)
{
    for (const pgr_kv *p = params; p != NULL; p = p->next)
        if (name_is(p, name))
            return p->value != NULL ? p : NULL;
    return NULL;
}

static int add_order(qp_state *st, const pgr_kv *p, pgrest_error *err)
{
    pgr_path_order *o = PGR_NEW(st->a, pgr_path_order);
    if (o == NULL)
        return pgr_error_oom(err);
    pgr_field ignored;
    int rc = tree_path(st->a, p->name, p->name_len, &o->path, &ignored, err);
    if (rc == PGREST_OK)
        rc = pgr_parse_order_n(st->a, p->value, p->value_len, &o->terms, err);
    if (rc != PGREST_OK)
        return rc;
    *st->orders_tail = o;
    st->orders_tail = &o->next;
    return PGREST_OK;
}

static int add_logic(qp_state *st, const pgr_kv *p, pgrest_error *err)
{
    pgr_path_logic *l = PGR_NEW(st->a, pgr_path_logic);
    if (l == NULL)
        return pgr_error_oom(err);
    const char *op;
    int rc = logic_path(st->a, p->name, p->name_len, &l->path, &op, err);
    if (rc == PGREST_OK)
        rc = pgr_parse_logic_tree_ext(st->a, op, p->value, p->value_len,
                                      st->lim->max_depth, st->related_leaves,
                                      &l->tree, err);
    if (rc == PGREST_OK)
        rc = count_filters(st, logic_leaves(l->tree), err);
    if (rc != PGREST_OK)
        return rc;
    *st->logic_tail = l;
    st->logic_tail = &l->next;
    return PGREST_OK;
}

/* `having=(...)` (any embed path): the value PostgREST's filter grammar
 * rejects, since no operator starts with '(', read as the children of an
 * and=(...) tree (pgrest's extension, docs/aggregates.md). */
static bool is_having(const pgr_kv *p)
{
    return pgr_param_ends_in(p, "having") && p->value_len > 0 && p->value[0] == '(';
}

static int add_having(qp_state *st, const pgr_kv *p, const pgr_embed_path *path,
                      pgrest_error *err)
{
    pgr_path_logic *h = PGR_NEW(st->a, pgr_path_logic);
    if (h == NULL)
        return pgr_error_oom(err);
    h->path = *path;
    int rc = pgr_parse_having_tree(st->a, p->value, p->value_len, st->lim->max_depth,
                                   &h->tree, err);
    if (rc == PGREST_OK)
        rc = count_filters(st, logic_leaves(h->tree), err);
    if (rc != PGREST_OK)
        return rc;
    *st->havings_tail = h;
    st->havings_tail = &h->next;
    return PGREST_OK;
}

static int add_rpc_param(qp_state *st, const char *name, const pgr_kv *p,
                         pgrest_error *err)
{
    /* a NUL is kept (value_len): the call planner refuses it for the
     * argument it is, once the function is found */
    pgr_kv *kv = PGR_NEW(st->a, pgr_kv);
    if (kv == NULL)
        return pgr_error_oom(err);
    kv->name = name;
    kv->value = p->value;
    kv->name_len = strlen(name);
    kv->value_len = p->value_len;
    *st->rpc_tail = kv;
    st->rpc_tail = &kv->next;
    return PGREST_OK;
}

/* docs/distinct.md, reserved only where free: on a relation read,
 * `[path.]distinct=v` is a distinct only when PostgREST's filter grammar
 * rejects v (its answer was PGRST100); `distinct=eq.x` stays a filter on
 * a column named distinct. */
static bool is_free_distinct(const qp_state *st, const pgr_kv *p)
{
    if (!st->distinct || !pgr_param_ends_in(p, "distinct"))
        return false;
    pgr_pstate ps;
    pgr_op_expr ignored;
    pgr_ps_init(&ps, st->a, p->value, p->value_len);
    return pgr_ps_op_expr(&ps, false, &ignored) != PGR_P_OK && !ps.oom;
}

static int add_distinct(qp_state *st, const pgr_kv *p, pgrest_error *err)
{
    pgr_path_distinct *d = PGR_NEW(st->a, pgr_path_distinct);
    if (d == NULL)
        return pgr_error_oom(err);
    pgr_field ignored;
    int rc = tree_path(st->a, p->name, p->name_len, &d->path, &ignored, err);
    if (rc == PGREST_OK)
        rc = pgr_parse_distinct_n(st->a, p->value, p->value_len, d, err);
    if (rc != PGREST_OK)
        return rc;
    *st->distincts_tail = d;
    st->distincts_tail = &d->next;
    return PGREST_OK;
}

static int add_filter(qp_state *st, const pgr_kv *p, bool is_rpc,
                      pgrest_error *err)
{
    pgr_path_filter *f = PGR_NEW(st->a, pgr_path_filter);
    if (f == NULL)
        return pgr_error_oom(err);
    int rc = tree_path(st->a, p->name, p->name_len, &f->path,
                       &f->filter.field, err);
    if (rc != PGREST_OK)
        return rc;
    pgr_pstate ps;
    pgr_ps_init(&ps, st->a, p->value, p->value_len);
    rc = pgr_ps_op_expr(&ps, false, &f->filter.expr);
    if (rc != PGR_P_OK || ps.oom) {
        /* RPC: pOpExpr pSingleVal <|> pure NoOpExpr -> function argument,
         * unless the operator syntax failed after consuming input */
        if (is_rpc && rc == PGR_P_EMPTY && !ps.oom)
            return add_rpc_param(st, f->filter.field.name, p, err);
        if (!is_rpc && !ps.oom && is_having(p))
            return add_having(st, p, &f->path, err);
        return pgr_ps_error_n(&ps, "filter", p->value, p->value_len, err);
    }
    /* P.parse without eof: "is.null<rest>" ignores the rest; a NUL kept
     * in the value would reach PostgreSQL, which refuses it */
    if (ps.kept_nul)
        return pgr_ps_nul_error(err);
    rc = count_filters(st, 1, err);
    if (rc != PGREST_OK)
        return rc;
    *st->filters_tail = f;
    st->filters_tail = &f->next;
    return PGREST_OK;
}

static int parse_orders_and_logic(qp_state *st, const pgr_kv *params,
                                  pgrest_error *err)
{
    for (const pgr_kv *p = params; p != NULL; p = p->next) {
        if (p->value == NULL || !pgr_param_ends_in(p, "order"))
            continue;
        int rc = add_order(st, p, err);
        if (rc != PGREST_OK)
            return rc;
    }
    for (const pgr_kv *p = params; p != NULL; p = p->next) {
        if (p->value == NULL || !(pgr_param_ends_in(p, "and") || pgr_param_ends_in(p, "or")))
            continue;
        int rc = add_logic(st, p, err);
        if (rc != PGREST_OK)
            return rc;
    }
    return PGREST_OK;
}

static int parse_root_params(qp_state *st, const pgr_kv *params,
                             pgrest_error *err)
{
    pgr_query_params *out = st->out;
    const pgr_kv *cols = first_param(params, "columns");
    if (cols != NULL) {
        pgr_str_list l = {0};
        int rc = parse_columns(st->a, "columns parameter", cols->value,
                               cols->value_len, &l, err);
        if (rc != PGREST_OK)
            return rc;
        sort_unique(&l);
        out->columns = l.items;
        out->n_columns = l.n;
        out->has_columns = true;
    }
    const pgr_kv *sel = first_param(params, "select");
    if (sel != NULL) {
        out->has_select = true;
        int rc = pgr_parse_select_n(st->a, sel->value, sel->value_len,
                                    st->lim->max_depth, &out->select, err);
        if (rc != PGREST_OK)
            return rc;
    }
    return PGREST_OK;
}

static int parse_filters(qp_state *st, const pgr_kv *params,
                         pgrest_error *err)
{
    for (const pgr_kv *p = params; p != NULL; p = p->next) {
        if (p->value == NULL || is_reserved_root(p) || is_reserved_embeddable(p))
            continue;
        int rc = is_free_distinct(st, p) ? add_distinct(st, p, err)
                                         : add_filter(st, p, st->is_rpc, err);
        if (rc != PGREST_OK)
            return rc;
    }
    const pgr_kv *oc = first_param(params, "on_conflict");
    if (oc != NULL) {
        pgr_str_list l = {0};
        int rc = parse_columns(st->a, "on_conflict parameter", oc->value,
                               oc->value_len, &l, err);
        if (rc != PGREST_OK)
            return rc;
        st->out->on_conflict = l.items;
        st->out->n_on_conflict = l.n;
    }
    return PGREST_OK;
}

/* ------------------------------------------------------------ canonical */

typedef struct sort_kv {
    const pgr_kv *kv;
    size_t idx;
} sort_kv;

static int cmp_kv(const void *x, const void *y)
{
    const sort_kv *p = x, *q = y;
    size_t n = p->kv->name_len < q->kv->name_len ? p->kv->name_len : q->kv->name_len;
    int c = memcmp(p->kv->name, q->kv->name, n);
    if (c == 0 && p->kv->name_len != q->kv->name_len)
        c = p->kv->name_len < q->kv->name_len ? -1 : 1;
    if (c != 0)
        return c;
    return p->idx < q->idx ? -1 : p->idx > q->idx;
}

/* http-types urlEncode True: unreserved ALPHA DIGIT - _ . ~ */
static void put_url_encoded(pgr_sb *sb, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; n > 0; p++, n--) {
        unsigned char c = *p;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
            c == '~') {
            pgr_sb_putc(sb, (char)c);
        } else {
            pgr_sb_putc(sb, '%');
            pgr_sb_putc(sb, hex[c >> 4]);
            pgr_sb_putc(sb, hex[c & 15]);
        }
    }
}

static bool same_name(const pgr_kv *p, const pgr_kv *q)
{
    return p->name_len == q->name_len && memcmp(p->name, q->name, p->name_len) == 0;
}

/* qsCanonical: params sorted by name, re-encoded (Content-Location).
 * Network.HTTP.Base urlEncodeVars writes a repeated name once, its
 * values joined by a literal comma: a=gt.1&a=lt.3 is a=gt.1,lt.3. */
static const char *canonical(pgrest_arena *a, const pgr_kv *params)
{
    size_t n = 0;
    for (const pgr_kv *p = params; p != NULL; p = p->next)
        n++;
    sort_kv *arr = n ? PGR_NEW_ARRAY(a, sort_kv, n) : NULL;
    if (n > 0 && arr == NULL)
        return NULL;
    size_t i = 0;
    for (const pgr_kv *p = params; p != NULL; p = p->next, i++)
        arr[i] = (sort_kv){p, i};
    if (n > 1)
        qsort(arr, n, sizeof(*arr), cmp_kv);
    pgr_sb sb;
    pgr_sb_init(&sb, a, 64);
    for (i = 0; i < n; i++) {
        if (i > 0 && same_name(arr[i - 1].kv, arr[i].kv)) {
            pgr_sb_putc(&sb, ',');
        } else {
            if (i > 0)
                pgr_sb_putc(&sb, '&');
            put_url_encoded(&sb, arr[i].kv->name, arr[i].kv->name_len);
            pgr_sb_putc(&sb, '=');
        }
        if (arr[i].kv->value != NULL)
            put_url_encoded(&sb, arr[i].kv->value, arr[i].kv->value_len);
    }
    return pgr_sb_finish(&sb);
}

int pgr_query_params_parse(pgrest_arena *a, const pgr_kv *params, bool is_rpc,
                           const pgr_parse_limits *lim, pgr_query_params *out,
                           pgrest_error *err)
{
    return pgr_query_params_parse_ext(a, params, is_rpc, NULL, lim, out, err);
}

int pgr_query_params_parse_ext(pgrest_arena *a, const pgr_kv *params, bool is_rpc,
                               const pgr_params_extensions *ext,
                               const pgr_parse_limits *lim,
                               pgr_query_params *out, pgrest_error *err)
{
    memset(out, 0, sizeof(*out));
    qp_state st = {.a = a, .out = out, .filters_tail = &out->filters,
                   .logic_tail = &out->logic, .havings_tail = &out->havings,
                   .orders_tail = &out->orders, .distincts_tail = &out->distincts,
                   .rpc_tail = &out->rpc_params,
                   .lim = lim ? lim : pgr_parse_limits_default(), .is_rpc = is_rpc,
                   .related_leaves = ext != NULL && ext->related_leaves,
                   .distinct = ext != NULL && ext->distinct};
    out->canonical = canonical(a, params);
    if (out->canonical == NULL)
        return pgr_error_oom(err);
    int rc;
    /* the order PostgREST's parse reports errors in */
    if ((rc = parse_orders_and_logic(&st, params, err)) != PGREST_OK ||
        (rc = parse_root_params(&st, params, err)) != PGREST_OK ||
        (rc = parse_filters(&st, params, err)) != PGREST_OK ||
        (rc = pgr_parse_ranges(a, params, out, err)) != PGREST_OK)
        return rc;
    return PGREST_OK;
}
