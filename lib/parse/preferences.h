/* The Prefer header (RFC 7240) as PostgREST src/ApiRequest/Preferences.hs
 * reads it. */
#ifndef PGR_PREFERENCES_H
#define PGR_PREFERENCES_H

#include "parse/api_types.h"
#include "util/arena.h"

/* Reads every Prefer header of req (names case-insensitive), splits the
 * values on ',', trims whitespace and drops empty tokens. For each
 * preference the first recognised token wins (return=, count=,
 * resolution=, missing=, tx=, handling=; timezone= and max-affected= take
 * the first token with that prefix; a non-integer max-affected is
 * ignored). Tokens that are none of these are recorded, in order, in
 * out->invalid (PGRST122 under handling=strict is the caller's job).
 * out is reset first; max_affected is -1 and has_max_affected false when
 * not given. Strings live in
 * the arena; on OOM the lists may be incomplete. */
void pgr_parse_preferences(pgrest_arena *a, const pgrest_request *req,
                           pgr_preferences *out);

#endif
