/* Runs the statements of one request in a single pipelined round trip
 * (PostgREST MainTx.hs, with libpq pipeline mode instead of one round trip
 * per statement). */
#ifndef PGR_EXECUTE_H
#define PGR_EXECUTE_H

#include <libpq-fe.h>

#include "exec/main_row.h"
#include "exec/stmt_cache.h"
#include "sql/statements.h"

/* Blocking execution on pg, prepared statements in pg's own statement
 * cache (pgr_conn_stmt_cache). */
int pgr_execute_on(pgrest_ctx *ctx, pgrest_arena *a,
                   const pgrest_statements *st, PGconn *pg,
                   pgrest_response **out, pgrest_error *err);
/* pgrest_execute_send without the public checks, with the statement
 * cache given (the engine's form: a pooled connection keeps its cache in
 * its slot, sparing libpq's per-result event bookkeeping). */
int pgr_execute_send_on(pgrest_ctx *ctx, pgrest_arena *a,
                        const pgrest_statements *st, PGconn *pg,
                        pgr_stmt_cache *cache, pgrest_pending **out,
                        pgrest_error *err);
/* A batch unit is complete (docs/batch.md): rc, resp and err are its
 * answer, which the callee may replace. true: the batch goes on; false:
 * the batch's answer is rc, resp, err, and what the later units do is
 * rolled back. The last unit is reported when the execution completes,
 * before pgrest_execute_consume returns. */
typedef bool (*pgr_unit_done)(void *data, size_t unit, int *rc, pgrest_response **resp,
                              pgrest_error *err);
/* pgr_execute_send_on for several statement lists in one pipeline, a Sync
 * after each (a batch's items: the first opens the transaction, the last
 * ends it, and none depends on an earlier one's result). */
int pgr_execute_send_units_on(pgrest_ctx *ctx, pgrest_arena *a,
                              const pgrest_statements *const *units, size_t n_units,
                              pgr_unit_done done, void *data, PGconn *pg,
                              pgr_stmt_cache *cache, pgrest_pending **out,
                              pgrest_error *err);
/* A failed result as the request's answer: PostgREST's status for its
 * SQLSTATE, RAISE SQLSTATE 'PGRST' as the response it asks for, an error
 * libpq made itself as PGRST001 (PGREST_ERR_CONNECTION). */
int pgr_result_error(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_query_plan *plan,
                     const PGresult *r, pgrest_response **out, pgrest_error *err);
/* pgrest_execute_consume's answer while a streamed body's buffer is full
 * (exec/stream.h): it reads nothing more until the host has taken some. */
#define PGR_PAUSED 2
struct pgr_stream;
/* Streams the main statement's rows into sink (sql/emit_stream.h
 * statements): set right after send, before the first consume. */
void pgr_pending_set_sink(pgrest_pending *p, struct pgr_stream *sink);
/* A streamed response's head when its statement answered before the rows
 * (a streamed body's representation, sql/emit_import.h): its main row,
 * the body aside. false: the head is not known yet (a streamed read's
 * comes after its rows). */
bool pgr_pending_head(const pgrest_pending *p, pgr_main_row *row);
/* The row of a streamed body its write failed on, from 1 (the
 * statements' find_row found it); 0 when not known. */
size_t pgr_pending_failed_row(const pgrest_pending *p);
/* The execution has read everything and left pipeline mode. */
bool pgr_pending_done(const pgrest_pending *p);

#endif
