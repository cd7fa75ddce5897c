/* Prometheus text for the admin /metrics endpoint (PostgREST
 * ref/observability "Metrics": pgrst_* names kept). */
#include "engine/context.h"
#include "engine/jwks_source.h"
#include "exec/pool.h"
#include "exec/replicas.h"
#include "util/error.h"
#include "util/number.h"
#include "util/strbuf.h"

static void metric(pgr_sb *sb, pgrest_arena *a, const char *name,
                   const char *type, const char *help, const char *labels,
                   const char *value)
{
    pgr_sb_puts(sb, pgr_asprintf(a, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type));
    pgr_sb_puts(sb, pgr_asprintf(a, "%s%s %s\n", name, labels ? labels : "", value));
}

/* Sample values as Haskell's prometheus-client writes them (Doubles). */
static const char *hs_double(pgrest_arena *a, double x)
{
    char buf[PGR_SHOW_DOUBLE_LEN];
    pgr_show_double(x, buf, sizeof buf);
    return pgr_strdup(a, buf);
}

static const char *ull(pgrest_arena *a, unsigned long long v)
{
    return hs_double(a, (double)v);
}

/* Metrics.hs dbPoolAvailable: a custom sample whose value is an Int
 * printed with show ("3", not "3.0"), unlike the Doubles of counters and
 * gauges. */
static const char *hs_int(pgrest_arena *a, long long v)
{
    return pgr_asprintf(a, "%lld", v);
}

/* Metrics.hs init registers the pool metrics in this order, and
 * prometheus-client exports in registration order. */
static void pool_metrics(pgr_sb *sb, pgrest_arena *a, pgrest_ctx *ctx)
{
    const pgr_config *cfg = pgr_cfg(ctx, a);
    pgr_pool_stats st = {.max = cfg->db_pool};
    pgr_pool *pool = pgr_ctx_pool(ctx);
    if (pool != NULL)
        pgr_pool_stats_get(pool, &st);
    metric(sb, a, "pgrst_db_pool_timeouts_total", "counter",
           "The total number of pool connection timeouts", NULL, ull(a, st.timeouts));
    metric(sb, a, "pgrst_db_pool_available", "gauge", "Available connections in the pool",
           NULL, hs_int(a, st.available));
    metric(sb, a, "pgrst_db_pool_waiting", "gauge", "Requests waiting to acquire a pool connection",
           NULL, ull(a, (unsigned long long)st.waiting));
    metric(sb, a, "pgrst_db_pool_max", "gauge", "Max pool connections", NULL,
           ull(a, (unsigned long long)st.max));
}

/* pgrst_schema_cache_loads_total is a prometheus-client vector: a label
 * exists once it was counted (withLabel creates it), the labels print in
 * Map order (FAIL before SUCCESS), and a vector without any label prints
 * nothing, not even its HELP and TYPE lines (exportSampleGroup). */
static void schema_loads(pgr_sb *sb, pgrest_arena *a, pgr_metrics *m)
{
    unsigned long long fail = atomic_load(&m->schema_loads_error);
    unsigned long long ok = atomic_load(&m->schema_loads_ok);
    if (fail == 0 && ok == 0)
        return;
    pgr_sb_puts(sb, "# HELP pgrst_schema_cache_loads_total The total number of times the schema cache was loaded\n"
                    "# TYPE pgrst_schema_cache_loads_total counter\n");
    if (fail > 0)
        pgr_sb_puts(sb, pgr_asprintf(a, "pgrst_schema_cache_loads_total{status=\"FAIL\"} %s\n",
                                     ull(a, fail)));
    if (ok > 0)
        pgr_sb_puts(sb, pgr_asprintf(a, "pgrst_schema_cache_loads_total{status=\"SUCCESS\"} %s\n",
                                     ull(a, ok)));
}

/* Metrics.hs sets this gauge from SchemaCacheLoadedObs: the time of the
 * last successful load's summary (Reload.hs timeItT, which counts in
 * milliseconds), the number "Schema cache loaded in X milliseconds"
 * logs; a failed load leaves it alone. Despite its name and help text the
 * value is in milliseconds, as PostgREST's is. */
static void schema_metrics(pgr_sb *sb, pgrest_arena *a, pgr_metrics *m)
{
    schema_loads(sb, a, m);
    metric(sb, a, "pgrst_schema_cache_query_time_seconds", "gauge",
           "The query time in seconds of the last schema cache load", NULL,
           hs_double(a, (double)atomic_load(&m->schema_load_usec) / 1e3));
}

/* PostgREST Metrics.hs JWT cache counters. */
static void jwt_cache_metrics(pgr_sb *sb, pgrest_arena *a, pgr_metrics *m)
{
    metric(sb, a, "pgrst_jwt_cache_requests_total", "counter",
           "The total number of JWT cache lookups", NULL,
           ull(a, atomic_load(&m->jwt_cache_requests)));
    metric(sb, a, "pgrst_jwt_cache_hits_total", "counter",
           "The total number of JWT cache hits", NULL, ull(a, atomic_load(&m->jwt_cache_hits)));
    metric(sb, a, "pgrst_jwt_cache_evictions_total", "counter",
           "The total number of JWT cache evictions", NULL,
           ull(a, atomic_load(&m->jwt_cache_evictions)));
}

/* pgrest's own (PostgREST has no request counter): after PostgREST's
 * metrics, so their order is kept. */
