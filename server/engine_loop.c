#include "engine_loop.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_EVENTS 64
#define MAX_HANDED 64

typedef struct handed_fd {
    int fd;
    struct sockaddr_storage addr;
    socklen_t len;
} handed_fd;

struct engine_loop {
    pthread_t thread;
    engine_http http;
    int epoll_fd;
    int event_fd;
    pthread_mutex_t lock;          /* guards incoming and handed */
    engine_job *incoming;          /* woken jobs */
    handed_fd handed[MAX_HANDED];
    size_t n_handed;
    engine_job *waiting;           /* jobs with a due time (loop-local) */
    double next_due;               /* the earliest of their due times, 0: none */
    bool finished_some;            /* a task finished: the daemon resumes it */
    unsigned long batch;           /* epoll_wait calls so far */
    struct epoll_event *events;    /* the batch being handled ... */
    int n_events;                  /* ... and its size */
    atomic_bool stop;
};

/* epoll data of the two fds that are no job */
static char event_mark, http_mark;

static _Thread_local engine_loop *current;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

engine_loop *engine_loop_current(void)
{
    return current;
}

static void signal_loop(engine_loop *l)
{
    uint64_t one = 1;
    ssize_t w = write(l->event_fd, &one, sizeof one);
    (void)w;
}

/* From any thread; the wake comes with the pool's lock held: only list
 * work and an eventfd write. */
void engine_wake(void *arg)
{
    engine_job *job = arg;
    engine_loop *l = job->loop;
    pthread_mutex_lock(&l->lock);
    bool first = l->incoming == NULL;
    if (!job->incoming) {
        job->incoming = true;
        job->next_incoming = l->incoming;
        l->incoming = job;
    }
    pthread_mutex_unlock(&l->lock);
    if (first)
        signal_loop(l);
}

