/* COPY ... FROM STDIN without blocking (a streamed body,
 * docs/bulk-import.md): the query that opens it, the data as it comes
 * (libpq queues what the socket does not take: the caller holds back
 * until it has left), the end. COPY cannot run in libpq's pipeline mode,
 * so this runs before the request's pipeline, on the same connection. */
#ifndef PGR_COPY_IN_H
#define PGR_COPY_IN_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum pgr_copy_step {
    PGR_COPY_READY,      /* the step is complete */
    PGR_COPY_WAIT_READ,  /* it goes on once the socket is readable */
    PGR_COPY_WAIT_WRITE, /* ... writable */
    PGR_COPY_FAILED      /* error (PostgreSQL's result) or the connection's */
} pgr_copy_step;

typedef struct pgr_copy_in {
    PGconn *pg;
    PGresult *error;     /* PostgreSQL's first error, or NULL: see PQerrorMessage */
    bool was_nonblocking;
} pgr_copy_in;

/* Sends sql (a simple query ending in COPY ... FROM STDIN). false: the
 * connection failed. */
bool pgr_copy_in_send(pgr_copy_in *c, PGconn *pg, const char *sql);
/* The statements before the COPY ran and the COPY waits for data. */
pgr_copy_step pgr_copy_in_opening(pgr_copy_in *c);
/* Queues data[0..len) and sends what the socket takes: READY when
 * nothing is left queued, WAIT_WRITE when some is. */
pgr_copy_step pgr_copy_in_put(pgr_copy_in *c, const char *data, size_t len);
/* Sends what is queued: READY when nothing is left. */
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
