/* The public pgrest_config_sources API (pgrest.h): the values a host read
 * from PostgREST's sources (a config file, PGRST_* variables, in-database
 * settings), resolved by sources_read.c, and the options it hands to the
 * context. The reading itself lives in the library so that every host
 * (pgrest-server, a binding) reads a configuration as PostgREST does. */
#include "config/sources.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------- the list */

static bool set_entry(pgr_src_entry *e, const char *value, pgrest_value_kind kind)
{
    char *v = strdup(value);
    if (v == NULL)
        return false;
    free(e->value);
    e->value = v;
    e->kind = kind;
    return true;
}

static bool grow(pgr_src_list *l)
{
    if (l->n < l->cap)
        return true;
    size_t ncap = l->cap ? l->cap * 2 : 32;
    pgr_src_entry *n = realloc(l->items, ncap * sizeof *n);
    if (n == NULL)
        return false;
    l->items = n;
    l->cap = ncap;
    return true;
}

bool pgr_src_list_set(pgr_src_list *l, const char *key, const char *value,
                      pgrest_value_kind kind)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].key, key) == 0) {
            if (!set_entry(&l->items[i], value, kind))
                l->failed = true;
            return !l->failed;
        }
    pgr_src_entry e = {strdup(key), NULL, kind};
    if (e.key == NULL || !set_entry(&e, value, kind) || !grow(l)) {
        free(e.key);
        free(e.value);
        l->failed = true;
        return false;
    }
    l->items[l->n++] = e;
    return !l->failed;
}

const pgr_src_entry *pgr_src_list_find(const pgr_src_list *l, const char *key)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].key, key) == 0)
            return &l->items[i];
    return NULL;
}

const char *pgr_src_list_get(const pgr_src_list *l, const char *key)
{
    const pgr_src_entry *e = pgr_src_list_find(l, key);
    return e != NULL ? e->value : NULL;
}

void pgr_src_list_free(pgr_src_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].key);
        free(l->items[i].value);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* ------------------------------------------------------ the options */

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

pgrest_config_sources *pgrest_config_sources_new(void)
{
    return calloc(1, sizeof(pgrest_config_sources));
}

static void forget_resolution(pgrest_config_sources *s)
{
    if (s->resolved)
        pgr_app_config_free(&s->conf);
    pgr_src_list_free(&s->options);
    s->resolved = false;
}

void pgrest_config_sources_free(pgrest_config_sources *s)
{
    if (s == NULL)
        return;
    forget_resolution(s);
    pgr_src_list_free(&s->raw);
    free(s);
}

int pgrest_config_sources_add(pgrest_config_sources *s, const char *key, const char *value,
                              pgrest_value_kind kind)
{
    if (s == NULL || key == NULL || value == NULL)
        return PGREST_ERR_INTERNAL;
    if (kind != PGREST_VALUE_STRING && kind != PGREST_VALUE_NUMBER && kind != PGREST_VALUE_BOOL)
        return PGREST_ERR_INTERNAL;
    /* the resolution read the previous values: it is stale now */
    forget_resolution(s);
    /* a failed add must not poison the next ones: the list's flag is
     * per call here */
    s->raw.failed = false;
    return pgr_src_list_set(&s->raw, key, value, kind) ? PGREST_OK : PGREST_ERR_INTERNAL;
}

static int fail_with(char **message, const char *text, int rc)
{
    if (message != NULL)
        *message = strdup(text);
    return rc;
}

int pgrest_config_sources_resolve(pgrest_config_sources *s, char **message)
{
    if (message != NULL)
        *message = NULL;
    if (s == NULL)
        return PGREST_ERR_INTERNAL;
    forget_resolution(s);
    char err[2048];
    int rc = pgr_app_config_read(&s->raw, &s->conf, err, sizeof err);
    if (rc != PGREST_OK)
        return fail_with(message, err, rc);
    s->resolved = true;
    if (!pgr_app_config_to_options(&s->conf, &s->raw, &s->options)) {
        forget_resolution(s);
        return fail_with(message, "out of memory reading the configuration",
                         PGREST_ERR_INTERNAL);
    }
    return PGREST_OK;
}

const char *pgrest_config_sources_get(const pgrest_config_sources *s, const char *key)
{
    if (s == NULL || key == NULL || !s->resolved)
        return NULL;
    /* an alias names its option: the resolved list has canonical names */
    const pgrest_option_info *o = pgrest_option_find(key);
    const char *v = o != NULL ? pgr_src_list_get(&s->options, o->name) : NULL;
    return v != NULL ? v : pgr_src_list_get(&s->options, key);
}

int pgrest_config_sources_option(const pgrest_config_sources *s, size_t i, const char **key,
                                 const char **value)
{
    if (s == NULL || !s->resolved || i >= s->options.n)
        return 0;
    if (key != NULL)
        *key = s->options.items[i].key;
    if (value != NULL)
        *value = s->options.items[i].value;
    return 1;
}

char *pgrest_config_sources_dump(const pgrest_config_sources *s)
{
    return s != NULL && s->resolved ? pgr_app_config_dump(&s->conf) : NULL;
}

/* Logger.hs DeprecatedJSPathSyntaxObs: the two lines, for the key as
 * --dump-config shows it. */
int pgrest_config_role_claim_deprecation(const char *key, char **line1, char **line2)
{
    *line1 = *line2 = NULL;
    char *dump = NULL;
    int legacy = 0;
    if (key == NULL ||
        pgrest_option_check("jwt-role-claim-key", key, &dump, &legacy, NULL) != PGREST_OK)
        legacy = 0;
    const char *d = dump != NULL ? dump : "";
    int rc = 0;
    if (legacy) {
        rc = 1;
        if (asprintf(line1, "WARNING: The config `jwt-role-claim-key=%s` is using the "
                            "deprecated JSPath syntax.", d) < 0)
            *line1 = NULL;
        if (asprintf(line2, "Update `jwt-role-claim-key=%s` to the new JSONPath syntax as "
                            "support for JSPath will be removed in a future release. See the "
                            "migration guide on how to update: https://github.com/PostgREST/"
                            "postgrest/blob/main/CHANGELOG.md#migration-to-v16", d) < 0)
            *line2 = NULL;
        if (*line1 == NULL || *line2 == NULL) {
            free(*line1);
            free(*line2);
            *line1 = *line2 = NULL;
            rc = PGREST_ERR_INTERNAL;
        }
    }
    free(dump);
    return rc;
}
