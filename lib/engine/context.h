/* The context: configuration, schema cache and pool shared by requests
 * (PostgREST's AppState). */
#ifndef PGR_CONTEXT_H
#define PGR_CONTEXT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "config/config.h"
#include "engine/context_types.h"
#include "engine/stage_view.h"
#include "parse/api_types.h"
#include "pgrest/pgrest.h"
#include "schema/schema_cache.h"

/* The current snapshot with a reference taken (pgr_conf_release), for
 * work outside a request: schema loads, the listener, metrics. */
struct pgr_conf *pgr_ctx_conf(const pgrest_ctx *ctx);
/* Copies err's strings into the context (context-level calls have no
 * arena of the caller's); returns rc. */
int pgr_ctx_keep_error(pgrest_ctx *ctx, pgrest_error *err, int rc);
void pgr_ctx_swap_schema(pgrest_ctx *ctx, pgr_schema_cache *sc);
/* Puts sc (its reference handed over) in place of from, a cache derived
 * from it with the same statements, so the pool keeps its prepared ones;
 * false (sc released) when a reload swapped another cache in meanwhile. */
bool pgr_ctx_replace_schema(pgrest_ctx *ctx, const pgr_schema_cache *from,
                            pgr_schema_cache *sc);
/* Creates the pool with the configuration in force unless it exists. */
int pgr_ctx_ensure_pool(pgrest_ctx *ctx, pgrest_error *err);
/* The connection pool, or NULL before the first pgrest_ctx_load_schema. */
static inline pgr_pool *pgr_ctx_pool(pgrest_ctx *ctx)
{
    return atomic_load_explicit(&ctx->pool, memory_order_acquire);
}

/* The read replicas, or NULL (none configured, or before the first load). */
static inline struct pgr_replica_set *pgr_ctx_replicas(pgrest_ctx *ctx)
{
    return atomic_load_explicit(&ctx->replicas, memory_order_acquire);
}

/* True when a schema cache is loaded (the other half of readiness). */
bool pgr_ctx_schema_loaded(pgrest_ctx *ctx);
/* True when the listener LISTENs on a channel (not only retrying loads);
 * readiness.c asks it for pgrest_ctx_connection_established. */
bool pgr_listener_has_channel(const pgr_listener *l);

#endif
