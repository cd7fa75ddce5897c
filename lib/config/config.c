/* Library configuration by PostgREST's option names (ref/configuration). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/context.h"
#include "config/config_uri.h"
#include "exec/replica_uris.h"
#include "auth/jwt.h"
#include "util/error.h"
#include "util/strbuf.h"

void pgr_config_defaults(pgr_config *cfg)
{
    static const char *default_schemas[] = {"public", NULL};
    static const char *default_extra[] = {"public", NULL};
    memset(cfg, 0, sizeof *cfg);
    cfg->db_uri = "postgresql://";
    cfg->db_schemas = default_schemas;
    cfg->n_db_schemas = 1;
    cfg->db_pool = 10;
    cfg->db_pool_acquisition_timeout = 10;
    cfg->db_pool_max_lifetime = 1800;
    cfg->db_pool_max_idletime = 30;
    cfg->db_extra_search_path = default_extra;
    cfg->n_db_extra_search_path = 1;
    cfg->db_max_rows = -1;
    cfg->db_tx_end = PGR_TX_COMMIT;
    cfg->db_prepared_statements = true;
    cfg->jwt_role_claim_key = ".role";
    cfg->jwt_cache_max_entries = 1000;
    cfg->db_config = true;
    cfg->db_pool_automatic_recovery = true;
    cfg->db_replica_max_lag = 5;
    cfg->openapi_mode = PGR_OPENAPI_FOLLOW_PRIVILEGES;
    cfg->url_use_legacy_target_names = true;
    cfg->limits = *pgr_parse_limits_default();
}

static const char *trim(pgrest_arena *a, const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    return pgr_strndup(a, s, n);
}

/* Comma-separated list -> NULL-terminated array of trimmed items. */
static const char **split_list(pgrest_arena *a, const char *value, size_t *n_out)
{
    size_t n = 0;
    for (const char *p = value; *p; p++)
        if (*p == ',')
            n++;
    const char **items = PGR_NEW_ARRAY(a, const char *, n + 2);
    if (items == NULL)
        return NULL;
    size_t k = 0;
    const char *start = value;
    for (const char *p = value;; p++) {
        if (*p == ',' || *p == '\0') {
            const char *item = trim(a, pgr_strndup(a, start, (size_t)(p - start)));
            if (item != NULL && item[0] != '\0')
                items[k++] = item;
            if (*p == '\0')
                break;
            start = p + 1;
        }
    }
    items[k] = NULL;
    *n_out = k;
    return items;
}

/* db-hoisted-tx-settings (PostgREST Config.hs): empty means the default
 * list (optString); otherwise every comma-separated item, stripped, empty
 * ones included (splitOnCommas), each a regular expression. */
static int set_hoisted(pgr_config *cfg, pgrest_arena *a, const char *value,
                       pgrest_error *err)
{
    cfg->db_hoisted_tx_settings = NULL;
    cfg->n_db_hoisted_tx_settings = 0;
    if (value[0] == '\0')
        return PGREST_OK;
    size_t n = 1;
    for (const char *p = value; *p; p++)
        n += *p == ',';
    const char **items = PGR_NEW_ARRAY(a, const char *, n + 1);
    if (items == NULL)
        return pgr_error_oom(err);
    size_t k = 0;
    for (const char *start = value, *p = value;; p++) {
        if (*p != ',' && *p != '\0')
            continue;
        const char *item = pgr_strndup(a, start, (size_t)(p - start));
        if (item == NULL || (items[k++] = trim(a, item)) == NULL)
            return pgr_error_oom(err);
        if (*p == '\0')
            break;
        start = p + 1;
    }
    items[k] = NULL;
    cfg->db_hoisted_tx_settings = items;
    cfg->n_db_hoisted_tx_settings = k;
    return PGREST_OK;
}

static bool parse_bool(const char *v, bool *out)
{
    if (strcasecmp(v, "true") == 0 || strcasecmp(v, "on") == 0 ||
        strcasecmp(v, "yes") == 0 || strcmp(v, "1") == 0) {
        *out = true;
        return true;
    }
    if (strcasecmp(v, "false") == 0 || strcasecmp(v, "off") == 0 ||
        strcasecmp(v, "no") == 0 || strcmp(v, "0") == 0) {
        *out = false;
        return true;
    }
    return false;
}

