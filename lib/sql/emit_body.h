/* The body and count columns of the main statement (sql/emit_body.c),
 * shared by every action's main statement. */
#ifndef PGR_EMIT_BODY_H
#define PGR_EMIT_BODY_H

#include <stdbool.h>

#include "sql/sql_builder.h"
#include "sql/statements.h"

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

#endif
