#include "exec/pool.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/error.h"

struct pgr_pool {
    pthread_mutex_t lock;
    char *conninfo;
    int timeout_seconds;
    int size;
    int waiting;
    unsigned long long timeouts;
    unsigned flush_generation;
    pgr_conn *conns;
    pgr_pool_waiter *head, *tail;   /* waiters, first come first served */
};

pgr_pool *pgr_pool_new(const char *conninfo, int size, int timeout_seconds)
{
    pgr_pool *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->conninfo = strdup(conninfo);
    p->conns = calloc((size_t)size, sizeof(pgr_conn));
    if (p->conninfo == NULL || p->conns == NULL) {
        free(p->conninfo);
        free(p->conns);
        free(p);
        return NULL;
    }
    p->size = size;
    p->timeout_seconds = timeout_seconds;
    pthread_mutex_init(&p->lock, NULL);
    return p;
}

static void close_conn(pgr_conn *c)
{
    if (c->pg != NULL)
        PQfinish(c->pg);
    c->pg = NULL;
    pgr_stmt_cache_free(c->stmts);
    c->stmts = NULL;
    c->connecting = false;
}

void pgr_pool_free(pgr_pool *p)
{
    if (p == NULL)
        return;
    for (int i = 0; i < p->size; i++)
        close_conn(&p->conns[i]);
    pthread_mutex_destroy(&p->lock);
    free(p->conns);
    free(p->conninfo);
    free(p);
}

/* libpq's default prints notices (and errors arriving on an idle
 * connection, e.g. "terminating connection due to administrator command")
 * on stderr; the library never prints: what matters reaches the caller as
 * an error when the connection is next used. */
static void ignore_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

/* The error of a failed connection attempt: libpq's message, its
 * trailing newline and blanks cut, after `extra` (may be NULL). */
static void connect_failed(const PGconn *pg, const char *extra, pgrest_arena *a,
                           pgrest_error *err)
{
    const char *msg = pg ? PQerrorMessage(pg) : "out of memory";
    char *m = extra != NULL ? pgr_asprintf(a, "%s%s", msg, extra) : pgr_strdup(a, msg);
    if (m != NULL) {
        size_t n = strlen(m);
        while (n > 0 && (m[n - 1] == '\n' || m[n - 1] == ' '))
            m[--n] = '\0';
    }
    pgr_error_connection(err, m);
}

/* keys[0] is dbname, expanded from conninfo: libpq keeps the last value
 * of a repeated key, so what follows dbname overrides conninfo and what
 * precedes it is only a default. */
static PGconn *connect_params(const char *const *keys, const char *const *vals,
                              pgrest_arena *a, pgrest_error *err)
{
    PGconn *pg = PQconnectdbParams(keys, vals, 1);
    if (pg == NULL || PQstatus(pg) != CONNECTION_OK) {
        connect_failed(pg, NULL, a, err);
        if (pg != NULL)
            PQfinish(pg);
        return NULL;
    }
    PQsetNoticeProcessor(pg, ignore_notice, NULL);
    return pg;
}

/* Like PostgREST (Config.hs addFallbackAppName): an application_name or a
 * fallback_application_name in db-uri wins; otherwise every connection
 * (pool, schema loads, listener) shows the library's name and version in
 * pg_stat_activity. */
#define PGR_FALLBACK_APP_NAME "pgrest " PGREST_VERSION_STRING

PGconn *pgr_connect(const char *conninfo, pgrest_arena *a, pgrest_error *err)
{
    const char *keys[] = {"fallback_application_name", "dbname", NULL};
    const char *vals[] = {PGR_FALLBACK_APP_NAME, conninfo, NULL};
    return connect_params(keys, vals, a, err);
}

/* The listener needs the primary when db-uri lists several hosts
 * (Config.hs addTargetSessionAttrs, which overrides db-uri's own). */
PGconn *pgr_connect_read_write(const char *conninfo, pgrest_arena *a, pgrest_error *err)
{
    const char *keys[] = {"fallback_application_name", "dbname", "target_session_attrs", NULL};
    const char *vals[] = {PGR_FALLBACK_APP_NAME, conninfo, "read-write", NULL};
    return connect_params(keys, vals, a, err);
}

static pgr_conn *take_free(pgr_pool *p)
{
    /* prefer a slot that already has an open connection */
    for (int i = 0; i < p->size; i++)
        if (!p->conns[i].in_use && p->conns[i].pg != NULL) {
            p->conns[i].in_use = true;
            return &p->conns[i];
        }
    for (int i = 0; i < p->size; i++)
        if (!p->conns[i].in_use) {
            p->conns[i].in_use = true;
            return &p->conns[i];
        }
    return NULL;
}

