/* pgrest_handle: the four stages chained on a pooled connection, the way
 * sqlite3_exec sits on prepare/step/finalize. */
#include <string.h>
#include <time.h>

#include "auth/auth.h"
#include "auth/jwt.h"
#include "context.h"
#include "db_events.h"
#include "exec/cors.h"
#include "exec/execute.h"
#include "exec/pool.h"
#include "exec/response.h"
#include "observe.h"
#include "util/error.h"

/* What an error response may take beyond an exhausted arena's cap: the
 * out-of-memory error's own response and its decoration fit easily. */
#define ERROR_RESERVE ((size_t)16 * 1024)

static pgrest_response *build_error_response(pgrest_ctx *ctx, pgrest_arena *arena,
                                             const pgrest_error *err)
{
    int status = err->http_status ? err->http_status : 500;
    pgrest_response *r = pgr_response_new(arena, status);
    if (r == NULL)
        return NULL;
    const char *body = pgr_error_json(arena, err, pgr_cfg(ctx, arena)->client_error_minimal);
    pgr_response_add_header(arena, r, "Content-Type", "application/json; charset=utf-8");
    const char *www = pgr_jwt_www_authenticate(arena, err);
    if (www != NULL)
        pgr_response_add_header(arena, r, "WWW-Authenticate", www);
    if (err->code != NULL)
        pgr_response_add_header(arena, r, "Proxy-Status",
                                pgr_asprintf(arena, "PostgREST; error=%s", err->code));
    r->body = body ? body : "";
    r->body_len = strlen(r->body);
    return r;
}

/* PostgREST QueryErrorCodeHighObs: a database error answered with 5xx, or
 * the connection failing under a query. */
static void observe_high_error(pgrest_ctx *ctx, int rc, const pgrest_response *resp,
                               const pgrest_error *err)
{
    if (err == NULL || (rc != PGREST_ERR_DATABASE && rc != PGREST_ERR_CONNECTION))
        return;
    int status = resp != NULL ? resp->status : err->http_status;
    if (status >= 500)
        pgr_observe_error(ctx, PGREST_EVENT_QUERY_ERROR, "", err);
}

/* An error whose response does not fit (a long message on an exhausted
 * arena) is answered with the out-of-memory error instead: the host gets
 * a complete response or NULL, never one with pieces missing. */
pgrest_response *pgrest_error_response(pgrest_ctx *ctx, pgrest_arena *arena,
                                       const pgrest_error *err)
{
    if (ctx == NULL || arena == NULL || err == NULL)
        return NULL;
    pgr_arena_reserve(arena, ERROR_RESERVE);
    size_t failures = pgr_arena_failures(arena);
    pgrest_response *r = build_error_response(ctx, arena, err);
    if (r != NULL && pgr_arena_failures(arena) == failures)
        return r;
    pgrest_error oom;
    pgr_error_oom(&oom);
    pgr_arena_reserve(arena, ERROR_RESERVE);
    failures = pgr_arena_failures(arena);
    r = build_error_response(ctx, arena, &oom);
    return r != NULL && pgr_arena_failures(arena) == failures ? r : NULL;
}

static int run_pooled(pgrest_ctx *ctx, pgrest_arena *arena,
                      const pgrest_statements *st, pgrest_response **out,
                      pgrest_error *err)
{
    pgr_pool *pool = pgr_ctx_pool(ctx);
    if (pool == NULL)
        return pgr_error_connection(err, NULL);
    pgr_observe(ctx, PGREST_EVENT_POOL_REQUEST, "Trying to borrow a connection from pool");
    pgr_conn *c = pgr_pool_acquire(pool, arena, err);
    if (c != NULL)
        pgr_observe(ctx, PGREST_EVENT_POOL_REQUEST_FULFILLED, "Borrowed a connection from the pool");
    if (c == NULL) {
        /* PGRST003 (pool timeout) is not a lost database */
        if (err != NULL && err->http_status == 503) {
            pgr_db_check_request_error(ctx, err);
            pgr_ctx_connection_lost(ctx);
        } else if (err != NULL) {
            pgr_observe_error(ctx, PGREST_EVENT_POOL_TIMEOUT, "", err);
        }
        return PGREST_ERR_CONNECTION;
    }
    int rc = pgr_execute_on(ctx, arena, st, c->pg, c->stmts, out, err);
    pgr_pool_release(pool, c);
    if (rc != PGREST_OK)
        pgr_db_check_request_error(ctx, err);
    if (rc == PGREST_ERR_CONNECTION)
        pgr_ctx_connection_lost(ctx);
    else
        pgr_ctx_connection_ok(ctx);
    observe_high_error(ctx, rc, *out, err);
    return rc;
}

/* Per-stage durations for Server-Timing (PostgREST Response/Performance). */
typedef struct stage_timer {
    double jwt, parse, plan, transaction, response;
} stage_timer;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The identity the request runs as: the host's, or the bearer token's
 * (after the HTTP-layer checks, which win over JWT errors). */
static int authenticate(pgrest_ctx *ctx, pgrest_arena *arena,
                        const pgrest_request *req, const pgrest_auth **auth,
                        pgrest_error *err)
{
    *auth = req->auth;
    if (*auth != NULL)
        return PGREST_OK;
    int rc = pgr_request_admissible(ctx, arena, req, err);
    if (rc != PGREST_OK)
        return rc;
    pgrest_auth *verified;
    rc = pgr_authenticate(ctx, arena, req, true, &verified, err);
    *auth = verified;
    return rc;
}

