/* pgrest_ctx_load_schema: one attempt of PostgREST's schema cache load
 * (AppState/Reload.hs retryingSchemaCacheLoad) through the pool -- the
 * version query, the in-database config, the introspection -- and the
 * swap of the new cache into the context. */
#include <string.h>
#include <time.h>

#include "config/config_snapshot.h"
#include "config/db_config.h"
#include "engine/config_reload.h"
#include "engine/context.h"
#include "engine/db_events.h"
#include "engine/observe.h"
#include "schema/introspect.h"
#include "util/error.h"
#include "util/number.h"
#include "util/strbuf.h"

static unsigned long long usec_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (unsigned long long)((t1.tv_sec - t0->tv_sec) * 1000000LL +
                                (t1.tv_nsec - t0->tv_nsec) / 1000);
}

static double ms_since(const struct timespec *t0)
{
    return (double)usec_since(t0) / 1000.0;
}

static const char *join_list(pgrest_arena *a, const char *const *items)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, 64);
    for (size_t i = 0; items != NULL && items[i] != NULL; i++) {
        if (i > 0)
            pgr_sb_putc(&sb, ',');
        pgr_sb_puts(&sb, items[i]);
    }
    return pgr_sb_finish(&sb);
}

/* SchemaCacheErrorObs: which schemas were asked for, and why it failed. */
static void observe_schema_error(pgrest_ctx *ctx, pgrest_arena *a,
                                 const pgrest_error *err)
{
    if (ctx->observer == NULL)
        return;
    pgr_observe_query_error_high(ctx, err);
    const pgr_config *cfg = pgr_cfg(ctx, a);
    const char *prefix = pgr_asprintf(
        a, "Failed to load the schema cache using db-schemas=%s and db-extra-search-path=%s. ",
        join_list(a, cfg->db_schemas), join_list(a, cfg->db_extra_search_path));
    pgr_observe_error(ctx, PGREST_EVENT_SCHEMA_CACHE_ERROR, prefix ? prefix : "", err);
}

/* internal-schema-cache-query-sleep-before-queries and
 * internal-schema-cache-query-sleep: PostgREST's hooks for its tests
 * (SchemaCache.hs sleepCall), a pg_sleep of that many milliseconds in a
 * statement of its own before and after the catalog queries, so a load
 * can be slow or run into statement_timeout. */
static int test_sleep(pgrest_ctx *ctx, PGconn *pg, const char *key, pgrest_arena *a,
                      pgrest_error *err)
{
    pgr_conf *conf = pgr_ctx_conf(ctx);
    const char *value = pgr_conf_option(conf, key);
    long long ms;
    bool wanted = value != NULL && pgr_read_integer(value, true, &ms) && ms >= 0 &&
                  ms <= 2147483647;
    pgr_conf_release(conf);
    if (!wanted)
        return PGREST_OK;
    const char *param = pgr_asprintf(a, "%lld", ms);
    PGresult *r = PQexecParams(pg, "SELECT pg_sleep($1::int4 / 1000.0)", 1, NULL, &param,
                               NULL, NULL, 0);
    int rc = PQresultStatus(r) == PGRES_TUPLES_OK ? PGREST_OK
                                                  : pgr_db_query_error(a, pg, r, err);
    PQclear(r);
    return rc;
}

/* A statement of the loader's own (BEGIN, COMMIT) on its connection. */
static int loader_command(PGconn *pg, const char *sql, pgrest_arena *a, pgrest_error *err)
{
    PGresult *r = PQexec(pg, sql);
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK ? PGREST_OK
                                                   : pgr_db_query_error(a, pg, r, err);
    PQclear(r);
    return rc;
}

typedef struct schema_query {
    pgrest_ctx *ctx;
    char *json, *timings;
} schema_query;

/* Reload.hs qSchemaCache's session: one READ COMMITTED, READ ONLY
 * transaction (transactionNoRetry), so that the timings statement reads
 * what the introspection set on the same server connection even through
 * a transaction pooler; introspects with the configuration now in force
 * (db-schemas may come from the database). */
