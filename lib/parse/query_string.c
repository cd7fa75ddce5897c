/* Query string decoding (http-types parseQueryReplacePlus True) and the
 * classification of PostgREST src/ApiRequest/QueryParams.hs `parse`. */
#include "parse/query_string.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "parse/filter_parser.h"
#include "parse/order_parser.h"
#include "parse/select_parser.h"
#include "util/error.h"
#include "util/number.h"
#include "util/str_list.h"
#include "util/strbuf.h"

/* ------------------------------------------------------------ decoding */

char *pgr_percent_decode(pgrest_arena *a, const char *s, size_t n,
                         bool plus_as_space)
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
    return out;
}

static pgr_kv *decode_piece(pgrest_arena *a, const char *p, size_t n)
{
    pgr_kv *kv = PGR_NEW(a, pgr_kv);
    if (kv == NULL)
        return NULL;
    const char *eq = memchr(p, '=', n);
    size_t kn = eq ? (size_t)(eq - p) : n;
    kv->name = pgr_percent_decode(a, p, kn, true);
    if (eq != NULL)
        kv->value = pgr_percent_decode(a, eq + 1, n - kn - 1, true);
    if (kv->name == NULL || (eq != NULL && kv->value == NULL))
        return NULL;
    return kv;
}

pgr_kv *pgr_query_string_decode(pgrest_arena *a, const char *qs)
{
    pgr_kv *head = NULL, **tail = &head;
    if (qs == NULL)
        return NULL;
    if (*qs == '?')
        qs++;
    while (*qs) {
        size_t n = strcspn(qs, "&;");
        if (n > 0) {
            pgr_kv *kv = decode_piece(a, qs, n);
            if (kv == NULL)
                return NULL;
            *tail = kv;
            tail = &kv->next;
        }
        qs += n;
        if (*qs)
            qs++;
    }
    return head;
}

/* ------------------------------------------------------------ helpers */


static const char *last_segment(const char *key)
{
    const char *dot = strrchr(key, '.');
    return dot ? dot + 1 : key;
}

static bool ends_in(const char *key, const char *word)
{
    return strcmp(last_segment(key), word) == 0;
}

static bool is_reserved_embeddable(const char *key)
{
    return ends_in(key, "order") || ends_in(key, "limit") ||
           ends_in(key, "offset") || ends_in(key, "and") || ends_in(key, "or");
}

static bool is_reserved_root(const char *key)
{
    return strcmp(key, "select") == 0 || strcmp(key, "columns") == 0 ||
           strcmp(key, "on_conflict") == 0;
}

/* pTreePath: pFieldName `sepBy1` '.', then a JSON path on the last name */
static int tree_path(pgrest_arena *a, const char *key, pgr_embed_path *path,
                     pgr_field *field, pgrest_error *err)
{
    pgr_pstate ps;
    pgr_ps_init(&ps, a, key, strlen(key));
    pgr_str_list l = {0};
    for (;;) {
        pgr_field f = {0};
        if (pgr_ps_field(&ps, &f) != PGR_P_OK || ps.oom)
            return pgr_ps_error(&ps, "tree path", key, err);
        if (ps.pos < ps.len && ps.s[ps.pos] == '.') {
            if (!pgr_str_list_push(a, &l, f.name))
                return pgr_error_oom(err);
            ps.pos++;
            continue;
        }
        *field = f;
        break;
    }
    path->names = l.items;
    path->n = l.n;
    return PGREST_OK;
}

/* pLogicPath: the embed path without "not" segments; negated when any */
static int logic_path(pgrest_arena *a, const char *key, pgr_embed_path *path,
                      bool *negated, pgrest_error *err)
{
    pgr_pstate ps;
    pgr_ps_init(&ps, a, key, strlen(key));
    pgr_str_list l = {0};
    *negated = false;
    for (;;) {
        const char *name;
        if (pgr_ps_field_name(&ps, &name) != PGR_P_OK || ps.oom)
            return pgr_ps_error(&ps, "logic path", key, err);
        bool more = ps.pos < ps.len && ps.s[ps.pos] == '.';
        if (strcmp(name, "not") == 0)
            *negated = true;
        else if (more && !pgr_str_list_push(a, &l, name))
            return pgr_error_oom(err);
        if (!more)
            break;
        ps.pos++;
    }
    path->names = l.items;
    path->n = l.n;
    return PGREST_OK;
}

