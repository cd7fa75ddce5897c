/* In-database configuration (PostgREST Config/Database.hs): pgrst.*
 * settings of the authenticator role (ALTER ROLE ... [IN DATABASE ...] SET
 * pgrst.db_schemas = ...) and those a db-pre-config function sets with
 * set_config, read on every schema cache load when db-config is true.
 * Precedence as PostgREST: database-specific role setting, then role
 * setting, then pre-config. */
#ifndef PGR_DB_CONFIG_H
#define PGR_DB_CONFIG_H

#include <libpq-fe.h>

#include "parse/request.h"
#include "pgrest/pgrest.h"

/* PostgREST's queryDbSettings over pg: the options PostgREST lets the
 * database set, as a list of option names (dashes) and values in a, after
 * calling pre_config (NULL: none). A failing query fills err with
 * PostgreSQL's SQLSTATE and message. */
int pgr_read_db_settings(PGconn *pg, const char *pre_config, pgrest_arena *a,
                         pgr_kv **out, pgrest_error *err);

/* A failed query of the background work (settings, schema cache) as
 * PostgREST reports it (Logger.hs jsonMessage): the SQLSTATE and
 * PostgreSQL's message, detail and hint; PGRST001 and libpq's message when
 * the server sent none. */
int pgr_db_query_error(pgrest_arena *a, PGconn *pg, const PGresult *r, pgrest_error *err);

#endif
