/* Runs the statements of one request in a single pipelined round trip
 * (PostgREST MainTx.hs, with libpq pipeline mode instead of one round trip
 * per statement). */
#ifndef PGR_EXECUTE_H
#define PGR_EXECUTE_H

#include <libpq-fe.h>

#include "exec/stmt_cache.h"
#include "sql/statements.h"

/* cache may be NULL (statements then run unnamed). */
int pgr_execute_on(pgrest_ctx *ctx, pgrest_arena *a,
                   const pgrest_statements *st, PGconn *pg,
                   pgr_stmt_cache *cache, pgrest_response **out,
                   pgrest_error *err);

#endif
