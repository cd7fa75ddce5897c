/* A request body that comes in chunks (pgrest_task_write_body), collected
 * in the request's arena until it ends, bounded by server-max-body-size.
 * Until the engine streams bodies into PostgreSQL (issue 40), the whole
 * body is then handed to the stages as pgrest_request_set_body would. */
#ifndef PGR_BODY_COLLECTOR_H
#define PGR_BODY_COLLECTOR_H

#include <stddef.h>

#include "pgrest/pgrest.h"
#include "util/strbuf.h"

typedef struct pgr_body_collector {
    pgr_sb sb;    /* the body so far (binary-safe, NUL-terminated) */
    size_t limit; /* the most bytes the body may have */
} pgr_body_collector;

typedef enum pgr_body_append {
    PGR_BODY_APPENDED,
    PGR_BODY_TOO_LARGE, /* the chunk would take the body past the limit */
    PGR_BODY_NO_MEMORY  /* the arena refused to grow the buffer */
} pgr_body_append;

/* An empty body of at most max_body_size bytes (server-max-body-size,
 * at least 1). */
void pgr_body_collector_init(pgr_body_collector *c, pgrest_arena *arena,
                             long long max_body_size);

/* Appends the n bytes at data (binary-safe; NULL only with n == 0). A
 * chunk past the limit is refused and leaves the body as it was; once the
 * arena has refused to grow it, every append answers PGR_BODY_NO_MEMORY. */
pgr_body_append pgr_body_collector_append(pgr_body_collector *c, const void *data, size_t n);

/* The body so far, NUL-terminated like pgrest_request_set_body's copy
 * (the empty body is ""), its length in *len; lives in the arena. */
const char *pgr_body_collector_text(const pgr_body_collector *c, size_t *len);

#endif
