/* The context's state: configuration snapshot, options, the schema cache
 * swap and the pool (the context's creation and end: lifecycle.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/context.h"
#include "config/config_snapshot.h"
#include "exec/pool.h"
#include "exec/replicas.h"
#include "engine/jwks_source.h"
#include "engine/observe.h"
#include "util/error.h"
#include "util/read_stream.h"

struct pgr_conf *pgr_ctx_conf(const pgrest_ctx *ctx)
{
    return pgr_conf_slot_get(ctx->conf);
}

static void release_conf(void *c)
{
    pgr_conf_release(c);
}

const pgr_config *pgr_cfg(const pgrest_ctx *ctx, pgrest_arena *arena)
{
    pgr_conf *c = pgr_arena_bound(arena, ctx);
    if (c != NULL)
        return &c->cfg;
    c = pgr_ctx_conf(ctx);
    if (pgr_arena_bind(arena, ctx, c, release_conf) ||
        pgr_arena_on_free(arena, release_conf, c))
        return &c->cfg;
    /* an arena bound to another context and out of memory: the request
     * fails for want of memory anyway; defaults keep it well defined */
    pgr_conf_release(c);
    return &ctx->fallback;
}

int pgrest_config_key_known(const char *key)
{
    return key != NULL && pgr_config_key_known(key);
}

/* Error strings of context-level calls outlive the call: they are copied
 * into the context's error arena, which loads failing in several threads
 * at once (the listener and the host, say) share. */
int pgr_ctx_keep_error(pgrest_ctx *ctx, pgrest_error *err, int rc)
{
    if (err == NULL || rc == PGREST_OK)
        return rc;
    pthread_mutex_lock(&ctx->lock);
    pgrest_arena *a = ctx->err_arena;
    err->message = pgr_strdup(a, err->message);
    err->details = pgr_strdup(a, err->details);
    err->hint = pgr_strdup(a, err->hint);
    err->code = pgr_strdup(a, err->code);
    pthread_mutex_unlock(&ctx->lock);
    return rc;
}

typedef struct set_change {
    const char *key, *value;
} set_change;

static int next_with_option(const pgr_conf *cur, void *arg, pgrest_arena *ea,
                            pgrest_error *err, pgr_conf **out)
{
    const set_change *ch = arg;
    pgrest_arena *a = pgrest_arena_new(0);
    pgr_kv *base = a ? pgr_kv_with(a, cur->base, ch->key, ch->value) : NULL;
    int rc = base != NULL ? pgr_conf_build(base, cur->db, cur, ea, err, out) : pgr_error_oom(err);
    pgrest_arena_free(a);
    return rc;
}

int pgrest_ctx_set(pgrest_ctx *ctx, const char *key, const char *value,
                   pgrest_error *err)
{
    if (ctx == NULL || key == NULL || value == NULL)
        return pgr_error_misuse(err, "pgrest_ctx_set");
    pgrest_arena *ea = pgrest_arena_new(0);
    if (ea == NULL)
        return pgr_error_oom(err);
    /* the key alone first: its error names it, whatever else is set */
    pgr_config scratch;
    pgr_config_defaults(&scratch);
    int rc = pgr_config_set(&scratch, ea, key, value, err);
    set_change ch = {key, value};
    if (rc == PGREST_OK)
        rc = pgr_conf_slot_update(ctx->conf, next_with_option, &ch, ea, err);
    if (rc == PGREST_OK)
        pgr_ctx_jwks_sync(ctx);
    rc = pgr_ctx_keep_error(ctx, err, rc);
    pgrest_arena_free(ea);
    return rc;
}

const char *pgrest_ctx_get(const pgrest_ctx *ctx, const char *key)
{
    if (ctx == NULL || key == NULL)
        return NULL;
    pgr_conf *c = pgr_conf_slot_get(ctx->conf);
    const char *v = pgr_conf_slot_intern(ctx->conf, pgr_conf_option(c, key));
    pgr_conf_release(c);
    return v;
}

pgr_schema_cache *pgr_ctx_schema(pgrest_ctx *ctx)
{
    pthread_mutex_lock(&ctx->lock);
    pgr_schema_cache *sc = ctx->schema;
    if (sc != NULL)
        pgr_schema_cache_retain(sc);
    pthread_mutex_unlock(&ctx->lock);
    return sc;
}

void pgr_ctx_swap_schema(pgrest_ctx *ctx, pgr_schema_cache *sc)
{
    pthread_mutex_lock(&ctx->lock);
    pgr_schema_cache *old = ctx->schema;
    ctx->schema = sc;
    atomic_fetch_add(&ctx->schema_generation, 1);
    pthread_mutex_unlock(&ctx->lock);
    if (old != NULL)
        pgr_schema_cache_release(old);
    pgr_pool *pool = pgr_ctx_pool(ctx);
    if (pool != NULL) {
        pgr_pool_flush(pool);
        pgr_observe(ctx, PGREST_EVENT_POOL_FLUSHED, "Database connection pool flushed");
    }
    if (pgr_ctx_replicas(ctx) != NULL)
        pgr_replicas_flush(pgr_ctx_replicas(ctx));
}

