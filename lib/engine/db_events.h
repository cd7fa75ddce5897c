/* The database connection as PostgREST's schema cache loader sees it
 * (AppState/Reload.hs retryingSchemaCacheLoad, AppState/Pool.hs usePool):
 * which failures are fatal, and the events reported to the host with the
 * lines PostgREST logs (Logger.hs observationMessages). */
#ifndef PGR_DB_EVENTS_H
#define PGR_DB_EVENTS_H

#include <libpq-fe.h>
#include <stdbool.h>

#include "engine/context.h"
#include "exec/pool.h"

/* PostgREST's minimumPgVersion (Config/PgVersion.hs). */
#define PGR_MIN_PG_VERSION 140000

/* A session of the library's own on a pooled connection: PGREST_OK or
 * the error in err. */
typedef int (*pgr_pool_session)(PGconn *pg, void *arg, pgrest_arena *a, pgrest_error *err);

/* AppState/Pool.hs usePool for the schema cache load and the in-database
 * config read: "Trying to borrow a connection from pool", a connection
 * borrowed as a request borrows one (waiting up to
 * db-pool-acquisition-timeout when all are in use; hasql-pool's
 * connection lines), fn run on it, the connection returned ("... is
 * available due to session success", a failed transaction rolled back
 * first), then "Borrowed a connection from the pool". Creates the pool
 * if it does not exist yet. Blocks: call it off the engine's thread. */
int pgr_ctx_use_pool(pgrest_ctx *ctx, pgr_pool_session fn, void *arg, pgrest_arena *a,
                     pgrest_error *err);

/* Reload.hs qPgVersion: the version query through the pool, then
 * "Successfully connected to <version()>" and the pool size on success;
 * on failure the error and, when it is fatal (wrong password,
 * db-pool-automatic-recovery = false, PostgreSQL older than 14), a
 * PGREST_EVENT_DB_FATAL event, after which the worker stops retrying. */
int pgr_db_query_version(pgrest_ctx *ctx, pgrest_arena *a, pgrest_error *err);

/* A request failed: a rejected password, or 42P05 / 08P01 from a
 * transaction- or statement-mode connection pooler, is fatal there too
 * (PostgREST AppState/Pool.hs usePool). */
void pgr_db_check_request_error(pgrest_ctx *ctx, const pgrest_error *err);
/* version(), queried only when an observer wants the line. */
const char *pgr_db_version_for_log(pgrest_ctx *ctx, PGconn *pg, pgrest_arena *a);
void pgr_db_report_fatal(pgrest_ctx *ctx, const char *message);

#endif