void engine_add_connection(engine_loop *l, int fd, const struct sockaddr *addr,
                           socklen_t len)
{
    pthread_mutex_lock(&l->lock);
    bool taken = l->n_handed < MAX_HANDED && len <= sizeof(struct sockaddr_storage);
    if (taken) {
        handed_fd *h = &l->handed[l->n_handed++];
        h->fd = fd;
        memcpy(&h->addr, addr, len);
        h->len = len;
    }
    pthread_mutex_unlock(&l->lock);
    if (taken)
        signal_loop(l);
    else
        close(fd);
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
                             .data.ptr = &job->db_mark};
    if (epoll_ctl(l->epoll_fd, EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT)
        epoll_ctl(l->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
    job->armed_fd = fd;
    job->armed_batch = l->batch;
}

/* A task can finish without its armed socket firing (stepped by a wake or
 * a timer): the event must not come after the job is gone. */
static void disarm(engine_loop *l, engine_job *job)
{
    if (job->armed_fd >= 0)
        epoll_ctl(l->epoll_fd, EPOLL_CTL_DEL, job->armed_fd, NULL);
    job->armed_fd = -1;
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

/* While the task runs, the client's socket is in this loop's set (MHD
 * takes a suspended connection out of its own), for the peer's EOF only:
 * a pipelined next request is no event. */
static void watch_client(engine_loop *l, engine_job *job)
{
    if (job->client_fd < 0 || job->client_watched)
        return;
    struct epoll_event ev = {.events = EPOLLRDHUP, .data.ptr = &job->client_mark};
    job->client_watched = epoll_ctl(l->epoll_fd, EPOLL_CTL_ADD, job->client_fd, &ev) == 0;
}

/* Before MHD resumes the connection (and may close it or reuse its fd). */
static void unwatch_client(engine_loop *l, engine_job *job)
{
    if (!job->client_watched)
        return;
    epoll_ctl(l->epoll_fd, EPOLL_CTL_DEL, job->client_fd, NULL);
    job->client_watched = false;
}

/* The moment the task needs a step without an event, 0 for none. */
static double job_due(const engine_job *job)
{
    long ms = pgrest_task_timeout_ms(job->task);
    return ms >= 0 ? now_ms() + (double)ms : 0;
}

/* A finished job's events still in the batch being handled are dropped:
 * done() may free the job (a request MHD gave up on), and its socket's
 * event, collected before, would name freed memory. */
static void forget_events(engine_loop *l, engine_job *job)
{
    for (int i = 0; i < l->n_events; i++)
        if (l->events[i].data.ptr == &job->db_mark || l->events[i].data.ptr == &job->client_mark)
            l->events[i].data.ptr = NULL;
}

/* Acts on the task's wait state; after done() the job is not touched. */
static void settle(engine_loop *l, engine_job *job, int wait)
{
    if (wait == PGREST_TASK_DONE) {
        wait_remove(l, job);
        unwatch_client(l, job);
        disarm(l, job);
        forget_events(l, job);
        job->finished = true;
        incoming_remove(l, job);
        l->finished_some = true;
        job->done(job);
        return;
    }
    job->due = job_due(job);
    if (job->due > 0) {
        wait_add(l, job);
        if (l->next_due == 0 || job->due < l->next_due)
            l->next_due = job->due;
    } else {
        wait_remove(l, job);
    }
    /* a streamed body waiting to be read reads nothing from PostgreSQL;
     * a task that wants its request body again (after PGREST_AGAIN from
     * pgrest_task_write_body) goes back to the HTTP side, which reads the
     * client itself: MHD may close that socket or reuse its number */
    if (wait == PGREST_TASK_WAIT_READ || wait == PGREST_TASK_WAIT_WRITE)
        arm(l, job, pgrest_task_socket(job->task), wait == PGREST_TASK_WAIT_WRITE);
    else if (wait == PGREST_TASK_BODY || wait == PGREST_TASK_WANTS_BODY)
        disarm(l, job);
    if (wait == PGREST_TASK_WANTS_BODY)
        unwatch_client(l, job);
    if (job->progress != NULL && job->progress(job))
        l->finished_some = true;
}

void engine_adopt(engine_job *job)
{
    job->db_mark = 'd';
    job->client_mark = 'c';
    job->armed_fd = -1;
    watch_client(job->loop, job);
    settle(job->loop, job, pgrest_task_wait_state(job->task));
}

static void step(engine_loop *l, engine_job *job)
{
    if (!job->finished)
        settle(l, job, pgrest_task_advance(job->task));
}

/* The client went away: nobody waits for the answer. */
static void cancel_job(engine_loop *l, engine_job *job)
{
    if (job->finished || job->cancelled)
        return;
    job->cancelled = true;
    unwatch_client(l, job);
    settle(l, job, pgrest_task_cancel(job->task));
}

void engine_cancel(engine_job *job)
{
    cancel_job(job->loop, job);
}

/* A job's socket event: the database's or the client's. */
static void job_event(engine_loop *l, char *mark)
{
    if (*mark == 'c')
        cancel_job(l, (engine_job *)(mark - offsetof(engine_job, client_mark)));
    else {
        engine_job *job = (engine_job *)(mark - offsetof(engine_job, db_mark));
        /* One shot: collecting the event disabled the socket, unless the
         * job was armed again after that, while this batch was handled
         * (a cancel, say): then it stays armed, and disarm must remove it
         * or a later event would name a finished job. */
        if (job->armed_batch != l->batch)
            job->armed_fd = -1;
        step(l, job);
    }
}

static int next_timeout(engine_loop *l)
{
    /* a connection resumed while the daemon ran (a task that took its
     * body again at once): the daemon runs again without waiting */
    if (l->finished_some)
        return 0;
    long best = l->http.timeout_ms(l->http.arg);
    if (l->next_due > 0) {
        double left = l->next_due - now_ms();
        long t = left > 0 ? (long)left + 1 : 0;
        if (best < 0 || t < best)
            best = t;
    }
    return best > 1000 || best < 0 ? 1000 : (int)best;
}

static void take_incoming(engine_loop *l)
{
    uint64_t n;
    ssize_t r = read(l->event_fd, &n, sizeof n);
    (void)r;
    handed_fd handed[MAX_HANDED];
    pthread_mutex_lock(&l->lock);
    engine_job *list = l->incoming;
    l->incoming = NULL;
    for (engine_job *j = list; j != NULL; j = j->next_incoming)
        j->incoming = false;
    size_t n_handed = l->n_handed;
    memcpy(handed, l->handed, n_handed * sizeof handed[0]);
    l->n_handed = 0;
    pthread_mutex_unlock(&l->lock);
    for (size_t i = 0; i < n_handed; i++)
        l->http.add_connection(l->http.arg, handed[i].fd,
                               (const struct sockaddr *)&handed[i].addr, handed[i].len);
    while (list != NULL) {
        engine_job *next = list->next_incoming;
        step(l, list);
        list = next;
    }
}

/* Steps the jobs that are due; the others give the next due time.
 * Settling a job only moves that job. */
static void expire_waiting(engine_loop *l)
{
    if (l->next_due == 0)
        return;
    double now = now_ms();
    if (now < l->next_due)
        return;
    l->next_due = 0;
    engine_job *j = l->waiting;
    while (j != NULL) {
        engine_job *next = j->next_waiting;
        if (j->due > now) {
            if (l->next_due == 0 || j->due < l->next_due)
                l->next_due = j->due;
        } else {
            step(l, j);
        }
        j = next;
    }
}

static void *run(void *arg)
{
    engine_loop *l = arg;
    current = l;
    struct epoll_event evs[MAX_EVENTS];
    l->http.run(l->http.arg);
    while (!atomic_load(&l->stop)) {
        int n = epoll_wait(l->epoll_fd, evs, MAX_EVENTS, next_timeout(l));
        l->batch++;
        l->events = evs;
        l->n_events = n > 0 ? n : 0;
        bool run_http = n == 0;   /* a timeout may be the daemon's */
        for (int i = 0; i < n; i++) {
            if (evs[i].data.ptr == &event_mark)
                take_incoming(l);
            else if (evs[i].data.ptr == &http_mark)
                run_http = true;
            else if (evs[i].data.ptr != NULL)
                job_event(l, evs[i].data.ptr);
        }
        l->n_events = 0;
        expire_waiting(l);
        if (run_http || l->finished_some) {
            l->finished_some = false;
            l->http.run(l->http.arg);
        }
    }
    current = NULL;
    return NULL;
}

engine_loop *engine_loop_start(const engine_http *http)
{
    engine_loop *l = calloc(1, sizeof *l);
    if (l == NULL)
        return NULL;
    l->http = *http;
    l->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    l->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    pthread_mutex_init(&l->lock, NULL);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &event_mark};
    struct epoll_event hv = {.events = EPOLLIN, .data.ptr = &http_mark};
    if (l->epoll_fd >= 0 && l->event_fd >= 0 &&
        epoll_ctl(l->epoll_fd, EPOLL_CTL_ADD, l->event_fd, &ev) == 0 &&
        epoll_ctl(l->epoll_fd, EPOLL_CTL_ADD, http->fd, &hv) == 0 &&
        pthread_create(&l->thread, NULL, run, l) == 0)
        return l;
    if (l->epoll_fd >= 0)
        close(l->epoll_fd);
    if (l->event_fd >= 0)
        close(l->event_fd);
    pthread_mutex_destroy(&l->lock);
    free(l);
    return NULL;
}

void engine_loop_stop(engine_loop *l)
{
    if (l == NULL)
        return;
    atomic_store(&l->stop, true);
    signal_loop(l);
    pthread_join(l->thread, NULL);
    close(l->epoll_fd);
    close(l->event_fd);
    pthread_mutex_destroy(&l->lock);
    free(l);
}
