/* The statements of a streamed body (docs/bulk-import.md): a COPY fills a
 * temporary table with the body's rows, one JSON object each, and the
 * write's own statements then read them from there (sql/emit_mutate.c). */
#ifndef PGR_EMIT_IMPORT_H
#define PGR_EMIT_IMPORT_H

#include "sql/statements.h"

/* The rows' table: the session's own, dropped when the transaction ends,
 * so nothing of a body outlives its request. */
#define PGR_IMPORT_TABLE "pg_temp.pgrst_import"

/* The engine's rule for streaming a body, on the plan of its first row:
 * a POST of rows to a table or view (insert, or upsert by Prefer) that
 * returns no rows (return=minimal or headers-only), without nested
 * inserts, EXPLAIN or a batch. */
bool pgr_import_eligible(const pgrest_query_plan *plan);

/* The simple-query text that opens the transaction as st's BEGIN would,
 * creates the table and starts the COPY into it (COPY text format, one
 * json value per line); NULL when the arena is exhausted. st is the
 * statement list of a plan with streamed_body set, which always has its
 * BEGIN. */
const char *pgr_emit_import_open(pgrest_arena *a, const pgrest_statements *st);

/* st without its BEGIN (the COPY's text opened the transaction) and with
 * nothing prepared (the table is new in every request): what runs once
 * the rows are in. */
int pgr_emit_import_statements(pgrest_arena *a, const pgrest_statements *st,
                               pgrest_statements **out, pgrest_error *err);

#endif
