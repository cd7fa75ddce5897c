#include "commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    log_set_level(pgrest_config_sources_get(cfg->sources, "log-level"));
    log_msg(LOG_CRIT, "Starting PostgREST %s...", PGRS_PRETTY_VERSION);
    pgrest_ctx_set_observer(cfg->ctx, dump_observer, cfg->ctx);
}

/* The resolved options as they are, then, over them, the in-database
 * options whose value the library now holds differently from what we gave
 * it: the reload read them from the database, and they win over file and
 * environment. False on OOM. */
static bool add_with_db_settings(pgrest_config_sources *out, const pgrest_config_sources *given,
                                 pgrest_ctx *ctx)
{
    const char *key, *value;
    for (size_t i = 0; pgrest_config_sources_option(given, i, &key, &value); i++)
        if (pgrest_config_sources_add(out, key, value, PGREST_VALUE_STRING) != PGREST_OK)
            return false;
    const pgrest_option_info *o;
    for (size_t i = 0; (o = pgrest_option_at(i)) != NULL; i++) {
        if (o->in_database == NULL)
            continue;
        const char *now = pgrest_ctx_get(ctx, o->name);
        const char *was = pgrest_config_sources_get(given, o->name);
        if (now != NULL && strcmp(now, was != NULL ? was : "") != 0 &&
            pgrest_config_sources_add(out, o->name, now, PGREST_VALUE_STRING) != PGREST_OK)
            return false;
    }
    return true;
}

/* AppState.readInDbConfig True: the in-database settings over the file's
 * (the observer logs a settings query that fails, and the command goes on
 * without them); an invalid value panics, as at startup. On success the
 * caller frees the result with pgrest_config_sources_free. */
static pgrest_config_sources *read_in_db_config(server_config *cfg, const char *prog)
{
    pgrest_error err = {0};
    if (pgrest_ctx_reload_config(cfg->ctx, NULL, NULL, 0, &err) == PGREST_ERR_CONFIG) {
        char msg[1024];
        snprintf(msg, sizeof msg, "Error in config %s", err.message ? err.message : "");
        config_fatal(prog, msg);
        return NULL;
    }
    pgrest_config_sources *with_db = pgrest_config_sources_new();
    char *message = NULL;
    if (with_db != NULL && add_with_db_settings(with_db, cfg->sources, cfg->ctx) &&
        pgrest_config_sources_resolve(with_db, &message) == PGREST_OK)
        return with_db;
    config_fatal(prog, message ? message : "out of memory reading the configuration");
    free(message);
    pgrest_config_sources_free(with_db);
    return NULL;
}

static bool db_config_on(const server_config *cfg)
{
    const char *v = pgrest_config_sources_get(cfg->sources, "db-config");
    return v != NULL && strcmp(v, "true") == 0;
}

static int print_dump(const pgrest_config_sources *s)
{
    char *text = pgrest_config_sources_dump(s);
    int rc = text != NULL && fputs(text, stdout) >= 0 ? 0 : 1;
    free(text);
    return rc;
}

int command_dump_config(server_config *cfg, const char *prog)
{
    start_dump(cfg);
    if (!db_config_on(cfg))
        return print_dump(cfg->sources);
    pgrest_config_sources *with_db = read_in_db_config(cfg, prog);
    if (with_db == NULL)
        return 1;
    int rc = print_dump(with_db);
    pgrest_config_sources_free(with_db);
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

int command_dump_schema(server_config *cfg, const char *prog)
{
    start_dump(cfg);
    /* CLI.hs: when configDbConfig $ AppState.readInDbConfig True appState */
    if (db_config_on(cfg)) {
        pgrest_config_sources *with_db = read_in_db_config(cfg, prog);
        if (with_db == NULL)
            return 1;
        pgrest_config_sources_free(with_db);
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
