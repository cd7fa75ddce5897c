/* PostgREST's OpenAPI 2.0 (Swagger) document for the root endpoint, or
 * pgrest's OpenAPI 3.1 rendering of it (docs/openapi.md)
 * (Response/OpenAPI.hs), built from the schema cache plus what the request
 * transaction reported: the schema COMMENT and, with
 * openapi-mode=follow-privileges, the relations and functions the request
 * role may use. */
#ifndef PGR_OPENAPI_H
#define PGR_OPENAPI_H

#include <stddef.h>

#include "config/config_types.h"
#include "engine/stage_view.h"
#include "schema/schema_cache.h"

/* inspect_json is the body of the SCHEMA_READ main statement:
 * {"description": text|null, "tables": [name...], "functions": [{"name",
 * "description", "volatility", "params": [{"name", "type", "required",
 * "variadic"}]}...]}; absent "tables"/"functions" keys mean "everything of
 * the schema in the cache" (ignore-privileges). Returns the document text
 * in arena a, or NULL and fills err. */
char *pgr_openapi_document(const pgrest_ctx *ctx, pgrest_arena *a,
                           const pgr_schema_cache *sc, const char *schema,
                           pgr_openapi_version version, const char *inspect_json,
                           size_t *len, pgrest_error *err);

#endif
