#include "commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_dump.h"
#include "config_load.h"
#include "db_watch.h"
#include "log.h"
#include "version.h"

/* CLI.hs runs the dumps on a fresh AppState: AppState.init logs
 * AppStartObs, readInDbConfig True reports failed queries but no "Config
 * reloaded", and nothing else of a normal start (no version query, no
 * schema cache summary) is logged. */
static void dump_observer(void *arg, pgrest_event event, const char *message)
{
    switch (event) {
    case PGREST_EVENT_CONFIG_RELOADED:
        /* readInDbConfig True still reports the deprecated syntax */
        db_watch_warn_deprecations(arg);
        return;
    case PGREST_EVENT_DB_CONNECTED:
    case PGREST_EVENT_POOL_INIT:
    case PGREST_EVENT_PG_VERSION_ERROR:
    case PGREST_EVENT_SCHEMA_CACHE_QUERIED:
    case PGREST_EVENT_SCHEMA_CACHE_LOADED:
    case PGREST_EVENT_POOL_FLUSHED:
    case PGREST_EVENT_CONNECTION_RETRY:
        return;
    default:
        log_observation(arg, event, message);
    }
}

static void start_dump(server_config *cfg)
{
    log_set_level(server_options_get(&cfg->opts, "log-level"));
    log_msg(LOG_CRIT, "Starting PostgREST %s...", PGRS_PRETTY_VERSION);
    pgrest_ctx_set_observer(cfg->ctx, dump_observer, cfg->ctx);
}

/* The options whose value the library now holds differently from what we
 * gave it came from the database (the reload read the in-database
 * configuration): they win over file and environment. */
static void overlay_db_settings(pgrest_ctx *ctx, const server_options *given,
                                server_options *raw)
{
    for (size_t i = 0; i < given->n; i++) {
        const char *key = given->items[i].key;
        const char *now = pgrest_ctx_get(ctx, key);
        /* the context connects with db-uri plus fallback_application_name
         * (Config.hs toConnectionSettings); the config, and so the dump,
         * keeps db-uri as given (Reload.hs passes the previous configDbUri) */
        if (strcmp(key, "db-uri") == 0 || strcmp(key, "db-channel-uri") == 0)
            continue;
        if (app_config_known_key(key) && now != NULL && strcmp(now, given->items[i].value) != 0)
            server_options_set(raw, key, now);
    }
}

int command_dump_config(server_config *cfg, const app_config *ac, const char *prog)
{
    start_dump(cfg);
    if (!ac->db_config)
        return config_dump(stdout, ac) == 0 ? 0 : 1;
    /* the in-database settings over the file's (the observer logs a
     * settings query that fails, and the dump goes on without them) */
    pgrest_error err = {0};
    if (pgrest_ctx_reload_config(cfg->ctx, NULL, NULL, 0, &err) == PGREST_ERR_CONFIG) {
        /* an invalid in-database value: readInDbConfig panics at startup */
        char msg[1024];
        snprintf(msg, sizeof msg, "Error in config %s", err.message ? err.message : "");
        config_fatal(prog, msg);
        return 1;
    }
    server_options raw = {0};
    server_options_merge(&raw, &cfg->opts);
    overlay_db_settings(cfg->ctx, &cfg->opts, &raw);
    app_config with_db;
    server_options ignored = {0};
    char errbuf[2048];
    int rc = 1;
    if (!config_load_resolve(&raw, &with_db, &ignored, errbuf, sizeof errbuf))
        config_fatal(prog, errbuf);
    else {
        rc = config_dump(stdout, &with_db) == 0 ? 0 : 1;
        app_config_free(&with_db);
    }
    server_options_free(&ignored);
    server_options_free(&raw);
    return rc;
}

int command_dump_schema(server_config *cfg)
{
    start_dump(cfg);
    pgrest_error err = {0};
    /* a failure was logged as SchemaCacheErrorObs; CLI.hs exitFailure */
    if (pgrest_ctx_load_schema(cfg->ctx, &err) != PGREST_OK)
        return 1;
    /* the document admin /schema_cache serves: one encoder of the cache */
    pgrest_arena *a = pgrest_arena_new(0);
    const char *json = a != NULL ? pgrest_ctx_schema_cache_json(cfg->ctx, a) : NULL;
    int rc = 1;
    if (json != NULL && printf("%s\n", json) >= 0 && fflush(stdout) == 0)
        rc = 0;
    else if (json == NULL)
        fprintf(stderr, "pgrest-server: out of memory encoding the schema cache\n");
    pgrest_arena_free(a);
    return rc;
}
