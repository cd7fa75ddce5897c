/* Collects a body that comes in chunks (body_collector.h). */
#include "engine/body_collector.h"

#include <stdint.h>
#include <string.h>

#include "util/arena.h"

/* The first buffer: small bodies (a row, a call's arguments) take one
 * allocation; it doubles from there. */
#define FIRST_CAPACITY 1024

void pgr_body_collector_init(pgr_body_collector *c, pgrest_arena *arena,
                             long long max_body_size)
{
    c->arena = arena;
    c->data = NULL;
    c->len = 0;
    c->cap = 0;
    c->failed = false;
    /* limit + 1 (the NUL) must fit a size_t: a 32-bit host cannot hold
     * more anyway */
    if (max_body_size <= 0)
        c->limit = 0;
    else if ((unsigned long long)max_body_size >= SIZE_MAX)
        c->limit = SIZE_MAX - 1;
    else
        c->limit = (size_t)max_body_size;
}

/* Room for need bytes (the NUL included; need <= limit + 1): doubling,
 * but never past the limit's buffer nor past what the arena's cap still
 * allows, so the last doubling does not refuse a body that fits. */
static bool reserve(pgr_body_collector *c, size_t need)
{
    if (need <= c->cap)
        return true;
    size_t ncap = c->cap < FIRST_CAPACITY ? FIRST_CAPACITY : c->cap;
    while (ncap < need && ncap <= SIZE_MAX / 2)
        ncap *= 2;
    if (ncap < need)
        ncap = need;
    if (ncap > c->limit + 1)
        ncap = c->limit + 1;
    size_t most = c->cap + pgr_arena_room(c->arena);
    if (ncap > most)
        ncap = most > need ? most : need;
    char *p = pgr_arena_resize(c->arena, c->data, ncap);
    if (p == NULL)
        return false;
    c->data = p;
    c->cap = ncap;
    return true;
}

pgr_body_append pgr_body_collector_append(pgr_body_collector *c, const void *data, size_t n)
{
    if (c->failed)
        return PGR_BODY_NO_MEMORY;
    /* len <= limit always holds, so this cannot wrap */
    if (n > c->limit - c->len)
        return PGR_BODY_TOO_LARGE;
    if (!reserve(c, c->len + n + 1)) {
        c->failed = true;
        return PGR_BODY_NO_MEMORY;
    }
    if (n > 0)
        memcpy(c->data + c->len, data, n);
    c->len += n;
    c->data[c->len] = '\0';
    return PGR_BODY_APPENDED;
}

const char *pgr_body_collector_text(const pgr_body_collector *c, size_t *len)
{
    *len = c->len;
    return c->len > 0 ? c->data : "";
}

const char *pgr_body_collector_end(pgr_body_collector *c, size_t *len)
{
    if (c->data != NULL && !c->failed && c->cap > c->len + 1) {
        char *p = pgr_arena_resize(c->arena, c->data, c->len + 1);
        if (p != NULL) {
            c->data = p;
            c->cap = c->len + 1;
        }
    }
    return pgr_body_collector_text(c, len);
}
