/* pgrest_handle: the request engine (lib/task.c) driven to its end by a
 * blocking loop, the way curl_easy_perform sits on the multi interface. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "context.h"
#include "util/error.h"

/* A blocking host's wait for a pooled connection: the engine's wake
 * call (made under the pool's lock) signals it. */
typedef struct handover {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool woken;
} handover;

static void wake_handover(void *arg)
{
    handover *h = arg;
    pthread_mutex_lock(&h->lock);
    h->woken = true;
    pthread_cond_signal(&h->cond);
    pthread_mutex_unlock(&h->lock);
}

static void wait_handover(handover *h, long timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&h->lock);
    while (!h->woken && pthread_cond_timedwait(&h->cond, &h->lock, &until) != ETIMEDOUT)
        ;
    h->woken = false;
    pthread_mutex_unlock(&h->lock);
}

static void wait_socket(const pgrest_task *t, int wait)
{
    struct pollfd pfd = {.fd = pgrest_task_socket(t), .events = POLLIN};
    if (wait == PGREST_TASK_WAIT_WRITE)
        pfd.events |= POLLOUT;
    /* a connect_timeout or a cancel's grace may end the wait */
    while (poll(&pfd, 1, (int)pgrest_task_timeout_ms(t)) < 0 && errno == EINTR)
        ;
}

pgrest_response *pgrest_handle(pgrest_ctx *ctx, pgrest_arena *arena,
                               const pgrest_request *req)
{
    if (ctx == NULL || arena == NULL || req == NULL)
        return NULL;
    handover h = {.woken = false};
    pthread_mutex_init(&h.lock, NULL);
    pthread_cond_init(&h.cond, NULL);
    pgrest_task *t = pgrest_task_start(ctx, arena, req, wake_handover, &h);
    int wait = pgrest_task_wait_state(t);
    while (wait != PGREST_TASK_DONE) {
        if (wait == PGREST_TASK_WAIT_CONN)
            wait_handover(&h, pgrest_task_timeout_ms(t));
        else
            wait_socket(t, wait);
        wait = pgrest_task_advance(t);
    }
    /* no wake can come any more: the task left the queue */
    pthread_cond_destroy(&h.cond);
    pthread_mutex_destroy(&h.lock);
    return pgrest_task_response(t);
}
