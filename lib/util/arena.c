#include "util/arena.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Under AddressSanitizer the unused part of every block stays poisoned and
 * each allocation is followed by a poisoned redzone, so a read or write past
 * the end of an arena object is reported like one past a malloc'd block
 * (otherwise the fuzzers and build-asan could not see arena overflows). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(ARENA_ASAN)
#define ARENA_ASAN 1
#endif
#ifdef ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define REDZONE 16
static inline void poison(const void *p, size_t n) { ASAN_POISON_MEMORY_REGION(p, n); }
static inline void unpoison(const void *p, size_t n) { ASAN_UNPOISON_MEMORY_REGION(p, n); }
#else
#define REDZONE 0
static inline void poison(const void *p, size_t n) { (void)p; (void)n; }
static inline void unpoison(const void *p, size_t n) { (void)p; (void)n; }
#endif

#define ARENA_DEFAULT_CAP ((size_t)64 * 1024 * 1024)
#define BLOCK_MIN 8192
#define ALIGNMENT 16

typedef struct block {
    struct block *next;
    size_t size;
    size_t used;
    _Alignas(16) unsigned char data[];
} block;

/* A buffer of its own (pgr_arena_resize): malloc'd apart from the blocks
 * so it can be grown and shrunk in place, its size counted in the cap. */
typedef struct own {
    struct own *next;
    struct own *prev;
    size_t size;
    _Alignas(16) unsigned char data[];
} own;

typedef struct cleanup {
    struct cleanup *next;
    pgr_cleanup_fn fn;
    void *data;
} cleanup;

struct pgrest_arena {
    block *head;
    own *owns;
    cleanup *cleanups;
    /* pgr_arena_bind: kept outside the blocks so binding never fails */
    const void *bound_key;
    void *bound;
    pgr_cleanup_fn bound_release;
    size_t cap;
    size_t total;
    size_t failures; /* allocations refused so far */
    bool exhausted;  /* sticky: some allocation was refused */
};

pgrest_arena *pgrest_arena_new(size_t cap_bytes)
{
    pgrest_arena *a = calloc(1, sizeof(*a));
    if (a == NULL)
        return NULL;
    a->cap = cap_bytes ? cap_bytes : ARENA_DEFAULT_CAP;
    return a;
}

void pgrest_arena_free(pgrest_arena *a)
{
    if (a == NULL)
        return;
    for (cleanup *c = a->cleanups; c != NULL; c = c->next)
        c->fn(c->data);
    if (a->bound_release != NULL)
        a->bound_release(a->bound);
    block *b = a->head;
    while (b != NULL) {
        block *next = b->next;
        unpoison(b->data, b->size);
        free(b);
        b = next;
    }
    own *o = a->owns;
    while (o != NULL) {
        own *next = o->next;
        free(o);
        o = next;
    }
    free(a);
}

static size_t align_up(size_t n)
{
    return (n + (ALIGNMENT - 1)) & ~(size_t)(ALIGNMENT - 1);
}

static void refuse(pgrest_arena *a)
{
    a->exhausted = true;
    a->failures++;
}

static block *new_block(pgrest_arena *a, size_t need)
{
    size_t size = need > BLOCK_MIN ? need : BLOCK_MIN;
    if (a->head != NULL && a->head->size * 2 > size && a->head->size < (1u << 20))
        size = a->head->size * 2;
    if (a->total + size > a->cap) {
        if (a->total + need > a->cap) {
            refuse(a);
            return NULL;
        }
        size = need;
    }
    block *b = malloc(sizeof(block) + size);
    if (b == NULL) {
        refuse(a);
        return NULL;
    }
    b->size = size;
    b->used = 0;
    poison(b->data, size);
    b->next = a->head;
    a->head = b;
    a->total += size;
    return b;
}