static void enqueue(pgr_pool *p, pgr_pool_waiter *w)
{
    w->next = NULL;
    w->prev = p->tail;
    if (p->tail != NULL)
        p->tail->next = w;
    else
        p->head = w;
    p->tail = w;
    w->queued = true;
    p->waiting++;
}

static void dequeue(pgr_pool *p, pgr_pool_waiter *w)
{
    if (w->prev != NULL)
        w->prev->next = w->next;
    else
        p->head = w->next;
    if (w->next != NULL)
        w->next->prev = w->prev;
    else
        p->tail = w->prev;
    w->next = w->prev = NULL;
    w->queued = false;
    p->waiting--;
}

pgr_conn *pgr_pool_take(pgr_pool *p, pgr_pool_waiter *w)
{
    w->conn = NULL;
    pthread_mutex_lock(&p->lock);
    /* a waiter already queued goes first: no overtaking */
    pgr_conn *c = p->head == NULL ? take_free(p) : NULL;
    if (c == NULL)
        enqueue(p, w);
    pthread_mutex_unlock(&p->lock);
    return c;
}

pgr_conn *pgr_pool_leave(pgr_pool *p, pgr_pool_waiter *w, bool timed_out)
{
    pthread_mutex_lock(&p->lock);
    if (w->queued) {
        dequeue(p, w);
        if (timed_out)
            p->timeouts++;
    }
    pgr_conn *c = w->conn;
    w->conn = NULL;
    pthread_mutex_unlock(&p->lock);
    return c;
}

pgr_conn *pgr_pool_handed(pgr_pool *p, pgr_pool_waiter *w)
{
    pthread_mutex_lock(&p->lock);
    pgr_conn *c = w->conn;
    w->conn = NULL;
    pthread_mutex_unlock(&p->lock);
    return c;
}

int pgr_pool_timeout_seconds(const pgr_pool *p)
{
    return p->timeout_seconds;
}

/* Drops a broken connection, or one opened before the last flush; the
 * generation the slot belongs to from now on. */
static unsigned refresh_slot(pgr_pool *p, pgr_conn *c)
{
    pthread_mutex_lock(&p->lock);
    bool stale = c->generation != p->flush_generation;
    unsigned gen = p->flush_generation;
    pthread_mutex_unlock(&p->lock);
    if (c->pg != NULL && !c->connecting && (PQstatus(c->pg) != CONNECTION_OK || stale))
        close_conn(c);
    return gen;
}

static int open_failed(pgr_pool *p, pgr_conn *c, const char *extra, pgrest_arena *a,
                       pgrest_error *err)
{
    connect_failed(c->pg, extra, a, err);
    close_conn(c);
    pgr_pool_release(p, c);
    return PGREST_ERR_CONNECTION;
}

/* libpq's connect_timeout (db-uri or PGCONNECT_TIMEOUT), which only its
 * blocking connect enforces: at least 2 seconds when set, 0 for none. */
static int connect_timeout_of(const PGconn *pg)
{
    PQconninfoOption *opts = PQconninfo((PGconn *)pg);
    int seconds = 0;
    for (PQconninfoOption *o = opts; o != NULL && o->keyword != NULL; o++)
        if (strcmp(o->keyword, "connect_timeout") == 0 && o->val != NULL)
            seconds = atoi(o->val);
    PQconninfoFree(opts);
    return seconds <= 0 ? 0 : seconds < 2 ? 2 : seconds;
}

int pgr_pool_open_start(pgr_pool *p, pgr_conn *c, pgrest_arena *a, pgrest_error *err)
{
    c->generation = refresh_slot(p, c);
    if (c->pg != NULL)
        return c->connecting ? PGREST_AGAIN : PGREST_OK;
    const char *keys[] = {"fallback_application_name", "dbname", NULL};
    const char *vals[] = {PGR_FALLBACK_APP_NAME, p->conninfo, NULL};
    c->pg = PQconnectStartParams(keys, vals, 1);
    if (c->pg == NULL || PQstatus(c->pg) == CONNECTION_BAD)
        return open_failed(p, c, NULL, a, err);
    c->connecting = true;
    c->connect_write = true;   /* libpq's first wait, PQconnectPoll's docs */
    c->connect_timeout = connect_timeout_of(c->pg);
    return PGREST_AGAIN;
}