/* pColumns: pFieldName `sepBy1` lexeme (char ',') */
static int parse_columns(pgrest_arena *a, const char *what, const char *text,
                         pgr_str_list *l, pgrest_error *err)
{
    pgr_pstate ps;
    pgr_ps_init(&ps, a, text, strlen(text));
    for (;;) {
        const char *name;
        if (pgr_ps_field_name(&ps, &name) != PGR_P_OK || ps.oom)
            return pgr_ps_error(&ps, what, text, err);
        if (!pgr_str_list_push(a, l, name))
            return pgr_error_oom(err);
        size_t save = ps.pos;
        pgr_ps_ws(&ps);
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
    pgr_path_order **orders_tail;
    pgr_kv **rpc_tail;
    const pgr_parse_limits *lim;
    int n_filters;                  /* filters + logic-tree leaves so far */
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

static const char *first_value(const pgr_kv *params, const char *name,
                               bool *present)
{
    for (const pgr_kv *p = params; p != NULL; p = p->next) {
        if (strcmp(p->name, name) == 0) {
            *present = p->value != NULL;
            return p->value;
        }
    }
    *present = false;
    return NULL;
}

static int add_order(qp_state *st, const pgr_kv *p, pgrest_error *err)
{
    pgr_path_order *o = PGR_NEW(st->a, pgr_path_order);
    if (o == NULL)
        return pgr_error_oom(err);
    pgr_field ignored;
    int rc = tree_path(st->a, p->name, &o->path, &ignored, err);
    if (rc == PGREST_OK)
        rc = pgr_parse_order(st->a, p->value, &o->terms, err);
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
    bool negated;
    int rc = logic_path(st->a, p->name, &l->path, &negated, err);
    if (rc == PGREST_OK)
        rc = pgr_parse_logic_tree_max(st->a, ends_in(p->name, "or"), negated,
                                      p->value, st->lim->max_depth, &l->tree, err);
    if (rc == PGREST_OK)
        rc = count_filters(st, logic_leaves(l->tree), err);
    if (rc != PGREST_OK)
        return rc;
    *st->logic_tail = l;
    st->logic_tail = &l->next;
    return PGREST_OK;
}

static int add_rpc_param(qp_state *st, const char *name, const char *value,
                         pgrest_error *err)
{
    pgr_kv *kv = PGR_NEW(st->a, pgr_kv);
    if (kv == NULL)
        return pgr_error_oom(err);
    kv->name = name;
    kv->value = value;
    *st->rpc_tail = kv;
    st->rpc_tail = &kv->next;
    return PGREST_OK;
}

static int add_filter(qp_state *st, const pgr_kv *p, bool is_rpc,
                      pgrest_error *err)
{
    pgr_path_filter *f = PGR_NEW(st->a, pgr_path_filter);
    if (f == NULL)
        return pgr_error_oom(err);
    int rc = tree_path(st->a, p->name, &f->path, &f->filter.field, err);
    if (rc != PGREST_OK)
        return rc;
    pgr_pstate ps;
    pgr_ps_init(&ps, st->a, p->value, strlen(p->value));
    rc = pgr_ps_op_expr(&ps, false, &f->filter.expr);
    if (rc != PGR_P_OK || ps.oom) {
        /* RPC: pOpExpr pSingleVal <|> pure NoOpExpr -> function argument,
         * unless the operator syntax failed after consuming input */
        if (is_rpc && rc == PGR_P_EMPTY && !ps.oom)
            return add_rpc_param(st, f->filter.field.name, p->value, err);
        return pgr_ps_error(&ps, "filter", p->value, err);
    }
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
        if (p->value == NULL || !ends_in(p->name, "order"))
            continue;
        int rc = add_order(st, p, err);
        if (rc != PGREST_OK)
            return rc;
    }
    for (const pgr_kv *p = params; p != NULL; p = p->next) {
        if (p->value == NULL ||
            !(ends_in(p->name, "and") || ends_in(p->name, "or")))
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
    bool present;
    const char *cols = first_value(params, "columns", &present);
    if (present) {
        pgr_str_list l = {0};
        int rc = parse_columns(st->a, "columns parameter", cols, &l, err);
        if (rc != PGREST_OK)
            return rc;
        sort_unique(&l);
        out->columns = l.items;
        out->n_columns = l.n;
        out->has_columns = true;
    }
    const char *sel = first_value(params, "select", &present);
    if (present) {
        out->has_select = true;
        int rc = pgr_parse_select_max(st->a, sel, st->lim->max_depth,
                                      &out->select, err);
        if (rc != PGREST_OK)
            return rc;
    }
    return PGREST_OK;
}

static int parse_filters(qp_state *st, const pgr_kv *params, bool is_rpc,
                         pgrest_error *err)
{
    for (const pgr_kv *p = params; p != NULL; p = p->next) {
        if (p->value == NULL || is_reserved_root(p->name) ||
            is_reserved_embeddable(p->name))
            continue;
        int rc = add_filter(st, p, is_rpc, err);
        if (rc != PGREST_OK)
            return rc;
    }
    bool present;
    const char *oc = first_value(params, "on_conflict", &present);
    if (present) {
        pgr_str_list l = {0};
        int rc = parse_columns(st->a, "on_conflict parameter", oc, &l, err);
        if (rc != PGREST_OK)
            return rc;
        st->out->on_conflict = l.items;
        st->out->n_on_conflict = l.n;
    }
    return PGREST_OK;
}

/* ------------------------------------------------------------ ranges */

static bool same_path(const pgr_embed_path *x, const char *key, size_t n)
{
    /* key[0..n) is the dotted path text */
    size_t off = 0;
    for (size_t i = 0; i < x->n; i++) {
        size_t len = strlen(x->names[i]);
        if (i > 0) {
            if (off >= n || key[off] != '.')
                return false;
            off++;
        }
        if (off + len > n || memcmp(key + off, x->names[i], len) != 0)
            return false;
        off += len;
    }
    return off == n;
}

static pgr_path_range *range_for(pgrest_arena *a, pgr_query_params *out,
                                 const char *key)
{
    const char *dot = strrchr(key, '.');
    size_t n = dot ? (size_t)(dot - key) : 0;
    pgr_path_range **tail = &out->ranges;
    for (pgr_path_range *r = out->ranges; r != NULL; r = r->next) {
        if (same_path(&r->path, key, n))
            return r;
        tail = &r->next;
    }
    pgr_path_range *r = PGR_NEW(a, pgr_path_range);
    if (r == NULL)
        return NULL;
    r->offset = r->limit = -1;
    pgr_str_list l = {0};
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && key[j] != '.')
            j++;
        char *seg = pgr_strndup(a, key + i, j - i);
        if (seg == NULL || !pgr_str_list_push(a, &l, seg))
            return NULL;
        i = j + 1;
    }
    r->path.names = l.items;
    r->path.n = l.n;
    *tail = r;
    return r;
}

