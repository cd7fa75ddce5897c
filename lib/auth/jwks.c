/* The JWKS store and its fetch thread (see jwks.h). The thread sleeps on a
 * monotonic condition variable until a fetch is due (start, max-age run
 * out, a request's refresh, a retry after a failure) and fetches outside
 * the lock; the new set is checked, then swapped in under the lock. */
#include "auth/jwks.h"
#include "auth/jwt_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena.h"
#include "util/background_thread.h"
#include "util/monotonic.h"

struct pgr_jwks {
    atomic_uint refs;
    char *uri;
    char *cafile;
    pgr_jwks_report report;
    void *report_arg;
    atomic_bool stop;            /* polled by libcurl during a transfer */
    pthread_t thread;
    pthread_mutex_t lock;        /* guards everything below */
    pthread_cond_t wake;         /* the thread: a fetch is asked for, or stop */
    pthread_cond_t done;         /* requests: a fetch ended */
    int timeout;                 /* seconds */
    int min_refresh;             /* seconds */
    pgr_jwks_set *set;           /* NULL until a fetch succeeds */
    bool fetching;
    bool asked;                  /* a request wants a fetch now */
    double started;              /* when the last fetch started; -inf: none */
    double next;                 /* when the next fetch is due; INFINITY: none */
    unsigned long rounds;        /* fetches ended */
};

static char *copy_text(const char *s)
{
    return s == NULL ? NULL : strdup(s);
}

