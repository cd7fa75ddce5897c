/* Read replicas (docs/replicas.md): one connection pool per URI of
 * db-replica-uris, sized like the primary's, and a health thread that
 * every check interval asks each replica whether it is in recovery, paused
 * (pg_is_wal_replay_paused) and how far it replayed
 * (pg_last_wal_replay_lsn), and the primary how far it flushed
 * (pg_current_wal_flush_lsn). A replica's lag is the time since the
 * primary first flushed WAL the replica has not replayed yet (from the
 * primary's positions sampled at every check, so it stays 0 while the
 * primary is idle, unlike now() - pg_last_xact_replay_timestamp()). A
 * replica that refuses connections, is paused, was promoted or lags more
 * than db-replica-max-lag is not picked until a later check finds it
 * well. Requests never wait for a check: they read the last verdict. */
#ifndef PGR_REPLICAS_H
#define PGR_REPLICAS_H

#include <stdbool.h>
#include <stdint.h>

#include "exec/pool.h"

typedef struct pgr_replica pgr_replica;
typedef struct pgr_replica_set pgr_replica_set;

typedef struct pgr_replica_settings {
    const char *const *uris;     /* db-replica-uris */
    size_t n;
    const char *primary_uri;     /* db-uri: the WAL positions to compare with */
    double max_lag_seconds;      /* db-replica-max-lag */
    pgr_pool_settings pool;      /* every replica's pool; its conninfo is ignored */
} pgr_replica_settings;

/* The replicas, none usable before the health thread's first check
 * (started here, run at once); NULL when out of memory. */
pgr_replica_set *pgr_replicas_new(const pgr_replica_settings *s);
void pgr_replicas_free(pgr_replica_set *set);

/* Why a read was not sent to a replica. */
typedef enum pgr_replica_skip {
    PGR_SKIP_UNHEALTHY,          /* down, paused, promoted or lagging */
    PGR_SKIP_BEHIND_LSN          /* not replayed up to the request's position */
} pgr_replica_skip;

/* The next usable replica round robin, one that has replayed min_lsn
 * when has_min_lsn (as of its last check: the position only grows, so a
 * replica picked has the write); NULL (counted as a fallback) when none
 * fits: the read goes to the primary. */
pgr_replica *pgr_replicas_pick(pgr_replica_set *set, bool has_min_lsn, uint64_t min_lsn);
pgr_pool *pgr_replica_pool(pgr_replica *r);
/* A read lost its connection to r: r is skipped until the next check
 * finds it well, and the retry on the primary is counted. */
void pgr_replica_lost(pgr_replica *r);
/* Closes the replicas' idle connections (a schema reload). */
void pgr_replicas_flush(pgr_replica_set *set);

/* For /metrics. */
typedef struct pgr_replica_stats {
    bool usable;
    double lag_seconds;
    unsigned long long reads, skipped_unhealthy, skipped_lsn, retries;
    pgr_pool_stats pool;
} pgr_replica_stats;
size_t pgr_replicas_count(const pgr_replica_set *set);
void pgr_replicas_stats(pgr_replica_set *set, size_t i, pgr_replica_stats *out);
/* Reads that went to the primary because no replica fitted. */
unsigned long long pgr_replicas_fallbacks(pgr_replica_set *set);

#endif
