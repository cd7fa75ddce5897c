/* Connection pool sized by db-pool (PostgREST's AppState/Pool.hs):
 * connections open lazily, a waiter times out after
 * db-pool-acquisition-timeout (504 PGRST003), broken ones are replaced. */
#ifndef PGR_POOL_H
#define PGR_POOL_H

#include <libpq-fe.h>
#include <stdbool.h>

#include "exec/stmt_cache.h"
#include "pgrest/pgrest.h"
#include "util/arena.h"

typedef struct pgr_conn {
    PGconn *pg;
    pgr_stmt_cache *stmts;
    bool in_use;
    unsigned generation;   /* schema generation its statements belong to */
} pgr_conn;

typedef struct pgr_pool pgr_pool;

pgr_pool *pgr_pool_new(const char *conninfo, int size, int timeout_seconds);
void pgr_pool_free(pgr_pool *p);
/* Borrows a connected connection; on failure fills err (PGRST000/003). */
pgr_conn *pgr_pool_acquire(pgr_pool *p, pgrest_arena *a, pgrest_error *err);
/* Returns it; broken connections are closed and reopened lazily. */
void pgr_pool_release(pgr_pool *p, pgr_conn *c);
/* Opens a new standalone connection (schema loading, LISTEN). */
PGconn *pgr_connect(const char *conninfo, pgrest_arena *a, pgrest_error *err);
/* pgr_connect to a server that accepts writes (target_session_attrs=read-write). */
PGconn *pgr_connect_read_write(const char *conninfo, pgrest_arena *a, pgrest_error *err);
/* Pool gauges and the acquisition-timeout counter for metrics. */
typedef struct pgr_pool_stats {
    int max, available, waiting;
    unsigned long long timeouts;
} pgr_pool_stats;
void pgr_pool_stats_get(pgr_pool *p, pgr_pool_stats *out);

/* Forgets prepared statements on every idle connection (after reload). */
void pgr_pool_flush(pgr_pool *p);

#endif
