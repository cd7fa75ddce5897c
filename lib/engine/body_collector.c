/* Collects a body that comes in chunks (body_collector.h). */
#include "engine/body_collector.h"

#include <stdint.h>
#include <string.h>

#include "util/arena.h"

/* The first buffer: small bodies (a row, a call's arguments) take one
 * allocation; larger ones double from here. */
#define FIRST_CAPACITY 1024

void pgr_body_collector_init(pgr_body_collector *c, pgrest_arena *arena,
                             long long max_body_size)
{
    *c = (pgr_body_collector){.arena = arena};
    /* limit + 1 (the NUL) must fit a size_t: a 32-bit host cannot hold
     * more anyway */
    if (max_body_size <= 0)
        c->limit = 0;
    else if ((unsigned long long)max_body_size >= SIZE_MAX)
        c->limit = SIZE_MAX - 1;
    else
        c->limit = (size_t)max_body_size;
}

/* The capacity for need bytes (body and NUL): doubled, so that n chunks
 * cost O(log n) copies, but never beyond what the limit allows.
 * need <= limit + 1, so neither the doubling nor the result overflows
 * past it. */
static size_t grown_capacity(const pgr_body_collector *c, size_t need)
{
    size_t cap = c->cap > 0 ? c->cap : FIRST_CAPACITY;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    return cap > c->limit + 1 ? c->limit + 1 : cap;
}

pgr_body_append pgr_body_collector_append(pgr_body_collector *c, const void *data, size_t n)
{
    /* len <= limit always holds, so this cannot wrap */
    if (n > c->limit - c->len)
        return PGR_BODY_TOO_LARGE;
    if (n == 0)
        return PGR_BODY_APPENDED;
    size_t need = c->len + n + 1;
    if (need > c->cap) {
        size_t cap = grown_capacity(c, need);
        char *grown = pgr_realloc(c->arena, c->data, c->cap, cap);
        if (grown == NULL)
            return PGR_BODY_NO_MEMORY;
        c->data = grown;
        c->cap = cap;
    }
    memcpy(c->data + c->len, data, n);
    c->len += n;
    c->data[c->len] = '\0';
    return PGR_BODY_APPENDED;
}

const char *pgr_body_collector_text(const pgr_body_collector *c, size_t *len)
{
    *len = c->len;
    return c->data != NULL ? c->data : "";
}
