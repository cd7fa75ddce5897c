/* A streamed body (docs/streaming.md): rows of the main statement, fetched
 * in single-row mode, are encoded as they arrive into the bytes the
 * buffered body aggregate (sql/emit.c pgr_body_expression) would have
 * produced for the same rows, and held in a bounded buffer the host reads
 * from. The buffer lives outside the request arena (malloc), freed with it. */
#ifndef PGR_STREAM_H
#define PGR_STREAM_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

#include "plan/plan.h"

#define PGR_STREAM_DEFAULT_THRESHOLD ((size_t)64 * 1024)

typedef enum pgr_stream_format {
    PGR_STREAM_JSON,          /* json_agg(_postgrest_t) */
    PGR_STREAM_JSON_STRIPPED, /* json_strip_nulls(json_agg(_postgrest_t)) */
    PGR_STREAM_GEOJSON,       /* FeatureCollection of ST_AsGeoJSON rows */
    PGR_STREAM_NDJSON,        /* one JSON object per line */
    PGR_STREAM_CSV            /* header from the column names, record_out rows */
} pgr_stream_format;

typedef struct pgr_stream {
    pgr_stream_format format;
    size_t threshold;      /* pending bytes at which the buffer counts as full */
    char *buf;
    size_t start, len, cap;/* pending bytes are buf[start, len) */
    long long rows;
    bool ended;            /* the main statement's rows are all in */
    bool oom;              /* a row did not fit in memory: the stream fails */
    bool discard;          /* cancelled: rows are read and dropped */
} pgr_stream;

/* The format of a plan's streamed body; false when its output cannot be
 * streamed (singular, custom handlers, plans, no body). */
bool pgr_stream_format_of(const pgrest_query_plan *plan, pgr_stream_format *out);

/* A stream for plan's output in the arena (its buffer freed with it);
 * NULL on OOM or an output that cannot be streamed. */
pgr_stream *pgr_stream_new(pgrest_arena *a, const pgrest_query_plan *plan,
                           size_t threshold);

/* Appends row `row` of r (the streaming main statement: one JSON text
 * column, or the relation's columns for CSV). */
void pgr_stream_row(pgr_stream *s, const PGresult *r, int row);
/* No more rows: appends what closes the body. */
void pgr_stream_end(pgr_stream *s);
/* The buffer holds a threshold or more: fetch no more until it is read. */
bool pgr_stream_full(const pgr_stream *s);
/* The pending bytes, without taking them. */
const char *pgr_stream_pending(const pgr_stream *s, size_t *len);
/* Moves up to max pending bytes to out; returns how many. */
size_t pgr_stream_take(pgr_stream *s, char *out, size_t max);

/* Appends one value as PostgreSQL's record_out writes a column (quoted
 * when empty or holding '"', '\\', '(', ')', ',' or white space, with '"'
 * and '\\' doubled); exposed for unit tests. */
void pgr_stream_put_record_field(pgr_stream *s, const char *v, size_t n);

#endif
