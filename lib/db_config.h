/* In-database configuration (PostgREST Config/Database.hs): pgrst.*
 * settings of the authenticator role (ALTER ROLE ... [IN DATABASE ...] SET
 * pgrst.db_schemas = ...) and those a db-pre-config function sets with
 * set_config, read on every schema cache load when db-config is true.
 * Precedence as PostgREST: database-specific role setting, then role
 * setting, then pre-config. */
#ifndef PGR_DB_CONFIG_H
#define PGR_DB_CONFIG_H

#include <libpq-fe.h>

#include "context.h"

/* Reads the settings over pg and applies them to ctx with pgrest_ctx_set
 * (only the options PostgREST lets the database set). */
int pgr_load_db_config(pgrest_ctx *ctx, PGconn *pg, pgrest_arena *a,
                       pgrest_error *err);

#endif
