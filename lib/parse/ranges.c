/* limit / offset per embed path as PostgREST reads them (QueryParams.hs
 * `ranges`, RangeQuery.hs) and what PostgreSQL answers for the LIMIT /
 * OFFSET parameters limitOffsetF sends (Query/SqlFragment.hs). */
#include "parse/ranges.h"

#include <string.h>

#include "parse/param_name.h"
#include "util/error.h"
#include "util/str_list.h"

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

/* The entry for the path before the last '.' of key[0..key_len) (the
 * params' HashMap keyed by "path.limit", offsets renamed to it). */
static pgr_path_range *range_for(pgrest_arena *a, pgr_query_params *out,
                                 const char *key, size_t key_len)
{
    size_t n = key_len;
    while (n > 0 && key[n - 1] != '.')
        n--;
    n = n > 0 ? n - 1 : 0;
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

/* QueryParams `ranges`: the last limit / offset per path wins, read with
 * readMaybe (Nothing leaves the key present with allRange). */
static int collect_ranges(pgrest_arena *a, const pgr_kv *params,
                          pgr_query_params *out, pgrest_error *err)
{
    for (const pgr_kv *p = params; p != NULL; p = p->next) {
        bool is_limit = pgr_param_ends_in(p, "limit");
        if (p->value == NULL || !(is_limit || pgr_param_ends_in(p, "offset")))
            continue;
        pgr_path_range *r = range_for(a, out, p->name, p->name_len);
        if (r == NULL)
            return pgr_error_oom(err);
        pgr_hs_int v;
        bool oom;
        bool valid = pgr_hs_read_integer(a, p->value, p->value_len, &v, &oom);
        if (oom)
            return pgr_error_oom(err);
        if (is_limit) {
            r->has_limit = true;
            r->limit_n = valid ? v : (pgr_hs_int){false, NULL};
        } else {
            r->has_offset = true;
            r->offset_n = valid ? v : (pgr_hs_int){false, NULL};
        }
    }
    return PGREST_OK;
}

int pgr_range_of_path(pgrest_arena *a, const pgr_path_range *r,
                      pgr_hs_int *lower, pgr_hs_int *upper, bool *bounded)
{
    pgr_hs_int zero = pgr_hs_from_ll(a, 0), one = pgr_hs_from_ll(a, 1);
    if (zero.digits == NULL || one.digits == NULL)
        return PGREST_ERR_INTERNAL;
    *lower = zero;
    *bounded = false;
    bool l_ok = r->has_limit && r->limit_n.digits != NULL;
    bool o_ok = r->has_offset && r->offset_n.digits != NULL;
    if (r->has_limit && r->has_offset) {
        /* unionWith f: Range o (o + l - 1), a missing number counting 0 */
        *lower = o_ok ? r->offset_n : zero;
        *upper = pgr_hs_sub(a, pgr_hs_add(a, *lower, l_ok ? r->limit_n : zero), one);
        *bounded = true;
    } else if (l_ok) {
        *upper = pgr_hs_sub(a, r->limit_n, one); /* restrictRange */
        *bounded = true;
    } else if (o_ok) {
        *lower = r->offset_n; /* rangeGeq */
    }
    if (*bounded && upper->digits == NULL)
        return PGREST_ERR_INTERNAL;
    return PGREST_OK;
}

/* What PostgreSQL answers for `LIMIT $n OFFSET $m` (limitOffsetF): the
 * parameters are read as bigint first (22003), then the executor checks
 * OFFSET and LIMIT for negatives. */
int pgr_range_sql_values(pgrest_arena *a, pgr_hs_int lower, pgr_hs_int upper,
                         bool bounded, long long *offset, long long *limit,
                         pgrest_error *err)
{
    *limit = -1;
    pgr_hs_int count = {false, NULL};
    if (bounded) {
        count = pgr_hs_add(a, pgr_hs_sub(a, upper, lower), pgr_hs_from_ll(a, 1));
        if (count.digits == NULL)
            return pgr_error_oom(err);
    }
    pgr_hs_int shown[2] = {count, lower};
    for (int i = bounded ? 0 : 1; i < 2; i++) {
        long long v;
        if (!pgr_hs_to_ll(shown[i], &v))
            return pgr_errorf(err, a, 400, "22003", NULL, NULL,
                              "value \"%s\" is out of range for type bigint",
                              pgr_hs_show(a, shown[i]));
    }
    pgr_hs_to_ll(lower, offset);
    if (bounded)
        pgr_hs_to_ll(count, limit);
    if (*offset < 0)
        return pgr_error(err, 400, "2201X", "OFFSET must not be negative",
                         NULL, NULL);
    if (bounded && *limit < 0)
        return pgr_error(err, 400, "2201W", "LIMIT must not be negative",
                         NULL, NULL);
    return PGREST_OK;
}

/* Embedded ranges go to PostgreSQL as they are (Plan addRanges); the
 * root one is combined with the Range header by pgr_api_request. */
int pgr_parse_ranges(pgrest_arena *a, const pgr_kv *params,
                     pgr_query_params *out, pgrest_error *err)
{
    int rc = collect_ranges(a, params, out, err);
    if (rc != PGREST_OK)
        return rc;
    for (pgr_path_range *r = out->ranges; r != NULL; r = r->next) {
        r->offset = 0;
        r->limit = -1;
        pgr_hs_int lower, upper;
        bool bounded;
        if (pgr_range_of_path(a, r, &lower, &upper, &bounded) != PGREST_OK)
            return pgr_error_oom(err);
        if (r->path.n == 0) {
            /* the root's is settled with the Range header (api_request.c);
             * keep its plain numbers for the mutation planner */
            pgrest_error ignored;
            if (pgr_range_sql_values(a, lower, upper, bounded, &r->offset,
                                     &r->limit, &ignored) != PGREST_OK)
                r->offset = 0;
            continue;
        }
        rc = pgr_range_sql_values(a, lower, upper, bounded, &r->offset,
                                  &r->limit, err);
        if (rc != PGREST_OK)
            return rc;
    }
    return PGREST_OK;
}
