/* Event loops that drive the library's request engine (pgrest_task_*) for
 * the HTTP server: each watches the PostgreSQL sockets of its tasks with
 * epoll, takes tasks woken by a pool hand-over through an eventfd, and
 * tells the HTTP side when a task is done. No thread here ever blocks on
 * PostgreSQL; the HTTP threads only start tasks and send responses. */
#ifndef PGRS_ENGINE_LOOP_H
#define PGRS_ENGINE_LOOP_H

#include <stdatomic.h>
#include <stdbool.h>

#include "pgrest/pgrest.h"

typedef struct engine_loops engine_loops;

/* What the HTTP side hands over: a started task and the call made (from a
 * loop thread) once it is done. The job must stay valid until then. */
typedef struct engine_job {
    pgrest_task *task;
    void (*done)(struct engine_job *job);
    /* the loop's bookkeeping */
    struct engine_job *next_incoming;
    struct engine_job *prev_waiting, *next_waiting;
    struct engine_loop *loop;
    bool incoming;
    bool waiting;
    bool finished;
    atomic_bool submitted;   /* wakes before engine_submit are dropped */
} engine_job;

engine_loops *engine_loops_start(unsigned n);
/* Stops and joins the loops (tasks still in flight are abandoned). */
void engine_loops_stop(engine_loops *ls);
/* The loop a new job goes to (round robin); set job->loop to it before
 * pgrest_task_start (whose wake argument is the job), then engine_submit. */
struct engine_loop *engine_pick(engine_loops *ls);
/* The wake callback for pgrest_task_start: arg is the job. */
void engine_wake(void *job);
/* Hands a started task to its loop (job->loop set by the caller). */
void engine_submit(engine_job *job);

#endif
