#include "exec/pool.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "util/background_thread.h"
#include "util/monotonic.h"
#include "util/error.h"
#include "util/number.h"

struct pgr_pool {
    pthread_mutex_t lock;
    char *conninfo;
    int timeout_seconds;
    int max_lifetime, max_idletime;
    int size;
    int waiting;
    unsigned long long timeouts;
    unsigned flush_generation;
    pgr_conn *conns;
    pgr_pool_waiter *head, *tail;   /* waiters, first come first served */
    pgr_pool_observer observe;
    void *observe_arg;
    pthread_t reaper;
    pthread_cond_t reaper_stop;
    bool stopping, reaper_started;
};

/* hasql-pool's ConnectionObservation lines (PostgREST Logger.hs). */
static void observe(const pgr_pool *p, const char *id, const char *status)
{
    if (p->observe == NULL)
        return;
    char line[128];
    snprintf(line, sizeof line, "Connection %s %s", id, status);
    p->observe(p->observe_arg, line);
}

#define OBS_CONNECTING "is being established"
#define OBS_ESTABLISHED "is available due to connection establishment"
#define OBS_SESSION_OK "is available due to session success"
#define OBS_SESSION_FAILED "is available due to session failure"
#define OBS_USED "is used"
#define OBS_AGED "is terminated due to max lifetime"
#define OBS_IDLE "is terminated due to max idletime"
#define OBS_RELEASED "is terminated due to release"
#define OBS_NETWORK "is terminated due to network error"

/* A version 4 UUID, as hasql-pool's uuidNextRandom. */
static void new_uuid(char out[37])
{
    unsigned char b[16];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
        /* the id only names log lines: any distinct value will do */
        static unsigned long counter;
        unsigned long long t = (unsigned long long)(pgr_monotonic_seconds() * 1e9);
        memcpy(b, &t, 8);
        unsigned long n = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
        memset(b + 8, 0, 8);
        memcpy(b + 8, &n, sizeof n < 8 ? sizeof n : 8);
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
             b[12], b[13], b[14], b[15]);
}

static void *reap_loop(void *arg);

