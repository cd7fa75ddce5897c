/* Errors as PostgREST reports them: HTTP status, code (PGRSTnnn or
 * SQLSTATE), message, details, hint (PostgREST src/Error.hs). Stages record
 * the first error and return a status; nothing in lib/ prints or exits. */
#ifndef PGR_ERROR_H
#define PGR_ERROR_H

#include <stdbool.h>

#include "pgrest/pgrest.h"
#include "util/arena.h"

/* pgrest's own code for a failure PostgREST has no code for: the request
 * needed more memory than the arena cap (or the system) allowed, or an
 * internal invariant broke. PostgREST's PGRSTX00 is hasql's and never
 * reaches a client of pgrest; pgrest-only codes are "PGRST" + the HTTP
 * status, like PGRST413/414/431 (README "Resource limits"). */
#define PGR_CODE_INTERNAL "PGRST500"
#define PGR_OOM_MESSAGE "Out of memory or request too large"

/* The pgrest_status an error stands for (pgrest.h): it follows the code,
 * not the HTTP class. PGRST000/001/003 -> PGREST_ERR_CONNECTION, PGRST002
 * -> PGREST_ERR_SCHEMA, PGRST300 -> PGREST_ERR_CONFIG, PGRST111/112/121
 * (unusable response GUCs / RAISE) -> PGREST_ERR_DATABASE, other 3xx/4xx
 * (300 is an ambiguous embedding or function) -> PGREST_ERR_REQUEST, anything else PGREST_ERR_INTERNAL. Errors PostgreSQL
 * raised are PGREST_ERR_DATABASE: the executor returns that itself. */
int pgr_error_status(int http_status, const char *code);

/* Fills err (if not NULL) with constant or arena strings; returns
 * pgr_error_status(http_status, code), so callers can write
 * `return pgr_error(...)`. */
int pgr_error(pgrest_error *err, int http_status, const char *code,
              const char *message, const char *details, const char *hint);

/* printf-style message formatted into the arena. */
int pgr_errorf(pgrest_error *err, pgrest_arena *a, int http_status,
               const char *code, const char *details, const char *hint,
               const char *fmt, ...) __attribute__((format(printf, 7, 8)));

/* Arena-formatted string helper. */
char *pgr_asprintf(pgrest_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* 500 PGRST500 "Out of memory or request too large"; no allocation. */
int pgr_error_oom(pgrest_error *err);

/* A host passed NULL where the API needs an object: 500 PGRST500
 * "Invalid arguments", details naming the function. Not a client error:
 * it describes the host's bug. */
int pgr_error_misuse(pgrest_error *err, const char *function);
/* 503 PGRST000 "Database connection error." (Error.hs ConnectionUsageError)
 * with details (not copied, may be NULL); returns PGREST_ERR_CONNECTION. */
int pgr_error_connection(pgrest_error *err, const char *details);

/* 503 PGRST002 "Could not query the database for the schema cache.
 * Retrying." (Error.hs NoSchemaCacheError): no schema cache is loaded yet,
 * or querying it failed, then with details (not copied, may be NULL).
 * Returns PGREST_ERR_SCHEMA. */
int pgr_error_no_schema_cache(pgrest_error *err, const char *details);

/* 504 PGRST003 "Timed out acquiring connection from connection pool."
 * (Error.hs AcquisitionTimeoutUsageError): db-pool-acquisition-timeout
 * passed in the pool's queue. Returns PGREST_ERR_CONNECTION. */
int pgr_error_pool_timeout(pgrest_error *err);

/* An internal invariant broke (a bug): 500 PGRST500 "Internal error",
 * details saying what. */
int pgr_error_internal(pgrest_error *err, const char *what);

/* The sticky check every public stage makes at its boundary: once any
 * allocation in the arena failed, the stage's output may hold NULLs, so
 * the stage fails with pgr_error_oom whatever it computed; otherwise rc. */
int pgr_stage_end(pgrest_arena *a, int rc, pgrest_error *err);

/* HTTP status for a PostgreSQL error (PostgREST's mapSQLtoHTTP).
 * authenticated distinguishes 401 from 403 for 42501. */
int pgr_sqlstate_http_status(const char *sqlstate, const char *message,
                             bool authenticated);

/* The JSON error body: {"code","details","hint","message"}; minimal
 * verbosity keeps only code and message. */
char *pgr_error_json(pgrest_arena *a, const pgrest_error *err, bool minimal);

#endif
