/* PostgREST's Config.hs `parser` and `decodeLoadFiles` over the values a
 * host added to a pgrest_config_sources: configurator's value kinds, the
 * coerce* functions, aliases (and which one wins), defaults, the checks in
 * PostgREST's order with its messages, @file for db-uri and jwt-secret
 * and the secret's check. The result, pgr_app_config, is what
 * --dump-config shows and what the host hands to the context. */
#include "config/sources_read.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pgrest/pgrest.h"

/* ------------------------------------------------------------ storage */

static const char *own(pgr_app_config *cfg, char *s)
{
    /* the caller's allocation failed, or ours below: an OOM the reader
     * reports at the end rather than reading the value as unset */
    if (s == NULL) {
        cfg->oom = true;
        return NULL;
    }
    if (cfg->n_owned == cfg->cap_owned) {
        size_t ncap = cfg->cap_owned ? cfg->cap_owned * 2 : 32;
        char **n = realloc(cfg->owned, ncap * sizeof *n);
        if (n == NULL) {
            free(s);
            cfg->oom = true;
            return NULL;
        }
        cfg->owned = n;
        cfg->cap_owned = ncap;
    }
    cfg->owned[cfg->n_owned++] = s;
    return s;
}

void pgr_app_config_free(pgr_app_config *cfg)
{
    for (size_t i = 0; i < cfg->n_owned; i++)
        free(cfg->owned[i]);
    free(cfg->owned);
    pgr_src_list_free(&cfg->app_settings);
    memset(cfg, 0, sizeof *cfg);
}

/* ----------------------------------------------------------- coercions */

/* Config.hs coerceText: strings as they are, other values `show`n
 * (True/False, a Scientific such as 3000.0). */
static const char *coerce_text(pgr_app_config *cfg, const pgr_src_entry *o)
{
    if (o->kind == PGREST_VALUE_BOOL)
        return strcmp(o->value, "true") == 0 ? "True" : "False";
    if (o->kind == PGREST_VALUE_NUMBER && strpbrk(o->value, ".eE") == NULL) {
        char *s = NULL;
        return own(cfg, asprintf(&s, "%s.0", o->value) < 0 ? NULL : s);
    }
    return o->value;
}