static bool parse_int(const char *v, long long *out)
{
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0')
        return false;
    *out = n;
    return true;
}

/* Configuration errors are not HTTP errors: no status, no code, the
 * message as PostgREST's config parser words it. */
static int config_error(pgrest_error *err, pgrest_arena *a, const char *fmt, const char *arg)
{
    pgr_errorf(err, a, 0, NULL, NULL, NULL, fmt, arg);
    return PGREST_ERR_CONFIG;
}

/* Values PostgREST reads as numbers or booleans (pgrest refuses what it
 * cannot read instead of silently falling back to the default). */
static int invalid(pgrest_error *err, pgrest_arena *a, const char *key,
                   const char *value)
{
    pgr_errorf(err, a, 0, NULL, NULL, NULL, "Invalid %s: %s", key, value);
    return PGREST_ERR_CONFIG;
}

const char *pgr_config_canonical_key(const char *key)
{
    static const struct { const char *alias, *name; } aliases[] = {
        {"db-schema", "db-schemas"},
        {"max-rows", "db-max-rows"},
        {"pre-request", "db-pre-request"},
        {"root-spec", "db-root-spec"},
        {"role-claim-key", "jwt-role-claim-key"},
        {"secret-is-base64", "jwt-secret-is-base64"},
        {"db-pool-timeout", "db-pool-max-idletime"},
    };
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(key, aliases[i].alias) == 0)
            return aliases[i].name;
    return key;
}

static int set_bool(bool *field, pgrest_arena *a, const char *key,
                    const char *value, pgrest_error *err)
{
    return parse_bool(value, field) ? PGREST_OK : invalid(err, a, key, value);
}

static int set_app_setting(pgr_config *cfg, pgrest_arena *a, const char *key,
                           const char *value)
{
    for (pgr_kv *kv = cfg->app_settings; kv != NULL; kv = kv->next)
        if (strcmp(kv->name, key) == 0) {
            kv->value = pgr_strdup(a, value);
            return PGREST_OK;
        }
    pgr_kv *kv = PGR_NEW(a, pgr_kv);
    if (kv == NULL)
        return PGREST_ERR_INTERNAL;
    kv->name = pgr_strdup(a, key);
    kv->value = pgr_strdup(a, value);
    pgr_kv **tail = &cfg->app_settings;
    while (*tail != NULL)
        tail = &(*tail)->next;
    *tail = kv;
    return PGREST_OK;
}

static const char *nonempty(pgrest_arena *a, const char *v)
{
    return v[0] == '\0' ? NULL : pgr_strdup(a, v);
}

