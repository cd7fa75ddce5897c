/* The context: configuration, schema cache and pool shared by requests
 * (PostgREST's AppState). */
#ifndef PGR_CONTEXT_H
#define PGR_CONTEXT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "engine/stage_view.h"
#include "parse/api_types.h"
#include "pgrest/pgrest.h"
#include "schema/schema_cache.h"

typedef struct pgr_pool pgr_pool;

/* Counters behind pgrest_ctx_metrics; updated without locks. */
typedef struct pgr_metrics {
    atomic_ullong schema_loads_ok;
    atomic_ullong schema_loads_error;
    /* "Schema cache loaded in X milliseconds" of the last successful
     * load, in microseconds: the value of
     * pgrst_schema_cache_query_time_seconds (see metrics.c) */
    atomic_ullong schema_load_usec;
    atomic_ullong requests[6];         /* by status class: 1xx..5xx, [0] other */
    atomic_ullong jwt_cache_requests;  /* lookups while the JWT cache is on */
    atomic_ullong jwt_cache_hits;
    atomic_ullong jwt_cache_evictions;
    atomic_ullong stream_aborts;       /* streamed responses cut short by an error */
} pgr_metrics;
typedef struct pgr_listener pgr_listener;

struct pgr_conf_slot;
struct pgr_conf;

struct pgrest_ctx {
    /* the current configuration snapshot; requests bind one to their
     * arena (pgr_cfg) and keep it to the end */
    struct pgr_conf_slot *conf;
    pgr_config fallback;              /* defaults, see pgr_cfg */
    pthread_mutex_t lock;             /* guards schema swap, pool creation
                                       * and the err arena */
    pgr_schema_cache *schema;
    /* Created by the first schema load, then fixed until pgrest_ctx_free;
     * requests read it without the lock (pgr_ctx_pool). */
    pgr_pool *_Atomic pool;
    /* db-replica-uris' pools and health checks, created with the pool
     * (NULL without replicas), fixed like it */
    struct pgr_replica_set *_Atomic replicas;
    pgrest_arena *err_arena;          /* strings of context-level errors */
    pgr_listener *listener;           /* NOTIFY reload + recovery thread */
    pgr_metrics metrics;
    pgrest_query_logger query_logger; /* log-query, set by the host */
    void *query_logger_arg;
    pgrest_observer observer;         /* observations, set by the host */
    void *observer_arg;
    atomic_bool listener_on;          /* the LISTEN connection is up */
    /* The last schema cache load failed (PostgREST markSchemaCachePending):
     * /ready is 503 and the worker retries with backoff; requests keep
     * the cache in force. Cleared by a successful load. */
    atomic_bool schema_pending;
    /* bumped on every schema cache swap: statements prepared before it
     * are deallocated before the next use of their connection */
    atomic_uint schema_generation;
    /* Connection events for the host (lib/engine/db_events.c); db_fatal stops the
     * worker's retries after a non-retryable failure. */
    atomic_bool db_fatal;
};

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

/* Applies defaults to cfg. */
void pgr_config_defaults(pgr_config *cfg);
/* Sets one option; strings copied into arena. PGREST_ERR_CONFIG for an
 * unknown key or an invalid value, with PostgREST's message. */
int pgr_config_set(pgr_config *cfg, pgrest_arena *arena, const char *key,
                   const char *value, pgrest_error *err);
/* The option's own name for an alias ("db-schema" -> "db-schemas"). */
const char *pgr_config_canonical_key(const char *key);
bool pgr_config_key_known(const char *key);
/* Where the listener connects: db-channel-uri, else db-uri. */
const char *pgr_config_channel_uri(const pgr_config *cfg);

#endif
