/* The order= grammar (PostgREST src/ApiRequest/QueryParams.hs pOrder):
 * `a.desc,b.asc.nullslast,data->>x.desc,rel(col).desc`. */
#ifndef PGR_ORDER_PARSER_H
#define PGR_ORDER_PARSER_H

#include "parse/api_types.h"
#include "util/arena.h"

/* Parses the value of an order parameter into a non-empty term list in the
 * arena. Errors: PGRST100 (400) `"failed to parse order (text)" (line 1,
 * column N)` with Parsec-style details. */
int pgr_parse_order(pgrest_arena *a, const char *text, pgr_order_term **out,
                    pgrest_error *err);

/* The same for a text of len bytes that may hold NUL bytes (decoded %00):
 * the grammar sees them as characters; a NUL kept in a name gives
 * PostgreSQL's 400 22021 (see pgr_ps_nul_error). */
int pgr_parse_order_n(pgrest_arena *a, const char *text, size_t len,
                      pgr_order_term **out, pgrest_error *err);

#endif
