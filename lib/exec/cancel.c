#include "exec/cancel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

/* PQcancel needs little stack (its address is resolved already); while
 * a database host is unreachable, deliveries pile up for the TCP connect
 * timeout, so each thread reserves little. */
#define DELIVERY_STACK ((size_t)256 * 1024)

struct pgr_cancel {
    pthread_mutex_t lock;
    PGcancel *pgc;
    bool delivered;
    void (*notify)(void *arg);
    void *arg;
    atomic_int refs;         /* the owner's and the delivering thread's */
};

static void unref(pgr_cancel *c)
{
    if (atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    PQfreeCancel(c->pgc);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static void deliver(pgr_cancel *c)
{
    char errbuf[256];
    /* a failure (server gone) leaves nothing to wait for either */
    (void)PQcancel(c->pgc, errbuf, (int)sizeof errbuf);
    pthread_mutex_lock(&c->lock);
    c->delivered = true;
    if (c->notify != NULL)
        c->notify(c->arg);
    pthread_mutex_unlock(&c->lock);
}

static void *delivery_thread(void *arg)
{
    deliver(arg);
    unref(arg);
    return NULL;
}

pgr_cancel *pgr_cancel_start(PGconn *pg, void (*notify)(void *arg), void *arg)
{
    pgr_cancel *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->pgc = PQgetCancel(pg);
    if (c->pgc == NULL) {
        free(c);
        return NULL;
    }
    pthread_mutex_init(&c->lock, NULL);
    c->notify = notify;
    c->arg = arg;
    atomic_init(&c->refs, 2);
    pthread_attr_t attr;
    pthread_t thread;
    bool started = false;
    if (pthread_attr_init(&attr) == 0) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, DELIVERY_STACK);
        started = pthread_create(&thread, &attr, delivery_thread, c) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!started) {
        c->notify = NULL;   /* the owner learns it from the return */
        deliver(c);
        unref(c);
    }
    return c;
}

bool pgr_cancel_delivered(pgr_cancel *c)
{
    pthread_mutex_lock(&c->lock);
    bool d = c->delivered;
    pthread_mutex_unlock(&c->lock);
    return d;
}

void pgr_cancel_forget(pgr_cancel *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&c->lock);
    c->notify = NULL;
    pthread_mutex_unlock(&c->lock);
    unref(c);
}
