/* The select= grammar (PostgREST src/ApiRequest/QueryParams.hs
 * pFieldForest): fields, aliases, casts, JSON paths, aggregates, embeds
 * and spreads, nested to any depth. */
#ifndef PGR_SELECT_PARSER_H
#define PGR_SELECT_PARSER_H

#include "parse/api_types.h"
#include "util/arena.h"

/* Parses text into a list of select items allocated in the arena. An empty
 * text gives *out == NULL (the caller treats it as `*`). Text after the
 * last complete item that is not a ',' is ignored, as PostgREST does.
 * Errors: PGRST100 (400) `"failed to parse select parameter (text)" (line
 * 1, column N)` with Parsec-style details; PGRST100 "Select parameter
 * nesting too deep" when embeds nest deeper than PGR_DEFAULT_MAX_DEPTH. */
int pgr_parse_select(pgrest_arena *a, const char *text, pgr_select_item **out,
                     pgrest_error *err);
/* The same with an explicit nesting limit (request-max-depth). */
int pgr_parse_select_max(pgrest_arena *a, const char *text, int max_depth,
                         pgr_select_item **out, pgrest_error *err);

/* The same for a text of len bytes that may hold NUL bytes (decoded %00):
 * the grammar sees them as characters; a NUL kept in a name gives
 * PostgreSQL's 400 22021 (see pgr_ps_nul_error). */
int pgr_parse_select_n(pgrest_arena *a, const char *text, size_t len,
                       int max_depth, pgr_select_item **out, pgrest_error *err);

#endif
