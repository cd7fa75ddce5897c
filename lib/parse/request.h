/* The raw request a host builds from its HTTP layer (pgrest_request_new,
 * pgrest_request_add_header, ...) and the parser's limits. Pure data in
 * the request's arena. */
#ifndef PGR_REQUEST_H
#define PGR_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "pgrest/pgrest.h"

typedef struct pgr_kv {
    const char *name;
    const char *value;
    struct pgr_kv *next;
    /* byte lengths of name and value for decoded query parameters, whose
     * %00 leaves NUL bytes inside (0 elsewhere: use strlen) */
    size_t name_len;
    size_t value_len;
} pgr_kv;

struct pgrest_request {
    pgrest_arena *arena;
    const char *method;
    const char *path;  /* percent-encoded, as received */
    const char *query; /* raw query string, no '?', never NULL */
    pgr_kv *headers;   /* in order received */
    pgr_kv *headers_tail;
    /* always NUL-terminated at body_len (set_body's copy, the collected
     * body, a streamed body's first row, ""), and in memory that lives as
     * long as the request: the parse hands it on as the payload as is */
    const char *body;
    size_t body_len;
    const pgrest_auth *auth; /* identity set by the host, or NULL */
    size_t stream_threshold; /* pgrest_request_allow_streaming; 0: buffered */
    bool body_follows;       /* pgrest_request_body_follows: a task collects it */
    size_t import_threshold; /* pgrest_request_allow_streamed_body; 0: never */
};

/* Bounds on what one request may ask the parser to build, so a hostile
 * request gets a 4xx instead of deep recursion or quadratic work. Values
 * come from the context's configuration (pgr_config.limits). */
typedef struct pgr_parse_limits {
    long long max_body_size; /* server-max-body-size, bytes (413) */
    int max_depth;           /* request-max-depth: select embeds, logic trees */
    int max_filters;         /* request-max-filters: filters + logic leaves */
    int max_json_depth;      /* request-max-json-depth: JSON body nesting */
    int max_batch_items;     /* server-max-batch-items: items of one batch (docs/batch.md) */
    long long max_streamed_body_size; /* server-max-streamed-body-size, 0: unbounded
                                       * (docs/bulk-import.md) */
} pgr_parse_limits;

#define PGR_DEFAULT_MAX_BODY_SIZE (10LL * 1024 * 1024)
#define PGR_DEFAULT_MAX_DEPTH 32
#define PGR_DEFAULT_MAX_FILTERS 256
#define PGR_DEFAULT_MAX_JSON_DEPTH 128
#define PGR_DEFAULT_MAX_BATCH_ITEMS 100

/* The defaults above, for callers without a context (tests, tools). */
const pgr_parse_limits *pgr_parse_limits_default(void);

/* Case-insensitive header lookup: first value or NULL. */
const char *pgr_request_header(const pgrest_request *req, const char *name);

#endif
