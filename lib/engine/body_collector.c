/* Collects a body that comes in chunks (body_collector.h). */
#include "engine/body_collector.h"

#include <stdint.h>

/* The first buffer: small bodies (a row, a call's arguments) take one
 * allocation; the string builder doubles it from there. */
#define FIRST_CAPACITY 1024

void pgr_body_collector_init(pgr_body_collector *c, pgrest_arena *arena,
                             long long max_body_size)
{
    /* limit + 1 (the NUL) must fit a size_t: a 32-bit host cannot hold
     * more anyway */
    if (max_body_size <= 0)
        c->limit = 0;
    else if ((unsigned long long)max_body_size >= SIZE_MAX)
        c->limit = SIZE_MAX - 1;
    else
        c->limit = (size_t)max_body_size;
    pgr_sb_init(&c->sb, arena, c->limit < FIRST_CAPACITY ? c->limit + 1 : FIRST_CAPACITY);
}

pgr_body_append pgr_body_collector_append(pgr_body_collector *c, const void *data, size_t n)
{
    /* len <= limit always holds, so this cannot wrap */
    if (n > c->limit - c->sb.len)
        return PGR_BODY_TOO_LARGE;
    if (n > 0)
        pgr_sb_putn(&c->sb, data, n);
    return c->sb.failed ? PGR_BODY_NO_MEMORY : PGR_BODY_APPENDED;
}

const char *pgr_body_collector_text(const pgr_body_collector *c, size_t *len)
{
    *len = c->sb.len;
    return c->sb.len > 0 ? c->sb.data : "";
}
