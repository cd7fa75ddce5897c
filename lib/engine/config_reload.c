/* Configuration reload (PostgREST AppState/Reload.hs readInDbConfig): a
 * complete new configuration -- the host's options, then the in-database
 * settings read again -- is built and checked as a whole, then swapped in;
 * an invalid one leaves the previous configuration in force. */
#include <string.h>

#include "config/config_snapshot.h"
#include "engine/config_reload.h"
#include "engine/context.h"
#include "config/db_config.h"
#include "engine/db_events.h"
#include "engine/jwks_source.h"
#include "exec/pool.h"
#include "engine/observe.h"
#include "schema/introspect.h"
#include "schema/schema_cache.h"
#include "util/error.h"

typedef struct reload_change {
    const pgr_kv *base;
    bool keep_base;
    const pgr_kv *db;
    bool keep_db;
} reload_change;

static const char *base_option(const pgr_kv *base, const char *key)
{
    for (const pgr_kv *kv = base; kv != NULL; kv = kv->next)
        if (strcmp(kv->name, key) == 0)
            return kv->value;
    return NULL;
}

static int next_reloaded(const pgr_conf *cur, void *arg, pgrest_arena *ea,
                         pgrest_error *err, pgr_conf **out)
{
    const reload_change *ch = arg;
    const pgr_kv *db = ch->keep_db ? cur->db : ch->db;
    if (ch->keep_base)
        return pgr_conf_build(cur->base, db, cur, ea, err, out);
    pgrest_arena *a = pgrest_arena_new(0);
    if (a == NULL)
        return pgr_error_oom(err);
    /* a running context keeps its db-uri: the pool and the listener are
     * connected to it (PostgREST: readAppConfig with the previous uri) */
    pgr_kv *base = pgr_kv_with(a, ch->base, "db-uri", base_option(cur->base, "db-uri"));
    base = pgr_kv_with(a, base, "db-channel-uri", base_option(cur->base, "db-channel-uri"));
    int rc = pgr_arena_exhausted(a) ? pgr_error_oom(err)
                                    : pgr_conf_build(base, db, cur, ea, err, out);
    pgrest_arena_free(a);
    return rc;
}

static void observe_error(pgrest_ctx *ctx, pgrest_arena *a, pgrest_event kind,
                          const char *prefix, const char *text)
{
    pgr_observe(ctx, kind, pgr_asprintf(a, "%s%s", prefix, text ? text : ""));
}

/* Config.hs readAppConfig: a check of the parser fails as "Error in
 * config <msg>"; the JWT secret is decoded after parsing, in IO, where a
 * failure shows as "user error (<msg>)". */
static const char *reload_error_text(pgrest_arena *a, const char *msg)
{
    if (msg == NULL)
        return NULL;
    bool secret = strncmp(msg, "The JWT secret", 14) == 0 || strncmp(msg, "jwt-secret", 10) == 0;
    return pgr_asprintf(a, secret ? "user error (%s)" : "Error in config %s", msg);
}

typedef struct settings_read {
    const char *pre_config;
    pgr_kv *settings;
} settings_read;

static int settings_session(PGconn *pg, void *arg, pgrest_arena *a, pgrest_error *err)
{
    settings_read *r = arg;
    return pgr_read_db_settings(pg, r->pre_config, a, &r->settings, err);
}

/* usePool's error: a server's 5xx is QueryErrorCodeHighObs too. */
static void observe_read_error(pgrest_ctx *ctx, pgrest_arena *a, const char *prefix,
                               const pgrest_error *rerr)
{
    pgr_observe_query_error_high(ctx, rerr);
    observe_error(ctx, a, PGREST_EVENT_CONFIG_READ_ERROR, prefix,
                  pgr_error_json(a, rerr, false));
}

/* The in-database layer: read again through the pool (readInDbConfig
 * queryDbSettings), or the one in force when it cannot be read
 * (PostgREST would drop it; keeping it avoids exposing a different
 * configuration because the database blinked). */
