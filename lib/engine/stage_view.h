/* What the pure stages (parse/, plan/, sql/) see of the context: the
 * request's configuration snapshot and the schema cache, not the
 * context's internals (engine/context.h, which includes this). */
#ifndef PGR_STAGE_VIEW_H
#define PGR_STAGE_VIEW_H

#include <stdbool.h>

#include "config/config_snapshot.h"
#include "parse/api_types.h"
#include "pgrest/pgrest.h"
#include "schema/schema_cache.h"


/* The configuration of the request whose memory is arena: the context's
 * current snapshot, taken on the first call for that arena and kept (with
 * a reference) until the arena is freed, so every stage of one request
 * sees the same configuration whatever reloads happen meanwhile. */
const pgr_config *pgr_cfg(const pgrest_ctx *ctx, pgrest_arena *arena);
/* Current schema cache with a reference taken; release when done. */
pgr_schema_cache *pgr_ctx_schema(pgrest_ctx *ctx);

#endif
