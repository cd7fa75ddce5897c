/* Context lifecycle, options and the schema cache swap. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "context.h"
#include "auth/jwt_cache.h"
#include "db_config.h"
#include "exec/pool.h"
#include "schema/introspect.h"
#include "util/error.h"

pgrest_ctx *pgrest_ctx_new(void)
{
    pgrest_ctx *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL)
        return NULL;
    ctx->cfg_arena = pgrest_arena_new(0);
    ctx->err_arena = pgrest_arena_new(0);
    if (ctx->cfg_arena == NULL || ctx->err_arena == NULL) {
        pgrest_arena_free(ctx->cfg_arena);
        pgrest_arena_free(ctx->err_arena);
        free(ctx);
        return NULL;
    }
    pgr_config_defaults(&ctx->cfg);
    pthread_mutex_init(&ctx->lock, NULL);
    ctx->jwt_cache = pgr_jwt_cache_new((size_t)ctx->cfg.jwt_cache_max_entries);
    return ctx;
}

void pgrest_ctx_free(pgrest_ctx *ctx)
{
    if (ctx == NULL)
        return;
    pgrest_ctx_stop_listener(ctx);
    pgr_jwt_cache_free(ctx->jwt_cache);
    pgr_pool_free(pgr_ctx_pool(ctx));
    if (ctx->schema != NULL)
        pgr_schema_cache_release(ctx->schema);
    pthread_mutex_destroy(&ctx->lock);
    pgrest_arena_free(ctx->cfg_arena);
    pgrest_arena_free(ctx->err_arena);
    free(ctx);
}

static void remember_option(pgrest_ctx *ctx, const char *key, const char *value)
{
    for (pgr_kv *kv = ctx->options; kv; kv = kv->next)
        if (strcmp(kv->name, key) == 0) {
            kv->value = pgr_strdup(ctx->cfg_arena, value);
            return;
        }
    pgr_kv *kv = PGR_NEW(ctx->cfg_arena, pgr_kv);
    if (kv == NULL)
        return;
    kv->name = pgr_strdup(ctx->cfg_arena, key);
    kv->value = pgr_strdup(ctx->cfg_arena, value);
    kv->next = ctx->options;
    ctx->options = kv;
}

int pgrest_ctx_set(pgrest_ctx *ctx, const char *key, const char *value,
                   pgrest_error *err)
{
    if (ctx == NULL || key == NULL || value == NULL)
        return pgr_error_misuse(err, "pgrest_ctx_set");
    int rc = pgr_config_set(&ctx->cfg, ctx->cfg_arena, key, value, err);
    if (rc != PGREST_OK)
        return rc;
    remember_option(ctx, key, value);
    /* a new size or new keys invalidate what was verified before */
    if (strcmp(key, "jwt-cache-max-entries") == 0) {
        pgr_jwt_cache_free(ctx->jwt_cache);
        ctx->jwt_cache = pgr_jwt_cache_new((size_t)ctx->cfg.jwt_cache_max_entries);
    } else if (strncmp(key, "jwt-", 4) == 0 || strcmp(key, "role-claim-key") == 0 ||
               strcmp(key, "secret-is-base64") == 0 || strcmp(key, "db-anon-role") == 0) {
        pgr_jwt_cache_clear(ctx->jwt_cache);
    }
    return rc;
}

const char *pgrest_ctx_get(const pgrest_ctx *ctx, const char *key)
{
    for (const pgr_kv *kv = ctx->options; kv; kv = kv->next)
        if (strcmp(kv->name, key) == 0)
            return kv->value;
    return NULL;
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
    pthread_mutex_unlock(&ctx->lock);
    if (old != NULL)
        pgr_schema_cache_release(old);
    pgr_pool *pool = pgr_ctx_pool(ctx);
    if (pool != NULL)
        pgr_pool_flush(pool);
}

/* Error strings of context-level calls outlive the call: they are copied
 * into the context's error arena, which loads failing in several threads
 * at once (the listener and the host, say) share. */
static int keep_error(pgrest_ctx *ctx, pgrest_error *err, int rc)
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

/* The first load creates the pool; concurrent first loads create one. */
static int ensure_pool(pgrest_ctx *ctx, pgrest_error *err)
{
    if (pgr_ctx_pool(ctx) != NULL)
        return PGREST_OK;
    pthread_mutex_lock(&ctx->lock);
    pgr_pool *pool = atomic_load_explicit(&ctx->pool, memory_order_relaxed);
    if (pool == NULL) {
        pool = pgr_pool_new(ctx->cfg.db_uri, ctx->cfg.db_pool,
                            ctx->cfg.db_pool_acquisition_timeout);
        atomic_store_explicit(&ctx->pool, pool, memory_order_release);
    }
    pthread_mutex_unlock(&ctx->lock);
    return pool ? PGREST_OK : pgr_error_oom(err);
}

static unsigned long long usec_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (unsigned long long)((t1.tv_sec - t0->tv_sec) * 1000000LL +
                                (t1.tv_nsec - t0->tv_nsec) / 1000);
}

int pgrest_ctx_load_schema(pgrest_ctx *ctx, pgrest_error *err)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pgrest_arena *a = pgrest_arena_new(0);
    if (a == NULL)
        return pgr_error_oom(err);
    int rc = ensure_pool(ctx, err);
    PGconn *pg = rc == PGREST_OK ? pgr_connect(ctx->cfg.db_uri, a, err) : NULL;
    char *json = NULL;
    if (pg == NULL)
        rc = rc == PGREST_OK ? PGREST_ERR_CONNECTION : rc;
    else if (ctx->cfg.db_config)
        rc = pgr_load_db_config(ctx, pg, a, err);
    if (pg != NULL && rc == PGREST_OK)
        rc = pgr_introspect(pg, ctx->cfg.db_schemas, ctx->cfg.db_extra_search_path,
                            a, &json, err);
    if (pg != NULL)
        PQfinish(pg);
    if (rc == PGREST_OK) {
        pgr_schema_cache *sc = pgr_schema_cache_from_json(json, ctx->cfg.db_schemas, err);
        if (sc == NULL)
            rc = PGREST_ERR_SCHEMA;
        else
            pgr_ctx_swap_schema(ctx, sc);
    }
    atomic_store(&ctx->metrics.schema_query_usec, usec_since(&t0));
    atomic_fetch_add(rc == PGREST_OK ? &ctx->metrics.schema_loads_ok
                                     : &ctx->metrics.schema_loads_error, 1);
    rc = keep_error(ctx, err, rc);
    pgrest_arena_free(a);
    return rc;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n - 1 == 0) {
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf != NULL)
        buf[n] = '\0';
    *len = n;
    return buf;
}

int pgrest_ctx_load_schema_file(pgrest_ctx *ctx, const char *path,
                                pgrest_error *err)
{
    size_t len;
    char *json = read_file(path, &len);
    if (json == NULL)
        return keep_error(ctx, err,
                          pgr_error(err, 500, "PGRST002", "Could not read the schema snapshot file",
                                    path, NULL) ? PGREST_ERR_SCHEMA : PGREST_ERR_SCHEMA);
    pgr_schema_cache *sc = pgr_schema_cache_from_json(json, ctx->cfg.db_schemas, err);
    free(json);
    if (sc == NULL)
        return keep_error(ctx, err, PGREST_ERR_SCHEMA);
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
    return keep_error(ctx, err, rc);
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
