/* Cancelling a running statement without blocking the caller. libpq 15
 * has only PQcancel, which opens a connection to the server, sends the
 * cancel request and waits for the server to close it (PQcancelStart,
 * the non-blocking form, came with libpq 17): done on the caller's thread
 * it would freeze an event loop for a connect -- for minutes when the
 * database host is unreachable, which is exactly when a server-timeout
 * cancels. So the request goes out from a short-lived detached thread
 * that owns the PGcancel copy (nothing of the caller's: it may outlive
 * the request and the context); only its notify reaches back. */
#ifndef PGR_CANCEL_H
#define PGR_CANCEL_H

#include <libpq-fe.h>
#include <stdbool.h>

typedef struct pgr_cancel pgr_cancel;

/* Starts delivering a cancel request for the statement running on pg.
 * notify(arg) (may be NULL) is called from the delivering thread once the
 * server has taken the request, with a lock held that
 * pgr_cancel_delivered and pgr_cancel_forget also take: like the pool's
 * hand-over it may only signal its owner. When no thread can be started
 * the request is delivered here, blocking. NULL when pg has no cancel
 * key or memory ran out: nothing was sent. */
pgr_cancel *pgr_cancel_start(PGconn *pg, void (*notify)(void *arg), void *arg);
/* Whether the server has taken the request (or delivery failed for
 * good): a connection whose statement was cancelled must not run another
 * before, or the late cancel could hit that one. */
bool pgr_cancel_delivered(pgr_cancel *c);
/* The owner is done with c: notify is not called after this returns, and
 * c is freed (now, or by the thread once the delivery ends). Accepts
 * NULL. */
void pgr_cancel_forget(pgr_cancel *c);

#endif