int pgr_pool_open_poll(pgr_pool *p, pgr_conn *c, pgrest_arena *a, pgrest_error *err)
{
    switch (PQconnectPoll(c->pg)) {
    case PGRES_POLLING_READING:
        c->connect_write = false;
        return PGREST_AGAIN;
    case PGRES_POLLING_WRITING:
        c->connect_write = true;
        return PGREST_AGAIN;
    case PGRES_POLLING_OK:
        break;
    default:
        return open_failed(p, c, NULL, a, err);
    }
    c->connecting = false;
    PQsetNoticeProcessor(c->pg, ignore_notice, NULL);
    c->stmts = pgr_stmt_cache_new();
    if (c->stmts == NULL) {
        close_conn(c);
        pgr_pool_release(p, c);
        return pgr_error_connection(err, "out of memory");
    }
    return PGREST_OK;
}

int pgr_pool_open_expired(pgr_pool *p, pgr_conn *c, pgrest_arena *a, pgrest_error *err)
{
    /* libpq's own words for it (pqSocketCheck), after the host it tried */
    return open_failed(p, c, "timeout expired", a, err);
}

static double monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int pgr_pool_open(pgr_pool *p, pgr_conn *c, pgrest_arena *a, pgrest_error *err)
{
    int rc = pgr_pool_open_start(p, c, a, err);
    double deadline = monotonic_ms() + 1e3 * c->connect_timeout;
    while (rc == PGREST_AGAIN) {
        struct pollfd pfd = {.fd = PQsocket(c->pg),
                             .events = c->connect_write ? POLLOUT : POLLIN};
        int left = (int)(deadline - monotonic_ms());
        int n = poll(&pfd, 1, c->connect_timeout == 0 ? -1 : left > 0 ? left : 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            return pgr_pool_open_expired(p, c, a, err);
        rc = pgr_pool_open_poll(p, c, a, err);
    }
    return rc;
}

void pgr_pool_discard(pgr_pool *p, pgr_conn *c)
{
    close_conn(c);
    pgr_pool_release(p, c);
}

/* The blocking form over the waiter queue: sleeps on a condition the
 * hand-over signals. */
typedef struct blocking_waiter {
    pthread_cond_t cond;
} blocking_waiter;

static void wake_blocked(void *arg)
{
    pthread_cond_signal(&((blocking_waiter *)arg)->cond);
}

pgr_conn *pgr_pool_acquire(pgr_pool *p, pgrest_arena *a, pgrest_error *err)
{
    blocking_waiter bw;
    pthread_cond_init(&bw.cond, NULL);
    pgr_pool_waiter w = {.notify = wake_blocked, .arg = &bw};
    pgr_conn *c = pgr_pool_take(p, &w);
    if (c == NULL) {
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += p->timeout_seconds;
        pthread_mutex_lock(&p->lock);
        while (w.conn == NULL && w.queued &&
               pthread_cond_timedwait(&bw.cond, &p->lock, &deadline) != ETIMEDOUT)
            ;
        pthread_mutex_unlock(&p->lock);
        c = pgr_pool_leave(p, &w, true);
    }
    pthread_cond_destroy(&bw.cond);
    if (c == NULL) {
        pgr_error(err, 504, "PGRST003", "Timed out acquiring connection from connection pool.", NULL, NULL);
        return NULL;
    }
    return pgr_pool_open(p, c, a, err) == PGREST_OK ? c : NULL;
}

void pgr_pool_release(pgr_pool *p, pgr_conn *c)
{
    /* only a clean connection is pooled: no transaction, no results */
    if (c->pg != NULL && (c->connecting || PQstatus(c->pg) != CONNECTION_OK ||
                          PQtransactionStatus(c->pg) != PQTRANS_IDLE ||
                          PQpipelineStatus(c->pg) != PQ_PIPELINE_OFF))
        close_conn(c);
    pthread_mutex_lock(&p->lock);
    pgr_pool_waiter *w = p->head;
    if (w != NULL) {
        dequeue(p, w);
        w->conn = c;
        if (w->notify != NULL)
            w->notify(w->arg);
    } else {
        c->in_use = false;
    }
    pthread_mutex_unlock(&p->lock);
}

void pgr_pool_flush(pgr_pool *p)
{
    pthread_mutex_lock(&p->lock);
    p->flush_generation++;
    pthread_mutex_unlock(&p->lock);
}

void pgr_pool_stats_get(pgr_pool *p, pgr_pool_stats *out)
{
    pthread_mutex_lock(&p->lock);
    out->max = p->size;
    out->available = 0;
    for (int i = 0; i < p->size; i++)
        out->available += !p->conns[i].in_use;
    out->waiting = p->waiting;
    out->timeouts = p->timeouts;
    pthread_mutex_unlock(&p->lock);
}
