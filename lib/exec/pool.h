/* Connection pool sized by db-pool (PostgREST's AppState/Pool.hs over
 * hasql-pool): connections open lazily, a waiter times out after
 * db-pool-acquisition-timeout (504 PGRST003), broken ones are replaced,
 * and as hasql-pool's reaper does, an idle connection older than
 * db-pool-max-lifetime or unused for db-pool-max-idletime is closed (a new
 * one opens when next needed). Each connection's life is reported in
 * hasql-pool's words ("Connection <uuid> is used", ...).
 * Waiters queue in arrival order and a released connection is handed to
 * the first of them, so the engine waits without a thread blocking. */
#ifndef PGR_POOL_H
#define PGR_POOL_H

#include <libpq-fe.h>
#include <pthread.h>
#include <stdbool.h>

#include "exec/stmt_cache.h"
#include "pgrest/pgrest.h"
#include "util/arena.h"

typedef struct pgr_conn {
    PGconn *pg;
    pgr_stmt_cache *stmts;  /* prepared on pg */
    bool in_use;
    unsigned generation;   /* schema generation its statements belong to */
    bool connecting;       /* pg is opening (PQconnectPoll) */
    bool connect_write;    /* ... and waits for its socket to be writable */
    int connect_timeout;   /* seconds libpq's connect_timeout allows, 0: none */
    char id[37];           /* its UUID in the pool's observations */
    double opened_at;      /* monotonic seconds: db-pool-max-lifetime */
    double returned_at;    /* last release: db-pool-max-idletime */
} pgr_conn;

typedef struct pgr_pool pgr_pool;

/* One request waiting for a connection. notify (may be NULL) is called
 * when a connection was handed over (w->conn set), with the pool's lock
 * held: it may only signal its owner (no pool calls). */
typedef struct pgr_pool_waiter {
    struct pgr_pool_waiter *next;
    struct pgr_pool_waiter *prev;
    pgr_conn *conn;         /* handed over by a release */
    bool queued;
    void (*notify)(void *arg);
    void *arg;
} pgr_pool_waiter;

/* A thread that blocks until a release hands its waiter a connection:
 * the waiter's notify is pgr_pool_sleeper_wake with the sleeper as arg.
 * The one blocking wait on the queue, for pgr_pool_acquire and for
 * pgrest_handle's loop over the engine. */
typedef struct pgr_pool_sleeper {
    pthread_mutex_t lock;
    pthread_cond_t cond;    /* counts monotonic time */
    bool woken;
} pgr_pool_sleeper;

void pgr_pool_sleeper_init(pgr_pool_sleeper *s);
/* Only once no notify can come: the waiter was handed a connection or left. */
void pgr_pool_sleeper_destroy(pgr_pool_sleeper *s);
/* A waiter's notify: wakes the sleeper arg. */
void pgr_pool_sleeper_wake(void *arg);
/* Sleeps until woken or timeout_ms passed (negative: no limit); each
 * wake-up ends one sleep, even one that came before it began. */
void pgr_pool_sleep(pgr_pool_sleeper *s, long timeout_ms);

/* Receives each observation of a connection's life (one line of
 * hasql-pool's ConnectionObservation as PostgREST's Logger prints it);
 * called without the pool's lock. */
typedef void (*pgr_pool_observer)(void *arg, const char *message);

typedef struct pgr_pool_settings {
    const char *conninfo;
    int size;                 /* db-pool */
    int timeout_seconds;      /* db-pool-acquisition-timeout */
    int max_lifetime_seconds; /* db-pool-max-lifetime */
    int max_idletime_seconds; /* db-pool-max-idletime */
    pgr_pool_observer observe; /* may be NULL */
    void *observe_arg;
} pgr_pool_settings;

/* Starts the reaper thread that closes aged and idle connections. */
pgr_pool *pgr_pool_new(const pgr_pool_settings *s);
void pgr_pool_free(pgr_pool *p);
/* Borrows a connected connection, waiting up to the acquisition timeout;
 * on failure fills err (PGRST000/003). */
