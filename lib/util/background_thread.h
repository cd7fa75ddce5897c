/* Threads the library starts for itself (the pool's reaper, the replicas'
 * health check): they sleep on a CLOCK_MONOTONIC condition variable, so a
 * wall-clock change cannot stretch their sleep, and they take none of the
 * host's signals. */
#ifndef PGR_UTIL_BACKGROUND_THREAD_H
#define PGR_UTIL_BACKGROUND_THREAD_H

#include <pthread.h>
#include <stdbool.h>

/* A condition variable whose timed waits count CLOCK_MONOTONIC time. */
void pgr_monotonic_cond_init(pthread_cond_t *cond);

/* Starts fn(arg) with every signal blocked; false if it did not start. */
bool pgr_background_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg);

#endif
