/* pgrest_handle: the four stages chained on a pooled connection, the way
 * sqlite3_exec sits on prepare/step/finalize. */
#include <string.h>

#include "auth/auth.h"
#include "context.h"
#include "exec/execute.h"
#include "exec/pool.h"
#include "exec/response.h"
#include "util/error.h"

pgrest_response *pgrest_error_response(pgrest_ctx *ctx, pgrest_arena *arena,
                                       const pgrest_error *err)
{
    int status = err->http_status ? err->http_status : 500;
    pgrest_response *r = pgr_response_new(arena, status);
    if (r == NULL)
        return NULL;
    const char *body = pgr_error_json(arena, err, ctx->cfg.client_error_minimal);
    pgr_response_add_header(arena, r, "Content-Type", "application/json; charset=utf-8");
    /* PostgREST 12.1+ names the error code in Proxy-Status (RFC 9209) */
    if (err->code != NULL)
        pgr_response_add_header(arena, r, "Proxy-Status",
                                pgr_asprintf(arena, "PostgREST; error=%s", err->code));
    if (status == 401)
        pgr_response_add_header(arena, r, "WWW-Authenticate", "Bearer");
    r->body = body ? body : "";
    r->body_len = strlen(r->body);
    return r;
}

static int run_pooled(pgrest_ctx *ctx, pgrest_arena *arena,
                      const pgrest_statements *st, pgrest_response **out,
                      pgrest_error *err)
{
    if (ctx->pool == NULL)
        return pgr_error(err, 503, "PGRST000", "Database connection error. Retrying the connection.",
                         NULL, NULL);
    pgr_conn *c = pgr_pool_acquire(ctx->pool, arena, err);
    if (c == NULL)
        return PGREST_ERR_CONNECTION;
    int rc = pgr_execute_on(ctx, arena, st, c->pg, c->stmts, out, err);
    pgr_pool_release(ctx->pool, c);
    return rc;
}

static int handle(pgrest_ctx *ctx, pgrest_arena *arena,
                  const pgrest_request *req, pgrest_response **out,
                  pgrest_error *err)
{
    pgrest_api_request *api;
    pgrest_query_plan *plan;
    pgrest_statements *st;
    int rc;
    if ((rc = pgrest_parse_request(ctx, arena, req, &api, err)) != PGREST_OK ||
        (rc = pgr_authenticate(ctx, arena, api, err)) != PGREST_OK ||
        (rc = pgrest_plan(ctx, arena, api, &plan, err)) != PGREST_OK ||
        (rc = pgrest_emit_sql(ctx, arena, plan, &st, err)) != PGREST_OK)
        return rc;
    return run_pooled(ctx, arena, st, out, err);
}

pgrest_response *pgrest_handle(pgrest_ctx *ctx, pgrest_arena *arena,
                               const pgrest_request *req)
{
    if (ctx == NULL || arena == NULL || req == NULL)
        return NULL;
    pgrest_error err = {0};
    pgrest_response *resp = NULL;
    /* a failed call may still leave a response: RAISE SQLSTATE 'PGRST'
     * chooses the error's status and headers */
    if (handle(ctx, arena, req, &resp, &err) != PGREST_OK || resp == NULL)
        return resp ? resp : pgrest_error_response(ctx, arena, &err);
    return resp;
}