static void read_db_layer(pgrest_ctx *ctx, pgrest_arena *a, reload_change *ch)
{
    pgr_conf *cur = pgr_ctx_conf(ctx);
    bool wanted = cur->cfg.db_config;
    settings_read r = {wanted ? pgr_strdup(a, cur->cfg.db_pre_config) : NULL, NULL};
    pgr_conf_release(cur);
    ch->db = NULL;
    ch->keep_db = false;
    if (!wanted)
        return;
    pgrest_error rerr = {0};
    if (pgr_ctx_use_pool(ctx, settings_session, &r, a, &rerr) == PGREST_OK) {
        ch->db = r.settings;
        return;
    }
    ch->keep_db = true;
    observe_read_error(ctx, a, "Failed to query database settings for the config parameters.",
                       &rerr);
}

static int role_settings_session(PGconn *pg, void *arg, pgrest_arena *a, pgrest_error *err)
{
    return pgr_introspect_role_settings(pg, a, arg, err);
}

/* The roles' settings (ALTER ROLE ... SET) belong to the configuration in
 * PostgREST (readInDbConfig queryRoleSettings, through the pool): a
 * config reload applies a changed statement_timeout at once. pgrest keeps
 * them in the schema cache, so the cache in force is replaced by a copy
 * with the settings read again; when they cannot be read the previous
 * ones stay. Before the first schema cache there is nothing to update,
 * but the query runs as PostgREST's does, so a failure shows the same. */
static void refresh_role_settings(pgrest_ctx *ctx, pgrest_arena *a)
{
    pgr_schema_cache *sc = pgr_ctx_schema(ctx);
    pgr_conf *conf = pgr_ctx_conf(ctx);
    if (conf->cfg.db_config) {
        pgrest_error rerr = {0};
        char *json = NULL;
        pgr_schema_cache *next = NULL;
        int rc = pgr_ctx_use_pool(ctx, role_settings_session, &json, a, &rerr);
        if (rc == PGREST_OK && sc != NULL) {
            next = pgr_schema_cache_with_role_settings(sc, json, conf->cfg.db_schemas, &rerr);
            rc = next != NULL ? PGREST_OK : PGREST_ERR_SCHEMA;
        }
        if (next != NULL)
            pgr_ctx_replace_schema(ctx, sc, next);
        if (rc != PGREST_OK)
            observe_read_error(ctx, a, "Failed to query the role settings. ", &rerr);
    }
    pgr_conf_release(conf);
    if (sc != NULL)
        pgr_schema_cache_release(sc);
}

int pgr_ctx_reload(pgrest_ctx *ctx, const pgr_kv *base, bool keep_base, bool role_settings,
                   pgrest_error *err)
{
    pgrest_arena *a = pgrest_arena_new(0);
    if (a == NULL)
        return pgr_error_oom(err);
    reload_change ch = {base, keep_base, NULL, false};
    read_db_layer(ctx, a, &ch);
    int rc = pgr_conf_slot_update(ctx->conf, next_reloaded, &ch, a, err);
    if (rc == PGREST_OK)
        pgr_ctx_jwks_sync(ctx);
    if (rc == PGREST_OK && role_settings)
        refresh_role_settings(ctx, a);
    if (rc == PGREST_OK)
        pgr_observe(ctx, PGREST_EVENT_CONFIG_RELOADED, "Config reloaded");
    else
        observe_error(ctx, a, PGREST_EVENT_CONFIG_INVALID, "Failed reloading config: ",
                      reload_error_text(a, err ? err->message : NULL));
    rc = pgr_ctx_keep_error(ctx, err, rc);
    pgrest_arena_free(a);
    return rc;
}

int pgrest_ctx_reload_config(pgrest_ctx *ctx, const char *const *keys,
                             const char *const *values, size_t n, pgrest_error *err)
{
    bool args_ok = ctx != NULL && (keys != NULL || n == 0) && (keys == NULL || values != NULL);
    for (size_t i = 0; args_ok && keys != NULL && i < n; i++)
        args_ok = keys[i] != NULL && values[i] != NULL;
    if (!args_ok)
        return pgr_error_misuse(err, "pgrest_ctx_reload_config");
    pgrest_arena *a = pgrest_arena_new(0);
    if (a == NULL)
        return pgr_error_oom(err);
    pgr_kv *base = NULL;
    for (size_t i = 0; keys != NULL && i < n; i++)
        base = pgr_kv_with(a, base, keys[i], values[i]);
    int rc;
    if (pgr_arena_exhausted(a))
        rc = pgr_error_oom(err);
    else
        rc = pgr_ctx_reload(ctx, base, keys == NULL, true, err);
    pgrest_arena_free(a);
    return rc;
}
