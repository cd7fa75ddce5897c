#include "reload.h"

#include <stdio.h>
#include <string.h>

#include "log.h"

/* Options a running PostgREST cannot change (docs: the "Reloadable" column
 * is N): sockets, pool sizing, db-uri, db-tx-end. db-channel and
 * db-channel-enabled are reloadable in PostgREST but the LISTEN worker here
 * reads them once at start. */
static bool reloadable(const char *key)
{
    static const char *const fixed[] = {
        "admin-server-host", "admin-server-port", "admin-server-unix-socket",
        "admin-server-unix-socket-mode", "db-pool", "db-pool-acquisition-timeout",
        "db-pool-max-idletime", "db-pool-timeout", "db-pool-max-lifetime",
        "db-tx-end", "db-uri", "db-channel", "db-channel-enabled",
        "openapi-server-proxy-uri", "server-host", "server-port",
        "server-reuseport", "server-unix-socket", "server-unix-socket-mode",
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (strcmp(key, fixed[i]) == 0)
            return false;
    return true;
}

/* Options that change what the schema cache holds. */
static bool shapes_schema(const char *key)
{
    return strcmp(key, "db-schemas") == 0 || strcmp(key, "db-schema") == 0 ||
           strcmp(key, "db-extra-search-path") == 0;
}

static bool read_sources(server_config *cfg, server_options *out, char *errbuf,
                         size_t errlen)
{
    if (cfg->path != NULL && !config_file_read(cfg->path, out, errbuf, errlen)) {
        server_options_free(out);
        return false;
    }
    config_read_env(out, cfg->environ_);
    return true;
}

bool server_config_load(server_config *cfg, char *errbuf, size_t errlen)
{
    pthread_mutex_init(&cfg->lock, NULL);
    return read_sources(cfg, &cfg->opts, errbuf, errlen);
}

/* Applies the reloadable options that changed; returns whether the
 * schema cache must be reloaded. */
static bool apply_changes(server_config *cfg, const server_options *next)
{
    bool schema = false;
    for (size_t i = 0; i < next->n; i++) {
        const char *key = next->items[i].key, *value = next->items[i].value;
        const char *old = server_options_get(&cfg->opts, key);
        if (old != NULL && strcmp(old, value) == 0)
            continue;
        if (!reloadable(key)) {
            log_msg(LOG_WARN, "Config reload: %s is not reloadable, restart to change it", key);
            continue;
        }
        pgrest_error err = {0};
        if (pgrest_ctx_set(cfg->ctx, key, value, &err) != PGREST_OK) {
            log_msg(LOG_ERROR, "Config reload: %s", err.message ? err.message : key);
            continue;
        }
        if (strcmp(key, "log-level") == 0)
            log_set_level(value);
        if (strcmp(key, "log-query") == 0)
            log_set_query(value);
        schema = schema || shapes_schema(key);
    }
    return schema;
}

void server_config_reload(void *arg)
{
    server_config *cfg = arg;
    char errbuf[256];
    server_options next = {0};
    pthread_mutex_lock(&cfg->lock);
    if (!read_sources(cfg, &next, errbuf, sizeof errbuf)) {
        log_msg(LOG_ERROR, "Config reload failed, keeping the old config: %s", errbuf);
        pthread_mutex_unlock(&cfg->lock);
        return;
    }
    bool schema = apply_changes(cfg, &next);
    /* options removed from the file keep their value: only what is
     * set can be applied through pgrest_ctx_set */
    for (size_t i = 0; i < cfg->opts.n; i++)
        if (server_options_get(&next, cfg->opts.items[i].key) == NULL)
            server_options_set(&next, cfg->opts.items[i].key, cfg->opts.items[i].value);
    server_options_free(&cfg->opts);
    cfg->opts = next;
    pthread_mutex_unlock(&cfg->lock);
    log_msg(LOG_INFO, "Config reloaded");
    pgrest_error err = {0};
    if (schema && pgrest_ctx_load_schema(cfg->ctx, &err) != PGREST_OK)
        log_msg(LOG_ERROR, "Schema cache reload after config reload failed: %s",
                err.message ? err.message : "");
}

void server_config_free(server_config *cfg)
{
    server_options_free(&cfg->opts);
    pthread_mutex_destroy(&cfg->lock);
}
