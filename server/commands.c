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

/* A configuration resolved with the in-database settings: conf borrows
 * from the option lists, so all three live and go together. */
typedef struct db_config_read {
    server_options raw, ignored;
    app_config conf;
} db_config_read;

static void db_config_read_free(db_config_read *r)
{
    app_config_free(&r->conf);
    server_options_free(&r->ignored);
    server_options_free(&r->raw);
}

/* AppState.readInDbConfig True: the in-database settings over the file's
 * (the observer logs a settings query that fails, and the command goes on
 * without them); an invalid value panics, as at startup. On success the
 * caller frees *out with db_config_read_free. */
static bool read_in_db_config(server_config *cfg, const char *prog, db_config_read *out)
{
    pgrest_error err = {0};
    if (pgrest_ctx_reload_config(cfg->ctx, NULL, NULL, 0, &err) == PGREST_ERR_CONFIG) {
        char msg[1024];
        snprintf(msg, sizeof msg, "Error in config %s", err.message ? err.message : "");
        config_fatal(prog, msg);
        return false;
    }
    *out = (db_config_read){0};
    server_options_merge(&out->raw, &cfg->opts);
    overlay_db_settings(cfg->ctx, &cfg->opts, &out->raw);
    char errbuf[2048];
    if (config_load_resolve(&out->raw, &out->conf, &out->ignored, errbuf, sizeof errbuf))
        return true;
    config_fatal(prog, errbuf);
    server_options_free(&out->ignored);
    server_options_free(&out->raw);
    return false;
}

int command_dump_config(server_config *cfg, const app_config *ac, const char *prog)
{
    start_dump(cfg);
    if (!ac->db_config)
        return config_dump(stdout, ac) == 0 ? 0 : 1;
    db_config_read with_db;
    if (!read_in_db_config(cfg, prog, &with_db))
        return 1;
    int rc = config_dump(stdout, &with_db.conf) == 0 ? 0 : 1;
    db_config_read_free(&with_db);
    return rc;
}

/* CLI.hs dumpSchema runs querySchemaCache alone: the in-database
 * configuration was read (and reported) once before it, so the schema
 * load's own re-read of it stays silent here. */
static void dump_schema_observer(void *arg, pgrest_event event, const char *message)
{
    if (event == PGREST_EVENT_CONFIG_RELOADED || event == PGREST_EVENT_CONFIG_INVALID ||
        event == PGREST_EVENT_CONFIG_READ_ERROR)
        return;
    dump_observer(arg, event, message);
}

int command_dump_schema(server_config *cfg, const app_config *ac, const char *prog)
{
    start_dump(cfg);
    /* CLI.hs: when configDbConfig $ AppState.readInDbConfig True appState */
    if (ac->db_config) {
        db_config_read with_db;
        if (!read_in_db_config(cfg, prog, &with_db))
            return 1;
        db_config_read_free(&with_db);
        pgrest_ctx_set_observer(cfg->ctx, dump_schema_observer, cfg->ctx);
    }
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
