#include "engine_loop.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define MAX_EVENTS 64

typedef struct engine_loop {
    pthread_t thread;
    int epoll_fd;
    int event_fd;
    pthread_mutex_t lock;          /* guards incoming */
    engine_job *incoming;          /* new or woken jobs, for the loop */
    engine_job *waiting;           /* queued for a connection (loop-local) */
    atomic_bool stop;
} engine_loop;

struct engine_loops {
    engine_loop *loops;
    unsigned n;
    atomic_uint next;
};

/* From any thread (the wake call comes with the pool's lock held: only
 * list work and an eventfd write). */
static void push_incoming(engine_loop *l, engine_job *job)
{
    pthread_mutex_lock(&l->lock);
    bool first = l->incoming == NULL;
    if (!job->incoming) {
        job->incoming = true;
        job->next_incoming = l->incoming;
        l->incoming = job;
    }
    pthread_mutex_unlock(&l->lock);
    if (first) {
        uint64_t one = 1;
        ssize_t w = write(l->event_fd, &one, sizeof one);
        (void)w;
    }
}

/* A hand-over before engine_submit is found by the submitted job's first
 * step; stepping it earlier could finish it before the HTTP side has
 * suspended its connection. */
void engine_wake(void *arg)
{
    engine_job *job = arg;
    if (atomic_load(&job->submitted))
        push_incoming(job->loop, job);
}

void engine_submit(engine_job *job)
{
    atomic_store(&job->submitted, true);
    push_incoming(job->loop, job);
}

static void wait_add(engine_loop *l, engine_job *job)
{
    if (job->waiting)
        return;
    job->waiting = true;
    job->prev_waiting = NULL;
    job->next_waiting = l->waiting;
    if (l->waiting != NULL)
        l->waiting->prev_waiting = job;
    l->waiting = job;
}

static void wait_remove(engine_loop *l, engine_job *job)
{
    if (!job->waiting)
        return;
    if (job->prev_waiting != NULL)
        job->prev_waiting->next_waiting = job->next_waiting;
    else
        l->waiting = job->next_waiting;
    if (job->next_waiting != NULL)
        job->next_waiting->prev_waiting = job->prev_waiting;
    job->waiting = false;
}

/* One shot per arming: after an event the socket is disarmed, so once the
 * task has given its connection back, this loop never sees it again (the
 * next owner may be another loop). */
static void arm(engine_loop *l, engine_job *job, int fd, bool write)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT | (write ? EPOLLOUT : 0),
                             .data.ptr = job};
    if (epoll_ctl(l->epoll_fd, EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT)
        epoll_ctl(l->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
}

/* A hand-over can wake a job whose step already took the connection: it
 * is then back in the incoming list, and must leave it before done()
 * (after which the HTTP side frees it). No wake comes after DONE. */
static void incoming_remove(engine_loop *l, engine_job *job)
{
    pthread_mutex_lock(&l->lock);
    if (job->incoming) {
        engine_job **at = &l->incoming;
        while (*at != NULL && *at != job)
            at = &(*at)->next_incoming;
        if (*at == job)
            *at = job->next_incoming;
        job->incoming = false;
    }
    pthread_mutex_unlock(&l->lock);
}

/* Acts on the task's wait state; after done() the job is not touched. */
static void settle(engine_loop *l, engine_job *job, int wait)
{
    if (wait != PGREST_TASK_WAIT_CONN)
        wait_remove(l, job);
    switch (wait) {
    case PGREST_TASK_DONE:
        job->finished = true;
        incoming_remove(l, job);
        job->done(job);
        return;
    case PGREST_TASK_WAIT_CONN:
        wait_add(l, job);
        return;
    default:
        arm(l, job, pgrest_task_socket(job->task), wait == PGREST_TASK_WAIT_WRITE);
        return;
    }
}

static void step(engine_loop *l, engine_job *job)
{
    if (!job->finished)
        settle(l, job, pgrest_task_advance(job->task));
}

static int next_timeout(const engine_loop *l)
{
    long best = -1;
    for (const engine_job *j = l->waiting; j != NULL; j = j->next_waiting) {
        long t = pgrest_task_timeout_ms(j->task);
        if (t >= 0 && (best < 0 || t < best))
            best = t;
    }
    return best > 1000 || best < 0 ? 1000 : (int)best;
}

static void take_incoming(engine_loop *l)
{
    uint64_t n;
    ssize_t r = read(l->event_fd, &n, sizeof n);
    (void)r;
    pthread_mutex_lock(&l->lock);
    engine_job *list = l->incoming;
    l->incoming = NULL;
    for (engine_job *j = list; j != NULL; j = j->next_incoming)
        j->incoming = false;
    pthread_mutex_unlock(&l->lock);
    while (list != NULL) {
        engine_job *next = list->next_incoming;
        step(l, list);
        list = next;
    }
}

static void expire_waiting(engine_loop *l)
{
    engine_job *j = l->waiting;
    while (j != NULL) {
        engine_job *next = j->next_waiting;
        if (pgrest_task_timeout_ms(j->task) == 0)
            step(l, j);
        j = next;
    }
}

static void *run(void *arg)
{
    engine_loop *l = arg;
    struct epoll_event evs[MAX_EVENTS];
    while (!atomic_load(&l->stop)) {
        int n = epoll_wait(l->epoll_fd, evs, MAX_EVENTS, next_timeout(l));
        for (int i = 0; i < n; i++) {
            if (evs[i].data.ptr == NULL)
                take_incoming(l);
            else
                step(l, evs[i].data.ptr);
        }
        if (l->waiting != NULL)
            expire_waiting(l);
    }
    return NULL;
}

static bool loop_init(engine_loop *l)
{
    l->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    l->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    pthread_mutex_init(&l->lock, NULL);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    return l->epoll_fd >= 0 && l->event_fd >= 0 &&
           epoll_ctl(l->epoll_fd, EPOLL_CTL_ADD, l->event_fd, &ev) == 0 &&
           pthread_create(&l->thread, NULL, run, l) == 0;
}

engine_loops *engine_loops_start(unsigned n)
{
    engine_loops *ls = calloc(1, sizeof *ls);
    if (ls == NULL)
        return NULL;
    ls->loops = calloc(n, sizeof *ls->loops);
    if (ls->loops == NULL) {
        free(ls);
        return NULL;
    }
    for (; ls->n < n; ls->n++)
        if (!loop_init(&ls->loops[ls->n]))
            break;
    if (ls->n == 0) {
        free(ls->loops);
        free(ls);
        return NULL;
    }
    return ls;
}

engine_loop *engine_pick(engine_loops *ls)
{
    return &ls->loops[atomic_fetch_add(&ls->next, 1) % ls->n];
}

void engine_loops_stop(engine_loops *ls)
{
    if (ls == NULL)
        return;
    for (unsigned i = 0; i < ls->n; i++) {
        engine_loop *l = &ls->loops[i];
        atomic_store(&l->stop, true);
        uint64_t one = 1;
        ssize_t w = write(l->event_fd, &one, sizeof one);
        (void)w;
        pthread_join(l->thread, NULL);
        close(l->epoll_fd);
        close(l->event_fd);
        pthread_mutex_destroy(&l->lock);
    }
    free(ls->loops);
    free(ls);
}