static const char *skip_ws(const char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

/* Config.hs coerceInt: a whole number, or a string `read` as one. */
static bool coerce_int(const pgr_src_entry *o, long long *out)
{
    if (o->kind == PGREST_VALUE_BOOL)
        return false;
    if (o->kind == PGREST_VALUE_NUMBER) {
        char *end = NULL;
        double d = strtod(o->value, &end);
        /* floatingOrInteger: only whole numbers (and in range here) */
        if (!(d > -9.2e18 && d < 9.2e18) || d != (double)(long long)d)
            return false;
        *out = (long long)d;
        return true;
    }
    return pgrest_config_read_int(o->value, out);
}

/* Config.hs coerceBool: a configurator bool; for a string, its letters
 * read as True/False in any case ("TRUE", "t-r-u-e"), else an integer
 * (> 0 is true). Unquoted numbers and other text give nothing. */
static bool coerce_bool(const pgr_src_entry *o, bool *out)
{
    if (o->kind == PGREST_VALUE_BOOL) {
        *out = strcmp(o->value, "true") == 0;
        return true;
    }
    int b;
    if (o->kind == PGREST_VALUE_NUMBER || !pgrest_config_read_bool(o->value, &b))
        return false;
    *out = b;
    return true;
}

/* ------------------------------------------------------------- lookups */

typedef struct reader {
    const pgr_src_list *raw;
    pgr_app_config *cfg;
    char *err;
    size_t errlen;
} reader;

static bool parse_fail(reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A parser failure: configurator's `fail`, which readAppConfig prefixes
 * with "Error in config ". */
static bool parse_fail(reader *r, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(r->err, r->errlen, "Error in config %s", msg);
    return false;
}

/* optStringEmptyable */
static const char *opt_text(reader *r, const char *key)
{
    const pgr_src_entry *o = pgr_src_list_find(r->raw, key);
    return o ? coerce_text(r->cfg, o) : NULL;
}

/* optString: "" counts as unset */
static const char *opt_string(reader *r, const char *key)
{
    const char *v = opt_text(r, key);
    return v != NULL && v[0] != '\0' ? v : NULL;
}

/* optWithAlias (optString key) (optString alias) */
static const char *opt_string2(reader *r, const char *key, const char *alias)
{
    const char *v = opt_string(r, key);
    return v != NULL || alias == NULL ? v : opt_string(r, alias);
}

static bool opt_int(reader *r, const char *key, long long *out)
{
    const pgr_src_entry *o = pgr_src_list_find(r->raw, key);
    return o != NULL && coerce_int(o, out);
}

static long long int_or(reader *r, const char *key, const char *alias, long long def)
{
    long long n;
    if (opt_int(r, key, &n) || (alias != NULL && opt_int(r, alias, &n)))
        return n;
    return def;
}

static bool bool_or(reader *r, const char *key, const char *alias, bool def)
{
    const pgr_src_entry *o = pgr_src_list_find(r->raw, key);
    bool b;
    if (o != NULL && coerce_bool(o, &b))
        return b;
    o = alias ? pgr_src_list_find(r->raw, alias) : NULL;
    if (o != NULL && coerce_bool(o, &b))
        return b;
    return def;
}

/* One of names[] or def when unset; NULL (a failure) otherwise. */
static const char *one_of(reader *r, const char *key, const char *const *names,
                          const char *def, const char *message)
{
    const char *v = opt_string(r, key);
    if (v == NULL)
        return def;
    for (size_t i = 0; names[i] != NULL; i++)
        if (strcmp(v, names[i]) == 0)
            return names[i];
    parse_fail(r, "%s", message);
    return NULL;
}

/* splitOnCommas + intercalate ",": items stripped of spaces. */
static const char *comma_list(pgr_app_config *cfg, const char *v)
{
    size_t n = strlen(v);
    char *out = malloc(n + 1), *o = out;
    if (out == NULL)
        return own(cfg, NULL);
    const char *p = v;
    for (;;) {
        const char *end = strchr(p, ',');
        const char *stop = end ? end : p + strlen(p);
        const char *b = p, *e = stop;
        while (b < e && isspace((unsigned char)*b))
            b++;
        while (e > b && isspace((unsigned char)e[-1]))
            e--;
        memcpy(o, b, (size_t)(e - b));
        o += e - b;
        if (end == NULL)
            break;
        *o++ = ',';
        p = end + 1;
    }
    *o = '\0';
    return own(cfg, out);
}

static bool list_has(const char *list, const char *item)
{
    size_t n = strlen(item);
    for (const char *p = list; p != NULL; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, item, n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return true;
    return false;
}

/* The library's check of a value PostgREST parses further; *dump (when
 * dump != NULL) is what --dump-config shows for it. */
static bool checked(reader *r, const char *key, const char *value, const char **dump,
                    int *legacy)
{
    char *shown = NULL, *message = NULL;
    int rc = pgrest_option_check(key, value, dump ? &shown : NULL, legacy, &message);
    if (rc == PGREST_ERR_CONFIG)
        parse_fail(r, "%s", message ? message : "");
    free(message);
    if (rc != PGREST_OK) {
        free(shown);
        return false;
    }
    if (dump != NULL && (*dump = own(r->cfg, shown)) == NULL)
        return false;
    return true;
}

/* ----------------------------------------------------- option parsers */

static bool read_db_schemas(reader *r)
{
    const char *v = opt_string2(r, "db-schemas", "db-schema");
    const char *list = comma_list(r->cfg, v ? v : "public");
    if (list == NULL)
        return false;
    static const char *const forbidden[] = {"pg_catalog", "information_schema"};
    for (size_t i = 0; i < 2; i++)
        if (list_has(list, forbidden[i]))
            return parse_fail(r, "db-schemas does not allow schema: '%s'", forbidden[i]);
    r->cfg->db_schemas = list;
    return true;
}

static bool read_tx_end(reader *r)
{
    static const char *const names[] = {"commit", "commit-allow-override", "rollback",
                                        "rollback-allow-override", NULL};
    r->cfg->db_tx_end = one_of(r, "db-tx-end", names, "commit",
                               "Invalid transaction termination. Check your configuration.");
    return r->cfg->db_tx_end != NULL;
}

static bool read_jwt_aud(reader *r)
{
    const char *v = opt_string(r, "jwt-aud");
    r->cfg->jwt_aud = v;
    return v == NULL || checked(r, "jwt-aud", v, NULL, NULL);
}

static bool read_role_claim_key(reader *r)
{
    pgr_app_config *cfg = r->cfg;
    const char *v = opt_string2(r, "jwt-role-claim-key", "role-claim-key");
    cfg->jwt_role_claim_key = v != NULL ? v : "$.role";
    /* the deprecated syntax is the host's to report
     * (pgrest_config_role_claim_deprecation) */
    return checked(r, "jwt-role-claim-key", cfg->jwt_role_claim_key,
                   &cfg->jwt_role_claim_key_dump, NULL);
}

static bool read_log_level(reader *r)
{
    static const char *const names[] = {"crit", "error", "warn", "info", "debug", NULL};
    r->cfg->log_level = one_of(r, "log-level", names, "error",
                               "Invalid logging level. Check your configuration.");
    return r->cfg->log_level != NULL;
}

static bool read_openapi(reader *r)
{
    static const char *const names[] = {"follow-privileges", "ignore-privileges", "disabled",
                                        NULL};
    r->cfg->openapi_mode = one_of(r, "openapi-mode", names, "follow-privileges",
                                  "Invalid openapi-mode. Check your configuration.");
    if (r->cfg->openapi_mode == NULL)
        return false;
    r->cfg->openapi_security_active = bool_or(r, "openapi-security-active", NULL, false);
    const char *proxy = opt_string(r, "openapi-server-proxy-uri");
    r->cfg->openapi_server_proxy_uri = proxy;
    return proxy == NULL || checked(r, "openapi-server-proxy-uri", proxy, NULL, NULL);
}

/* parseSocketFileMode: Numeric.readOct takes the leading octal digits. */
static bool read_socket_mode(reader *r, const char *key, unsigned *out)
{
    const char *v = opt_string(r, key);
    *out = 0660;
    if (v == NULL)
        return true;
    if (*v < '0' || *v > '7')
        return parse_fail(r, "Invalid %s: not an octal", key);
    unsigned long mode = 0;
    for (const char *p = v; *p >= '0' && *p <= '7' && mode <= 07777; p++)
        mode = mode * 8 + (unsigned long)(*p - '0');
    if (mode < 0600 || mode > 0777)
        return parse_fail(r, "Invalid %s: needs to be between 600 and 777", key);
    *out = (unsigned)mode;
    return true;
}

static bool read_admin_port(reader *r)
{
    long long port;
    if (!opt_int(r, "admin-server-port", &port))
        return true;
    if (port == r->cfg->server_port)
        return parse_fail(r, "admin-server-port cannot be the same as server-port");
    r->cfg->has_admin_server_port = true;
    r->cfg->admin_server_port = port;
    return true;
}

static void read_app_settings(reader *r)
{
    for (size_t i = 0; i < r->raw->n; i++) {
        const pgr_src_entry *o = &r->raw->items[i];
        if (strncmp(o->key, "app.settings.", 13) == 0)
        {
            const char *v = coerce_text(r->cfg, o);
            if (v != NULL)
                pgr_src_list_set(&r->cfg->app_settings, o->key, v, PGREST_VALUE_STRING);
        }
    }
}

/* The db-* options, in Config.hs parser order up to db-uri. */
static bool read_db(reader *r)
{
    pgr_app_config *cfg = r->cfg;
    cfg->db_aggregates_enabled = bool_or(r, "db-aggregates-enabled", NULL, false);
    cfg->db_anon_role = opt_string(r, "db-anon-role");
    const char *channel = opt_string(r, "db-channel");
    cfg->db_channel = channel ? channel : "pgrst";
    cfg->db_channel_enabled = bool_or(r, "db-channel-enabled", NULL, true);
    const char *extra = opt_text(r, "db-extra-search-path");
    cfg->db_extra_search_path = comma_list(cfg, extra ? extra : "public");
    const char *hoisted = opt_string(r, "db-hoisted-tx-settings");
    cfg->db_hoisted_tx_settings = comma_list(
        cfg, hoisted ? hoisted
                     : "statement_timeout,plan_filter.statement_cost_limit,"
                       "default_transaction_isolation");
    cfg->has_db_max_rows = opt_int(r, "db-max-rows", &cfg->db_max_rows) ||
                           opt_int(r, "max-rows", &cfg->db_max_rows);
    cfg->db_plan_enabled = bool_or(r, "db-plan-enabled", NULL, false);
    cfg->db_pool = int_or(r, "db-pool", NULL, 10);
    cfg->db_pool_acquisition_timeout = int_or(r, "db-pool-acquisition-timeout", NULL, 10);
    cfg->db_pool_max_lifetime = int_or(r, "db-pool-max-lifetime", NULL, 1800);
    /* the deprecated name wins here (optWithAlias order in Config.hs) */
    cfg->db_pool_max_idletime = int_or(r, "db-pool-timeout", "db-pool-max-idletime", 30);
    cfg->db_pool_automatic_recovery = bool_or(r, "db-pool-automatic-recovery", NULL, true);
    cfg->db_pre_request = opt_string2(r, "db-pre-request", "pre-request");
    cfg->db_prepared_statements = bool_or(r, "db-prepared-statements", NULL, true);
    cfg->db_root_spec = opt_string2(r, "db-root-spec", "root-spec");
    if (!read_db_schemas(r))
        return false;
    cfg->db_config = bool_or(r, "db-config", NULL, true);
    cfg->db_pre_config = opt_string(r, "db-pre-config");
    if (!read_tx_end(r))
        return false;
    const char *uri = opt_string(r, "db-uri");
    cfg->db_uri = uri ? uri : "postgresql://";
    cfg->db_channel_uri = opt_string(r, "db-channel-uri");
    return cfg->db_extra_search_path != NULL && cfg->db_hoisted_tx_settings != NULL &&
           cfg->db_schemas != NULL;
}

static bool read_server(reader *r)
{
    pgr_app_config *cfg = r->cfg;
    const char *cors = opt_string(r, "server-cors-allowed-origins");
    cfg->server_cors_allowed_origins = cors ? comma_list(cfg, cors) : "";
    const char *host = opt_string(r, "server-host");
    cfg->server_host = host ? host : "!4";
    cfg->server_port = int_or(r, "server-port", NULL, 3000);
    cfg->server_reuseport = bool_or(r, "server-reuseport", NULL, false);
    cfg->server_trace_header = opt_string(r, "server-trace-header");
    cfg->server_timing_enabled = bool_or(r, "server-timing-enabled", NULL, false);
    cfg->server_unix_socket = opt_string(r, "server-unix-socket");
    if (!read_socket_mode(r, "server-unix-socket-mode", &cfg->server_unix_socket_mode))
        return false;
    cfg->url_use_legacy_target_names = bool_or(r, "url-use-legacy-target-names", NULL, true);
    const char *admin_host = opt_string2(r, "admin-server-host", "server-host");
    cfg->admin_server_host = admin_host ? admin_host : "!4";
    if (!read_admin_port(r))
        return false;
    cfg->admin_server_unix_socket = opt_string(r, "admin-server-unix-socket");
    return read_socket_mode(r, "admin-server-unix-socket-mode",
                            &cfg->admin_server_unix_socket_mode);
}

/* Config.hs `parser`: the checks run in its order, the first failing one
 * is reported. */
static bool run_parser(reader *r)
{
    pgr_app_config *cfg = r->cfg;
    read_app_settings(r);
    static const char *const verbosity[] = {"minimal", "verbose", NULL};
    cfg->client_error_verbosity = one_of(r, "client-error-verbosity", verbosity, "verbose",
                                         "Invalid client-error-verbosity. Check your "
                                         "configuration.");
    if (cfg->client_error_verbosity == NULL || !read_db(r) || !read_jwt_aud(r) ||
        !read_role_claim_key(r))
        return false;
    cfg->jwt_secret = opt_string(r, "jwt-secret");
    cfg->jwt_secret_is_base64 = bool_or(r, "jwt-secret-is-base64", "secret-is-base64", false);
    cfg->jwt_cache_max_entries = int_or(r, "jwt-cache-max-entries", NULL, 1000);
    if (!read_log_level(r))
        return false;
    cfg->log_query = bool_or(r, "log-query", NULL, false);
    return read_openapi(r) && read_server(r);
}

/* ------------------------------------------------------ decodeLoadFiles */

static bool file_error(reader *r, const char *path, const char *function)
{
    int e = errno;
    const char *what = e == ENOENT ? "does not exist" : e == EACCES ? "permission denied"
                       : e == EISDIR ? "inappropriate type" : "failed";
    snprintf(r->err, r->errlen, "%s: %s: %s (%s)", path, function, what, strerror(e));
    return false;
}

static char *slurp(FILE *f, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
        if (n + 1 == cap) {
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
    }
    if (buf != NULL)
        buf[n] = '\0';
    *len = n;
    return buf;
}

static char *read_at_file(reader *r, const char *path, const char *function, size_t *len)
{
    FILE *f = strcmp(path, "/dev/stdin") == 0 ? stdin : fopen(path, "rb");
    if (f == NULL) {
        file_error(r, path, function);
        return NULL;
    }
    char *text = slurp(f, len);
    if (f != stdin)
        fclose(f);
    if (text == NULL)
        snprintf(r->err, r->errlen, "%s: %s: out of memory", path, function);
    return text;
}

/* readDbUriFile: db-uri = "@file" reads the file, stripped of spaces. */
static bool read_db_uri_file(reader *r)
{
    if (r->cfg->db_uri[0] != '@')
        return true;
    size_t len;
    char *text = read_at_file(r, r->cfg->db_uri + 1, "openFile", &len);
    if (text == NULL)
        return false;
    const char *b = skip_ws(text);
    size_t n = strlen(b);
    while (n > 0 && isspace((unsigned char)b[n - 1]))
        n--;
    r->cfg->db_uri = own(r->cfg, strndup(b, n));
    free(text);
    return r->cfg->db_uri != NULL;
}

/* readSecretFile: jwt-secret = "@file" reads the file, one trailing
 * newline removed. */
static bool read_secret_file(reader *r)
{
    const char *s = r->cfg->jwt_secret;
    if (s == NULL || s[0] != '@')
        return true;
    size_t len;
    char *text = read_at_file(r, s + 1, "openBinaryFile", &len);
    if (text == NULL)
        return false;
    if (len > 0 && text[len - 1] == '\n')
        text[len - 1] = '\0';
    r->cfg->jwt_secret = own(r->cfg, text);
    return r->cfg->jwt_secret != NULL;
}

/* decodeSecret and parseSecret, by the library's rules (it refuses per
 * request what the server would have started with). */
static bool decode_secret(reader *r)
{
    pgr_app_config *cfg = r->cfg;
    cfg->jwt_secret_dump = "";
    if (cfg->jwt_secret == NULL)
        return true;
    char *dump = NULL, *message = NULL;
    int rc = pgrest_jwt_secret_check(cfg->jwt_secret, cfg->jwt_secret_is_base64, &dump,
                                     &message);
    if (rc == PGREST_ERR_CONFIG)
        snprintf(r->err, r->errlen, "%s", message ? message : "");
    free(message);
    if (rc != PGREST_OK)
        return false;
    cfg->jwt_secret_dump = own(cfg, dump);
    return cfg->jwt_secret_dump != NULL;
}

int pgr_app_config_read(const pgr_src_list *raw, pgr_app_config *cfg, char *err, size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);
    reader r = {raw, cfg, err, errlen};
    err[0] = '\0';
    bool ok = run_parser(&r) && read_db_uri_file(&r) && read_secret_file(&r) &&
              decode_secret(&r) && !cfg->oom && !cfg->app_settings.failed;
    if (ok)
        return PGREST_OK;
    /* a refused configuration leaves nothing for the caller to free */
    pgr_app_config_free(cfg);
    /* every refusal words itself; silence is an allocation that failed */
    if (err[0] != '\0')
        return PGREST_ERR_CONFIG;
    snprintf(err, errlen, "out of memory reading the configuration");
    return PGREST_ERR_INTERNAL;
}

/* ------------------------------------------------ as the library's options */

/* The options the reader resolves itself: PostgREST's (Config.hs,
 * aliases included, from the option table) and pgrest's db-channel-uri,
 * read beside db-uri; every other key goes to the library as it is. */
int pgrest_config_sources_reads_key(const char *key)
{
    if (key == NULL)
        return 0;
    if (strncmp(key, "app.settings.", 13) == 0)
        return 1;
    const pgrest_option_info *o = pgrest_option_find(key);
    return o != NULL && (o->postgrest || strcmp(o->name, "db-channel-uri") == 0);
}

static void put_int(pgr_src_list *out, const char *key, long long n)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", n);
    pgr_src_list_set(out, key, buf, PGREST_VALUE_STRING);
}

static void put_bool(pgr_src_list *out, const char *key, bool b)
{
    pgr_src_list_set(out, key, b ? "true" : "false", PGREST_VALUE_STRING);
}

static void put_str(pgr_src_list *out, const char *key, const char *v)
{
    pgr_src_list_set(out, key, v ? v : "", PGREST_VALUE_STRING);
}

static void put_mode(pgr_src_list *out, const char *key, unsigned mode)
{
    char buf[16];
    snprintf(buf, sizeof buf, "%o", mode);
    pgr_src_list_set(out, key, buf, PGREST_VALUE_STRING);
}

static void db_options(const pgr_app_config *c, pgr_src_list *out)
{
    put_str(out, "client-error-verbosity", c->client_error_verbosity);
    put_bool(out, "db-aggregates-enabled", c->db_aggregates_enabled);
    put_str(out, "db-anon-role", c->db_anon_role);
    put_str(out, "db-channel", c->db_channel);
    put_bool(out, "db-channel-enabled", c->db_channel_enabled);
    put_str(out, "db-extra-search-path", c->db_extra_search_path);
    put_str(out, "db-hoisted-tx-settings", c->db_hoisted_tx_settings);
    if (c->has_db_max_rows)
        put_int(out, "db-max-rows", c->db_max_rows);
    else
        put_str(out, "db-max-rows", "");
    put_bool(out, "db-plan-enabled", c->db_plan_enabled);
    put_int(out, "db-pool", c->db_pool);
    put_int(out, "db-pool-acquisition-timeout", c->db_pool_acquisition_timeout);
    put_int(out, "db-pool-max-lifetime", c->db_pool_max_lifetime);
    put_int(out, "db-pool-max-idletime", c->db_pool_max_idletime);
    put_bool(out, "db-pool-automatic-recovery", c->db_pool_automatic_recovery);
    put_str(out, "db-pre-request", c->db_pre_request);
    put_bool(out, "db-prepared-statements", c->db_prepared_statements);
    put_str(out, "db-root-spec", c->db_root_spec);
    put_str(out, "db-schemas", c->db_schemas);
    put_bool(out, "db-config", c->db_config);
    put_str(out, "db-pre-config", c->db_pre_config);
    put_str(out, "db-tx-end", c->db_tx_end);
    put_str(out, "db-uri", c->db_uri);
    if (c->db_channel_uri != NULL)
        put_str(out, "db-channel-uri", c->db_channel_uri);
}

static void other_options(const pgr_app_config *c, pgr_src_list *out)
{
    put_str(out, "jwt-aud", c->jwt_aud);
    put_str(out, "jwt-role-claim-key", c->jwt_role_claim_key);
    put_str(out, "jwt-secret", c->jwt_secret);
    put_bool(out, "jwt-secret-is-base64", c->jwt_secret_is_base64);
    put_int(out, "jwt-cache-max-entries", c->jwt_cache_max_entries);
    put_str(out, "log-level", c->log_level);
    put_bool(out, "log-query", c->log_query);
    put_str(out, "openapi-mode", c->openapi_mode);
    put_bool(out, "openapi-security-active", c->openapi_security_active);
    put_str(out, "openapi-server-proxy-uri", c->openapi_server_proxy_uri);
    put_str(out, "server-cors-allowed-origins", c->server_cors_allowed_origins);
    put_str(out, "server-host", c->server_host);
    put_int(out, "server-port", c->server_port);
    put_bool(out, "server-reuseport", c->server_reuseport);
    put_str(out, "server-trace-header", c->server_trace_header);
    put_bool(out, "server-timing-enabled", c->server_timing_enabled);
    /* presence means "listen on a socket": only when configured */
    if (c->server_unix_socket != NULL)
        put_str(out, "server-unix-socket", c->server_unix_socket);
    put_mode(out, "server-unix-socket-mode", c->server_unix_socket_mode);
    put_bool(out, "url-use-legacy-target-names", c->url_use_legacy_target_names);
    put_str(out, "admin-server-host", c->admin_server_host);
    if (c->has_admin_server_port)
        put_int(out, "admin-server-port", c->admin_server_port);
    if (c->admin_server_unix_socket != NULL)
        put_str(out, "admin-server-unix-socket", c->admin_server_unix_socket);
    put_mode(out, "admin-server-unix-socket-mode", c->admin_server_unix_socket_mode);
}

bool pgr_app_config_to_options(const pgr_app_config *c, const pgr_src_list *raw,
                               pgr_src_list *out)
{
    for (size_t i = 0; i < raw->n; i++)
        if (!pgrest_config_sources_reads_key(raw->items[i].key))
            pgr_src_list_set(out, raw->items[i].key, raw->items[i].value,
                             PGREST_VALUE_STRING);
    for (size_t i = 0; i < c->app_settings.n; i++)
        pgr_src_list_set(out, c->app_settings.items[i].key, c->app_settings.items[i].value,
                         PGREST_VALUE_STRING);
    /* PostgREST's test hooks go to the library as they are */
    static const char *const internal[] = {
        "internal-schema-cache-query-sleep-before-queries", "internal-schema-cache-query-sleep",
    };
    for (size_t i = 0; i < sizeof internal / sizeof internal[0]; i++) {
        const pgr_src_entry *o = pgr_src_list_find(raw, internal[i]);
        if (o != NULL)
            pgr_src_list_set(out, internal[i], o->value, PGREST_VALUE_STRING);
    }
    db_options(c, out);
    other_options(c, out);
    return !out->failed;
}

/* ------------------------------------------------------- public API */
