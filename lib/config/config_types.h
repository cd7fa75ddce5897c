/* The parsed configuration, pgr_config: the values of one snapshot
 * (config_snapshot.h), read from the option table (config.c). Types only,
 * so every layer above config/ may include it. */
#ifndef PGR_CONFIG_TYPES_H
#define PGR_CONFIG_TYPES_H

#include <stdbool.h>
#include <stddef.h>

#include "parse/request.h"

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

/* The root's document: PostgREST's Swagger 2.0, or pgrest's OpenAPI 3.1
 * (openapi-version, Accept: application/openapi+json;version=3.1). */
typedef enum pgr_openapi_version {
    PGR_OPENAPI_V2,
    PGR_OPENAPI_V3_1
} pgr_openapi_version;

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
    /* jwt-jwks-uri: keys fetched from a URL (lib/auth/jwks.h), next to
     * jwt-secret; NULL = none */
    const char *jwt_jwks_uri;
    const char *jwt_jwks_cafile;      /* NULL = libcurl's CA bundle */
    int jwt_jwks_timeout;             /* seconds */
    int jwt_jwks_min_refresh;         /* seconds */
    bool client_error_minimal;
    bool server_timing_enabled;
    pgr_openapi_mode openapi_mode;
    pgr_openapi_version openapi_version;
    const char *server_cors_allowed_origins;
    const char *server_trace_header;
    bool url_use_legacy_target_names;
    pgr_kv *app_settings;             /* app.settings.* */
    pgr_parse_limits limits;          /* server-max-body-size, request-max-* */
    /* derived when the snapshot is built */
    const pgr_kv *options;            /* every option set, as text */
    struct pgr_jwt_cache *jwt_cache;  /* NULL when jwt-cache-max-entries=0 */
} pgr_config;

#endif