void pgr_jwks_set_release(pgr_jwks_set *s)
{
    if (s == NULL || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
        return;
    free(s->body);
    free(s);
}

/* ------------------------------------------------------------ checking a set */

/* The JWK's members as JSON text: equal texts are the same key. */
static const char *key_text(const jwt_key *k)
{
    return json_object_to_json_string_ext(k->jwk, JSON_C_TO_STRING_PLAIN);
}

static bool has_key(const jwt_keyset *ks, const char *text)
{
    for (size_t i = 0; i < ks->n; i++)
        if (strcmp(key_text(&ks->keys[i]), text) == 0)
            return true;
    return false;
}

/* 1: body is a JWK Set and no key of old left it; 0: a key left; -1:
 * body is no JWK Set (or memory ran out), with why in error. */
static int check_set(const pgr_jwks_set *old, const char *body, size_t len, char *error,
                     size_t error_size)
{
    pgrest_arena *a = pgrest_arena_new(0);
    jwt_keyset now, before;
    int rc = a == NULL ? -1 : pgr_jwt_load_jwks(a, body, len, &now);
    if (rc != 0) {
        snprintf(error, error_size, "%s", rc < 0 ? "out of memory" : "the response is no JWK Set");
        pgrest_arena_free(a);
        return -1;
    }
    int kept = 1;
    if (old != NULL && pgr_jwt_load_jwks(a, old->body, old->len, &before) == 0)
        for (size_t i = 0; i < before.n && kept; i++)
            kept = has_key(&now, key_text(&before.keys[i]));
    pgrest_arena_free(a);
    return kept;
}

/* ------------------------------------------------------------ the thread */

static void report(pgr_jwks *j, bool ok, const char *message)
{
    if (j->report != NULL)
        j->report(j->report_arg, ok, message);
}

/* A fetched body that is a JWK Set becomes the current set. */
static bool publish(pgr_jwks *j, pgr_jwks_fetched *f, char *error, size_t error_size)
{
    pthread_mutex_lock(&j->lock);
    pgr_jwks_set *old = j->set;
    if (old != NULL)
        atomic_fetch_add(&old->refs, 1);
    pthread_mutex_unlock(&j->lock);
    int kept = check_set(old, f->body, f->len, error, error_size);
    pgr_jwks_set *s = kept < 0 ? NULL : calloc(1, sizeof *s);
    if (s != NULL) {
        atomic_init(&s->refs, 1);
        s->body = f->body;
        s->len = f->len;
        f->body = NULL;
        s->generation = old == NULL ? 1 : old->generation + (kept ? 0 : 1);
        pthread_mutex_lock(&j->lock);
        pgr_jwks_set *prev = j->set;
        j->set = s;
        pthread_mutex_unlock(&j->lock);
        pgr_jwks_set_release(prev);
    } else if (kept >= 0) {
        snprintf(error, error_size, "out of memory");
    }
    pgr_jwks_set_release(old);
    return s != NULL;
}

/* When to fetch again: max-age, but not sooner than min-refresh; without
 * max-age only on demand; after a failure, min-refresh later. */
static double next_due(const pgr_jwks *j, bool ok, long max_age, double now)
{
    double floor = j->min_refresh > 0 ? j->min_refresh : 1;
    if (!ok)
        return now + floor;
    if (max_age < 0)
        return INFINITY;
    return now + ((double)max_age > floor ? (double)max_age : floor);
}

static void fetch_once(pgr_jwks *j, int timeout)
{
    pgr_jwks_fetched f;
    char error[600];
    bool ok = pgr_jwks_fetch(j->uri, j->cafile, timeout, &j->stop, &f) &&
              publish(j, &f, f.error, sizeof f.error);
    free(f.body);
    if (ok)
        snprintf(error, sizeof error, "Fetched the JWKS from %s", j->uri);
    else
        snprintf(error, sizeof error, "Failed to fetch the JWKS from %s: %s", j->uri, f.error);
    pthread_mutex_lock(&j->lock);
    j->fetching = false;
    j->rounds++;
    j->next = next_due(j, ok, f.max_age, pgr_monotonic_seconds());
    pthread_cond_broadcast(&j->done);
    pthread_mutex_unlock(&j->lock);
    if (!atomic_load(&j->stop))
        report(j, ok, error);
}

static void *fetch_loop(void *arg)
{
    pgr_jwks *j = arg;
    pthread_mutex_lock(&j->lock);
    while (!atomic_load(&j->stop)) {
        double now = pgr_monotonic_seconds();
        if (!j->asked && now < j->next) {
            if (isinf(j->next)) {
                pthread_cond_wait(&j->wake, &j->lock);
            } else {
                struct timespec until = pgr_monotonic_deadline(j->next - now);
                pthread_cond_timedwait(&j->wake, &j->lock, &until);
            }
            continue;
        }
        j->asked = false;
        j->fetching = true;
        j->started = now;
        int timeout = j->timeout;
        pthread_mutex_unlock(&j->lock);
        fetch_once(j, timeout);
        pthread_mutex_lock(&j->lock);
    }
    j->fetching = false;
    pthread_cond_broadcast(&j->done);
    pthread_mutex_unlock(&j->lock);
    return NULL;
}

/* ------------------------------------------------------------ life */

static void destroy(pgr_jwks *j)
{
    pgr_jwks_set_release(j->set);
    pthread_cond_destroy(&j->wake);
    pthread_cond_destroy(&j->done);
    pthread_mutex_destroy(&j->lock);
    free(j->uri);
    free(j->cafile);
    free(j);
}

pgr_jwks *pgr_jwks_new(const pgr_jwks_settings *s)
{
    pgr_jwks *j = calloc(1, sizeof *j);
    if (j == NULL)
        return NULL;
    atomic_init(&j->refs, 1);
    atomic_init(&j->stop, false);
    pthread_mutex_init(&j->lock, NULL);
    pgr_monotonic_cond_init(&j->wake);
    pgr_monotonic_cond_init(&j->done);
    j->uri = copy_text(s->uri);
    j->cafile = copy_text(s->cafile);
    j->report = s->report;
    j->report_arg = s->report_arg;
    j->timeout = s->timeout_seconds;
    j->min_refresh = s->min_refresh_seconds;
    j->started = -INFINITY;
    j->next = -INFINITY; /* due at once: the fetch at start */
    if (j->uri == NULL || (s->cafile != NULL && j->cafile == NULL) ||
        !pgr_background_thread_start(&j->thread, fetch_loop, j)) {
        destroy(j);
        return NULL;
    }
    return j;
}

void pgr_jwks_retain(pgr_jwks *j)
{
    atomic_fetch_add_explicit(&j->refs, 1, memory_order_relaxed);
}

void pgr_jwks_release(pgr_jwks *j)
{
    if (j == NULL || atomic_fetch_sub_explicit(&j->refs, 1, memory_order_acq_rel) != 1)
        return;
    pthread_mutex_lock(&j->lock);
    atomic_store(&j->stop, true);
    pthread_cond_broadcast(&j->wake);
    pthread_mutex_unlock(&j->lock);
    pthread_join(j->thread, NULL);
    destroy(j);
}

static bool same_text(const char *x, const char *y)
{
    return x == y || (x != NULL && y != NULL && strcmp(x, y) == 0);
}

bool pgr_jwks_same_source(const pgr_jwks *j, const char *uri, const char *cafile)
{
    return same_text(j->uri, uri) && same_text(j->cafile, cafile);
}

void pgr_jwks_configure(pgr_jwks *j, int timeout_seconds, int min_refresh_seconds)
{
    pthread_mutex_lock(&j->lock);
    j->timeout = timeout_seconds;
    j->min_refresh = min_refresh_seconds;
    pthread_mutex_unlock(&j->lock);
}

static pgr_jwks_set *current_locked(pgr_jwks *j)
{
    pgr_jwks_set *s = j->set;
    if (s != NULL)
        atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    return s;
}

pgr_jwks_set *pgr_jwks_current(pgr_jwks *j)
{
    pthread_mutex_lock(&j->lock);
    pgr_jwks_set *s = current_locked(j);
    pthread_mutex_unlock(&j->lock);
    return s;
}

pgr_jwks_set *pgr_jwks_refresh_wait(pgr_jwks *j)
{
    pthread_mutex_lock(&j->lock);
    double now = pgr_monotonic_seconds();
    bool wait = j->fetching;
    if (!wait && now - j->started >= j->min_refresh) {
        j->asked = true;
        pthread_cond_signal(&j->wake);
        wait = true;
    }
    /* the fetch in progress or the one asked for: the next to end */
    unsigned long until_round = j->rounds + 1;
    struct timespec deadline = pgr_monotonic_deadline(j->timeout);
    while (wait && j->rounds < until_round && !atomic_load(&j->stop))
        if (pthread_cond_timedwait(&j->done, &j->lock, &deadline) != 0)
            break;
    pgr_jwks_set *s = current_locked(j);
    pthread_mutex_unlock(&j->lock);
    return s;
}
