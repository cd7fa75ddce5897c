/* The context's fields (PostgREST's AppState): types only, no
 * context_types.c, for the code that reads or bumps a field (observe.c,
 * the JWT cache metrics) without calling into the context
 * (engine/context.h, which includes this). */
#ifndef PGR_CONTEXT_TYPES_H
#define PGR_CONTEXT_TYPES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "engine/stage_view.h"
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
    atomic_ullong jwks_fetches;        /* jwt-jwks-uri fetches ended, failed or not */
    atomic_ullong jwks_fetch_failures;
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
    /* jwt-jwks-uri's fetcher (engine/jwks_source.c), under lock */
    struct pgr_jwks *jwks;
    pgr_metrics metrics;
    /* Tests only (tests/integration/test_embed_text.c): emit embeds in
     * the jsonb shape even where the text shape applies, to compare the
     * two bodies. No option sets it. */
    bool test_embeds_as_jsonb;
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

#endif
