/* Per-request memory: everything a request allocates lives in one arena and
 * is freed in one call (PostgreSQL's memory contexts). A byte cap turns a
 * pathological request into a clean error instead of unbounded growth. */
#ifndef PGR_ARENA_H
#define PGR_ARENA_H

#include <stdbool.h>
#include <stddef.h>

#include "pgrest/pgrest.h"

typedef void (*pgr_cleanup_fn)(void *data);

/* Returns zeroed memory or NULL when the cap is reached / OOM; the arena
 * then reports pgr_arena_exhausted(). */
void *pgr_alloc(pgrest_arena *a, size_t size);
void *pgr_realloc(pgrest_arena *a, void *old, size_t old_size, size_t new_size);
char *pgr_strdup(pgrest_arena *a, const char *s);
char *pgr_strndup(pgrest_arena *a, const char *s, size_t n);
/* A buffer of its own, for one that grows by large steps (a request body
 * collected in chunks): p NULL gives a new one of size bytes, otherwise p
 * (from this call on a) is grown or shrunk to size bytes and may move --
 * unlike pgr_realloc, the old memory is released at once, so any pointer
 * into it is invalid (PostgreSQL's repalloc of a chunk past
 * allocChunkLimit, which gets a block of its own). Its current size counts
 * against the cap; the new bytes are not zeroed. NULL when growing would
 * pass the cap or malloc fails (the arena then reports
 * pgr_arena_exhausted; p stays valid as it was). Freed with the arena. */
void *pgr_arena_resize(pgrest_arena *a, void *p, size_t size);
/* How many bytes the cap still allows (0 on an exhausted arena past it). */
size_t pgr_arena_room(const pgrest_arena *a);
/* Registers fn(data) to run when the arena is freed (PGresult, json-c). */
bool pgr_arena_on_free(pgrest_arena *a, pgr_cleanup_fn fn, void *data);
/* The request's reference to its context's state (the configuration
 * snapshot it started with): one slot per arena, outside the byte cap, so
 * binding cannot fail for want of memory. release(data) runs when the
 * arena is freed, after the pgr_arena_on_free cleanups. False when the slot
 * is already bound (an arena serves one context). */
bool pgr_arena_bind(pgrest_arena *a, const void *key, void *data, pgr_cleanup_fn release);
/* The data bound under key, or NULL. */
void *pgr_arena_bound(const pgrest_arena *a, const void *key);
/* Sticky: true once any allocation was refused. Every public stage checks
 * it at its boundary (pgr_stage_end) and fails with PGREST_ERR_INTERNAL. */
bool pgr_arena_exhausted(const pgrest_arena *a);
/* How many allocations were refused so far (to tell whether a step that
 * runs on an already exhausted arena lost anything). */
size_t pgr_arena_failures(const pgrest_arena *a);
/* On an exhausted arena, lets `bytes` more be allocated beyond what it
 * holds, for the error response that reports the exhaustion (PostgreSQL's
 * ErrorContext keeps memory for the same reason). The sticky flag stays. */
void pgr_arena_reserve(pgrest_arena *a, size_t bytes);
size_t pgr_arena_used(const pgrest_arena *a);

#define PGR_NEW(a, type) ((type *)pgr_alloc((a), sizeof(type)))
#define PGR_NEW_ARRAY(a, type, n) ((type *)pgr_alloc((a), sizeof(type) * (n)))

#endif
