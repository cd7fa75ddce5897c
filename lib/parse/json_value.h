/* One JSON document as aeson's decode reads a request body
 * (ApiRequest/Payload.hs): strict RFC 8259 text of valid UTF-8, with a
 * nesting limit. Shared by the JSON and the NDJSON body readers. */
#ifndef PGR_JSON_VALUE_H
#define PGR_JSON_VALUE_H

#include <stdbool.h>
#include <stddef.h>

#include "util/arena.h"

struct json_object;

/* Parses body[0..len) as exactly one JSON value (whitespace around it
 * allowed). Returns a new reference the caller puts, NULL when the text
 * is empty or invalid; *too_deep is set when it nests deeper than
 * max_depth containers. A JSON null is returned as the empty array, the
 * value every scalar stands for in a payload (payloadAttributes). */
struct json_object *pgr_json_parse_body_value(const char *body, size_t len,
                                              int max_depth, bool *too_deep);

/* The keys of object o copied into the arena (*n of them, array
 * NUL-terminated). False when the arena is exhausted. */
bool pgr_json_object_keys(pgrest_arena *a, struct json_object *o, const char ***keys,
                          size_t *n);

/* Whether o is an object whose keys are exactly keys[0..n) (a set). */
bool pgr_json_same_key_set(struct json_object *o, const char *const *keys, size_t n);

#endif