static int limit_error(const pgr_path_range *r, pgrest_error *err)
{
    if (r->path.n > 0)
        return pgr_error(err, 400, "2201W", "LIMIT must not be negative",
                         NULL, NULL);
    /* ApiRequest getRanges: InvalidRange NegativeLimit */
    return pgr_error(err, 416, "PGRST103", "Requested range not satisfiable",
                     "Limit should be greater than or equal to zero.", NULL);
}

static int parse_ranges(pgrest_arena *a, const pgr_kv *params,
                        pgr_query_params *out, pgrest_error *err)
{
    for (const pgr_kv *p = params; p != NULL; p = p->next) {
        bool is_limit = ends_in(p->name, "limit");
        long long v;
        if (p->value == NULL || !(is_limit || ends_in(p->name, "offset")) ||
            !pgr_read_integer(p->value, true, &v))
            continue;
        pgr_path_range *r = range_for(a, out, p->name);
        if (r == NULL)
            return pgr_error_oom(err);
        /* -1 means "not given": keep a given -1 limit negative but
         * distinct; a negative offset is a no-op (RangeSpec "succeeds if
         * offset is negative as a no-op") */
        if (is_limit)
            r->limit = v == -1 ? -2 : v;
        else
            r->offset = v < 0 ? 0 : v;
    }
    for (pgr_path_range *r = out->ranges; r != NULL; r = r->next) {
        if (r->limit < -1)
            return limit_error(r, err);
    }
    return PGREST_OK;
}

/* ------------------------------------------------------------ canonical */

typedef struct sort_kv {
    const char *name;
    const char *value;
    size_t idx;
} sort_kv;

static int cmp_kv(const void *x, const void *y)
{
    const sort_kv *p = x, *q = y;
    int c = strcmp(p->name, q->name);
    if (c != 0)
        return c;
    return p->idx < q->idx ? -1 : p->idx > q->idx;
}

/* http-types urlEncode True: unreserved ALPHA DIGIT - _ . ~ */
static void put_url_encoded(pgr_sb *sb, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
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

/* qsCanonical: params sorted by name, re-encoded (Content-Location) */
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
        arr[i] = (sort_kv){p->name, p->value ? p->value : "", i};
    if (n > 1)
        qsort(arr, n, sizeof(*arr), cmp_kv);
    pgr_sb sb;
    pgr_sb_init(&sb, a, 64);
    for (i = 0; i < n; i++) {
        if (i > 0)
            pgr_sb_putc(&sb, '&');
        put_url_encoded(&sb, arr[i].name);
        pgr_sb_putc(&sb, '=');
        put_url_encoded(&sb, arr[i].value);
    }
    return pgr_sb_finish(&sb);
}

int pgr_query_params_parse(pgrest_arena *a, const pgr_kv *params, bool is_rpc,
                           const pgr_parse_limits *lim, pgr_query_params *out,
                           pgrest_error *err)
{
    memset(out, 0, sizeof(*out));
    qp_state st = {a, out, &out->filters, &out->logic, &out->orders,
                   &out->rpc_params, lim ? lim : pgr_parse_limits_default(), 0};
    out->canonical = canonical(a, params);
    if (out->canonical == NULL)
        return pgr_error_oom(err);
    int rc;
    /* the order PostgREST's parse reports errors in */
    if ((rc = parse_orders_and_logic(&st, params, err)) != PGREST_OK ||
        (rc = parse_root_params(&st, params, err)) != PGREST_OK ||
        (rc = parse_filters(&st, params, is_rpc, err)) != PGREST_OK ||
        (rc = parse_ranges(a, params, out, err)) != PGREST_OK)
        return rc;
    return PGREST_OK;
}
