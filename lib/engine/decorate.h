/* The request engine's decoration and accounting of a response
 * (decorate.c), apart from its state machine (task.c). */
#ifndef PGR_DECORATE_H
#define PGR_DECORATE_H

#include <stdbool.h>

#include "pgrest/pgrest.h"
#include "sql/statements.h"

/* Per-stage durations for Server-Timing (PostgREST Response/Performance). */
typedef struct pgr_stage_timer {
    double jwt, parse, plan, transaction, response;
} pgr_stage_timer;

/* server-trace-header echo, also on CORS preflight answers. */
void pgr_add_trace_header(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_request *req,
                          pgrest_response *r);

/* Decorates r (Server-Timing only with tm: an answer the stages gave),
 * telling whether every header it added is there (the arena had room). */
bool pgr_decorate_fits(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_request *req,
                       pgrest_response *r, const pgr_stage_timer *tm, const char *warning);

/* PostgREST QueryErrorCodeHighObs: a database error answered with 5xx, or
 * the connection failing under a query. */
void pgr_observe_high_error(pgrest_ctx *ctx, int rc, const pgrest_response *resp,
                            const pgrest_error *err);

/* Counts resp in the metrics, gives it its role and hands the main
 * query's statements st (NULL: none ran) to the query logger. */
void pgr_account(pgrest_ctx *ctx, pgrest_response *resp, const char *role,
                 const pgrest_statements *st);
/* The query logger's part of pgr_account, for each statement list of a
 * request that ran several (a batch). */
void pgr_log_queries(pgrest_ctx *ctx, int status, const pgrest_statements *st);

/* The legacy-names Warning header's value for plan (logged as PostgREST
 * does), or NULL when plan names no embed that way. */
const char *pgr_legacy_warning(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_request *req,
                               const pgrest_query_plan *plan);

#endif