pgr_pool *pgr_pool_new(const pgr_pool_settings *s)
{
    pgr_pool *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->conninfo = strdup(s->conninfo);
    p->conns = calloc((size_t)s->size, sizeof(pgr_conn));
    if (p->conninfo == NULL || p->conns == NULL) {
        free(p->conninfo);
        free(p->conns);
        free(p);
        return NULL;
    }
    p->size = s->size;
    p->timeout_seconds = s->timeout_seconds;
    p->max_lifetime = s->max_lifetime_seconds;
    p->max_idletime = s->max_idletime_seconds;
    p->observe = s->observe;
    p->observe_arg = s->observe_arg;
    pthread_mutex_init(&p->lock, NULL);
    pgr_monotonic_cond_init(&p->reaper_stop);
    p->reaper_started = pgr_background_thread_start(&p->reaper, reap_loop, p);
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
    if (p->reaper_started) {
        pthread_mutex_lock(&p->lock);
        p->stopping = true;
        pthread_cond_signal(&p->reaper_stop);
        pthread_mutex_unlock(&p->lock);
        pthread_join(p->reaper, NULL);
    }
    for (int i = 0; i < p->size; i++)
        close_conn(&p->conns[i]);
    pthread_cond_destroy(&p->reaper_stop);
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
 * (pool, listener) shows the library's name and version in
 * pg_stat_activity. */
#define PGR_FALLBACK_APP_NAME "pgrest " PGREST_VERSION_STRING

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
    /* an open connection first, the one idle longest (hasql-pool keeps
     * them in a queue: returned at the back, borrowed from the front) */
    pgr_conn *oldest = NULL;
    for (int i = 0; i < p->size; i++)
        if (!p->conns[i].in_use && p->conns[i].pg != NULL &&
            (oldest == NULL || p->conns[i].returned_at < oldest->returned_at))
            oldest = &p->conns[i];
    if (oldest != NULL) {
        oldest->in_use = true;
        return oldest;
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

/* Why an idle connection must go (hasql-pool's reaper and release), or
 * NULL. */
static const char *expiry(const pgr_pool *p, const pgr_conn *c, double now)
{
    if (c->generation != p->flush_generation)
        return OBS_RELEASED;
    if (now > c->opened_at + p->max_lifetime)
        return OBS_AGED;
    if (now > c->returned_at + p->max_idletime)
        return OBS_IDLE;
    return NULL;
}

/* Closes every idle connection that expired, one at a time so that
 * PQfinish runs without the lock; the emptied slots open anew on demand. */
static void reap(pgr_pool *p)
{
    for (;;) {
        pgr_conn gone = {0};
        const char *why = NULL;
        double now = pgr_monotonic_seconds();
        pthread_mutex_lock(&p->lock);
        for (int i = 0; i < p->size && why == NULL; i++) {
            pgr_conn *c = &p->conns[i];
            if (c->in_use || c->pg == NULL || (why = expiry(p, c, now)) == NULL)
                continue;
            gone = *c;
            c->pg = NULL;
            c->stmts = NULL;
        }
        pthread_mutex_unlock(&p->lock);
        if (why == NULL)
            return;
        close_conn(&gone);
        observe(p, gone.id, why);
    }
}

static void *reap_loop(void *arg)
{
    pgr_pool *p = arg;
    pthread_mutex_lock(&p->lock);
    while (!p->stopping) {
        struct timespec t = pgr_monotonic_deadline(1);
        pthread_cond_timedwait(&p->reaper_stop, &p->lock, &t);
        if (p->stopping)
            break;
        pthread_mutex_unlock(&p->lock);
        reap(p);
        pthread_mutex_lock(&p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* A borrowed connection that cannot serve: from before a flush, or past
 * db-pool-max-lifetime (hasql-pool checks the age on borrow). Its health
 * is not looked at: a broken one fails its session, as with hasql-pool. */
static const char *unusable(pgr_pool *p, const pgr_conn *c)
{
    pthread_mutex_lock(&p->lock);
    bool stale = c->generation != p->flush_generation;
    pthread_mutex_unlock(&p->lock);
    if (stale)
        return OBS_RELEASED;
    return pgr_monotonic_seconds() > c->opened_at + p->max_lifetime ? OBS_AGED : NULL;
}

static unsigned current_generation(pgr_pool *p)
{
    pthread_mutex_lock(&p->lock);
    unsigned gen = p->flush_generation;
    pthread_mutex_unlock(&p->lock);
    return gen;
}

static int open_failed(pgr_pool *p, pgr_conn *c, const char *extra, pgrest_arena *a,
                       pgrest_error *err)
{
    connect_failed(c->pg, extra, a, err);
    close_conn(c);
    observe(p, c->id, OBS_NETWORK);
    pgr_pool_release(p, c);
    return PGREST_ERR_CONNECTION;
}

/* libpq's connect_timeout (db-uri or PGCONNECT_TIMEOUT), which only its
 * blocking connect enforces: at least 2 seconds when set, 0 for none. */
static int connect_timeout_of(const PGconn *pg)
{
    PQconninfoOption *opts = PQconninfo((PGconn *)pg);
    long long seconds = 0;
    for (PQconninfoOption *o = opts; o != NULL && o->keyword != NULL; o++)
        if (strcmp(o->keyword, "connect_timeout") == 0 && o->val != NULL &&
            !pgr_read_integer(o->val, true, &seconds))
            seconds = 0;
    PQconninfoFree(opts);
    return seconds <= 0 ? 0 : seconds < 2 ? 2 : seconds > INT_MAX ? INT_MAX : (int)seconds;
}

int pgr_pool_open_start(pgr_pool *p, pgr_conn *c, pgrest_arena *a, pgrest_error *err)
{
    if (c->pg != NULL && c->connecting)
        return PGREST_AGAIN;
    const char *why = c->pg != NULL ? unusable(p, c) : NULL;
    if (why != NULL) {
        close_conn(c);
        observe(p, c->id, why);
    }
    c->generation = current_generation(p);
    if (c->pg != NULL) {
        observe(p, c->id, OBS_USED);
        return PGREST_OK;
    }
    new_uuid(c->id);
    observe(p, c->id, OBS_CONNECTING);
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
        observe(p, c->id, OBS_NETWORK);
        pgr_pool_release(p, c);
        return pgr_error_connection(err, "out of memory");
    }
    c->opened_at = pgr_monotonic_seconds();
    observe(p, c->id, OBS_ESTABLISHED);
    observe(p, c->id, OBS_USED);
    return PGREST_OK;
}

int pgr_pool_open_expired(pgr_pool *p, pgr_conn *c, pgrest_arena *a, pgrest_error *err)
{
    /* libpq's own words for it (pqSocketCheck), after the host it tried */
    return open_failed(p, c, "timeout expired", a, err);
}

int pgr_pool_open(pgr_pool *p, pgr_conn *c, pgrest_arena *a, pgrest_error *err)
{
    int rc = pgr_pool_open_start(p, c, a, err);
    double deadline = pgr_monotonic_seconds() + c->connect_timeout;
    while (rc == PGREST_AGAIN) {
        struct pollfd pfd = {.fd = PQsocket(c->pg),
                             .events = c->connect_write ? POLLOUT : POLLIN};
        int left = (int)((deadline - pgr_monotonic_seconds()) * 1e3);
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
    if (c->pg != NULL) {
        close_conn(c);
        observe(p, c->id, OBS_NETWORK);
    }
    pgr_pool_release(p, c);
}

void pgr_pool_sleeper_init(pgr_pool_sleeper *s)
{
    pthread_mutex_init(&s->lock, NULL);
    pgr_monotonic_cond_init(&s->cond);
    s->woken = false;
}

void pgr_pool_sleeper_destroy(pgr_pool_sleeper *s)
{
    pthread_cond_destroy(&s->cond);
    pthread_mutex_destroy(&s->lock);
}

void pgr_pool_sleeper_wake(void *arg)
{
    pgr_pool_sleeper *s = arg;
    pthread_mutex_lock(&s->lock);
    s->woken = true;
    pthread_cond_signal(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

void pgr_pool_sleep(pgr_pool_sleeper *s, long timeout_ms)
{
    struct timespec until = pgr_monotonic_deadline(timeout_ms < 0 ? 0 : (double)timeout_ms / 1e3);
    pthread_mutex_lock(&s->lock);
    while (!s->woken) {
        int rc = timeout_ms < 0 ? pthread_cond_wait(&s->cond, &s->lock)
                                : pthread_cond_timedwait(&s->cond, &s->lock, &until);
        if (rc == ETIMEDOUT)
            break;
    }
    s->woken = false;
    pthread_mutex_unlock(&s->lock);
}

pgr_conn *pgr_pool_acquire(pgr_pool *p, pgrest_arena *a, pgrest_error *err)
{
    pgr_pool_sleeper s;
    pgr_pool_sleeper_init(&s);
    pgr_pool_waiter w = {.notify = pgr_pool_sleeper_wake, .arg = &s};
    pgr_conn *c = pgr_pool_take(p, &w);
    double deadline = pgr_monotonic_seconds() + p->timeout_seconds;
    while (c == NULL) {
        double left = deadline - pgr_monotonic_seconds();
        if (left <= 0)
            break;
        pgr_pool_sleep(&s, (long)(left * 1e3) + 1);
        c = pgr_pool_handed(p, &w);
    }
    if (c == NULL)  /* a connection handed over meanwhile is taken still */
        c = pgr_pool_leave(p, &w, true);
    pgr_pool_sleeper_destroy(&s);
    if (c == NULL) {
        pgr_error_pool_timeout(err);
        return NULL;
    }
    return pgr_pool_open(p, c, a, err) == PGREST_OK ? c : NULL;
}

void pgr_pool_release(pgr_pool *p, pgr_conn *c)
{
    pgr_pool_release_after(p, c, PGR_SESSION_OK);
}

/* Why a connection coming back from a session must close (broken, half
 * open, left inside a transaction or pipeline, or flushed meanwhile), or
 * NULL. */
static const char *closes_on_return(pgr_pool *p, const pgr_conn *c,
                                    pgr_session_outcome outcome)
{
    if (c->connecting || outcome == PGR_SESSION_CLIENT_ERROR)
        return OBS_NETWORK;
    /* hasql-pool returns a connection whose session got a server error
     * without looking at it, lost or not */
    bool lost = PQstatus(c->pg) != CONNECTION_OK;
    if (lost && outcome != PGR_SESSION_FAILED)
        return OBS_NETWORK;
    /* only a clean connection is pooled: no transaction, no results */
    if (!lost && (PQtransactionStatus(c->pg) != PQTRANS_IDLE ||
                  PQpipelineStatus(c->pg) != PQ_PIPELINE_OFF))
        return OBS_NETWORK;
    pthread_mutex_lock(&p->lock);
    bool stale = c->generation != p->flush_generation;
    pthread_mutex_unlock(&p->lock);
    return stale ? OBS_RELEASED : NULL;
}

void pgr_pool_release_after(pgr_pool *p, pgr_conn *c, pgr_session_outcome outcome)
{
    if (c->pg != NULL) {
        const char *why = closes_on_return(p, c, outcome);
        if (why != NULL)
            close_conn(c);
        observe(p, c->id, why != NULL ? why
                          : outcome == PGR_SESSION_OK ? OBS_SESSION_OK : OBS_SESSION_FAILED);
    }
    double now = pgr_monotonic_seconds();
    pthread_mutex_lock(&p->lock);
    c->returned_at = now;
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
    reap(p);
}

void pgr_pool_stats_get(pgr_pool *p, pgr_pool_stats *out)
{
    pthread_mutex_lock(&p->lock);
    out->max = p->size;
    out->available = 0;
    out->waiting = p->waiting;
    for (int i = 0; i < p->size; i++) {
        out->available += !p->conns[i].in_use && p->conns[i].pg != NULL;
        out->waiting += p->conns[i].in_use;
    }
    out->timeouts = p->timeouts;
    pthread_mutex_unlock(&p->lock);
}
