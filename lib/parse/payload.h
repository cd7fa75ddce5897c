/* Request bodies (PostgREST's ApiRequest/Payload.hs): JSON (object or
 * array of objects with the same keys), CSV, x-www-form-urlencoded, raw. */
#ifndef PGR_PAYLOAD_H
#define PGR_PAYLOAD_H

#include "parse/api_types.h"
#include "util/arena.h"

/* Fills api->payload_* from api->body for the actions that take a body.
 * JSON nesting deeper than lim->max_json_depth (NULL = default limits) is
 * refused with PGRST102 like invalid JSON. */
int pgr_parse_payload(pgrest_arena *a, pgrest_api_request *api,
                      const pgr_parse_limits *lim, pgrest_error *err);

/* The errors of the CSV reader, as cassava words them. */
#define PGR_CSV_HEADER_ERROR "parse error (not enough input) at \"\""
#define PGR_CSV_FIELDS_ERROR "All lines must have same number of fields"

/* A payload key holding a NUL byte (`shown` writes it \u0000): no column
 * of relation `name` (PGRST204) or argument of a function (is_call: 22021)
 * can be named so. Returns the error's status. */
int pgr_payload_key_nul_error(pgrest_arena *a, bool is_call, const char *name,
                              const char *shown, pgrest_error *err);

/* key[0..n) with each NUL written as the six characters \u0000 (arena). */
const char *pgr_payload_show_key(pgrest_arena *a, const char *key, size_t n);

/* json-c keeps object keys as C strings, so "na\u0000me" would become "na":
 * finds, in the valid JSON text s[0..n), the first key whose escapes
 * include \u0000. Returns its raw text (between the quotes, arena) or NULL. */
const char *pgr_json_key_with_nul(pgrest_arena *a, const char *s, size_t n);

#endif
