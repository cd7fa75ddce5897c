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

struct pgr_pool_waiter;

/* A connection may carry a second request's pipeline behind its holder's
 * (docs/ARCHITECTURE.md, "Several requests per connection"): the
 * follower sends it from its own thread while the holder still reads, so
 * every libpq call on pg, and the statement cache, go under io. Lock
 * order: io before the pool's lock. */
typedef struct pgr_conn {
    PGconn *pg;
    pgr_stmt_cache *stmts;  /* prepared on pg */
    pthread_mutex_t io;
    int segments;          /* pipelines sent on pg whose results are unread (io) */
    unsigned session;      /* counts the connections the slot has had */
    bool accepts;          /* its holder's pipeline may carry a follower (pool lock) */
    struct pgr_pool_waiter *follower;  /* the request riding behind (pool lock) */
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
    bool pipelinable;       /* may follow another request on its connection */
    pgr_conn *attached;     /* ... and does, on this one, until handed it */
    bool evicted;           /* ... or did until its holder could not carry it */
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

/* Several requests per connection. A pipelinable waiter that finds no
 * free slot (and nobody queued before it) attaches to a connection whose
 * holder accepts a follower instead of queueing; it then sends its own
 * pipeline on it (pgr_pool_follow_lock), each request its own implicit
 * transaction closed by its own Sync, and the holder's release hands it
 * the connection with those results next. */

/* The holder of c runs a pipelinable request: one follower may attach,
 * the first queued waiter at once if it is pipelinable. */
void pgr_pool_accept(pgr_pool *p, pgr_conn *c);
/* The holder of c cannot carry a follower after all (its statement is
 * cancelled, its streamed body waits for a slow reader): the follower is
 * let go (w->evicted, notified) and takes a connection anew; a pipeline
 * it sent already is abandoned, and c closes when released. */
void pgr_pool_evict(pgr_pool *p, pgr_conn *c);
/* Whether w was evicted since asked last. */
bool pgr_pool_evicted(pgr_pool *p, pgr_pool_waiter *w);
/* The connection w is attached to, with its io locked so that w can send
 * its pipeline (pgr_conn_unlock after), or NULL when w is not attached. */
pgr_conn *pgr_pool_follow_lock(pgr_pool *p, pgr_pool_waiter *w);
/* A follower handed the connection its pipeline went out on: observed as
 * any borrow ("is used"). */
void pgr_pool_resume(pgr_pool *p, pgr_conn *c);
/* Whether c, held, carries a pipeline nobody will read: a follower sent
 * it and left (cancelled, timed out). No follower attaches to c after. */
bool pgr_pool_abandoned(pgr_pool *p, pgr_conn *c);
/* Closes the held c's connection (it could not be drained); the slot
 * opens anew for its next user. */
void pgr_pool_close(pgr_pool *p, pgr_conn *c);
void pgr_conn_lock(pgr_conn *c);
void pgr_conn_unlock(pgr_conn *c);
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
