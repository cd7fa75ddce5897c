/* Prometheus text for the admin /metrics endpoint (PostgREST
 * ref/observability "Metrics": pgrst_* names kept). */
#include "context.h"
#include "exec/pool.h"
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
    return pgr_sb_finish(&sb);
}
