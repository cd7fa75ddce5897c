/* A request body that comes in chunks (pgrest_task_write_body), collected
 * until it ends, bounded by server-max-body-size and by the request
 * arena's cap. Unless the engine streams it into PostgreSQL (a bulk
 * import, engine/import.h), the whole body is then handed to the stages
 * as pgrest_request_set_body would.
 *
 * The buffer is one of the arena's own (pgr_arena_resize): it doubles in
 * place, so a body of N bytes costs N bytes of the cap once it ended, not
 * the sum of every buffer it outgrew (a pgr_sb in the arena left them all
 * behind: 1 + 2 + 4 + ... KiB, so a 16 MiB body took 64 MiB). */
#ifndef PGR_BODY_COLLECTOR_H
#define PGR_BODY_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "pgrest/pgrest.h"

typedef struct pgr_body_collector {
    pgrest_arena *arena;
    char *data;   /* the body so far (binary-safe, NUL-terminated), or NULL */
    size_t len;   /* its length */
    size_t cap;   /* the buffer's size (len + 1 at least, once allocated) */
    size_t limit; /* the most bytes the body may have */
    bool failed;  /* sticky: the arena refused to grow the buffer */
} pgr_body_collector;

typedef enum pgr_body_append {
    PGR_BODY_APPENDED,
    PGR_BODY_TOO_LARGE, /* the chunk would take the body past the limit */
    PGR_BODY_NO_MEMORY  /* the arena refused to grow the buffer */
} pgr_body_append;

/* An empty body of at most max_body_size bytes (server-max-body-size,
 * at least 1). Allocates nothing yet. */
void pgr_body_collector_init(pgr_body_collector *c, pgrest_arena *arena,
                             long long max_body_size);

/* Appends the n bytes at data (binary-safe; NULL only with n == 0). A
 * chunk past the limit is refused and leaves the body as it was; once the
 * arena has refused to grow it, every append answers PGR_BODY_NO_MEMORY.
 * The buffer may move: a pointer pgr_body_collector_text gave before is
 * invalid after an append. */
pgr_body_append pgr_body_collector_append(pgr_body_collector *c, const void *data, size_t n);

/* The body so far, NUL-terminated like pgrest_request_set_body's copy
 * (the empty body is ""), its length in *len; valid until the next
 * append, freed with the arena. */
const char *pgr_body_collector_text(const pgr_body_collector *c, size_t *len);

/* The body has ended: its buffer shrinks to the body's size (the room a
 * doubling left goes back to the arena) and the body is returned as by
 * pgr_body_collector_text, for the rest of the request. */
const char *pgr_body_collector_end(pgr_body_collector *c, size_t *len);

#endif
