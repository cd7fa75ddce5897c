/* The server's side of the database connection events: each one is
 * logged as PostgREST logs it, and a fatal one ends the process with
 * status 1 (PostgREST killApp). */
#ifndef PGRS_DB_WATCH_H
#define PGRS_DB_WATCH_H

#include <stdbool.h>

#include "pgrest/pgrest.h"

/* Logs ctx's connection events; a fatal event raises SIGTERM so the main
 * thread's signal wait returns. */
void db_watch_install(pgrest_ctx *ctx);
/* The deprecated jwt-role-claim-key lines for ctx's configuration, if it
 * uses that syntax (logged before each "Config reloaded"). */
void db_watch_warn_deprecations(pgrest_ctx *ctx);
/* True once a fatal event was seen: exit with status 1. */
bool db_watch_fatal(void);

#endif