static int set_tx_end(pgr_config *cfg, pgrest_arena *a, const char *value,
                      pgrest_error *err)
{
    static const struct { const char *name; pgr_tx_end v; } m[] = {
        {"commit", PGR_TX_COMMIT},
        {"commit-allow-override", PGR_TX_COMMIT_ALLOW_OVERRIDE},
        {"rollback", PGR_TX_ROLLBACK},
        {"rollback-allow-override", PGR_TX_ROLLBACK_ALLOW_OVERRIDE},
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (strcmp(value, m[i].name) == 0) {
            cfg->db_tx_end = m[i].v;
            return PGREST_OK;
        }
    return config_error(err, a, "Invalid transaction termination. Check your configuration.", NULL);
}

static int set_openapi_mode(pgr_config *cfg, pgrest_arena *a,
                            const char *value, pgrest_error *err)
{
    if (strcmp(value, "follow-privileges") == 0)
        cfg->openapi_mode = PGR_OPENAPI_FOLLOW_PRIVILEGES;
    else if (strcmp(value, "ignore-privileges") == 0)
        cfg->openapi_mode = PGR_OPENAPI_IGNORE_PRIVILEGES;
    else if (strcmp(value, "disabled") == 0)
        cfg->openapi_mode = PGR_OPENAPI_DISABLED;
    else
        return config_error(err, a, "Invalid openapi-mode. Check your configuration.", NULL);
    return PGREST_OK;
}

static int set_int(long long *out, long long min, pgrest_arena *a,
                   const char *key, const char *value, pgrest_error *err)
{
    long long n;
    if (!parse_int(value, &n) || n < min)
        return invalid(err, a, key, value);
    *out = n;
    return PGREST_OK;
}

/* pgrest's own resource limits (not PostgREST options): positive integers. */
static int set_limit(pgr_config *cfg, pgrest_arena *a, const char *key,
                     const char *value, bool *handled, pgrest_error *err)
{
    static const struct { const char *key; long long max; } keys[] = {
        {"server-max-body-size", (long long)1 << 40},
        {"request-max-depth", 1000},
        {"request-max-filters", 1000000},
        {"request-max-json-depth", 100000},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (strcmp(key, keys[i].key) != 0)
            continue;
        *handled = true;
        long long n;
        int rc = set_int(&n, 1, a, key, value, err);
        if (rc != PGREST_OK)
            return rc;
        if (n > keys[i].max)
            return invalid(err, a, key, value);
        pgr_parse_limits *l = &cfg->limits;
        if (i == 0)
            l->max_body_size = n;
        else if (i == 1)
            l->max_depth = (int)n;
        else if (i == 2)
            l->max_filters = (int)n;
        else
            l->max_json_depth = (int)n;
        return PGREST_OK;
    }
    *handled = false;
    return PGREST_OK;
}

/* PostgREST's parseDbSchemas: the catalogs cannot be exposed. */
static int check_schemas(const char **schemas, pgrest_arena *a, pgrest_error *err)
{
    static const char *const refused[] = {"pg_catalog", "information_schema"};
    for (size_t r = 0; r < 2; r++)
        for (const char **s = schemas; *s != NULL; s++)
            if (strcmp(*s, refused[r]) == 0)
                return config_error(err, a, "db-schemas does not allow schema: '%s'", refused[r]);
    return PGREST_OK;
}

/* PostgREST's parseLogLevel; the level itself is the host's business. */
static int check_log_level(pgrest_arena *a, const char *value, pgrest_error *err)
{
    static const char *const levels[] = {"crit", "error", "warn", "info", "debug"};
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
        if (strcmp(value, levels[i]) == 0)
            return PGREST_OK;
    return config_error(err, a, "Invalid logging level. Check your configuration.", NULL);
}

/* Options the library keeps as text for the host (pgrest_ctx_get): the
 * rest of PostgREST's AppConfig and the reference server's own limits. */
static bool text_option(const char *key)
{
    static const char *const keys[] = {
        "admin-server-host", "admin-server-port", "admin-server-unix-socket",
        "admin-server-unix-socket-mode", "db-channel", "db-channel-enabled",
        "db-hoisted-tx-settings", "db-pool-automatic-recovery", "log-query",
        "openapi-security-active", "server-host", "server-port", "server-reuseport",
        "server-unix-socket", "server-unix-socket-mode",
        "internal-schema-cache-query-sleep-before-queries",
        "internal-schema-cache-query-sleep",
        /* pgrest-server's limits (server/main.c) */
        "server-max-url-size", "server-max-header-size", "server-timeout",
        "server-max-connections", "server-max-connections-per-ip", "server-threads",
        "server-cancel-on-disconnect",
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcmp(key, keys[i]) == 0)
            return true;
    return false;
}

int pgr_config_set(pgr_config *cfg, pgrest_arena *a, const char *raw_key,
                   const char *value, pgrest_error *err)
{
    const char *key = pgr_config_canonical_key(raw_key);
    long long n;
    int rc;
    if (strncmp(key, "app.settings.", 13) == 0 && key[13] != '\0')
        return set_app_setting(cfg, a, key, value);
    bool handled;
    rc = set_limit(cfg, a, key, value, &handled, err);
    if (handled)
        return rc;
    /* PostgREST's optString drops empty values (and "" reads as no number
     * or boolean): the option keeps its default. db-extra-search-path is
     * optStringEmptyable: "" is the empty list. */
    if (value[0] == '\0' && strcmp(key, "db-extra-search-path") != 0)
        return pgr_config_key_known(key) ? PGREST_OK
                                         : config_error(err, a, "Unknown configuration option: %s",
                                                        raw_key);
    if (strcmp(key, "db-uri") == 0)
        cfg->db_uri = pgr_strdup(a, value);
    else if (strcmp(key, "db-channel-uri") == 0)
        cfg->db_channel_uri = pgr_strdup(a, value);
    else if (strcmp(key, "db-schemas") == 0) {
        size_t k;
        const char **l = split_list(a, value, &k);
        if (l == NULL || k == 0)
            return invalid(err, a, key, value);
        if ((rc = check_schemas(l, a, err)) != PGREST_OK)
            return rc;
        cfg->db_schemas = l;
        cfg->n_db_schemas = k;
    } else if (strcmp(key, "db-hoisted-tx-settings") == 0)
        return set_hoisted(cfg, a, value, err);
    else if (strcmp(key, "db-pool-automatic-recovery") == 0)
        return set_bool(&cfg->db_pool_automatic_recovery, a, key, value, err);
    else if (strcmp(key, "db-replica-uris") == 0)
        return pgr_replica_uris_split(a, value, &cfg->db_replica_uris, &cfg->n_db_replica_uris,
                                      err);
    else if (strcmp(key, "db-replica-max-lag") == 0) {
        if ((rc = set_int(&n, 0, a, key, value, err)) != PGREST_OK)
            return rc;
        cfg->db_replica_max_lag = n > INT_MAX ? INT_MAX : (int)n;
    } else if (strcmp(key, "db-extra-search-path") == 0)
        cfg->db_extra_search_path = split_list(a, value, &cfg->n_db_extra_search_path);
    else if (strcmp(key, "db-anon-role") == 0)
        cfg->db_anon_role = nonempty(a, value);
    else if (strcmp(key, "db-pool") == 0) {
        if ((rc = set_int(&n, 1, a, key, value, err)) != PGREST_OK)
            return rc;
        cfg->db_pool = (int)n;
    } else if (strcmp(key, "db-pool-acquisition-timeout") == 0) {
        if ((rc = set_int(&n, 0, a, key, value, err)) != PGREST_OK)
            return rc;
        cfg->db_pool_acquisition_timeout = (int)n;
    } else if (strcmp(key, "db-pool-max-lifetime") == 0) {
        if ((rc = set_int(&n, 0, a, key, value, err)) != PGREST_OK)
            return rc;
        cfg->db_pool_max_lifetime = n > INT_MAX ? INT_MAX : (int)n;
    } else if (strcmp(key, "db-pool-max-idletime") == 0) {
        if ((rc = set_int(&n, 0, a, key, value, err)) != PGREST_OK)
            return rc;
        cfg->db_pool_max_idletime = n > INT_MAX ? INT_MAX : (int)n;
    } else if (strcmp(key, "db-max-rows") == 0) {
        if (value[0] == '\0')
            cfg->db_max_rows = -1;
        else if ((rc = set_int(&cfg->db_max_rows, 0, a, key, value, err)) != PGREST_OK)
            return rc;
    } else if (strcmp(key, "db-tx-end") == 0)
        return set_tx_end(cfg, a, value, err);
    else if (strcmp(key, "db-pre-config") == 0)
        cfg->db_pre_config = nonempty(a, value);
    else if (strcmp(key, "db-config") == 0)
        return set_bool(&cfg->db_config, a, key, value, err);
    else if (strcmp(key, "db-pre-request") == 0)
        cfg->db_pre_request = nonempty(a, value);
    else if (strcmp(key, "db-root-spec") == 0)
        cfg->db_root_spec = nonempty(a, value);
    else if (strcmp(key, "db-prepared-statements") == 0)
        return set_bool(&cfg->db_prepared_statements, a, key, value, err);
    else if (strcmp(key, "db-aggregates-enabled") == 0)
        return set_bool(&cfg->db_aggregates_enabled, a, key, value, err);
    else if (strcmp(key, "db-plan-enabled") == 0)
        return set_bool(&cfg->db_plan_enabled, a, key, value, err);
    else if (strcmp(key, "jwt-secret") == 0)
        cfg->jwt_secret = nonempty(a, value);
    else if (strcmp(key, "jwt-secret-is-base64") == 0)
        return set_bool(&cfg->jwt_secret_is_base64, a, key, value, err);
    else if (strcmp(key, "jwt-cache-max-entries") == 0)
        return set_int(&cfg->jwt_cache_max_entries, 0, a, key, value, err);
    else if (strcmp(key, "jwt-aud") == 0) {
        if (strchr(value, ':') != NULL && !config_uri_is_uri(value))
            return config_error(err, a, "jwt-aud should be a string or a valid URI", NULL);
        cfg->jwt_aud = nonempty(a, value);
    }
    else if (strcmp(key, "jwt-role-claim-key") == 0) {
        /* refused up front, not at the first request with a JWT */
        if ((rc = pgr_jwt_check_role_claim_key(a, value, err)) != PGREST_OK)
            return rc;
        cfg->jwt_role_claim_key = pgr_strdup(a, value);
    }
    else if (strcmp(key, "client-error-verbosity") == 0) {
        if (strcmp(value, "minimal") == 0)
            cfg->client_error_minimal = true;
        else if (strcmp(value, "verbose") == 0)
            cfg->client_error_minimal = false;
        else
            return config_error(err, a, "Invalid client-error-verbosity. Check your configuration.",
                                NULL);
    } else if (strcmp(key, "server-timing-enabled") == 0)
        return set_bool(&cfg->server_timing_enabled, a, key, value, err);
    else if (strcmp(key, "openapi-mode") == 0)
        return set_openapi_mode(cfg, a, value, err);
    else if (strcmp(key, "server-cors-allowed-origins") == 0)
        cfg->server_cors_allowed_origins = nonempty(a, value);
    else if (strcmp(key, "server-trace-header") == 0)
        cfg->server_trace_header = nonempty(a, value);
    else if (strcmp(key, "url-use-legacy-target-names") == 0)
        return set_bool(&cfg->url_use_legacy_target_names, a, key, value, err);
    else if (strcmp(key, "log-level") == 0)
        return check_log_level(a, value, err);
    else if (strcmp(key, "openapi-server-proxy-uri") == 0) {
        /* kept as text (pgr_cfg_option); Config.hs parseOpenAPIServerProxyURI */
        if (config_uri_is_malformed_proxy(value))
            return config_error(err, a, "Malformed proxy uri, a correct example: "
                                        "https://example.com:8443/basePath", NULL);
    }
    else if (!text_option(key))
        return config_error(err, a, "Unknown configuration option: %s", raw_key);
    return PGREST_OK;
}

bool pgr_config_key_known(const char *raw_key)
{
    const char *key = pgr_config_canonical_key(raw_key);
    /* the options pgr_config_set parses */
    static const char *const typed[] = {
        "db-uri", "db-channel-uri", "db-schemas", "db-extra-search-path", "db-anon-role", "db-pool",
        "db-pool-acquisition-timeout", "db-pool-max-lifetime", "db-pool-max-idletime",
        "db-max-rows", "db-tx-end", "db-pre-config",
        "db-config", "db-pre-request", "db-root-spec", "db-prepared-statements",
        "db-aggregates-enabled", "db-plan-enabled", "jwt-secret", "jwt-secret-is-base64",
        "jwt-cache-max-entries", "jwt-aud", "jwt-role-claim-key", "client-error-verbosity",
        "server-timing-enabled", "openapi-mode", "server-cors-allowed-origins",
        "server-trace-header", "url-use-legacy-target-names", "log-level",
        "openapi-server-proxy-uri", "db-replica-uris", "db-replica-max-lag",
        "server-max-body-size", "request-max-depth", "request-max-filters",
        "request-max-json-depth",
    };
    if (strncmp(key, "app.settings.", 13) == 0 && key[13] != '\0')
        return true;
    for (size_t i = 0; i < sizeof typed / sizeof typed[0]; i++)
        if (strcmp(key, typed[i]) == 0)
            return true;
    return text_option(key);
}

const char *pgr_config_channel_uri(const pgr_config *cfg)
{
    return cfg->db_channel_uri != NULL ? cfg->db_channel_uri : cfg->db_uri;
}
