/* application/x-ndjson request bodies (pgrest's own; PostgREST refuses the
 * type): one JSON object per line, taken as the JSON array of those
 * objects. See docs/bulk-import.md. */
#ifndef PGR_NDJSON_BODY_H
#define PGR_NDJSON_BODY_H

#include <stdbool.h>
#include <stddef.h>

#include "pgrest/pgrest.h"
#include "util/arena.h"

typedef struct pgr_ndjson_array {
    const char *json;     /* "[obj,obj,...]": the lines joined, "[]" for none */
    const char **keys;    /* the first object's keys (match_keys only) */
    size_t n_keys;
    size_t n_rows;
} pgr_ndjson_array;

/* Reads body[0..len): lines end with LF or CRLF, the last one may lack
 * it, lines of nothing but spaces and tabs are skipped. Every other line
 * must be one JSON object nesting at most max_depth levels; with
 * match_keys, all of them with the first object's key set. Errors are
 * 400 PGRST102 with the message of the JSON-array body ("Empty or invalid
 * json", "All object keys must match") and details naming the line,
 * counted from 1 over every line of the body ("line 3: invalid JSON");
 * the first bad line is reported. out's strings live in the arena. */
int pgr_ndjson_read(pgrest_arena *a, const char *body, size_t len, int max_depth,
                    bool match_keys, pgr_ndjson_array *out, pgrest_error *err);

/* The pieces of pgr_ndjson_read the streaming import (import_rows.c)
 * shares. Whether a line (without its line end) is blank: nothing but
 * spaces and tabs. */
bool pgr_ndjson_blank(const char *line, size_t n);

/* Checks one non-blank line, number `number` from 1: a JSON object, with
 * the first object's keys when those are matched (out->n_rows == 0: the
 * line records them in out->keys). The caller counts out->n_rows. Errors
 * as pgr_ndjson_read's. */
int pgr_ndjson_check_line(pgrest_arena *a, size_t number, const char *line, size_t n,
                          int max_depth, bool match_keys, pgr_ndjson_array *out,
                          pgrest_error *err);

#endif
