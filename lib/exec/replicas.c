#include "exec/replicas.h"

#include <libpq-fe.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/background_thread.h"
#include "util/monotonic.h"
#include "util/lsn.h"

/* The primary's flushed positions, one per check, to date a replica's
 * replay position: enough of them to look back far past any sane
 * db-replica-max-lag at the check interval. */
#define SAMPLES 256

typedef struct wal_sample {
    double at;          /* monotonic seconds */
    uint64_t lsn;
} wal_sample;

struct pgr_replica {
    char *uri;
    pgr_pool *pool;
    PGconn *probe;                  /* the health thread's own */
    atomic_bool usable;
    atomic_ullong replay_lsn;
    _Atomic double lag_seconds;
    atomic_ullong reads, skipped_unhealthy, skipped_lsn, retries;
};

struct pgr_replica_set {
    pgr_replica *items;
    size_t n;
    atomic_uint next;               /* round robin */
    atomic_ullong fallbacks;
    char *primary_uri;
    PGconn *primary_probe;
    double max_lag, interval;
    wal_sample samples[SAMPLES];
    size_t n_samples, first;        /* a ring, oldest at first */
    pthread_mutex_t lock;
    pthread_cond_t stop_cond;
    pthread_t thread;
    bool stopping, started;
};

static void ignore_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

/* A probe connection; a check must not hang on a host that drops
 * packets, so it waits 2 seconds unless the URI says otherwise. */
static PGconn *probe_connect(const char *uri)
{
    const char *keys[] = {"fallback_application_name", "connect_timeout", "dbname", NULL};
    const char *vals[] = {"pgrest replica check", "2", uri, NULL};
    PGconn *pg = PQconnectdbParams(keys, vals, 1);
    if (pg != NULL && PQstatus(pg) != CONNECTION_OK) {
        PQfinish(pg);
        return NULL;
    }
    if (pg != NULL)
        PQsetNoticeProcessor(pg, ignore_notice, NULL);
    return pg;
}

/* One row of text values from q on *pg (connected first if needed), or
 * NULL with *pg closed when the server is gone or refuses. */
static PGresult *probe_query(PGconn **pg, const char *uri, const char *q)
{
    if (*pg == NULL && (*pg = probe_connect(uri)) == NULL)
        return NULL;
    PGresult *r = PQexec(*pg, q);
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
        return r;
    PQclear(r);
    PQfinish(*pg);
    *pg = NULL;
    return NULL;
}

static void sample_primary(pgr_replica_set *set, double now)
{
    PGresult *r = probe_query(&set->primary_probe, set->primary_uri,
                              "SELECT pg_current_wal_flush_lsn()::text");
    uint64_t lsn;
    const char *v = r != NULL ? PQgetvalue(r, 0, 0) : NULL;
    if (v != NULL && pgr_lsn_parse(v, strlen(v), &lsn)) {
        size_t at = (set->first + set->n_samples) % SAMPLES;
        if (set->n_samples == SAMPLES)
            set->first = (set->first + 1) % SAMPLES;
        else
            set->n_samples++;
        set->samples[at] = (wal_sample){now, lsn};
    }
    PQclear(r);
}

/* How long the primary has had WAL that replay has not reached: since
 * the oldest sample beyond it (0 when none is; unknown while the primary
 * cannot be asked, which leaves replicas serving). */
static double lag_of(const pgr_replica_set *set, uint64_t replay, double now)
{
    for (size_t i = 0; i < set->n_samples; i++) {
        const wal_sample *s = &set->samples[(set->first + i) % SAMPLES];
        if (s->lsn > replay)
            return now - s->at;
    }
    return 0;
}

/* pg_is_wal_replay_paused and pg_last_wal_replay_lsn fail outside
 * recovery: a promoted replica answers NULLs. */
#define CHECK_QUERY                                                                  \
    "SELECT pg_is_in_recovery(), "                                                   \
    "CASE WHEN pg_is_in_recovery() THEN pg_is_wal_replay_paused() END, "             \
    "CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()::text END"

static void check_replica(pgr_replica_set *set, pgr_replica *r, double now)
{
    PGresult *res = probe_query(&r->probe, r->uri, CHECK_QUERY);
    bool answered = res != NULL, well = false;
    uint64_t replay = 0;
    if (answered) {
        bool recovering = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
        bool paused = strcmp(PQgetvalue(res, 0, 1), "t") == 0;
        const char *v = PQgetvalue(res, 0, 2);
        well = recovering && !paused && pgr_lsn_parse(v, strlen(v), &replay);
        PQclear(res);
    }
    double lag = well ? lag_of(set, replay, now) : 0;
    if (well && lag > set->max_lag)
        well = false;
    if (replay > atomic_load(&r->replay_lsn))
        atomic_store(&r->replay_lsn, replay);
    atomic_store(&r->lag_seconds, lag);
    atomic_store(&r->usable, well);
    /* its idle connections went with it: no read should find them */
    if (!answered)
        pgr_pool_flush(r->pool);
}

static void check_all(pgr_replica_set *set)
{
    /* the primary first: a replica that replayed it has caught up */
    sample_primary(set, pgr_monotonic_seconds());
    for (size_t i = 0; i < set->n; i++)
        check_replica(set, &set->items[i], pgr_monotonic_seconds());
}

