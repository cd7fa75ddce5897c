/* What emit_sql produces and execute runs: the transaction's statements in
 * order, each SQL text with its $n parameter values. */
#ifndef PGR_STATEMENTS_H
#define PGR_STATEMENTS_H

#include <stdbool.h>
#include <stddef.h>

#include "plan/plan.h"

typedef enum pgr_stmt_role {
    PGR_STMT_BEGIN,
    PGR_STMT_SETTINGS,     /* set_config preamble */
    PGR_STMT_PRE_REQUEST,
    PGR_STMT_MAIN,
    PGR_STMT_EXPLAIN_COUNT,/* count=planned/estimated */
    PGR_STMT_CHECK_CONSTRAINTS, /* before a rollback */
    PGR_STMT_END,          /* COMMIT or ROLLBACK */
    PGR_STMT_GUCS          /* streamed reads: response.headers/status after the rows */
} pgr_stmt_role;

typedef struct pgr_stmt {
    pgr_stmt_role role;
    const char *sql;
    const char **params;
    size_t n_params;
    bool prepare;          /* cache as a prepared statement */
} pgr_stmt;

/* Finds the row of a streamed body its write failed on (sql/emit_import.h):
 * when the write (items[write]) fails with a row's error, `again` runs it once
 * more with the rows numbered, then a Sync, then `ask` (then a Sync),
 * whose last statement answers the failing row's number from 1, or no
 * row. The transaction is rolled back after, as after any failure. */
typedef struct pgr_row_finder {
    size_t write;          /* the index of the write it finds the row of */
    const pgr_stmt *again;
    size_t n_again;
    const pgr_stmt *ask;
    size_t n_ask;
} pgr_row_finder;

struct pgrest_statements {
    const pgrest_query_plan *plan;
    pgr_stmt *items;
    size_t n;
    /* The end statement waits for the main result when a post-check can
     * still roll back (singular writes, max-affected, PUT key mismatch). */
    bool end_after_check;
    /* The main statement builds its embeds as text (sql/emit_embed_text.h):
     * a streamed form of it does too. */
    bool embed_text;
    /* A streamed body's: which row failed (NULL for every other request). */
    const pgr_row_finder *find_row;
};

/* An empty statement list carrying st's plan and flags, with room for
 * st->n + extra statements: what a rewrite of st fills (the streamed form,
 * a batch item's). NULL when the arena is exhausted. */
pgrest_statements *pgr_statements_rewrite(pgrest_arena *a, const pgrest_statements *st,
                                          size_t extra);

#endif
