/* Streaming bulk imports (issue 40): a request body to a table, read in
 * chunks, converted into the lines of
 *   COPY pg_temp.pgrst_import (json_data) FROM STDIN
 * (COPY text format, one json column): one JSON object per row, the object
 * the buffered body reader (payload.c) puts in its JSON array for that row.
 * Accepts and refuses exactly the bodies payload.c accepts and refuses,
 * with its errors, and `details` naming the row ("index N: ..." for a JSON
 * array's element from 0, "line N: ..." for an NDJSON or CSV line from 1).
 * Memory: the longest row plus a constant (and a CSV header); time: linear
 * in the body. Not thread-safe: one converter per request. */
#ifndef PGR_IMPORT_ROWS_H
#define PGR_IMPORT_ROWS_H

#include <stdbool.h>
#include <stddef.h>

#include "pgrest/pgrest.h"
#include "util/arena.h"
#include "util/strbuf.h"

typedef enum pgr_import_format { PGR_IMPORT_JSON, PGR_IMPORT_NDJSON, PGR_IMPORT_CSV } pgr_import_format;
typedef struct pgr_import_rows pgr_import_rows;
/* rc beyond PGREST_OK / errors: the body is valid for the buffered path but is
 * not a stream of rows (a JSON body that is not an array, or whose first
 * element is not an object): the caller keeps the body whole instead. */
#define PGR_IMPORT_NOT_ROWS 3

/* match_keys: every row must have the first row's key set (JSON/NDJSON without
 * ?columns=, as payload.c checks); max_depth: the JSON nesting limit per row as
 * payload.c applies it. NULL when the arena is exhausted.
 * max_depth is the configured request-max-json-depth: a JSON array's
 * element may nest max_depth - 1 levels (the array is one), an NDJSON line
 * max_depth. The converter and all it holds live in arena a. */
pgr_import_rows *pgr_import_rows_new(pgrest_arena *a, pgr_import_format fmt,
                                     int max_depth, bool match_keys);
/* The target, for the error of a key holding a NUL byte (PGRST204 naming
 * relation `name`, or 22021 for a function call: payload.c's). Default: a
 * relation named "". name must outlive the converter. */
void pgr_import_rows_set_target(pgr_import_rows *r, const char *name, bool is_call);
/* Reads data[0..len) (any split of the body: 1-byte chunks must give the same
 * result as the whole; binary-safe) and appends to out, for each row completed,
 * one COPY text-format line: the row's JSON object with '\\' doubled and raw
 * LF, CR, TAB written as \n \r \t, ending in '\n'. Keeps between calls only the
 * incomplete last row (and CSV's header). PGREST_OK, PGR_IMPORT_NOT_ROWS, or an
 * error (pgrest_error filled, negative rc as elsewhere in the tree); after an
 * error every call returns it again.
 * What payload.c reports only once the whole body proved valid -- a JSON
 * array's key mismatch, and a key holding \u0000 (JSON and NDJSON with
 * match_keys) -- is reported by finish, unless an error the buffered path
 * gives first comes later; no row is written after it. */
int pgr_import_rows_feed(pgr_import_rows *r, const char *data, size_t len,
                         pgr_sb *out, pgrest_error *err);
/* The body ended: its last row, and the end checks (a JSON array's closing ']'
 * and nothing but whitespace after it, CSV's header needing a line end, ...). */
int pgr_import_rows_finish(pgr_import_rows *r, pgr_sb *out, pgrest_error *err);
/* Rows written to out so far. */
size_t pgr_import_rows_count(const pgr_import_rows *r);
/* Where row `row` (from 0, in the order written) stands in the body: its
 * line (CSV: where its record starts; NDJSON) or its JSON array index, by
 * pgr_import_rows_place's word. false when the row is not written yet, or
 * the body broke its rows' sequence of places too often to keep (past
 * 65,536 blank lines or records over several lines). */
bool pgr_import_rows_where(const pgr_import_rows *r, size_t row, size_t *at);
/* "line" or "index". */
const char *pgr_import_rows_place(const pgr_import_rows *r);

/* Typed lines (CSV): once the first row is written, the names its
 * fields stand under, *n of them; false when the body is not CSV, has no
 * row yet, or repeats one of those names (a JSON object keeps only the
 * last: its rows stay objects). */
bool pgr_import_rows_csv_names(const pgr_import_rows *r, const char *const **names,
                               size_t *n);
/* Typed lines (JSON and NDJSON with matched keys): once the first row is
 * written, its keys, *n of them (each once: a JSON object's). */
bool pgr_import_rows_json_names(const pgr_import_rows *r, const char *const **names,
                                size_t *n);
/* From now on a row is written as one COPY text-format line of its n
 * fields, tab-separated, for a table whose columns have the fields'
 * types. A CSV record: the literal NULL as \N, a field whose json_field[i]
 * is true (a json or jsonb column) as the JSON string payload.c makes of
 * it, any other as its text; a field holding a NUL byte fails as
 * json_to_record does on the object (22P05). A JSON or NDJSON row: the
 * value of key names[i] as json_to_record gives it to the column's input
 * function (null as \N, a string decoded -- for a json column decoded and
 * quoted again as PostgreSQL's escape_json does --, any other value its
 * text as written); a row whose strings hold an escape PostgreSQL's JSON
 * lexer refuses (\u0000, a lone surrogate) fails with PostgreSQL's
 * error, the row named. names (unused for CSV) and json_field must
 * outlive the converter; a converter that already wrote rows writes both
 * kinds (the caller starts anew). false when the arena is exhausted. */
bool pgr_import_rows_set_fields(pgr_import_rows *r, const char *const *names,
                                const bool *json_field, size_t n);
/* Once the first row is complete: a body in the same format holding only that
 * row (CSV: the header line and the first record; NDJSON: its line; JSON:
 * "[" element "]"), which the buffered path (pgr_parse_payload) reads to the
 * same keys and columns as the whole body; NULL before. *len its length. */
const char *pgr_import_rows_first(const pgr_import_rows *r, size_t *len);

#endif