void *pgr_alloc(pgrest_arena *a, size_t size)
{
    if (size > SIZE_MAX / 2) {
        refuse(a);
        return NULL;
    }
    size_t want = size ? size : 1;
    size = align_up(want) + REDZONE;
    block *b = a->head;
    if (b == NULL || b->size - b->used < size) {
        b = new_block(a, size);
        if (b == NULL)
            return NULL;
    }
    void *p = b->data + b->used;
    b->used += size;
    unpoison(p, want);
    memset(p, 0, want);
    return p;
}

void *pgr_realloc(pgrest_arena *a, void *old, size_t old_size, size_t new_size)
{
    if (new_size <= old_size)
        return old;
    block *b = a->head;
    /* grow in place when old is the most recent allocation */
    if (REDZONE == 0 && old != NULL && b != NULL &&
        (unsigned char *)old + align_up(old_size ? old_size : 1) == b->data + b->used &&
        (unsigned char *)old >= b->data) {
        size_t extra = align_up(new_size) - align_up(old_size ? old_size : 1);
        if (b->size - b->used >= extra) {
            memset(b->data + b->used, 0, extra);
            b->used += extra;
            return old;
        }
    }
    void *p = pgr_alloc(a, new_size);
    if (p != NULL && old != NULL)
        memcpy(p, old, old_size);
    return p;
}

char *pgr_strndup(pgrest_arena *a, const char *s, size_t n)
{
    char *p = pgr_alloc(a, n + 1);
    if (p == NULL)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *pgr_strdup(pgrest_arena *a, const char *s)
{
    return s == NULL ? NULL : pgr_strndup(a, s, strlen(s));
}

void *pgr_arena_resize(pgrest_arena *a, void *p, size_t size)
{
    own *o = p != NULL ? (own *)((unsigned char *)p - offsetof(own, data)) : NULL;
    size_t old = o != NULL ? o->size : 0;
    if (size == 0)
        size = 1;
    /* growing takes room under the cap; shrinking always succeeds */
    if (size > SIZE_MAX / 2 || (size > old && size - old > pgr_arena_room(a))) {
        refuse(a);
        return NULL;
    }
    own *n = realloc(o, sizeof(own) + size);
    if (n == NULL && size <= old)
        return p; /* a shrink realloc refused: keep the larger buffer */
    if (n == NULL) {
        refuse(a);
        return NULL;
    }
    if (o == NULL) {
        n->prev = NULL;
        n->next = a->owns;
        if (a->owns != NULL)
            a->owns->prev = n;
        a->owns = n;
    } else {
        if (n->prev != NULL)
            n->prev->next = n;
        else
            a->owns = n;
        if (n->next != NULL)
            n->next->prev = n;
    }
    n->size = size;
    a->total = a->total - old + size;
    return n->data;
}

size_t pgr_arena_room(const pgrest_arena *a)
{
    return a->total < a->cap ? a->cap - a->total : 0;
}

bool pgr_arena_on_free(pgrest_arena *a, pgr_cleanup_fn fn, void *data)
{
    cleanup *c = PGR_NEW(a, cleanup);
    if (c == NULL)
        return false;
    c->fn = fn;
    c->data = data;
    c->next = a->cleanups;
    a->cleanups = c;
    return true;
}

bool pgr_arena_exhausted(const pgrest_arena *a)
{
    return a->exhausted;
}

size_t pgr_arena_failures(const pgrest_arena *a)
{
    return a->failures;
}

void pgr_arena_reserve(pgrest_arena *a, size_t bytes)
{
    if (a->exhausted && a->total + bytes > a->cap)
        a->cap = a->total + bytes;
}

size_t pgr_arena_used(const pgrest_arena *a)
{
    return a->total;
}

bool pgr_arena_bind(pgrest_arena *a, const void *key, void *data, pgr_cleanup_fn release)
{
    if (a->bound_key != NULL)
        return false;
    a->bound_key = key;
    a->bound = data;
    a->bound_release = release;
    return true;
}

void *pgr_arena_bound(const pgrest_arena *a, const void *key)
{
    return a->bound_key == key ? a->bound : NULL;
}
