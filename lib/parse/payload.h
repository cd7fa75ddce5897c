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

#endif
