/* Threads the library starts for itself (the pool's reaper, the replicas'
 * health check): they sleep on a condition variable of util/monotonic.h, so
 * a wall-clock change cannot stretch their sleep, and they take none of the
 * host's signals. */
#ifndef PGR_UTIL_BACKGROUND_THREAD_H
#define PGR_UTIL_BACKGROUND_THREAD_H

#include <pthread.h>
#include <stdbool.h>

/* Starts fn(arg) with every signal blocked; false if it did not start. */
bool pgr_background_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg);

#endif
