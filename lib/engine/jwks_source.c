#include "engine/jwks_source.h"

#include "config/config_snapshot.h"
#include "engine/context.h"
#include "engine/observe.h"

static void reported(void *arg, bool ok, const char *message)
{
    pgrest_ctx *ctx = arg;
    atomic_fetch_add(&ctx->metrics.jwks_fetches, 1);
    if (!ok)
        atomic_fetch_add(&ctx->metrics.jwks_fetch_failures, 1);
    pgr_observe(ctx, ok ? PGREST_EVENT_JWKS_FETCHED : PGREST_EVENT_JWKS_FETCH_FAILED, message);
}

/* The fetcher the configuration asks for: the running one when it reads
 * the same URI with the same CA file (with the new timings), a new one
 * otherwise, none without jwt-jwks-uri. */
static pgr_jwks *wanted(pgrest_ctx *ctx, const pgr_config *cfg, pgr_jwks *running)
{
    if (cfg->jwt_jwks_uri == NULL)
        return NULL;
    if (running != NULL && pgr_jwks_same_source(running, cfg->jwt_jwks_uri, cfg->jwt_jwks_cafile)) {
        pgr_jwks_configure(running, cfg->jwt_jwks_timeout, cfg->jwt_jwks_min_refresh);
        return running;
    }
    pgr_jwks_settings s = {
        .uri = cfg->jwt_jwks_uri,
        .cafile = cfg->jwt_jwks_cafile,
        .timeout_seconds = cfg->jwt_jwks_timeout,
        .min_refresh_seconds = cfg->jwt_jwks_min_refresh,
        .report = reported,
        .report_arg = ctx,
    };
    return pgr_jwks_new(&s);
}

void pgr_ctx_jwks_sync(pgrest_ctx *ctx)
{
    pgr_conf *conf = pgr_ctx_conf(ctx);
    /* under the lock: two swaps at once must not both start a fetcher */
    pthread_mutex_lock(&ctx->lock);
    pgr_jwks *old = ctx->jwks;
    pgr_jwks *next = wanted(ctx, &conf->cfg, old);
    ctx->jwks = next;
    pthread_mutex_unlock(&ctx->lock);
    pgr_conf_release(conf);
    /* outside it: the last release waits for the old thread to end */
    if (old != next)
        pgr_jwks_release(old);
}

pgr_jwks *pgr_ctx_jwks(pgrest_ctx *ctx)
{
    pthread_mutex_lock(&ctx->lock);
    pgr_jwks *j = ctx->jwks;
    if (j != NULL)
        pgr_jwks_retain(j);
    pthread_mutex_unlock(&ctx->lock);
    return j;
}

void pgr_ctx_jwks_stop(pgrest_ctx *ctx)
{
    pthread_mutex_lock(&ctx->lock);
    pgr_jwks *j = ctx->jwks;
    ctx->jwks = NULL;
    pthread_mutex_unlock(&ctx->lock);
    pgr_jwks_release(j);
}
