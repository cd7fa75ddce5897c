/* Runs the statements of one request in a single pipelined round trip
 * (PostgREST MainTx.hs, with libpq pipeline mode instead of one round trip
 * per statement). */
#ifndef PGR_EXECUTE_H
#define PGR_EXECUTE_H

#include <libpq-fe.h>

#include "exec/pool.h"
#include "sql/statements.h"

/* Blocking execution on pg, prepared statements in pg's own statement
 * cache (pgr_conn_stmt_cache). */
int pgr_execute_on(pgrest_ctx *ctx, pgrest_arena *a,
                   const pgrest_statements *st, PGconn *pg,
                   pgrest_response **out, pgrest_error *err);
/* pgrest_execute_send without the public checks, on a pooled connection
 * (the engine's form: the slot keeps the statement cache, sparing libpq's
 * per-result event bookkeeping). With c->io held, as consume and
 * pgrest_pending_wants_write: c may carry another request's pipeline
 * ahead of this one or behind it (exec/pool.h), whose results the
 * execution neither reads nor lets go of pipeline mode for. */
int pgr_execute_send_on(pgrest_ctx *ctx, pgrest_arena *a,
                        const pgrest_statements *st, pgr_conn *c,
                        pgrest_pending **out, pgrest_error *err);
/* Reads and drops the results of pipelines on c that nobody will read
 * (a follower that left after sending: exec/pool.h), with c->io held.
 * PGREST_OK once none is left and c is out of pipeline mode,
 * PGREST_AGAIN while they come, or PGREST_ERR_CONNECTION. */
int pgr_execute_drain(pgr_conn *c);
/* pgrest_execute_consume's answer while a streamed body's buffer is full
 * (exec/stream.h): it reads nothing more until the host has taken some. */
#define PGR_PAUSED 2
struct pgr_stream;
/* Streams the main statement's rows into sink (sql/emit_stream.h
 * statements): set right after send, before the first consume. */
void pgr_pending_set_sink(pgrest_pending *p, struct pgr_stream *sink);
/* The execution has read everything and left pipeline mode. */
bool pgr_pending_done(const pgrest_pending *p);

#endif
