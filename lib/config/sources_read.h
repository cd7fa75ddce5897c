/* PostgREST's Config.hs parser over the values of its sources
 * (sources_read.c): the resolved AppConfig, and the options it gives the
 * library. */
#ifndef PGR_SOURCES_READ_H
#define PGR_SOURCES_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "config/source_list.h"

/* PostgREST's AppConfig: every option resolved, with PostgREST's aliases,
 * defaults, coercions and checks. Strings are borrowed from the raw list
 * or from owned[]. */
typedef struct pgr_app_config {
    pgr_src_list app_settings;        /* app.settings.*, in source order */
    const char *client_error_verbosity;
    bool db_aggregates_enabled;
    const char *db_anon_role;         /* NULL: unset */
    const char *db_channel;
    bool db_channel_enabled;
    const char *db_extra_search_path; /* items trimmed, joined with "," */
    const char *db_hoisted_tx_settings;
    bool has_db_max_rows;
    long long db_max_rows;
    bool db_plan_enabled;
    long long db_pool;
    long long db_pool_acquisition_timeout;
    long long db_pool_max_lifetime;
    long long db_pool_max_idletime;
    bool db_pool_automatic_recovery;
    const char *db_pre_request;
    bool db_prepared_statements;
    const char *db_root_spec;
    const char *db_schemas;
    bool db_config;
    const char *db_pre_config;
    const char *db_tx_end;
    const char *db_uri;               /* after @file */
    const char *db_channel_uri;       /* pgrest's db-channel-uri; NULL = db-uri */
    const char *jwt_aud;
    const char *jwt_role_claim_key;   /* as configured */
    const char *jwt_role_claim_key_dump;
    const char *jwt_secret;           /* after @file, before base64 decoding */
    const char *jwt_secret_dump;      /* what --dump-config shows */
    bool jwt_secret_is_base64;
    long long jwt_cache_max_entries;
    const char *log_level;
    bool log_query;
    const char *openapi_mode;
    bool openapi_security_active;
    const char *openapi_server_proxy_uri;
    const char *server_cors_allowed_origins;
    const char *server_host;
    long long server_port;
    bool server_reuseport;
    const char *server_trace_header;
    bool server_timing_enabled;
    const char *server_unix_socket;
    unsigned server_unix_socket_mode;
    bool url_use_legacy_target_names;
    const char *admin_server_host;
    bool has_admin_server_port;
    long long admin_server_port;
    const char *admin_server_unix_socket;
    unsigned admin_server_unix_socket_mode;

    bool oom;                         /* an allocation failed while reading */
    char **owned;                     /* strings to free */
    size_t n_owned, cap_owned;
} pgr_app_config;

/* Resolves raw into cfg (Config.hs parser, then decodeLoadFiles):
 * PGREST_OK; PGREST_ERR_CONFIG with PostgREST's message in err ("Error in
 * config <reason>", "user error (<reason>)" for the JWT secret, the file
 * error for @file values); PGREST_ERR_INTERNAL on OOM. On failure cfg is
 * left empty. */
int pgr_app_config_read(const pgr_src_list *raw, pgr_app_config *cfg, char *err,
                         size_t errlen);
void pgr_app_config_free(pgr_app_config *cfg);

/* Every PostgREST option under its canonical name with the resolved value
 * (booleans "true"/"false", numbers in decimal), app.settings.*, and the
 * raw keys the reader does not resolve itself, as given. False on OOM. */
bool pgr_app_config_to_options(const pgr_app_config *cfg, const pgr_src_list *raw,
                               pgr_src_list *out);

#endif
