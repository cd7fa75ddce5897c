/* The one clock the library measures with: CLOCK_MONOTONIC, so a change of
 * the wall clock neither ages a pooled connection nor stretches a wait. */
#ifndef PGR_UTIL_MONOTONIC_H
#define PGR_UTIL_MONOTONIC_H

#include <pthread.h>
#include <time.h>

/* Seconds since an arbitrary start, with nanosecond resolution. */
double pgr_monotonic_seconds(void);

/* The absolute time, seconds from now, for a timed wait on a condition
 * variable made by pgr_monotonic_cond_init. */
struct timespec pgr_monotonic_deadline(double seconds);

/* A condition variable whose timed waits count CLOCK_MONOTONIC time. */
void pgr_monotonic_cond_init(pthread_cond_t *cond);

#endif
