/* The response record: what a request answers (status, headers, body)
 * and the calls that fill it. Every part of the response code builds on
 * it (exec/response*.c, exec/error_response.c). */
#ifndef PGR_RESPONSE_RECORD_H
#define PGR_RESPONSE_RECORD_H

#include <stdbool.h>
#include <stddef.h>

#include "pgrest/pgrest.h"
#include "util/arena.h"

struct pgrest_response {
    int status;
    pgrest_header *headers;
    size_t n_headers;
    size_t cap_headers;
    const char *body;
    size_t body_len;
    const char *role;   /* authenticated role, for access logs; NULL if unknown */
    const char *reason; /* the status line's own phrase; NULL: the status's usual one */
    bool streamed;      /* the body comes from pgrest_task_read_body */
};

pgrest_response *pgr_response_new(pgrest_arena *a, int status);
void pgr_response_add_header(pgrest_arena *a, pgrest_response *r,
                             const char *name, const char *value);
/* Replaces (or adds) a header by case-insensitive name. */
void pgr_response_set_header(pgrest_arena *a, pgrest_response *r,
                             const char *name, const char *value);
const char *pgr_response_get_header(const pgrest_response *r, const char *name);
/* The status line's own phrase (pgrest_response_reason), control
 * characters replaced by spaces: Warp writes it as it is, and a CR LF in
 * it would end the status line. */
void pgr_response_set_reason(pgrest_arena *a, pgrest_response *r, const char *text);
/* Drops every header of that case-insensitive name. */
void pgr_response_remove_header(pgrest_response *r, const char *name);

/* Content-Range "lower-upper/total", "*" for an unknown total or an empty
 * range (PostgREST RangeQuery contentRangeH). */
const char *pgr_content_range(pgrest_arena *a, long long lower, long long upper,
                              bool has_total, long long total);

#endif
