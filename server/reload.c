#include "reload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_load.h"
#include "log.h"

bool server_config_load(server_config *cfg, char *errbuf, size_t errlen)
{
    pthread_mutex_init(&cfg->lock, NULL);
    /* file + environment, resolved and checked as PostgREST does */
    cfg->sources = config_load(cfg->path, cfg->environ_, errbuf, errlen);
    return cfg->sources != NULL;
}

/* The options the library knows, as parallel arrays; PostgREST ignores
 * the other keys of a config file. NULL on out of memory. */
static const char **known_options(const pgrest_config_sources *s, const char ***values,
                                  size_t *n)
{
    size_t total = 0;
    while (pgrest_config_sources_option(s, total, NULL, NULL))
        total++;
    const char **keys = calloc(total + 1, sizeof *keys);
    *values = calloc(total + 1, sizeof **values);
    *n = 0;
    if (keys == NULL || *values == NULL) {
        free(keys);
        free(*values);
        return NULL;
    }
    const char *key, *value;
    for (size_t i = 0; pgrest_config_sources_option(s, i, &key, &value); i++)
        if (pgrest_config_key_known(key)) {
            keys[*n] = key;
            (*values)[*n] = value;
            (*n)++;
        }
    return keys;
}

static bool same_text(const char *x, const char *y)
{
    return x == y || (x != NULL && y != NULL && strcmp(x, y) == 0);
}

/* Hands the new options to the library, which re-reads the in-database
 * settings, checks everything and logs "Config reloaded" or "Failed
 * reloading config: ..." (through the observer). */
static bool apply_reload(server_config *cfg, const pgrest_config_sources *next)
{
    const char **values;
    size_t n;
    const char **keys = known_options(next, &values, &n);
    if (keys == NULL) {
        log_msg(LOG_CRIT, "Failed reloading config: out of memory");
        return false;
    }
    pgrest_error err = {0};
    bool ok = pgrest_ctx_reload_config(cfg->ctx, keys, values, n, &err) == PGREST_OK;
    free(keys);
    free(values);
    return ok;
}

/* Options that change what the schema cache holds. PostgREST reloads the
 * cache only on its own signal/notification; pgrest-server follows a
 * changed db-schemas at once. */
static bool schema_shape_changed(pgrest_ctx *ctx, const char *schemas, const char *path)
{
    return !same_text(schemas, pgrest_ctx_get(ctx, "db-schemas")) ||
           !same_text(path, pgrest_ctx_get(ctx, "db-extra-search-path"));
}

void server_config_reload(void *arg)
{
    server_config *cfg = arg;
    char errbuf[1024];
    pthread_mutex_lock(&cfg->lock);
    pgrest_config_sources *next = config_load(cfg->path, cfg->environ_, errbuf, sizeof errbuf);
    if (next == NULL) {
        /* PostgREST keeps the previous configuration (ConfigInvalidObs) */
        log_msg(LOG_CRIT, "Failed reloading config: %s", errbuf);
        pthread_mutex_unlock(&cfg->lock);
        return;
    }
    const char *schemas = pgrest_ctx_get(cfg->ctx, "db-schemas");
    const char *path = pgrest_ctx_get(cfg->ctx, "db-extra-search-path");
    log_stage_reload(pgrest_config_sources_get(next, "log-level"),
                     pgrest_config_sources_get(next, "log-query"));
    bool ok = apply_reload(cfg, next);
    log_unstage_reload();
    if (ok) {
        /* log-level is reloadable (PostgREST's logger reads it each time) */
        const char *level = pgrest_config_sources_get(next, "log-level");
        log_set_level(level != NULL ? level : "error");
        log_set_query(pgrest_config_sources_get(next, "log-query"));
        pgrest_config_sources_free(cfg->sources);
        cfg->sources = next;
    } else
        pgrest_config_sources_free(next);
    bool reshape = ok && schema_shape_changed(cfg->ctx, schemas, path);
    pthread_mutex_unlock(&cfg->lock);
    pgrest_error err = {0};
    if (reshape && pgrest_ctx_load_schema(cfg->ctx, &err) != PGREST_OK)
        log_msg(LOG_ERROR, "Schema cache reload after config reload failed: %s",
                err.message ? err.message : "");
}

void server_config_free(server_config *cfg)
{
    pgrest_config_sources_free(cfg->sources);
    cfg->sources = NULL;
    pthread_mutex_destroy(&cfg->lock);
}
