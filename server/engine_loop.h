/* Event loops, one per core: each runs one libmicrohttpd daemon in
 * external-polling mode and the PostgreSQL sockets of the requests that
 * daemon started (pgrest_task_*) in one epoll set, so a request goes from
 * HTTP bytes to the database and back on one thread without a thread ever
 * blocking on PostgreSQL. Only a pool hand-over between loops (a
 * connection released on one loop, wanted on another) crosses threads,
 * through the loop's eventfd. */
#ifndef PGRS_ENGINE_LOOP_H
#define PGRS_ENGINE_LOOP_H

#include <stdbool.h>
#include <sys/socket.h>

#include "pgrest/pgrest.h"

typedef struct engine_loop engine_loop;

/* A started task handed to the loop; done(job) is called on the loop's
 * thread once the task is done (the job is not touched afterwards). With
 * a client_fd, the loop cancels the task (pgrest_task_cancel,
 * job->cancelled set before done) when that socket reports the peer gone
 * -- EOF, as nginx takes it: a client that half-closes after its request
 * counts as gone. */
typedef struct engine_job {
    pgrest_task *task;
    void (*done)(struct engine_job *job);
    /* after every step that leaves the task running (a streamed body's
     * rows came in, or its head is ready: PGREST_TASK_BODY; it wants its
     * request body again: PGREST_TASK_WANTS_BODY); true when it
     * resumed an MHD connection, so the daemon must run. May be NULL. */
    bool (*progress)(struct engine_job *job);
    int client_fd;         /* watched while the task runs; -1: not watched */
    bool cancelled;
    /* the loop's bookkeeping */
    struct engine_job *next_incoming;
    struct engine_job *prev_waiting, *next_waiting;  /* jobs with a due time */
    engine_loop *loop;
    double due;            /* when the job needs a step without an event */
    bool incoming;
    bool waiting;
    bool finished;
    bool client_watched;
    int armed_fd;          /* the task's socket while armed, else -1 */
    unsigned long armed_batch;  /* the loop's batch during which it was armed */
    char db_mark;          /* epoll data of the task's socket: 'd' */
    char client_mark;      /* ... of client_fd: 'c' */
} engine_job;

/* What the loop runs besides the tasks: the HTTP daemon. */
typedef struct engine_http {
    int fd;                                   /* readable: run it */
    void (*run)(void *arg);                   /* also called after tasks finish */
    long (*timeout_ms)(void *arg);            /* -1: none */
    void (*add_connection)(void *arg, int fd, const struct sockaddr *addr,
                           socklen_t len);
    void *arg;
} engine_http;

/* Starts a loop thread for http. NULL on failure. */
engine_loop *engine_loop_start(const engine_http *http);
/* Stops and joins the loop (tasks still in flight are abandoned). */
void engine_loop_stop(engine_loop *l);
/* The loop whose thread is the caller's, or NULL. */
engine_loop *engine_loop_current(void);
/* The wake callback for pgrest_task_start: arg is the job (any thread). */
void engine_wake(void *job);
/* On the loop's thread: takes over a task started there. Also a task
 * whose pgrest_task_write_body said PGREST_AGAIN: the loop advances it on
 * its socket, and once it wants its body again (PGREST_TASK_WANTS_BODY)
 * progress(job) is called with the job no longer watched (no socket, no
 * client_fd): the HTTP side holds it again, until it adopts it anew. */
void engine_adopt(engine_job *job);
/* On the loop's thread: the client of a running job is gone (as its EOF
 * would tell): the task is cancelled, done() comes once it has drained. */
void engine_cancel(engine_job *job);
/* From any thread: a connection for the loop's HTTP daemon (handed over
 * by a reuseport predecessor). */
void engine_add_connection(engine_loop *l, int fd, const struct sockaddr *addr,
                           socklen_t len);

#endif
