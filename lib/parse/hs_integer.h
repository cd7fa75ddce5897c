/* Arbitrary-precision integers as PostgREST reads limit, offset and the
 * Range header (Haskell's Integer): readMaybe, the little arithmetic
 * RangeQuery does, and the decimal text PostgreSQL is sent. */
#ifndef PGR_HS_INTEGER_H
#define PGR_HS_INTEGER_H

#include <stdbool.h>
#include <stddef.h>

#include "util/arena.h"

/* A signed decimal: digits without leading zeros ("0" for zero). */
typedef struct pgr_hs_int {
    bool neg;
    const char *digits;
} pgr_hs_int;

/* readMaybe :: String -> Maybe Integer on s[0..n): surrounding white
 * space, parentheses, a '-' (spaces may follow it), decimal digits or
 * 0x / 0o literals. False when Haskell would give Nothing (NUL bytes,
 * '+', fractions, exponents, anything else); *oom set on arena failure. */
bool pgr_hs_read_integer(pgrest_arena *a, const char *s, size_t n,
                         pgr_hs_int *out, bool *oom);
/* readMaybe :: String -> Maybe Int64: the grammar of pgr_hs_read_integer,
 * the value modulo 2^64 as fromInteger gives it, in time linear in n
 * (no decimal text of the whole number is built). */
bool pgr_hs_read_int64_wrapped(pgrest_arena *a, const char *s, size_t n,
                               long long *out, bool *oom);
/* [0-9]+ as an Integer (the Range header's regex groups). */
bool pgr_hs_digits(pgrest_arena *a, const char *s, size_t n, pgr_hs_int *out);

pgr_hs_int pgr_hs_from_ll(pgrest_arena *a, long long v);
int pgr_hs_cmp(pgr_hs_int x, pgr_hs_int y);
/* x + y and x - y; digits == NULL on arena failure. */
pgr_hs_int pgr_hs_add(pgrest_arena *a, pgr_hs_int x, pgr_hs_int y);
pgr_hs_int pgr_hs_sub(pgrest_arena *a, pgr_hs_int x, pgr_hs_int y);
/* The value as a long long (PostgreSQL's bigint); false when out of range. */
bool pgr_hs_to_ll(pgr_hs_int x, long long *out);
/* fromInteger :: Integer -> Int64: the value modulo 2^64, as Haskell's
 * `readMaybe :: Maybe Int64` gives it (no overflow error). */
long long pgr_hs_to_int64_wrapped(pgr_hs_int x);
/* show: "-123" */
const char *pgr_hs_show(pgrest_arena *a, pgr_hs_int x);

#endif
