/* COPY ... FROM STDIN without blocking (a streamed body,
 * docs/bulk-import.md): the statements before it (one pipeline), the COPY,
 * the data as it comes (libpq queues what the socket does not take: the
 * caller holds back until it has left), the end. COPY cannot run in
 * libpq's pipeline mode, so it runs between the pipelines, on the same
 * connection. */
#ifndef PGR_COPY_IN_H
#define PGR_COPY_IN_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "sql/statements.h"

typedef enum pgr_copy_step {
    PGR_COPY_READY,      /* the step is complete */
    PGR_COPY_WAIT_READ,  /* it goes on once the socket is readable */
    PGR_COPY_WAIT_WRITE, /* ... writable */
    PGR_COPY_FAILED,     /* error (PostgreSQL's result) or the connection's */
    PGR_COPY_REFUSED     /* PostgreSQL refused the data: the COPY is ended,
                          * step with pgr_copy_in_closing for its error */
} pgr_copy_step;

typedef struct pgr_copy_in {
    PGconn *pg;
    PGresult *error;     /* PostgreSQL's first error, or NULL: see PQerrorMessage */
    size_t failed_at;    /* ... from this statement (the COPY's: n_before) */
    bool was_nonblocking;
    bool before;         /* the statements before the COPY are not through */
    size_t n_before, answered;
    const char *copy_sql;
    char copied[24];     /* the COPY's row count ("COPY n"), once it ended */
} pgr_copy_in;

/* Sends the n statements before (pipelined, each with its parameters),
 * then copy_sql (COPY ... FROM STDIN) once they succeeded. false: the
 * connection failed. */
bool pgr_copy_in_send(pgr_copy_in *c, PGconn *pg, const pgr_stmt *before, size_t n,
                      const char *copy_sql);
/* The statements before the COPY ran and the COPY waits for data. */
pgr_copy_step pgr_copy_in_opening(pgr_copy_in *c);
/* Queues data[0..len) and sends what the socket takes: READY when
 * nothing is left queued, WAIT_WRITE when some is. */
pgr_copy_step pgr_copy_in_put(pgr_copy_in *c, const char *data, size_t len);
/* Sends what is queued: READY when nothing is left, REFUSED when
 * PostgreSQL has answered with an error. */
pgr_copy_step pgr_copy_in_flush(pgr_copy_in *c);
/* Ends the data (failure: NULL, or why the COPY is abandoned), then
 * steps with pgr_copy_in_closing. false: the connection failed. */
bool pgr_copy_in_end(pgr_copy_in *c, const char *failure);
/* READY once the COPY's answer is in (and c->error NULL: the rows are
 * in the table); the connection is then idle, blocking as it was. */
pgr_copy_step pgr_copy_in_closing(pgr_copy_in *c);
/* Frees the error result (after any step; idempotent). */
void pgr_copy_in_clear(pgr_copy_in *c);

#endif