bool pgr_ctx_replace_schema(pgrest_ctx *ctx, const pgr_schema_cache *from,
                            pgr_schema_cache *sc)
{
    pthread_mutex_lock(&ctx->lock);
    bool current = ctx->schema == from;
    if (current)
        ctx->schema = sc;
    pthread_mutex_unlock(&ctx->lock);
    /* the context's reference to from is now released; sc's is the
     * caller's, handed over, or dropped when a reload came first */
    pgr_schema_cache_release(current ? (pgr_schema_cache *)from : sc);
    return current;
}

static void observe_pool_connection(void *arg, const char *message)
{
    pgr_observe(arg, PGREST_EVENT_POOL_CONNECTION, message);
}

/* The first load creates the pool; concurrent first loads create one. */
static int ensure_pool(pgrest_ctx *ctx, const pgr_config *cfg, pgrest_error *err)
{
    pthread_mutex_lock(&ctx->lock);
    pgr_pool *pool = atomic_load_explicit(&ctx->pool, memory_order_relaxed);
    if (pool == NULL) {
        pgr_pool_settings s = {
            .conninfo = cfg->db_uri,
            .size = cfg->db_pool,
            .timeout_seconds = cfg->db_pool_acquisition_timeout,
            .max_lifetime_seconds = cfg->db_pool_max_lifetime,
            .max_idletime_seconds = cfg->db_pool_max_idletime,
            .observe = observe_pool_connection,
            .observe_arg = ctx,
        };
        pool = pgr_pool_new(&s);
        pgr_replica_set *replicas = NULL;
        if (pool != NULL && cfg->n_db_replica_uris > 0) {
            pgr_replica_settings rs = {
                .uris = cfg->db_replica_uris,
                .n = cfg->n_db_replica_uris,
                .primary_uri = cfg->db_uri,
                .max_lag_seconds = cfg->db_replica_max_lag,
                .pool = s,
            };
            if ((replicas = pgr_replicas_new(&rs)) == NULL) {
                pgr_pool_free(pool);
                pool = NULL;
            }
        }
        atomic_store_explicit(&ctx->replicas, replicas, memory_order_release);
        atomic_store_explicit(&ctx->pool, pool, memory_order_release);
    }
    pthread_mutex_unlock(&ctx->lock);
    return pool ? PGREST_OK : pgr_error_oom(err);
}

int pgr_ctx_ensure_pool(pgrest_ctx *ctx, pgrest_error *err)
{
    if (pgr_ctx_pool(ctx) != NULL)
        return PGREST_OK;
    pgr_conf *conf = pgr_ctx_conf(ctx);
    int rc = ensure_pool(ctx, &conf->cfg, err);
    pgr_conf_release(conf);
    return rc;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *text = pgr_read_stream(f, len);
    fclose(f);
    return text;
}

int pgrest_ctx_load_schema_file(pgrest_ctx *ctx, const char *path,
                                pgrest_error *err)
{
    size_t len;
    char *json = read_file(path, &len);
    if (json == NULL)
        return pgr_ctx_keep_error(ctx, err,
                          pgr_error(err, 500, "PGRST002", "Could not read the schema snapshot file",
                                    path, NULL) ? PGREST_ERR_SCHEMA : PGREST_ERR_SCHEMA);
    pgr_conf *conf = pgr_ctx_conf(ctx);
    pgr_schema_cache *sc = pgr_schema_cache_from_json(json, conf->cfg.db_schemas, err);
    pgr_conf_release(conf);
    free(json);
    if (sc == NULL)
        return pgr_ctx_keep_error(ctx, err, PGREST_ERR_SCHEMA);
    pgr_ctx_swap_schema(ctx, sc);
    return PGREST_OK;
}

int pgrest_ctx_save_schema_file(pgrest_ctx *ctx, const char *path,
                                pgrest_error *err)
{
    pgr_schema_cache *sc = pgr_ctx_schema(ctx);
    if (sc == NULL)
        return pgr_error(err, 503, "PGRST002", "Schema cache not loaded", NULL, NULL)
                   ? PGREST_ERR_SCHEMA : PGREST_ERR_SCHEMA;
    FILE *f = fopen(path, "wb");
    int rc = PGREST_OK;
    if (f == NULL || fputs(sc->json, f) < 0)
        rc = pgr_error(err, 500, PGR_CODE_INTERNAL, "Could not write the schema snapshot file",
                       NULL, NULL) ? PGREST_ERR_INTERNAL : PGREST_ERR_INTERNAL;
    if (f != NULL && fclose(f) != 0)
        rc = PGREST_ERR_INTERNAL;
    pgr_schema_cache_release(sc);
    return pgr_ctx_keep_error(ctx, err, rc);
}

const char *pgrest_version(void)
{
    return PGREST_VERSION_STRING;
}

void pgrest_ctx_set_query_logger(pgrest_ctx *ctx, pgrest_query_logger fn, void *arg)
{
    if (ctx == NULL)
        return;
    ctx->query_logger = fn;
    ctx->query_logger_arg = arg;
}
