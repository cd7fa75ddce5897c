/* The configuration options, one table (pgr_options below): each
 * option's name, alias, PGRST_ variable, in-database name, type, default
 * as PostgREST dumps it, and how the library reads it into pgr_config.
 * pgrest_ctx_set, the known-key check, the in-database settings query and
 * the host (pgrest_option_at / pgrest_option_find) all read this table;
 * adding an option is a line here and the code that uses it. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/config.h"
#include "config/config_uri.h"
#include "config/replica_uris.h"
#include "auth/jwks.h"
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
    cfg->jwt_jwks_timeout = 2;
    cfg->jwt_jwks_min_refresh = 30;
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
typedef struct pgr_option pgr_option;

static int set_hoisted(pgr_config *cfg, pgrest_arena *a, const pgr_option *o,
                       const char *value, pgrest_error *err)
{
    (void)o;
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

/* ------------------------------------------------------------ readers
 * How the library reads an option's text into pgr_config. Generic ones
 * use the option's field (an offset into pgr_config) and bounds. */

typedef int (*option_reader)(pgr_config *cfg, pgrest_arena *a, const pgr_option *o,
                             const char *value, pgrest_error *err);

struct pgr_option {
    pgrest_option_info info;
    option_reader read;          /* NULL: kept as text only (pgr_cfg_option) */
    size_t field;                /* offsetof(pgr_config, ...) */
    long long min, max;          /* integers: the range accepted */
    bool clamp;                  /* above max: max (else refused) */
    bool takes_empty;            /* "" is a value, not "the default" */
    bool alias_first;            /* the alias wins over the name when both are set */
};

#define FIELD(cfg, o, type) ((type *)((char *)(cfg) + (o)->field))

static int read_text(pgr_config *cfg, pgrest_arena *a, const pgr_option *o, const char *value,
                     pgrest_error *err)
{
    const char *copy = pgr_strdup(a, value);
    if (copy == NULL)
        return pgr_error_oom(err);
    *FIELD(cfg, o, const char *) = copy;
    return PGREST_OK;
}

static int read_bool(pgr_config *cfg, pgrest_arena *a, const pgr_option *o, const char *value,
                     pgrest_error *err)
{
    return parse_bool(value, FIELD(cfg, o, bool)) ? PGREST_OK
                                                   : invalid(err, a, o->info.name, value);
}

static int read_number(const pgr_option *o, pgrest_arena *a, const char *value,
                       long long *n, pgrest_error *err)
{
    if (!parse_int(value, n) || *n < o->min || (*n > o->max && !o->clamp))
        return invalid(err, a, o->info.name, value);
    if (*n > o->max)
        *n = o->max;
    return PGREST_OK;
}

static int read_int(pgr_config *cfg, pgrest_arena *a, const pgr_option *o, const char *value,
                    pgrest_error *err)
{
    long long n;
    int rc = read_number(o, a, value, &n, err);
    if (rc == PGREST_OK)
        *FIELD(cfg, o, int) = (int)n;
    return rc;
}

static int read_long(pgr_config *cfg, pgrest_arena *a, const pgr_option *o, const char *value,
                     pgrest_error *err)
{
    long long n;
    int rc = read_number(o, a, value, &n, err);
    if (rc == PGREST_OK)
        *FIELD(cfg, o, long long) = n;
    return rc;
}

/* PostgREST's parseDbSchemas: a list, without the catalogs. */
static int read_schemas(pgr_config *cfg, pgrest_arena *a, const pgr_option *o,
                        const char *value, pgrest_error *err)
{
    static const char *const refused[] = {"pg_catalog", "information_schema"};
    size_t k;
    const char **l = split_list(a, value, &k);
    if (l == NULL || k == 0)
        return invalid(err, a, o->info.name, value);
    for (size_t r = 0; r < 2; r++)
        for (const char **s = l; *s != NULL; s++)
            if (strcmp(*s, refused[r]) == 0)
                return config_error(err, a, "db-schemas does not allow schema: '%s'", refused[r]);
    cfg->db_schemas = l;
    cfg->n_db_schemas = k;
    return PGREST_OK;
}

/* optStringEmptyable: "" is the empty list */
static int read_search_path(pgr_config *cfg, pgrest_arena *a, const pgr_option *o,
                            const char *value, pgrest_error *err)
{
    (void)o;
    cfg->db_extra_search_path = split_list(a, value, &cfg->n_db_extra_search_path);
    return cfg->db_extra_search_path != NULL ? PGREST_OK : pgr_error_oom(err);
}