static int handle(pgrest_ctx *ctx, pgrest_arena *arena,
                  const pgrest_request *req, pgrest_response **out,
                  const pgrest_statements **ran, const char **role,
                  stage_timer *tm, pgrest_error *err)
{
    pgrest_api_request *api;
    pgrest_query_plan *plan;
    pgrest_statements *st;
    const pgrest_auth *auth;
    double t0 = now_ms();
    int rc = authenticate(ctx, arena, req, &auth, err);
    if (rc != PGREST_OK)
        return rc;
    double t1 = now_ms();
    tm->jwt = t1 - t0;
    rc = pgr_parse_request_as(ctx, arena, req, auth, &api, err);
    if (api != NULL)
        *role = api->role;
    if (rc != PGREST_OK)
        return rc;
    double t2 = now_ms();
    tm->parse = t2 - t1;
    if (api->action == PGR_ACTION_INFO)
        return pgr_info_response(ctx, arena, api, out, err);
    if ((rc = pgrest_plan(ctx, arena, api, &plan, err)) != PGREST_OK ||
        (rc = pgrest_emit_sql(ctx, arena, plan, &st, err)) != PGREST_OK)
        return rc;
    double t3 = now_ms();
    tm->plan = t3 - t2;
    *ran = st;
    rc = run_pooled(ctx, arena, st, out, err);
    tm->transaction = now_ms() - t3;
    return rc;
}

static void add_server_timing(pgrest_arena *a, pgrest_response *r,
                              const stage_timer *tm)
{
    pgr_response_add_header(a, r, "Server-Timing",
        pgr_asprintf(a, "jwt;dur=%.1f, parse;dur=%.1f, plan;dur=%.1f, "
                        "transaction;dur=%.1f, response;dur=%.1f",
                     tm->jwt, tm->parse, tm->plan, tm->transaction, tm->response));
}

/* Every 503 tells the client when the connection worker retries next
 * (PostgREST App.hs addRetryHint). */
static void add_retry_hint(pgrest_ctx *ctx, pgrest_arena *a, pgrest_response *r)
{
    unsigned delay = atomic_load(&ctx->retry_delay);
    if (r->status == 503)
        pgr_response_add_header(a, r, "Retry-After",
                                 pgr_asprintf(a, "%u", delay > 0 ? delay : 1));
}

/* server-trace-header echo (App.hs traceHeaderMiddleware, outermost: CORS
 * preflight answers get it too). */
static void add_trace_header(pgrest_ctx *ctx, pgrest_arena *a,
                             const pgrest_request *req, pgrest_response *r)
{
    const char *trace = pgr_cfg(ctx, a)->server_trace_header;
    const char *value = trace ? pgr_request_header(req, trace) : NULL;
    if (value != NULL)
        pgr_response_add_header(a, r, trace, value);
}

/* Headers every response gets: trace header echo, CORS, Server-Timing,
 * Retry-After on 503. */
static void decorate(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_request *req,
                     pgrest_response *r, const stage_timer *tm)
{
    add_retry_hint(ctx, a, r);
    add_trace_header(ctx, a, req, r);
    pgr_cors_annotate(ctx, a, req, r);
    if (pgr_cfg(ctx, a)->server_timing_enabled)
        add_server_timing(a, r, tm);
}

/* decorate, telling whether every header it added is there */
static bool decorate_fits(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_request *req,
                          pgrest_response *r, const stage_timer *tm)
{
    size_t failures = pgr_arena_failures(a);
    decorate(ctx, a, req, r, tm);
    return pgr_arena_failures(a) == failures;
}

pgrest_response *pgrest_handle(pgrest_ctx *ctx, pgrest_arena *arena,
                               const pgrest_request *req)
{
    if (ctx == NULL || arena == NULL || req == NULL)
        return NULL;
    pgrest_response *preflight = pgr_cors_preflight(ctx, arena, req);
    if (preflight != NULL && !pgr_arena_exhausted(arena)) {
        add_trace_header(ctx, arena, req, preflight);
        return preflight;
    }
    pgrest_error err = {0};
    pgrest_response *resp = NULL;
    stage_timer tm = {0};
    const pgrest_statements *ran = NULL;
    const char *role = NULL;
    int rc = pgr_stage_end(arena, handle(ctx, arena, req, &resp, &ran, &role, &tm, &err), &err);
    double t = now_ms();
    /* whatever a stage left in an exhausted arena may be incomplete */
    if (pgr_arena_exhausted(arena))
        resp = NULL;
    /* a failed call may still leave a response: RAISE SQLSTATE 'PGRST'
     * chooses the error's status and headers */
    if (rc != PGREST_OK || resp == NULL)
        resp = resp ? resp : pgrest_error_response(ctx, arena, &err);
    /* PostgREST SchemaCacheEmptyObs: a request came before any schema cache */
    if (rc != PGREST_OK && err.code != NULL && strcmp(err.code, "PGRST002") == 0)
        pgr_observe_error(ctx, PGREST_EVENT_SCHEMA_CACHE_EMPTY, "", &err);
    tm.response = now_ms() - t;
    if (resp != NULL && !decorate_fits(ctx, arena, req, resp, &tm)) {
        /* the decoration did not fit: report that instead, decorated if
         * the error reserve allows, bare otherwise */
        pgr_error_oom(&err);
        resp = pgrest_error_response(ctx, arena, &err);
        if (resp != NULL && !decorate_fits(ctx, arena, req, resp, &tm))
            resp = pgrest_error_response(ctx, arena, &err);
    }
    if (resp != NULL) {
        resp->role = role;
        int cls = resp->status / 100;
        atomic_fetch_add(&ctx->metrics.requests[cls >= 1 && cls <= 5 ? cls : 0], 1);
        if (ctx->query_logger != NULL && ran != NULL)
            for (size_t i = 0; i < pgrest_statements_count(ran); i++)
                ctx->query_logger(ctx->query_logger_arg, resp->status,
                                  pgrest_statements_sql(ran, i));
    }
    return resp;
}
