/* Configuration reload (PostgREST AppState/Reload.hs readInDbConfig). */
#ifndef PGR_CONFIG_RELOAD_H
#define PGR_CONFIG_RELOAD_H

#include <libpq-fe.h>
#include <stdbool.h>

#include "engine/context.h"

/* Re-reads the in-database settings through the pool (pgr_ctx_use_pool)
 * when the current configuration has db-config (when they cannot be
 * read the ones in force are kept), and swaps in a snapshot of base -- or
 * of the options set before when keep_base -- with them. An invalid
 * result keeps the previous snapshot. Reports to the observer as
 * PostgREST logs: "Failed to query database settings for the config
 * parameters.<error>", "Failed reloading config: <error>", "Config
 * reloaded". With role_settings the roles' settings are read again too
 * (a second borrow, readInDbConfig queryRoleSettings), before "Config
 * reloaded". Blocks on the pool. err strings in the context. */
int pgr_ctx_reload(pgrest_ctx *ctx, const pgr_kv *base, bool keep_base, bool role_settings,
                   pgrest_error *err);

#endif
