/* Errors as PostgREST reports them: HTTP status, code (PGRSTnnn or
 * SQLSTATE), message, details, hint (PostgREST src/Error.hs). Stages record
 * the first error and return a status; nothing in lib/ prints or exits. */
#ifndef PGR_ERROR_H
#define PGR_ERROR_H

#include <stdbool.h>

#include "pgrest/pgrest.h"
#include "util/arena.h"

/* Fills err (if not NULL) with constant or arena strings; returns
 * PGREST_ERR_REQUEST for 4xx and PGREST_ERR_INTERNAL otherwise, so callers
 * can write `return pgr_error(...)`. */
int pgr_error(pgrest_error *err, int http_status, const char *code,
              const char *message, const char *details, const char *hint);

/* printf-style message formatted into the arena. */
int pgr_errorf(pgrest_error *err, pgrest_arena *a, int http_status,
               const char *code, const char *details, const char *hint,
               const char *fmt, ...) __attribute__((format(printf, 7, 8)));

/* Arena-formatted string helper. */
char *pgr_asprintf(pgrest_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

int pgr_error_oom(pgrest_error *err);

/* HTTP status for a PostgreSQL error (PostgREST's mapSQLtoHTTP).
 * authenticated distinguishes 401 from 403 for 42501. */
int pgr_sqlstate_http_status(const char *sqlstate, const char *message,
                             bool authenticated);

/* HTTP reason phrase for a status code ("Not Found"). */
const char *pgr_http_reason(int status);

/* The JSON error body: {"code","details","hint","message"}; minimal
 * verbosity keeps only code and message. */
char *pgr_error_json(pgrest_arena *a, const pgrest_error *err, bool minimal);

#endif