static void request_metrics(pgr_sb *sb, pgrest_arena *a, pgr_metrics *m)
{
    static const char *const classes[] = {"other", "1xx", "2xx", "3xx", "4xx", "5xx"};
    pgr_sb_puts(sb, "# HELP pgrst_requests_total The total number of requests answered, by status class\n"
                    "# TYPE pgrst_requests_total counter\n");
    for (int i = 0; i < 6; i++)
        pgr_sb_puts(sb, pgr_asprintf(a, "pgrst_requests_total{status=\"%s\"} %s\n",
                                     classes[i], ull(a, atomic_load(&m->requests[i]))));
}

/* pgrest's own too (docs/streaming.md): after the request counter */
static void stream_metrics(pgr_sb *sb, pgrest_arena *a, pgr_metrics *m)
{
    metric(sb, a, "pgrst_stream_aborts_total", "counter",
           "The total number of streamed responses cut short by an error after their head",
           NULL, ull(a, atomic_load(&m->stream_aborts)));
}

/* pgrest's own (docs/operations.md), in PostgREST's naming: only while
 * jwt-jwks-uri is set, so PostgREST's /metrics is unchanged without it */
static void jwks_metrics(pgr_sb *sb, pgrest_arena *a, pgrest_ctx *ctx)
{
    pgr_jwks *j = pgr_ctx_jwks(ctx);
    if (j == NULL)
        return;
    pgr_jwks_release(j);
    pgr_metrics *m = &ctx->metrics;
    metric(sb, a, "pgrst_jwks_fetches_total", "counter",
           "The total number of JWKS fetches from jwt-jwks-uri, failed or not", NULL,
           ull(a, atomic_load(&m->jwks_fetches)));
    metric(sb, a, "pgrst_jwks_fetch_failures_total", "counter",
           "The total number of JWKS fetches that failed", NULL,
           ull(a, atomic_load(&m->jwks_fetch_failures)));
}

/* docs/replicas.md: one sample per replica, labelled by its position in
 * db-replica-uris (from 0); nothing without replicas. */
typedef struct replica_metric {
    const char *name, *type, *help;
} replica_metric;

static const char *replica_value(pgrest_arena *a, const pgr_replica_stats *s, size_t k)
{
    switch (k) {
    case 0: return hs_double(a, s->usable ? 1 : 0);
    case 1: return hs_double(a, s->lag_seconds);
    case 2: return ull(a, s->reads);
    case 3: return ull(a, s->skipped_unhealthy);
    case 4: return ull(a, s->skipped_lsn);
    case 5: return ull(a, s->retries);
    case 6: return hs_int(a, s->pool.available);
    case 7: return ull(a, (unsigned long long)s->pool.waiting);
    case 8: return ull(a, (unsigned long long)s->pool.max);
    default: return ull(a, s->pool.timeouts);
    }
}

static void replica_metrics(pgr_sb *sb, pgrest_arena *a, pgrest_ctx *ctx)
{
    static const replica_metric metrics[] = {
        {"pgrst_replica_up", "gauge", "1 while the replica passes its health check"},
        {"pgrst_replica_lag_seconds", "gauge", "How long the replica has not replayed WAL the primary flushed"},
        {"pgrst_replica_reads_total", "counter", "Reads sent to the replica"},
        {"pgrst_replica_skipped_total", "counter", "Reads that skipped the replica as unhealthy"},
        {"pgrst_replica_skipped_lsn_total", "counter", "Reads that skipped the replica as not replayed to their Pgrest-Min-Lsn"},
        {"pgrst_replica_retries_total", "counter", "Reads that lost the replica and were retried on the primary"},
        {"pgrst_replica_pool_available", "gauge", "Available connections in the replica's pool"},
        {"pgrst_replica_pool_waiting", "gauge", "Requests waiting to acquire a connection of the replica's pool"},
        {"pgrst_replica_pool_max", "gauge", "Max connections of the replica's pool"},
        {"pgrst_replica_pool_timeouts_total", "counter", "Connection timeouts of the replica's pool"},
    };
    pgr_replica_set *set = pgr_ctx_replicas(ctx);
    size_t n = pgr_replicas_count(set);
    if (n == 0)
        return;
    pgr_replica_stats *st = PGR_NEW_ARRAY(a, pgr_replica_stats, n);
    if (st == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        pgr_replicas_stats(set, i, &st[i]);
    for (size_t k = 0; k < sizeof metrics / sizeof metrics[0]; k++) {
        const replica_metric *m = &metrics[k];
        pgr_sb_puts(sb, pgr_asprintf(a, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help,
                                     m->name, m->type));
        for (size_t i = 0; i < n; i++)
            pgr_sb_puts(sb, pgr_asprintf(a, "%s{replica=\"%zu\"} %s\n", m->name, i,
                                         replica_value(a, &st[i], k)));
    }
    metric(sb, a, "pgrst_replica_fallbacks_total", "counter",
           "Reads sent to the primary because no replica was usable", NULL,
           ull(a, pgr_replicas_fallbacks(set)));
}

const char *pgrest_ctx_metrics(pgrest_ctx *ctx, pgrest_arena *arena)
{
    if (ctx == NULL || arena == NULL)
        return NULL;
    pgr_sb sb;
    pgr_sb_init(&sb, arena, 2048);
    pool_metrics(&sb, arena, ctx);
    schema_metrics(&sb, arena, &ctx->metrics);
    jwt_cache_metrics(&sb, arena, &ctx->metrics);
    request_metrics(&sb, arena, &ctx->metrics);
    stream_metrics(&sb, arena, &ctx->metrics);
    jwks_metrics(&sb, arena, ctx);
    replica_metrics(&sb, arena, ctx);
    return pgr_sb_finish(&sb);
}