static int schema_session(PGconn *pg, void *arg, pgrest_arena *a, pgrest_error *err)
{
    schema_query *q = arg;
    int rc = loader_command(pg, "BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY", a, err);
    if (rc == PGREST_OK)
        rc = test_sleep(q->ctx, pg, "internal-schema-cache-query-sleep-before-queries", a, err);
    pgr_conf *conf = pgr_ctx_conf(q->ctx);
    /* SchemaCache.hs times its statements only at log-level debug */
    const char *level = pgr_cfg_option(&conf->cfg, "log-level");
    bool timed = level != NULL && strcmp(level, "debug") == 0;
    if (rc == PGREST_OK)
        rc = pgr_introspect(pg, &(pgr_introspect_opts){
                                conf->cfg.db_schemas, conf->cfg.db_extra_search_path,
                                conf->cfg.db_hoisted_tx_settings, conf->cfg.db_config, timed},
                            a, &q->json, err);
    pgr_conf_release(conf);
    if (rc == PGREST_OK)
        rc = test_sleep(q->ctx, pg, "internal-schema-cache-query-sleep", a, err);
    q->timings = NULL;
    if (rc == PGREST_OK && timed)
        rc = pgr_introspect_timings(pg, a, &q->timings, err);
    if (rc == PGREST_OK)
        rc = loader_command(pg, "COMMIT", a, err);
    return rc;
}

/* Reload.hs retryingSchemaCacheLoad, one attempt: the version query, the
 * in-database config (a failure is reported and the load goes on, as
 * the version query's does), then the introspection, each through the
 * pool as PostgREST's usePool; the introspection JSON lands in *json. */
static int query_schema(pgrest_ctx *ctx, pgrest_arena *a, char **json, char **timings,
                        double *query_ms, pgrest_error *err)
{
    pgr_conf *conf = pgr_ctx_conf(ctx);
    bool db_config = conf->cfg.db_config;
    pgr_conf_release(conf);
    /* reports the connection (or why it failed, fatally or not) */
    pgr_db_query_version(ctx, a, err);
    /* a fatal failure (wrong password) ends PostgREST instead */
    if (atomic_load(&ctx->db_fatal))
        return PGREST_ERR_CONNECTION;
    if (db_config) {
        pgrest_error cerr = {0};
        pgr_ctx_reload(ctx, NULL, true, true, &cerr);
    }
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    schema_query q = {ctx, NULL, NULL};
    /* this step's error, if any, is the load's (SchemaCacheErrorObs) */
    int rc = pgr_ctx_use_pool(ctx, schema_session, &q, a, err);
    *query_ms = ms_since(&t0);
    *json = q.json;
    *timings = q.timings;
    return rc;
}

int pgrest_ctx_load_schema(pgrest_ctx *ctx, pgrest_error *err)
{
    pgrest_arena *a = pgrest_arena_new(0);
    if (a == NULL)
        return pgr_error_oom(err);
    char *json = NULL, *timings = NULL;
    double query_ms = 0;
    pgr_conf *conf;
    int rc = pgr_ctx_ensure_pool(ctx, err);
    if (rc == PGREST_OK)
        rc = query_schema(ctx, a, &json, &timings, &query_ms, err);
    if (rc == PGREST_OK) {
        struct timespec t1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        conf = pgr_ctx_conf(ctx);
        pgr_schema_cache *sc = pgr_schema_cache_from_json(json, conf->cfg.db_schemas, err);
        pgr_conf_release(conf);
        if (sc == NULL)
            rc = PGREST_ERR_SCHEMA;
        else {
            const char *summary = pgr_schema_cache_summary(sc, a);
            double load_ms = ms_since(&t1);
            atomic_store(&ctx->metrics.schema_load_usec,
                         (unsigned long long)(load_ms * 1000.0));
            pgr_ctx_swap_schema(ctx, sc);
            pgr_observef(ctx, PGREST_EVENT_SCHEMA_CACHE_QUERIED,
                         "Schema cache queried in %.1f milliseconds ", query_ms);
            /* Logger.hs: the timings line follows, at debug (timed) */
            pgr_observe(ctx, PGREST_EVENT_SCHEMA_CACHE_QUERIED, timings);
            pgr_observef(ctx, PGREST_EVENT_SCHEMA_CACHE_LOADED, "Schema cache loaded %s",
                         summary ? summary : "");
            pgr_observef(ctx, PGREST_EVENT_SCHEMA_CACHE_LOADED,
                         "Schema cache loaded in %.1f milliseconds", load_ms);
        }
    }
    if (rc != PGREST_OK)
        observe_schema_error(ctx, a, err);
    atomic_store(&ctx->schema_pending, rc != PGREST_OK);
    atomic_fetch_add(rc == PGREST_OK ? &ctx->metrics.schema_loads_ok
                                     : &ctx->metrics.schema_loads_error, 1);
    rc = pgr_ctx_keep_error(ctx, err, rc);
    pgrest_arena_free(a);
    return rc;
}
