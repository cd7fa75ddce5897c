#include "config_dump.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct dump_lines {
    char **items;
    size_t n, cap;
    bool failed;
} dump_lines;

static void add_line(dump_lines *d, char *line)
{
    if (line == NULL || d->failed) {
        d->failed = true;
        free(line);
        return;
    }
    if (d->n == d->cap) {
        size_t ncap = d->cap ? d->cap * 2 : 64;
        char **n = realloc(d->items, ncap * sizeof *n);
        if (n == NULL) {
            d->failed = true;
            free(line);
            return;
        }
        d->items = n;
        d->cap = ncap;
    }
    d->items[d->n++] = line;
}

/* q: quoted, `"` replaced by `\"` (nothing else is escaped). */
static void quoted(dump_lines *d, const char *key, const char *v)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL) {
        add_line(d, NULL);
        return;
    }
    fprintf(f, "%s = \"", key);
    for (const char *p = v ? v : ""; *p; p++) {
        if (*p == '"')
            fputc('\\', f);
        fputc(*p, f);
    }
    fputc('"', f);
    fclose(f);
    add_line(d, buf);
}

/* dumpQi . toQi: the text splits at its first '.' into schema and name;
 * an empty name after the '.' leaves the schema as the name, an empty
 * schema is not shown ("a." and ".a" both dump as "a"). */
static void qualified(dump_lines *d, const char *key, const char *v)
{
    const char *dot = v ? strchr(v, '.') : NULL;
    if (dot == NULL || (dot != v && dot[1] != '\0')) {
        quoted(d, key, v);
        return;
    }
    char *name = dot[1] == '\0' ? strndup(v, (size_t)(dot - v)) : strdup(dot + 1);
    if (name == NULL) {
        add_line(d, NULL);
        return;
    }
    quoted(d, key, name);
    free(name);
}

static void bare(dump_lines *d, const char *key, const char *v)
{
    char *line = NULL;
    add_line(d, asprintf(&line, "%s = %s", key, v) < 0 ? NULL : line);
}

static void boolean(dump_lines *d, const char *key, bool b)
{
    bare(d, key, b ? "true" : "false");
}

static void number(dump_lines *d, const char *key, long long n)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", n);
    bare(d, key, buf);
}

static void octal(dump_lines *d, const char *key, unsigned mode)
{
    char buf[16];
    snprintf(buf, sizeof buf, "%o", mode);
    quoted(d, key, buf);
}

static void db_lines(dump_lines *d, const app_config *c)
{
    quoted(d, "client-error-verbosity", c->client_error_verbosity);
    boolean(d, "db-aggregates-enabled", c->db_aggregates_enabled);
    quoted(d, "db-anon-role", c->db_anon_role);
    quoted(d, "db-channel", c->db_channel);
    boolean(d, "db-channel-enabled", c->db_channel_enabled);
    /* pgrest's own: only when set, so the default dump stays PostgREST's */
    if (c->db_channel_uri != NULL)
        quoted(d, "db-channel-uri", c->db_channel_uri);
    quoted(d, "db-extra-search-path", c->db_extra_search_path);
    quoted(d, "db-hoisted-tx-settings", c->db_hoisted_tx_settings);
    if (c->has_db_max_rows)
        number(d, "db-max-rows", c->db_max_rows);
    else
        bare(d, "db-max-rows", "\"\"");
    boolean(d, "db-plan-enabled", c->db_plan_enabled);
    number(d, "db-pool", c->db_pool);
    number(d, "db-pool-acquisition-timeout", c->db_pool_acquisition_timeout);
    number(d, "db-pool-max-lifetime", c->db_pool_max_lifetime);
    number(d, "db-pool-max-idletime", c->db_pool_max_idletime);
    boolean(d, "db-pool-automatic-recovery", c->db_pool_automatic_recovery);
    qualified(d, "db-pre-request", c->db_pre_request);
    boolean(d, "db-prepared-statements", c->db_prepared_statements);
    qualified(d, "db-root-spec", c->db_root_spec);
    quoted(d, "db-schemas", c->db_schemas);
    boolean(d, "db-config", c->db_config);
    qualified(d, "db-pre-config", c->db_pre_config);
    quoted(d, "db-tx-end", c->db_tx_end);
    quoted(d, "db-uri", c->db_uri);
}

static void other_lines(dump_lines *d, const app_config *c)
{
    quoted(d, "jwt-aud", c->jwt_aud);
    quoted(d, "jwt-role-claim-key", c->jwt_role_claim_key_dump);
    quoted(d, "jwt-secret", c->jwt_secret_dump);
    boolean(d, "jwt-secret-is-base64", c->jwt_secret_is_base64);
    number(d, "jwt-cache-max-entries", c->jwt_cache_max_entries);
    quoted(d, "log-level", c->log_level);
    boolean(d, "log-query", c->log_query);
    quoted(d, "openapi-mode", c->openapi_mode);
    boolean(d, "openapi-security-active", c->openapi_security_active);
    quoted(d, "openapi-server-proxy-uri", c->openapi_server_proxy_uri);
    quoted(d, "server-cors-allowed-origins", c->server_cors_allowed_origins);
    quoted(d, "server-host", c->server_host);
    number(d, "server-port", c->server_port);
    boolean(d, "server-reuseport", c->server_reuseport);
    quoted(d, "server-trace-header", c->server_trace_header);
    boolean(d, "server-timing-enabled", c->server_timing_enabled);
    quoted(d, "server-unix-socket", c->server_unix_socket);
    octal(d, "server-unix-socket-mode", c->server_unix_socket_mode);
    boolean(d, "url-use-legacy-target-names", c->url_use_legacy_target_names);
    quoted(d, "admin-server-host", c->admin_server_host);
    if (c->has_admin_server_port)
        number(d, "admin-server-port", c->admin_server_port);
    else
        bare(d, "admin-server-port", "\"\"");
    quoted(d, "admin-server-unix-socket", c->admin_server_unix_socket);
    octal(d, "admin-server-unix-socket-mode", c->admin_server_unix_socket_mode);
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int config_dump(FILE *out, const app_config *cfg)
{
    dump_lines d = {0};
    db_lines(&d, cfg);
    other_lines(&d, cfg);
    for (size_t i = 0; i < cfg->app_settings.n; i++)
        quoted(&d, cfg->app_settings.items[i].key, cfg->app_settings.items[i].value);
    if (!d.failed) {
        /* toText: `unlines $ sort` of the whole lines */
        qsort(d.items, d.n, sizeof *d.items, by_text);
        for (size_t i = 0; i < d.n; i++)
            fprintf(out, "%s\n", d.items[i]);
    }
    for (size_t i = 0; i < d.n; i++)
        free(d.items[i]);
    free(d.items);
    return d.failed ? -1 : 0;
}
