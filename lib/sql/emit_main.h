/* The main statement per action (PostgREST Query/Statements.hs: mainRead,
 * mainWrite, mainCall). Every variant returns one row with the columns
 * total_result_set, page_total, body, response_headers, response_status
 * and, for writes, response_location / response_inserted. */
#ifndef PGR_EMIT_MAIN_H
#define PGR_EMIT_MAIN_H

#include "engine/stage_view.h"
#include "sql/emit_body.h"
#include "sql/sql_builder.h"
#include "sql/statements.h"

#define RESPONSE_GUCS                                                      \
    "nullif(current_setting('response.headers', true), '') AS response_headers, " \
    "nullif(current_setting('response.status', true), '') AS response_status"

/* Statements.hs mainRead / mainCall, and a write that counts no inserted
 * rows: the column is there all the same (the same row shape, and plan
 * width, as PostgREST's) */
#define NOT_INSERTED "'' AS response_inserted"

/* mainWrite's response_location when there is none (noLocationF) */
#define NO_LOCATION "array[]::text[]"

/* Closes the main SELECT after the body expression. */
#define BODY_FROM_SOURCE \
    " AS body, " RESPONSE_GUCS ", " NOT_INSERTED " FROM (SELECT * FROM pgrst_source) _postgrest_t"

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
