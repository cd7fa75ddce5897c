/* The context: configuration, schema cache and pool shared by requests
 * (PostgREST's AppState). */
#ifndef PGR_CONTEXT_H
#define PGR_CONTEXT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "parse/api_request.h"
#include "pgrest/pgrest.h"
#include "schema/schema_cache.h"

typedef enum pgr_tx_end {
    PGR_TX_COMMIT,
    PGR_TX_COMMIT_ALLOW_OVERRIDE,
    PGR_TX_ROLLBACK,
    PGR_TX_ROLLBACK_ALLOW_OVERRIDE
} pgr_tx_end;

typedef enum pgr_openapi_mode {
    PGR_OPENAPI_FOLLOW_PRIVILEGES,
    PGR_OPENAPI_IGNORE_PRIVILEGES,
    PGR_OPENAPI_DISABLED
} pgr_openapi_mode;

struct pgr_jwt_cache;

/* Parsed configuration: the values of one snapshot (config_snapshot.h);
 * strings live in the snapshot's arena. */
typedef struct pgr_config {
    const char *db_uri;
    /* db-channel-uri: the listener's own connection (a direct one when
     * db-uri goes through a transaction pooler); NULL = db_uri */
    const char *db_channel_uri;
    const char **db_schemas;          /* NULL-terminated, first = default */
    size_t n_db_schemas;
    const char *db_anon_role;         /* NULL = anonymous disabled */
    int db_pool;
    int db_pool_acquisition_timeout;
    int db_pool_max_lifetime;         /* seconds */
    int db_pool_max_idletime;         /* seconds */
    const char **db_extra_search_path;/* NULL-terminated */
    size_t n_db_extra_search_path;
    long long db_max_rows;            /* -1 = unlimited */
    pgr_tx_end db_tx_end;
    const char *db_pre_request;
    const char *db_pre_config;        /* in-database config function */
    bool db_config;                   /* read pgrst.* settings from the DB */
    /* db-hoisted-tx-settings: NULL-terminated patterns, NULL = default */
    const char **db_hoisted_tx_settings;
    size_t n_db_hoisted_tx_settings;
    bool db_pool_automatic_recovery;  /* retry lost connections */
    const char **db_replica_uris;     /* NULL-terminated (docs/replicas.md) */
    size_t n_db_replica_uris;
    int db_replica_max_lag;           /* seconds */
    const char *db_root_spec;
    bool db_prepared_statements;
    bool db_aggregates_enabled;
    bool db_plan_enabled;
    const char *jwt_secret;
    bool jwt_secret_is_base64;
    const char *jwt_aud;
    const char *jwt_role_claim_key;
    long long jwt_cache_max_entries;
    bool client_error_minimal;
    bool server_timing_enabled;
    pgr_openapi_mode openapi_mode;
    const char *server_cors_allowed_origins;
    const char *server_trace_header;
    bool url_use_legacy_target_names;
    pgr_kv *app_settings;             /* app.settings.* */
    pgr_parse_limits limits;          /* server-max-body-size, request-max-* */
    /* derived when the snapshot is built */
    const pgr_kv *options;            /* every option set, as text */
    struct pgr_jwt_cache *jwt_cache;  /* NULL when jwt-cache-max-entries=0 */
} pgr_config;

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

/* The configuration of the request whose memory is arena: the context's
 * current snapshot, taken on the first call for that arena and kept (with
 * a reference) until the arena is freed, so every stage of one request
 * sees the same configuration whatever reloads happen meanwhile. */
const pgr_config *pgr_cfg(const pgrest_ctx *ctx, pgrest_arena *arena);
/* The value of an option as text in cfg (in-database settings included). */
const char *pgr_cfg_option(const pgr_config *cfg, const char *key);
/* The current snapshot with a reference taken (pgr_conf_release), for
 * work outside a request: schema loads, the listener, metrics. */
struct pgr_conf *pgr_ctx_conf(const pgrest_ctx *ctx);
/* Copies err's strings into the context (context-level calls have no
 * arena of the caller's); returns rc. */
int pgr_ctx_keep_error(pgrest_ctx *ctx, pgrest_error *err, int rc);
/* Current schema cache with a reference taken; release when done. */
pgr_schema_cache *pgr_ctx_schema(pgrest_ctx *ctx);
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
