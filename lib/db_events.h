/* The database connection as PostgREST's schema cache loader sees it
 * (AppState/Reload.hs retryingSchemaCacheLoad, AppState/Pool.hs usePool):
 * which failures are fatal, and the events reported to the host with the
 * lines PostgREST logs (Logger.hs observationMessages). */
#ifndef PGR_DB_EVENTS_H
#define PGR_DB_EVENTS_H

#include <libpq-fe.h>
#include <stdbool.h>

#include "context.h"

/* PostgREST's minimumPgVersion (Config/PgVersion.hs). */
#define PGR_MIN_PG_VERSION 140000

/* Connects for a schema cache load and checks the server version.
 * Reports "Successfully connected to <version()>" and the pool size on
 * success; on failure reports the error and, when it is fatal (wrong
 * password, db-pool-automatic-recovery = false, PostgreSQL older than
 * 14), a PGREST_EVENT_DB_FATAL event, after which the worker stops retrying.
 * Returns NULL with err filled (503 PGRST000) on failure. */
PGconn *pgr_db_connect(pgrest_ctx *ctx, pgrest_arena *a, pgrest_error *err);

/* A request failed: a rejected password, or 42P05 / 08P01 from a
 * transaction- or statement-mode connection pooler, is fatal there too
 * (PostgREST AppState/Pool.hs usePool). */
void pgr_db_check_request_error(pgrest_ctx *ctx, const pgrest_error *err);
/* version(), queried only when an observer wants the line. */
const char *pgr_db_version_for_log(pgrest_ctx *ctx, PGconn *pg, pgrest_arena *a);
void pgr_db_report_fatal(pgrest_ctx *ctx, const char *message);

#endif