static void *health_loop(void *arg)
{
    pgr_replica_set *set = arg;
    pthread_mutex_lock(&set->lock);
    while (!set->stopping) {
        pthread_mutex_unlock(&set->lock);
        check_all(set);
        pthread_mutex_lock(&set->lock);
        struct timespec t = pgr_monotonic_deadline(set->interval);
        while (!set->stopping &&
               pthread_cond_timedwait(&set->stop_cond, &set->lock, &t) == 0)
            ;
    }
    pthread_mutex_unlock(&set->lock);
    return NULL;
}

/* A quarter of the allowed lag, within 0.1 and 1 second: a lagging
 * replica is noticed well within db-replica-max-lag. */
static double check_interval(double max_lag)
{
    double i = max_lag / 4;
    return i < 0.1 ? 0.1 : i > 1.0 ? 1.0 : i;
}

static void free_items(pgr_replica_set *set)
{
    for (size_t i = 0; i < set->n; i++) {
        pgr_pool_free(set->items[i].pool);
        if (set->items[i].probe != NULL)
            PQfinish(set->items[i].probe);
        free(set->items[i].uri);
    }
    free(set->items);
}

static bool start_thread(pgr_replica_set *set)
{
    pthread_mutex_init(&set->lock, NULL);
    pgr_monotonic_cond_init(&set->stop_cond);
    set->started = pgr_background_thread_start(&set->thread, health_loop, set);
    return set->started;
}

pgr_replica_set *pgr_replicas_new(const pgr_replica_settings *s)
{
    pgr_replica_set *set = calloc(1, sizeof *set);
    if (set == NULL)
        return NULL;
    set->items = calloc(s->n, sizeof *set->items);
    set->primary_uri = strdup(s->primary_uri);
    set->max_lag = s->max_lag_seconds;
    set->interval = check_interval(s->max_lag_seconds);
    bool ok = set->items != NULL && set->primary_uri != NULL;
    for (size_t i = 0; ok && i < s->n; i++) {
        pgr_replica *r = &set->items[i];
        pgr_pool_settings ps = s->pool;
        ps.conninfo = s->uris[i];
        r->uri = strdup(s->uris[i]);
        r->pool = r->uri != NULL ? pgr_pool_new(&ps) : NULL;
        set->n = i + 1;
        ok = r->pool != NULL;
    }
    if (!ok || !start_thread(set)) {
        if (set->started)
            pthread_join(set->thread, NULL);
        free_items(set);
        free(set->primary_uri);
        free(set);
        return NULL;
    }
    return set;
}

void pgr_replicas_free(pgr_replica_set *set)
{
    if (set == NULL)
        return;
    pthread_mutex_lock(&set->lock);
    set->stopping = true;
    pthread_cond_signal(&set->stop_cond);
    pthread_mutex_unlock(&set->lock);
    pthread_join(set->thread, NULL);
    pthread_cond_destroy(&set->stop_cond);
    pthread_mutex_destroy(&set->lock);
    free_items(set);
    if (set->primary_probe != NULL)
        PQfinish(set->primary_probe);
    free(set->primary_uri);
    free(set);
}

pgr_replica *pgr_replicas_pick(pgr_replica_set *set, bool has_min_lsn, uint64_t min_lsn)
{
    unsigned start = atomic_fetch_add_explicit(&set->next, 1, memory_order_relaxed);
    for (size_t k = 0; k < set->n; k++) {
        pgr_replica *r = &set->items[(start + k) % set->n];
        if (!atomic_load(&r->usable)) {
            atomic_fetch_add_explicit(&r->skipped_unhealthy, 1, memory_order_relaxed);
            continue;
        }
        if (has_min_lsn && atomic_load(&r->replay_lsn) < min_lsn) {
            atomic_fetch_add_explicit(&r->skipped_lsn, 1, memory_order_relaxed);
            continue;
        }
        atomic_fetch_add_explicit(&r->reads, 1, memory_order_relaxed);
        return r;
    }
    atomic_fetch_add_explicit(&set->fallbacks, 1, memory_order_relaxed);
    return NULL;
}

pgr_pool *pgr_replica_pool(pgr_replica *r)
{
    return r->pool;
}

void pgr_replica_lost(pgr_replica *r)
{
    atomic_store(&r->usable, false);
    atomic_fetch_add_explicit(&r->retries, 1, memory_order_relaxed);
}

void pgr_replicas_flush(pgr_replica_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        pgr_pool_flush(set->items[i].pool);
}

size_t pgr_replicas_count(const pgr_replica_set *set)
{
    return set != NULL ? set->n : 0;
}

void pgr_replicas_stats(pgr_replica_set *set, size_t i, pgr_replica_stats *out)
{
    pgr_replica *r = &set->items[i];
    out->usable = atomic_load(&r->usable);
    out->lag_seconds = atomic_load(&r->lag_seconds);
    out->reads = atomic_load(&r->reads);
    out->skipped_unhealthy = atomic_load(&r->skipped_unhealthy);
    out->skipped_lsn = atomic_load(&r->skipped_lsn);
    out->retries = atomic_load(&r->retries);
    pgr_pool_stats_get(r->pool, &out->pool);
}

unsigned long long pgr_replicas_fallbacks(pgr_replica_set *set)
{
    return atomic_load(&set->fallbacks);
}
