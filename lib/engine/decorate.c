/* What the request engine adds to every response it gives (task.c): the
 * decoration (Retry-After, the trace header echo, CORS, Server-Timing,
 * the legacy-names Warning), and what it counts and logs of it (the
 * metrics, the query log, the high-error observation). */
#include "engine/decorate.h"

#include <stdatomic.h>

#include "engine/context.h"
#include "engine/observe.h"
#include "exec/cors.h"
#include "exec/response.h"
#include "util/error.h"

static void add_server_timing(pgrest_arena *a, pgrest_response *r,
                              const pgr_stage_timer *tm)
{
    pgr_response_add_header(a, r, "Server-Timing",
        pgr_asprintf(a, "jwt;dur=%.1f, parse;dur=%.1f, plan;dur=%.1f, "
                        "transaction;dur=%.1f, response;dur=%.1f",
                     tm->jwt, tm->parse, tm->plan, tm->transaction, tm->response));
}

/* Every 503 carries Retry-After (App.hs addRetryHint) with AppState's
 * stateNextDelay, which nothing in PostgREST ever writes after its
 * `newIORef 0`: always 0, whatever connection_pool.rst promises. */
static void add_retry_hint(pgrest_arena *a, pgrest_response *r)
{
    if (r->status == 503)
        pgr_response_add_header(a, r, "Retry-After", "0");
}

/* server-trace-header echo (App.hs traceHeaderMiddleware, outermost: CORS
 * preflight answers get it too; `fromMaybe mempty`: empty when the request
 * has none). */
void pgr_add_trace_header(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_request *req,
                          pgrest_response *r)
{
    const char *trace = pgr_cfg(ctx, a)->server_trace_header;
    if (trace == NULL)
        return;
    const char *value = pgr_request_header(req, trace);
    pgr_response_add_header(a, r, trace, value != NULL ? value : "");
}

/* Headers every response gets: trace header echo, CORS, Retry-After on
 * 503; Server-Timing only on answers the stages gave (tm), since PostgREST
 * adds it in toWaiResponse and an error leaves postgrestResponse before
 * that (App.hs handleError: errorResponseFor alone). */
static void decorate(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_request *req,
                     pgrest_response *r, const pgr_stage_timer *tm, const char *warning)
{
    add_retry_hint(a, r);
    pgr_add_trace_header(ctx, a, req, r);
    pgr_cors_annotate(ctx, a, req, r);
    if (tm != NULL && pgr_cfg(ctx, a)->server_timing_enabled)
        add_server_timing(a, r, tm);
    if (tm != NULL && warning != NULL)
        pgr_response_add_header(a, r, "Warning", warning);
}

bool pgr_decorate_fits(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_request *req,
                       pgrest_response *r, const pgr_stage_timer *tm, const char *warning)
{
    size_t failures = pgr_arena_failures(a);
    decorate(ctx, a, req, r, tm, warning);
    return pgr_arena_failures(a) == failures;
}

void pgr_observe_high_error(pgrest_ctx *ctx, int rc, const pgrest_response *resp,
                            const pgrest_error *err)
{
    if (rc != PGREST_ERR_DATABASE && rc != PGREST_ERR_CONNECTION)
        return;
    int status = resp != NULL ? resp->status : err->http_status;
    if (status >= 500)
        pgr_observe_error(ctx, PGREST_EVENT_QUERY_ERROR, "", err);
}

/* log-query logs PostgREST's QueryObs: the statements of its MainQuery
 * (Query.hs: transaction variables, pre-request, main, EXPLAIN for the
 * count), not the transaction's BEGIN, SET CONSTRAINTS and COMMIT or
 * ROLLBACK, which hasql-transaction and MainTx run outside of it. */
static bool in_main_query(pgr_stmt_role role)
{
    return role == PGR_STMT_SETTINGS || role == PGR_STMT_PRE_REQUEST ||
           role == PGR_STMT_MAIN || role == PGR_STMT_EXPLAIN_COUNT;
}

void pgr_log_queries(pgrest_ctx *ctx, int status, const pgrest_statements *st)
{
    if (ctx->query_logger != NULL && st != NULL)
        for (size_t i = 0; i < st->n; i++)
            if (in_main_query(st->items[i].role))
                ctx->query_logger(ctx->query_logger_arg, status, st->items[i].sql);
}

void pgr_account(pgrest_ctx *ctx, pgrest_response *resp, const char *role,
                 const pgrest_statements *st)
{
    resp->role = role;
    int cls = resp->status / 100;
    atomic_fetch_add(&ctx->metrics.requests[cls >= 1 && cls <= 5 ? cls : 0], 1);
    pgr_log_queries(ctx, resp->status, st);
}

#define LEGACY_NAME_WARNING "Embedded resource was referenced by relation name even " \
    "though it has an alias. This is deprecated and will stop working in a future release."

/* App.hs: with url-use-legacy-target-names, a relation name used for an
 * aliased embed is logged (LegacyTargetNameWarningObs) and answered with
 * a Warning header (warningHeaders: "PostgRESTv" and the version without
 * spaces). */
const char *pgr_legacy_warning(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_request *req,
                               const pgrest_query_plan *plan)
{
    const char *hint = pgr_plan_legacy_hint(a, plan);
    if (hint == NULL)
        return NULL;
    pgr_observe(ctx, PGREST_EVENT_LEGACY_TARGET_NAME, "WARNING: " LEGACY_NAME_WARNING);
    pgr_observef(ctx, PGREST_EVENT_LEGACY_TARGET_NAME,
                 "Update filters, orders or limits that use %s in `%s %s%s%s`", hint,
                 req->method, req->path, req->query[0] != '\0' ? "?" : "", req->query);
    return pgr_asprintf(a, "299 PostgRESTv" PGREST_POSTGREST_VERSION "(pgrest" PGREST_VERSION_STRING
                           ") \"" LEGACY_NAME_WARNING " Update %s in query string filters, "
                           "orders or limits.\"", hint);
}