static int read_replicas(pgr_config *cfg, pgrest_arena *a, const pgr_option *o,
                         const char *value, pgrest_error *err)
{
    (void)o;
    return pgr_replica_uris_split(a, value, &cfg->db_replica_uris, &cfg->n_db_replica_uris, err);
}

static int read_tx_end(pgr_config *cfg, pgrest_arena *a, const pgr_option *o,
                       const char *value, pgrest_error *err)
{
    static const struct { const char *name; pgr_tx_end v; } m[] = {
        {"commit", PGR_TX_COMMIT},
        {"commit-allow-override", PGR_TX_COMMIT_ALLOW_OVERRIDE},
        {"rollback", PGR_TX_ROLLBACK},
        {"rollback-allow-override", PGR_TX_ROLLBACK_ALLOW_OVERRIDE},
    };
    (void)o;
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (strcmp(value, m[i].name) == 0) {
            cfg->db_tx_end = m[i].v;
            return PGREST_OK;
        }
    return config_error(err, a, "Invalid transaction termination. Check your configuration.", NULL);
}

static int read_openapi_mode(pgr_config *cfg, pgrest_arena *a, const pgr_option *o,
                             const char *value, pgrest_error *err)
{
    (void)o;
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

static int read_openapi_version(pgr_config *cfg, pgrest_arena *a, const pgr_option *o,
                                const char *value, pgrest_error *err)
{
    (void)o;
    if (strcmp(value, "2.0") == 0)
        cfg->openapi_version = PGR_OPENAPI_V2;
    else if (strcmp(value, "3.1") == 0)
        cfg->openapi_version = PGR_OPENAPI_V3_1;
    else
        return config_error(err, a, "Invalid openapi-version: 2.0 or 3.1. Check your configuration.",
                            NULL);
    return PGREST_OK;
}

static int read_verbosity(pgr_config *cfg, pgrest_arena *a, const pgr_option *o,
                          const char *value, pgrest_error *err)
{
    (void)o;
    if (strcmp(value, "minimal") != 0 && strcmp(value, "verbose") != 0)
        return config_error(err, a, "Invalid client-error-verbosity. Check your configuration.",
                            NULL);
    cfg->client_error_minimal = strcmp(value, "minimal") == 0;
    return PGREST_OK;
}

static int read_jwt_aud(pgr_config *cfg, pgrest_arena *a, const pgr_option *o,
                        const char *value, pgrest_error *err)
{
    if (strchr(value, ':') != NULL && !config_uri_is_uri(value))
        return config_error(err, a, "jwt-aud should be a string or a valid URI", NULL);
    return read_text(cfg, a, o, value, err);
}

/* refused up front, not at the first request with a JWT */
static int read_role_claim_key(pgr_config *cfg, pgrest_arena *a, const pgr_option *o,
                               const char *value, pgrest_error *err)
{
    int rc = pgr_jwt_check_role_claim_key(a, value, err);
    return rc != PGREST_OK ? rc : read_text(cfg, a, o, value, err);
}

/* refused up front: a key source in clear over a network is no source */
static int read_jwks_uri(pgr_config *cfg, pgrest_arena *a, const pgr_option *o,
                         const char *value, pgrest_error *err)
{
    const char *problem = pgr_jwks_uri_problem(value);
    if (problem != NULL)
        return config_error(err, a, "%s", problem);
    return read_text(cfg, a, o, value, err);
}

/* Checked only (PostgREST's parseLogLevel): the level is the host's. */
static int check_log_level(pgr_config *cfg, pgrest_arena *a, const pgr_option *o,
                           const char *value, pgrest_error *err)
{
    static const char *const levels[] = {"crit", "error", "warn", "info", "debug"};
    (void)cfg;
    (void)o;
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
        if (strcmp(value, levels[i]) == 0)
            return PGREST_OK;
    return config_error(err, a, "Invalid logging level. Check your configuration.", NULL);
}

/* Checked only (Config.hs parseOpenAPIServerProxyURI): kept as text. */
static int check_proxy_uri(pgr_config *cfg, pgrest_arena *a, const pgr_option *o,
                           const char *value, pgrest_error *err)
{
    (void)cfg;
    (void)o;
    if (config_uri_is_malformed_proxy(value))
        return config_error(err, a, "Malformed proxy uri, a correct example: "
                                    "https://example.com:8443/basePath", NULL);
    return PGREST_OK;
}

/* ------------------------------------------------------------ the table */

/* PostgREST's dump: numbers and booleans bare, the rest quoted */
#define DUMP_OF(type) \
    ((type) == PGREST_OPTION_INT || (type) == PGREST_OPTION_BOOL ? PGREST_DUMP_VALUE \
                                                                  : PGREST_DUMP_TEXT)
#define PGRST(name, alias, env, in_db, type, def) \
    PGRST_DUMPED(name, alias, env, in_db, type, def, DUMP_OF(type))
#define PGRST_DUMPED(name, alias, env, in_db, type, def, dump) \
    {name, alias, env, in_db, type, def, 1, dump}
#define OWN(name, env, type, def) OWN_DUMPED(name, env, type, def, PGREST_DUMP_NONE)
#define OWN_DUMPED(name, env, type, def, dump) {name, NULL, env, NULL, type, def, 0, dump}
#define AT(member) offsetof(pgr_config, member)
/* kept as text only; read by a function; into a field; an integer field */
#define KEPT(option) {.info = option}
#define READ(option, fn) {.info = option, .read = fn}
#define INTO(option, fn, member) {.info = option, .read = fn, .field = AT(member)}
#define RANGE(option, fn, member, lo, hi, cl) \
    {.info = option, .read = fn, .field = AT(member), .min = lo, .max = hi, .clamp = cl}
/* pgrest's limits: "" is no number, refused like any other */
#define LIMIT(option, fn, member, lo, hi) \
    {.info = option, .read = fn, .field = AT(member), .min = lo, .max = hi, .takes_empty = true}
#define T PGREST_OPTION_TEXT
#define B PGREST_OPTION_BOOL
#define I PGREST_OPTION_INT
#define L PGREST_OPTION_LIST
#define C PGREST_OPTION_CHOICE

static const pgr_option pgr_options[] = {
    /* PostgREST's (Config.hs), in its parser's order: the order its checks
     * run in, so that the first failing one is the one reported */
    READ(PGRST("client-error-verbosity", NULL, "PGRST_CLIENT_ERROR_VERBOSITY",
           "client_error_verbosity", C, "verbose"), read_verbosity),
    INTO(PGRST("db-aggregates-enabled", NULL, "PGRST_DB_AGGREGATES_ENABLED", "db_aggregates_enabled",
           B, "false"), read_bool, db_aggregates_enabled),
    INTO(PGRST("db-anon-role", NULL, "PGRST_DB_ANON_ROLE", "db_anon_role", T, NULL), read_text, db_anon_role),
    KEPT(PGRST("db-channel", NULL, "PGRST_DB_CHANNEL", NULL, T, "pgrst")),
    KEPT(PGRST("db-channel-enabled", NULL, "PGRST_DB_CHANNEL_ENABLED", NULL, B, "true")),
    {.info = PGRST("db-extra-search-path", NULL, "PGRST_DB_EXTRA_SEARCH_PATH", "db_extra_search_path", L,
           "public"), .read = read_search_path, .takes_empty = true},
    READ(PGRST("db-hoisted-tx-settings", NULL, "PGRST_DB_HOISTED_TX_SETTINGS",
           "db_hoisted_tx_settings", L,
           "statement_timeout,plan_filter.statement_cost_limit,default_transaction_isolation"), set_hoisted),
    RANGE(PGRST("db-max-rows", "max-rows", "PGRST_DB_MAX_ROWS", "db_max_rows", I, NULL), read_long, db_max_rows, 0, LLONG_MAX, false),
    INTO(PGRST("db-plan-enabled", NULL, "PGRST_DB_PLAN_ENABLED", "db_plan_enabled", B, "false"), read_bool, db_plan_enabled),
    RANGE(PGRST("db-pool", NULL, "PGRST_DB_POOL", NULL, I, "10"), read_int, db_pool, 1, INT_MAX, true),
    RANGE(PGRST("db-pool-acquisition-timeout", NULL, "PGRST_DB_POOL_ACQUISITION_TIMEOUT", NULL, I,
           "10"), read_int, db_pool_acquisition_timeout, 0, INT_MAX, true),
    RANGE(PGRST("db-pool-max-lifetime", NULL, "PGRST_DB_POOL_MAX_LIFETIME", NULL, I, "1800"), read_int, db_pool_max_lifetime, 0, INT_MAX, true),
    /* the deprecated name wins (optWithAlias (optInt "db-pool-timeout") ...) */
    {.info = PGRST("db-pool-max-idletime", "db-pool-timeout", "PGRST_DB_POOL_MAX_IDLETIME", NULL, I,
           "30"), .read = read_int, .field = AT(db_pool_max_idletime), .min = 0, .max = INT_MAX,
     .clamp = true, .alias_first = true},
    INTO(PGRST("db-pool-automatic-recovery", NULL, "PGRST_DB_POOL_AUTOMATIC_RECOVERY", NULL, B,
           "true"), read_bool, db_pool_automatic_recovery),
    INTO(PGRST_DUMPED("db-pre-request", "pre-request", "PGRST_DB_PRE_REQUEST", "db_pre_request", T, NULL, PGREST_DUMP_NAME), read_text, db_pre_request),
    INTO(PGRST("db-prepared-statements", NULL, "PGRST_DB_PREPARED_STATEMENTS",
           "db_prepared_statements", B, "true"), read_bool, db_prepared_statements),
    INTO(PGRST_DUMPED("db-root-spec", "root-spec", "PGRST_DB_ROOT_SPEC", "db_root_spec", T, NULL, PGREST_DUMP_NAME), read_text, db_root_spec),
    READ(PGRST("db-schemas", "db-schema", "PGRST_DB_SCHEMAS", "db_schemas", L, "public"), read_schemas),
    INTO(PGRST("db-config", NULL, "PGRST_DB_CONFIG", NULL, B, "true"), read_bool, db_config),
    INTO(PGRST_DUMPED("db-pre-config", NULL, "PGRST_DB_PRE_CONFIG", "db_pre_config", T, NULL, PGREST_DUMP_NAME), read_text, db_pre_config),
    READ(PGRST("db-tx-end", NULL, "PGRST_DB_TX_END", "db_tx_end", C, "commit"), read_tx_end),
    INTO(PGRST("db-uri", NULL, "PGRST_DB_URI", NULL, T, "postgresql://"), read_text, db_uri),
    INTO(PGRST("jwt-aud", NULL, "PGRST_JWT_AUD", "jwt_aud", T, NULL), read_jwt_aud, jwt_aud),
    INTO(PGRST("jwt-role-claim-key", "role-claim-key", "PGRST_JWT_ROLE_CLAIM_KEY",
           "jwt_role_claim_key", T, "$.role"), read_role_claim_key, jwt_role_claim_key),
    INTO(PGRST("jwt-secret", NULL, "PGRST_JWT_SECRET", "jwt_secret", T, NULL), read_text, jwt_secret),
    INTO(PGRST("jwt-secret-is-base64", "secret-is-base64", "PGRST_JWT_SECRET_IS_BASE64",
           "jwt_secret_is_base64", B, "false"), read_bool, jwt_secret_is_base64),
    /* not in_database: dbSettingsNames has a stale jwt_cache_max_lifetime */
    RANGE(PGRST("jwt-cache-max-entries", NULL, "PGRST_JWT_CACHE_MAX_ENTRIES", NULL, I, "1000"), read_long, jwt_cache_max_entries, 0, LLONG_MAX, false),
    READ(PGRST("log-level", NULL, "PGRST_LOG_LEVEL", NULL, C, "error"), check_log_level),
    KEPT(PGRST("log-query", NULL, "PGRST_LOG_QUERY", NULL, B, "false")),
    READ(PGRST("openapi-mode", NULL, "PGRST_OPENAPI_MODE", "openapi_mode", C, "follow-privileges"), read_openapi_mode),
    KEPT(PGRST("openapi-security-active", NULL, "PGRST_OPENAPI_SECURITY_ACTIVE",
           "openapi_security_active", B, "false")),
    READ(PGRST("openapi-server-proxy-uri", NULL, "PGRST_OPENAPI_SERVER_PROXY_URI",
           "openapi_server_proxy_uri", T, NULL), check_proxy_uri),
    INTO(PGRST("server-cors-allowed-origins", NULL, "PGRST_SERVER_CORS_ALLOWED_ORIGINS",
           "server_cors_allowed_origins", L, NULL), read_text, server_cors_allowed_origins),
    KEPT(PGRST("server-host", NULL, "PGRST_SERVER_HOST", NULL, T, "!4")),
    KEPT(PGRST("server-port", NULL, "PGRST_SERVER_PORT", NULL, I, "3000")),
    KEPT(PGRST("server-reuseport", NULL, "PGRST_SERVER_REUSEPORT", NULL, B, "false")),
    INTO(PGRST("server-trace-header", NULL, "PGRST_SERVER_TRACE_HEADER", "server_trace_header", T,
           NULL), read_text, server_trace_header),
    INTO(PGRST("server-timing-enabled", NULL, "PGRST_SERVER_TIMING_ENABLED", "server_timing_enabled",
           B, "false"), read_bool, server_timing_enabled),
    KEPT(PGRST("server-unix-socket", NULL, "PGRST_SERVER_UNIX_SOCKET", NULL, T, NULL)),
    KEPT(PGRST("server-unix-socket-mode", NULL, "PGRST_SERVER_UNIX_SOCKET_MODE", NULL, T, "660")),
    INTO(PGRST("url-use-legacy-target-names", NULL, "PGRST_URL_USE_LEGACY_TARGET_NAMES",
           "url_use_legacy_target_names", B, "true"), read_bool, url_use_legacy_target_names),
    KEPT(PGRST("admin-server-host", NULL, "PGRST_ADMIN_SERVER_HOST", NULL, T, "!4")),
    KEPT(PGRST("admin-server-port", NULL, "PGRST_ADMIN_SERVER_PORT", NULL, I, NULL)),
    KEPT(PGRST("admin-server-unix-socket", NULL, "PGRST_ADMIN_SERVER_UNIX_SOCKET", NULL, T, NULL)),
    KEPT(PGRST("admin-server-unix-socket-mode", NULL, "PGRST_ADMIN_SERVER_UNIX_SOCKET_MODE", NULL,
           T, "660")),
    KEPT(PGRST_DUMPED("internal-schema-cache-query-sleep-before-queries", NULL,
           "PGRST_INTERNAL_SCHEMA_CACHE_QUERY_SLEEP_BEFORE_QUERIES", NULL, B, NULL, PGREST_DUMP_NONE)),
    KEPT(PGRST_DUMPED("internal-schema-cache-query-sleep", NULL, "PGRST_INTERNAL_SCHEMA_CACHE_QUERY_SLEEP",
           NULL, I, NULL, PGREST_DUMP_NONE)),
    /* pgrest's own: the library's (docs/replicas.md, docs/operations.md) */
    INTO(OWN_DUMPED("db-channel-uri", "PGRST_DB_CHANNEL_URI", T, NULL, PGREST_DUMP_IF_SET), read_text, db_channel_uri),
    RANGE(OWN("db-replica-max-lag", "PGRST_DB_REPLICA_MAX_LAG", I, "5"), read_int, db_replica_max_lag, 0, INT_MAX, true),
    READ(OWN("db-replica-uris", "PGRST_DB_REPLICA_URIS", L, NULL), read_replicas),
    /* the URI after its settings: a server applying the options in this
     * order starts one fetcher, with its CA file, not two */
    INTO(OWN_DUMPED("jwt-jwks-cafile", "PGRST_JWT_JWKS_CAFILE", T, NULL, PGREST_DUMP_IF_SET), read_text, jwt_jwks_cafile),
    RANGE(OWN_DUMPED("jwt-jwks-min-refresh", "PGRST_JWT_JWKS_MIN_REFRESH", I, "30", PGREST_DUMP_VALUE_IF_SET), read_int, jwt_jwks_min_refresh, 0, 86400, false),
    RANGE(OWN_DUMPED("jwt-jwks-timeout", "PGRST_JWT_JWKS_TIMEOUT", I, "2", PGREST_DUMP_VALUE_IF_SET), read_int, jwt_jwks_timeout, 1, 3600, false),
    INTO(OWN_DUMPED("jwt-jwks-uri", "PGRST_JWT_JWKS_URI", T, NULL, PGREST_DUMP_IF_SET), read_jwks_uri, jwt_jwks_uri),
    READ(OWN_DUMPED("openapi-version", "PGRST_OPENAPI_VERSION", C, "2.0", PGREST_DUMP_IF_SET),
         read_openapi_version),
    LIMIT(OWN("request-max-depth", "PGRST_REQUEST_MAX_DEPTH", I, "32"), read_int, limits.max_depth, 1, 1000),
    LIMIT(OWN("request-max-filters", "PGRST_REQUEST_MAX_FILTERS", I, "256"), read_int, limits.max_filters, 1, 1000000),
    LIMIT(OWN("request-max-json-depth", "PGRST_REQUEST_MAX_JSON_DEPTH", I, "128"), read_int, limits.max_json_depth, 1, 100000),
    LIMIT(OWN("server-max-batch-items", "PGRST_SERVER_MAX_BATCH_ITEMS", I, "100"), read_int, limits.max_batch_items, 0, 10000),
    LIMIT(OWN("server-max-body-size", "PGRST_SERVER_MAX_BODY_SIZE", I, "10485760"), read_long, limits.max_body_size, 1, (long long)1 << 40),
    LIMIT(OWN("server-max-streamed-body-size", "PGRST_SERVER_MAX_STREAMED_BODY_SIZE", I, "0"), read_long, limits.max_streamed_body_size, 0, (long long)1 << 50),
    /* ... and pgrest-server's, kept as text for it (server/main.c) */
    KEPT(OWN("server-cancel-on-disconnect", "PGRST_SERVER_CANCEL_ON_DISCONNECT", B, "false")),
    KEPT(OWN("server-max-connections", "PGRST_SERVER_MAX_CONNECTIONS", I, NULL)),
    KEPT(OWN("server-max-connections-per-ip", "PGRST_SERVER_MAX_CONNECTIONS_PER_IP", I, NULL)),
    KEPT(OWN("server-max-header-size", "PGRST_SERVER_MAX_HEADER_SIZE", I, NULL)),
    KEPT(OWN("server-max-url-size", "PGRST_SERVER_MAX_URL_SIZE", I, NULL)),
    KEPT(OWN("server-streamed-body-threshold", "PGRST_SERVER_STREAMED_BODY_THRESHOLD", I, NULL)),
    KEPT(OWN("server-threads", "PGRST_SERVER_THREADS", I, NULL)),
    KEPT(OWN("server-timeout", "PGRST_SERVER_TIMEOUT", I, NULL)),
};

#define N_OPTIONS (sizeof pgr_options / sizeof pgr_options[0])

static const pgr_option *find_option(const char *key)
{
    for (size_t i = 0; key != NULL && i < N_OPTIONS; i++) {
        const pgrest_option_info *info = &pgr_options[i].info;
        if (strcmp(key, info->name) == 0 || (info->alias && strcmp(key, info->alias) == 0))
            return &pgr_options[i];
    }
    return NULL;
}

const pgrest_option_info *pgrest_option_at(size_t i)
{
    return i < N_OPTIONS ? &pgr_options[i].info : NULL;
}

const pgrest_option_info *pgrest_option_find(const char *key)
{
    const pgr_option *o = find_option(key);
    return o != NULL ? &o->info : NULL;
}

/* info is the first member of its pgr_option */
_Static_assert(offsetof(pgr_option, info) == 0, "pgr_option starts with its info");

static const pgr_option *option_of(const pgrest_option_info *info)
{
    return (const pgr_option *)(const void *)info;
}

bool pgr_option_alias_first(const pgrest_option_info *info)
{
    return option_of(info)->alias_first;
}

bool pgr_option_takes_empty(const pgrest_option_info *info)
{
    return option_of(info)->takes_empty;
}

int pgr_option_check_choice(const pgrest_option_info *info, const char *value, pgrest_arena *a,
                            pgrest_error *err)
{
    const pgr_option *o = option_of(info);
    if (info->type != PGREST_OPTION_CHOICE || o->read == NULL)
        return PGREST_OK;
    pgr_config scratch;
    pgr_config_defaults(&scratch);
    return o->read(&scratch, a, o, value, err);
}

static bool is_app_setting(const char *key)
{
    return strncmp(key, "app.settings.", 13) == 0 && key[13] != '\0';
}

const char *pgr_config_canonical_key(const char *key)
{
    const pgr_option *o = find_option(key);
    return o != NULL ? o->info.name : key;
}

bool pgr_config_key_known(const char *key)
{
    return is_app_setting(key) || find_option(key) != NULL;
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

int pgr_config_set(pgr_config *cfg, pgrest_arena *a, const char *key, const char *value,
                   pgrest_error *err)
{
    if (is_app_setting(key))
        return set_app_setting(cfg, a, key, value);
    const pgr_option *o = find_option(key);
    if (o == NULL)
        return config_error(err, a, "Unknown configuration option: %s", key);
    /* PostgREST's optString drops empty values (and "" reads as no number
     * or boolean): the option keeps its default */
    if (o->read == NULL || (value[0] == '\0' && !o->takes_empty))
        return PGREST_OK;
    return o->read(cfg, a, o, value, err);
}

const char *pgr_config_channel_uri(const pgr_config *cfg)
{
    return cfg->db_channel_uri != NULL ? cfg->db_channel_uri : cfg->db_uri;
}
