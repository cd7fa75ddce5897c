/* The statements of a streamed body (docs/bulk-import.md): a COPY fills a
 * temporary table with the body's rows, and the write's own statements
 * then read them from there (sql/emit_mutate.c). */
#ifndef PGR_EMIT_IMPORT_H
#define PGR_EMIT_IMPORT_H

#include "sql/statements.h"

/* The rows' table: the session's own, dropped when the transaction ends,
 * so nothing of a body outlives its request. */
#define PGR_IMPORT_TABLE "pg_temp.pgrst_import"
/* A streamed representation's rows (plan->streamed_representation), each
 * one's text in the order the response has them */
#define PGR_RETURNED_TABLE "pg_temp.pgrst_returned"

/* The engine's rule for streaming a body, on the plan of its first row:
 * a POST of rows to a table or view (insert, or upsert by Prefer), without
 * nested inserts, EXPLAIN or a batch. A representation is built as the
 * whole body's is, once the rows are in. */
bool pgr_import_eligible(const pgrest_query_plan *plan);

/* Whether a streamed body's representation (plan, eligible) streams too:
 * a plural JSON or NDJSON response whose end no check decides (no
 * vnd.pgrst.object, max-affected or PUT), when the host streams responses. */
bool pgr_import_representation_streams(const pgrest_query_plan *plan);

/* A typed rows' column's type in the rows' table: json_to_record's type
 * for it when that is one of PostgreSQL's own (with its modifiers, as an
 * array too), which the connection's role can name whatever it may use.
 * Any other (an enum, a domain or a composite type of the API's schemas)
 * is text there, or its json/jsonb base, and *cast tells that the INSERT
 * casts it to its own (the type's input function and checks, as
 * json_to_record's string). */
const char *pgr_import_column_type(const pgr_schema_cache *sc, const pgr_column *c,
                                   bool *cast);

/* A streamed body's transaction in three parts. */
typedef struct pgr_import_sql {
    /* One pipeline before the COPY: st's BEGIN; the table, created and
     * granted by the connection's own role (whose TEMP privilege is no
     * concern of a write); then st's settings and pre-request, so the rows
     * are converted under the request's role, time zone and settings, as
     * its INSERT would convert them; and the statement timeout lifted
     * (the COPY lasts as long as the client sends). */
    pgr_stmt *open;
    size_t n_open;
    size_t n_setup;      /* of which the first n_setup make the table */
    const char *copy;    /* COPY pg_temp.pgrst_import FROM STDIN, or into the
                          * table itself (copied_rows) */
    const char *copy_table; /* the table it writes, as its errors name it */
    /* After the COPY: the timeout back, then the rest of st, nothing
     * prepared (the table is new in every request), its main statement
     * after a savepoint, with the statements that find the row it failed
     * on (rest->find_row). A streamed representation's write answers the
     * head (its role is PGR_STMT_GUCS); deferred constraints are checked
     * then, so that nothing decides the outcome once the rows stream;
     * then the rows are read (PGR_STMT_MAIN, row by row). */
    pgrest_statements *rest;
    /* Rows COPY writes straight into the table (docs/bulk-import.md,
     * "Straight into the table"): the slot of rest's answer statement that
     * takes the COPY's row count before rest is sent; NULL otherwise. */
    const char **copied_rows;
} pgr_import_sql;

/* Splits st, the statement list of a plan with streamed_body set (which
 * always has its BEGIN). The table has the plan's streamed_columns
 * (typed rows) or one json column (a JSON object per row). */
int pgr_emit_import(pgrest_arena *a, const pgrest_statements *st, pgr_import_sql *out,
                    pgrest_error *err);

#endif
