/* PostgREST's AppConfig (Config.hs `parser` + `decodeLoadFiles`): every
 * option resolved from the raw sources (file values keep their
 * configurator type, PGRST_* and in-database values are strings), with
 * PostgREST's aliases, defaults, coercions and checks. */
#ifndef PGRS_APP_CONFIG_H
#define PGRS_APP_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "config_file.h"

typedef struct app_config {
    server_options app_settings;      /* app.settings.*, sorted by key */
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
    bool jwt_role_claim_key_legacy;   /* the deprecated JSPath syntax */
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

    char **owned;                     /* strings to free */
    size_t n_owned, cap_owned;
} app_config;

/* Resolves raw into cfg. On failure returns false with PostgREST's message
 * in err: "Error in config <reason>" for a parser check, "user error
 * (<reason>)" for the JWT secret, the file error for @file values; cfg
 * is then left empty. */
bool app_config_read(const server_options *raw, app_config *cfg, char *err, size_t errlen);
void app_config_free(app_config *cfg);

/* The options the library and the server use: every PostgREST option under
 * its canonical name with the resolved value (booleans "true"/"false",
 * numbers in decimal), plus raw options PostgREST does not know
 * (pgrest's own server-max-*, request-max-*, server-threads) as given. */
void app_config_to_options(const app_config *cfg, const server_options *raw,
                           server_options *out);

/* Whether key is a PostgREST option or alias this module resolves. */
bool app_config_known_key(const char *key);

/* The two lines PostgREST logs when jwt-role-claim-key uses the
 * deprecated JSPath syntax (Logger.hs DeprecatedJSPathSyntaxObs). */
void app_config_deprecation_lines(const app_config *cfg, char *line1, size_t len1,
                                  char *line2, size_t len2);
/* The same lines for a jwt-role-claim-key as the library holds it after a
 * reload (PostgREST's readInDbConfig logs them again whenever the new
 * configuration still uses the deprecated syntax); false when it does
 * not. */
bool app_config_role_claim_deprecation(const char *key, char *line1, size_t len1,
                                       char *line2, size_t len2);

#endif
