/* Configuration reload (PostgREST AppState/Reload.hs readInDbConfig). */
#ifndef PGR_CONFIG_RELOAD_H
#define PGR_CONFIG_RELOAD_H

#include <libpq-fe.h>
#include <stdbool.h>

#include "context.h"

/* Re-reads the in-database settings over pg when the current
 * configuration has db-config (pg NULL: they cannot be read; the ones in
 * force are kept), and swaps in a snapshot of base -- or of the options
 * set before when keep_base -- with them. An invalid result keeps the
 * previous snapshot. Reports to the observer as PostgREST logs: "Failed to
 * query database settings for the config parameters.<error>", "Failed
 * reloading config: <error>", "Config reloaded". With role_settings the
 * roles' settings are read again too, before "Config reloaded" (a schema
 * cache load reads them itself). err strings in the context. */
int pgr_ctx_reload(pgrest_ctx *ctx, PGconn *pg, const pgr_kv *base, bool keep_base,
                   bool role_settings, pgrest_error *err);

/* The schema cache loader's readInDbConfig when the database could not be
 * reached (conn_err): both settings queries reported as failed, then the
 * configuration rebuilt without in-database settings. */
void pgr_ctx_reload_unreachable(pgrest_ctx *ctx, const pgrest_error *conn_err);

#endif
