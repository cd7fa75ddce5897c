/* text/csv request bodies (PostgREST Payload.hs csvToJson over cassava's
 * decodeByName): the record reader and the per-record JSON writer, shared
 * by the buffered body reader (payload.c) and the streaming row converter
 * (import_rows.c), so both read and write a record the same way. */
#ifndef PGR_CSV_BODY_H
#define PGR_CSV_BODY_H

#include <stdbool.h>
#include <stddef.h>

#include "util/arena.h"
#include "util/strbuf.h"

/* One record's fields, in buffers reused from record to record (grown by
 * doubling), so reading many records costs the longest one. */
typedef struct pgr_csv_record {
    pgr_sb bytes;          /* the fields' bytes, each followed by a NUL */
    size_t *start, *len;   /* field i: bytes.data + start[i], len[i] bytes */
    size_t n, cap;
} pgr_csv_record;

void pgr_csv_record_init(pgr_csv_record *rec, pgrest_arena *a);

/* Reads the record at *p (before end) into rec and advances *p past it:
 * fields with RFC 4180 quoting ("" inside quotes; NUL bytes kept), ended by
 * a line end (\n, \r\n or \r, as cassava's endOfLine) or the end of the
 * text; an empty line is one empty field. *ended_line tells whether a line
 * end (not the text's end) closed it. False when the arena is exhausted. */
bool pgr_csv_read_record(pgr_csv_record *rec, const char **p, const char *end,
                         bool *ended_line);

static inline const char *pgr_csv_field(const pgr_csv_record *rec, size_t i)
{
    return rec->bytes.data + rec->start[i];
}

/* A name and where it stands (a CSV header field, a form pair): sorted
 * with pgr_cmp_name_at (by name, then position), repeated names are found
 * in O(n log n). */
typedef struct pgr_name_at {
    const char *name;
    size_t pos;
} pgr_name_at;

int pgr_cmp_name_at(const void *x, const void *y);

/* The header and what is known of the records so far. */
typedef struct pgr_csv_rows {
    pgrest_arena *a;
    pgr_csv_record rec;     /* the record last read */
    const char **header;    /* the header's names (copies), nh of them */
    size_t *hlen;
    size_t nh;
    size_t *next_same;      /* index of the next field of the same name, or nh */
    size_t *distinct;       /* distinct[k]: distinct names among header[0..k) */
    size_t rows;            /* records written */
    size_t names, first_k;  /* the first record's distinct names and width */
} pgr_csv_rows;

void pgr_csv_rows_init(pgr_csv_rows *c, pgrest_arena *a);

/* Takes the record in c->rec as the header. False when the arena is
 * exhausted. */
bool pgr_csv_rows_set_header(pgr_csv_rows *c);

/* The index of the first header name holding a NUL byte, or c->nh. */
size_t pgr_csv_header_nul(const pgr_csv_rows *c);

typedef enum pgr_csv_verdict {
    PGR_CSV_ROW,        /* written */
    PGR_CSV_BLANK,      /* a blank line, skipped (cassava's blankLine) */
    PGR_CSV_MISMATCH    /* "All lines must have same number of fields" */
} pgr_csv_verdict;

/* The verdict on the record in c->rec, counting it when it is a row:
 * *k is then the number of its fields that have a name (the first k of
 * the header's). */
pgr_csv_verdict pgr_csv_rows_take(pgr_csv_rows *c, size_t *k);

/* The record in c->rec as the JSON object csv_payload puts in its array:
 * the header's names zipped with the fields (extra fields dropped, missing
 * ones leave their names out; of repeated names the last within the prefix
 * wins), the literal NULL as null. comma: put ',' before it when it is not
 * the first record. */
pgr_csv_verdict pgr_csv_rows_write(pgr_csv_rows *c, pgr_sb *sb, bool comma);

#endif
