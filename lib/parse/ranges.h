/* limit / offset per embed path (PostgREST QueryParams.hs `ranges`,
 * RangeQuery.hs, SqlFragment.hs limitOffsetF), as Haskell Integers. */
#ifndef PGR_RANGES_H
#define PGR_RANGES_H

#include <stdbool.h>

#include "parse/api_types.h"
#include "parse/hs_integer.h"
#include "util/arena.h"

/* Reads the limit / offset params into out->ranges (the last occurrence
 * per path wins; an unreadable number leaves the key with allRange). The
 * embedded ones get their LIMIT / OFFSET checked as PostgreSQL would
 * (pgr_range_sql_values); the root one is settled with the Range header by
 * pgrest_parse_request. */
int pgr_parse_ranges(pgrest_arena *a, const pgr_kv *params,
                     pgr_query_params *out, pgrest_error *err);

/* The range a path's limit/offset give (QueryParams `ranges`, RangeQuery):
 * [lower, upper] when bounded, [lower, infinity) otherwise. Integers of
 * any size. PGREST_ERR_INTERNAL on arena failure. */
int pgr_range_of_path(pgrest_arena *a, const pgr_path_range *r,
                      pgr_hs_int *lower, pgr_hs_int *upper, bool *bounded);

/* The LIMIT / OFFSET PostgREST sends for a range (limitOffsetF) as
 * PostgreSQL takes them: *limit -1 for ALL. Errors as PostgreSQL reports
 * them: 22003 `value "N" is out of range for type bigint`, 2201X OFFSET
 * must not be negative, 2201W LIMIT must not be negative (all 400). */
int pgr_range_sql_values(pgrest_arena *a, pgr_hs_int lower, pgr_hs_int upper,
                         bool bounded, long long *offset, long long *limit,
                         pgrest_error *err);

#endif
