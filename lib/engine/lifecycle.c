/* Context lifecycle: pgrest_ctx_new and pgrest_ctx_free, which ends what
 * the context started (listener, replicas, pool, schema cache). */
#include <stdlib.h>

#include "config/config_snapshot.h"
#include "engine/context.h"
#include "engine/jwks_source.h"
#include "exec/pool.h"
#include "exec/replicas.h"

pgrest_ctx *pgrest_ctx_new(void)
{
    pgrest_ctx *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL)
        return NULL;
    ctx->conf = pgr_conf_slot_new();
    ctx->err_arena = pgrest_arena_new(0);
    if (ctx->conf == NULL || ctx->err_arena == NULL) {
        pgr_conf_slot_free(ctx->conf);
        pgrest_arena_free(ctx->err_arena);
        free(ctx);
        return NULL;
    }
    pgr_config_defaults(&ctx->fallback);
    pthread_mutex_init(&ctx->lock, NULL);
    return ctx;
}

void pgrest_ctx_free(pgrest_ctx *ctx)
{
    if (ctx == NULL)
        return;
    pgrest_ctx_stop_listener(ctx);
    pgr_ctx_jwks_stop(ctx);
    pgr_replicas_free(pgr_ctx_replicas(ctx));
    pgr_pool_free(pgr_ctx_pool(ctx));
    if (ctx->schema != NULL)
        pgr_schema_cache_release(ctx->schema);
    pgr_conf_slot_free(ctx->conf);
    pthread_mutex_destroy(&ctx->lock);
    pgrest_arena_free(ctx->err_arena);
    free(ctx);
}