pgr_conn *pgr_pool_acquire(pgr_pool *p, pgrest_arena *a, pgrest_error *err);
/* Without waiting: a free slot, or NULL with w queued (w->notify fires
 * when a release hands one over). The slot may still need connecting:
 * pgr_pool_open. */
pgr_conn *pgr_pool_take(pgr_pool *p, pgr_pool_waiter *w);
/* The connection a release handed to the queued w, now the caller's, or
 * NULL (w stays queued). */
pgr_conn *pgr_pool_handed(pgr_pool *p, pgr_pool_waiter *w);
/* Leaves the queue (timed_out counts a PGRST003); returns the connection
 * handed over meanwhile, which the caller then owns, or NULL. After it
 * returns, w->notify is not called any more. */
pgr_conn *pgr_pool_leave(pgr_pool *p, pgr_pool_waiter *w, bool timed_out);
/* Makes a taken slot usable: replaces a broken or flushed connection and
 * opens a missing one, blocking while it connects (at most
 * connect_timeout). On failure the slot is released and err filled
 * (PGRST000). */
int pgr_pool_open(pgr_pool *p, pgr_conn *c, pgrest_arena *a, pgrest_error *err);
/* The same without blocking: PGREST_OK when c is usable now,
 * PGREST_AGAIN while c->pg connects -- then call pgr_pool_open_poll
 * whenever PQsocket(c->pg) is writable (c->connect_write) or readable,
 * and pgr_pool_open_expired once c->connect_timeout has passed since the
 * start -- or the error, the slot released. The host name lookup, if
 * db-uri names a host and no hostaddr, is libpq's and blocks. */
int pgr_pool_open_start(pgr_pool *p, pgr_conn *c, pgrest_arena *a, pgrest_error *err);
int pgr_pool_open_poll(pgr_pool *p, pgr_conn *c, pgrest_arena *a, pgrest_error *err);
int pgr_pool_open_expired(pgr_pool *p, pgr_conn *c, pgrest_arena *a, pgrest_error *err);
/* Closes c's connection (it cannot be cleaned, or is half open) and
 * releases the slot, to be reopened by its next user. */
void pgr_pool_discard(pgr_pool *p, pgr_conn *c);
/* db-pool-acquisition-timeout in seconds. */
int pgr_pool_timeout_seconds(const pgr_pool *p);
/* Returns it; a connection that is not clean (broken, in a transaction,
 * in pipeline mode, half open) is closed and reopened lazily. */
void pgr_pool_release(pgr_pool *p, pgr_conn *c);
/* How a session on a pooled connection ended, as hasql-pool's use tells
 * them apart: a client error (libpq's own, no SQLSTATE: the connection is
 * lost) closes the connection; a server error returns it to the pool as
 * it is, even when the server closed it after saying why (57P01): hasql-
 * pool never looks, so the next session on it fails with a client error. */
typedef enum pgr_session_outcome {
    PGR_SESSION_OK,
    PGR_SESSION_FAILED,
    PGR_SESSION_CLIENT_ERROR
} pgr_session_outcome;
/* pgr_pool_release after a session, observed as hasql-pool does
 * ("session success", "session failure", "network error"). */
void pgr_pool_release_after(pgr_pool *p, pgr_conn *c, pgr_session_outcome outcome);
/* Opens a standalone connection, outside the pool (LISTEN), to a server
 * that accepts writes (target_session_attrs=read-write). */
PGconn *pgr_connect_read_write(const char *conninfo, pgrest_arena *a, pgrest_error *err);
/* Pool gauges and the acquisition-timeout counter for metrics, as
 * PostgREST's Metrics.hs counts them: available = open connections not in
 * use (connected - inUse), waiting = borrowers between PoolRequest and
 * PoolRequestFullfilled (queued or holding a connection). */
typedef struct pgr_pool_stats {
    int max, available, waiting;
    unsigned long long timeouts;
} pgr_pool_stats;
void pgr_pool_stats_get(pgr_pool *p, pgr_pool_stats *out);

/* hasql-pool's release (after a schema reload): idle connections are
 * closed now, the ones in use when they come back. */
void pgr_pool_flush(pgr_pool *p);

#endif
