/* The main statement per action (PostgREST Query/Statements.hs: mainRead,
 * mainWrite, mainCall). Every variant returns one row with the columns
 * total_result_set, page_total, body, response_headers, response_status
 * and, for writes, response_location / response_inserted. */
#ifndef PGR_EMIT_MAIN_H
#define PGR_EMIT_MAIN_H

#include "context.h"
#include "sql/sql_builder.h"
#include "sql/statements.h"

#define RESPONSE_GUCS                                                      \
    "nullif(current_setting('response.headers', true), '') AS response_headers, " \
    "nullif(current_setting('response.status', true), '') AS response_status"

/* Statements.hs mainRead / mainCall: no rows are inserted; the column is
 * there all the same (the same row shape, and plan width, as PostgREST's) */
#define NOT_INSERTED "'' AS response_inserted"

/* Closes the main SELECT after the body expression. */
#define BODY_FROM_SOURCE \
    " AS body, " RESPONSE_GUCS ", " NOT_INSERTED " FROM (SELECT * FROM pgrst_source) _postgrest_t"

/* Statements.hs countF: with count=exact/estimated, the total counts the
 * rows of the pgrst_source_count CTE (the count query of plan->read) when
 * a range or db-max-rows limits the page, else it is the page count.
 * Appends that CTE (after the caller's pgrst_source) and opens the main
 * SELECT up to "page_total, "; page_count is SqlFragment.hs
 * pageCountSelectF. cap_estimate limits an estimated count to
 * db-max-rows + 1. */
int pgr_emit_count_total(pgr_sql *q, const pgrest_query_plan *plan,
                         bool cap_estimate, const char *page_count,
                         pgrest_error *err);
/* True when a range or db-max-rows limits the page of plan->read. */
bool pgr_count_needs_cte(const pgrest_query_plan *plan);

/* The body aggregate over _postgrest_t (and pgrst_source for CSV) for the
 * negotiated output. */
const char *pgr_body_expression(const pgrest_query_plan *plan);
/* Appends the body: pgr_body_expression, or the media handler call for
 * PGR_OUT_CUSTOM. */
void pgr_emit_body(pgr_sql *q, const pgrest_query_plan *plan);

/* sql/emit_mutate.c; may set st->end_after_check. */
int pgr_emit_main_mutation(pgr_sql *q, const pgrest_ctx *ctx,
                           const pgrest_query_plan *plan,
                           pgrest_statements *st, pgrest_error *err);
/* sql/emit_call.c: "WITH pgrst_source AS (<the call>)", the function's
 * rows that the read node of plan->read selects from. */
int pgr_emit_call_source(pgr_sql *q, const pgrest_query_plan *plan, pgrest_error *err);
/* sql/emit_call.c */
int pgr_emit_main_call(pgr_sql *q, const pgrest_ctx *ctx,
                       const pgrest_query_plan *plan, pgrest_statements *st,
                       pgrest_error *err);
/* sql/emit_openapi.c: GET/HEAD / */
int pgr_emit_main_schema_read(pgr_sql *q, const pgrest_ctx *ctx,
                              const pgrest_query_plan *plan, pgrest_error *err);

#endif
