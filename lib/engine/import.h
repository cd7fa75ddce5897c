/* A streamed body (docs/bulk-import.md, pgrest_request_allow_streamed_body):
 * the rows of a large POST go to PostgreSQL while the body still comes.
 * The task (engine/task.c) decides at the threshold, plans the write on
 * the first row, opens the COPY on a pooled connection and feeds it; this
 * is the part that turns the host's chunks into the COPY's data. */
#ifndef PGR_IMPORT_H
#define PGR_IMPORT_H

#include <stdbool.h>

#include "exec/copy_in.h"
#include "parse/import_rows.h"
#include "parse/request.h"
#include "sql/emit_import.h"
#include "util/strbuf.h"

typedef struct pgr_import {
    pgr_import_rows *rows;  /* the body's reader */
    pgr_import_format format;
    int max_depth;
    bool match_keys;
    pgr_sb lines;           /* rows read, not yet handed to the COPY */
    size_t sent;            /* ... of which libpq has these bytes */
    pgr_copy_in copy;
    pgr_import_sql sql;     /* before the COPY, the COPY, after it */
    size_t bytes;           /* of the body so far, once it streams */
    bool reading;           /* the body reached the threshold: rows are read */
    bool started;           /* the write is planned: the body streams */
    bool copied;            /* the COPY is complete: the write runs */
    bool backlog;           /* libpq holds data the socket did not take */
    bool body_ended;        /* pgrest_task_end_body came */
    bool host_waits;        /* write_body answered PGREST_AGAIN: the host
                             * watches the wait state until WANTS_BODY */
} pgr_import;

/* A reader for req's body when the request may stream (it allows it,
 * POSTs, and its Content-Type is JSON, NDJSON or CSV); NULL otherwise or
 * when the arena is exhausted. */
pgr_import *pgr_import_new(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_request *req);

/* Typed rows (docs/bulk-import.md "Typed rows"): when the body is CSV and
 * its header names the plan's written columns, each once, or NDJSON or a
 * JSON array with matched keys whose first row's keys are the written
 * columns, none of an array or composite type or with a json
 * representation, the plan reads them from a table of those columns
 * (plan->streamed_columns) and the reader starts anew on the body so far
 * (text[0..n)), writing typed lines; otherwise the rows stay JSON
 * objects. false: the body cannot stream after all (imp->lines lost):
 * that reading failed (a field with a NUL byte, an escape PostgreSQL
 * refuses, which the whole body's answer tells) or the arena is
 * exhausted. */
bool pgr_import_type_rows(pgr_import *imp, pgrest_arena *a, pgrest_query_plan *plan,
                          const char *text, size_t n);

/* The details of PostgreSQL's error from the COPY (a value its column's
 * type refused, say), with the row it names in the body's own terms
 * ("line N, column c: details", "index N: ..."), by the error's CONTEXT;
 * details unchanged when it names no row. */
const char *pgr_import_name_row(const pgr_import *imp, pgrest_arena *a, const PGresult *r,
                                const char *details);

/* The details of PostgreSQL's error from the write after the COPY, with
 * the row (from 1) it failed on named as pgr_import_name_row does ("line
 * N: details"); details unchanged for row 0 (not known). */
const char *pgr_import_name_failed_row(const pgr_import *imp, pgrest_arena *a, size_t row,
                                       const char *details);

/* Reads the next bytes into rows (imp->lines). PGREST_OK, or
 * PGR_IMPORT_NOT_ROWS, or the reader's error (err filled). */
int pgr_import_read(pgr_import *imp, const char *data, size_t len, pgrest_error *err);
/* The body ended: its last row into imp->lines. */
int pgr_import_read_end(pgr_import *imp, pgrest_error *err);

/* Hands imp->lines to the COPY, a slice at a time, emptying them once
 * all went: PGR_COPY_READY when all left, WAIT_WRITE when some wait
 * (imp->backlog). */
pgr_copy_step pgr_import_put(pgr_import *imp);

#endif
