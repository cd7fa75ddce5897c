/* OPTIONS: the Allow header from the schema cache, no database
 * (PostgREST api/options; Response.hs infoResponse). */
#include <string.h>

#include "exec/response.h"
#include "plan/call_plan.h"
#include "plan/fuzzy.h"
#include "plan/plan.h"
#include "util/error.h"
#include "util/strbuf.h"

static const char *relation_allow(pgrest_arena *a, const pgr_table *t)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, 64);
    pgr_sb_puts(&sb, "OPTIONS,GET,HEAD");
    if (t->insertable)
        pgr_sb_puts(&sb, ",POST");
    if (t->insertable && t->updatable && t->n_pk > 0)
        pgr_sb_puts(&sb, ",PUT");
    if (t->updatable)
        pgr_sb_puts(&sb, ",PATCH");
    if (t->deletable)
        pgr_sb_puts(&sb, ",DELETE");
    return pgr_sb_finish(&sb);
}

/* Response.hs actionResponse RoutineInfoPlan: VOLATILE functions allow
 * only POST. The function is found the way a HEAD call finds it
 * (Plan.hs ActRoutineInfo -> callReadPlan with InvRead True), so unknown
 * or ambiguous functions, strict preferences and media types fail the
 * same way. OPTIONS query parameters are filters, not arguments
 * (ApiRequest.hs parses arguments only for GET/HEAD). */
static int routine_allow(pgrest_ctx *ctx, pgrest_arena *a,
                         const pgrest_api_request *api, const char **allow,
                         pgrest_error *err)
{
    pgrest_api_request *call = PGR_NEW(a, pgrest_api_request);
    if (call == NULL)
        return pgr_error_oom(err);
    *call = *api;
    call->action = PGR_ACTION_CALL;
    call->method = "HEAD";
    call->is_head = true;
    pgrest_query_plan *plan;
    int rc = pgrest_plan(ctx, a, call, &plan, err);
    if (rc != PGREST_OK)
        return rc;
    if (plan->call == NULL || plan->call->routine == NULL)
        return pgr_error(err, 500, PGR_CODE_INTERNAL, "OPTIONS found no function plan", NULL, NULL);
    *allow = plan->call->routine->volatility == 'v' ? "OPTIONS,POST"
                                                     : "OPTIONS,GET,HEAD,POST";
    return PGREST_OK;
}

static int relation_info(pgrest_ctx *ctx, pgrest_arena *a,
                         const pgrest_api_request *api, const char **allow,
                         pgrest_error *err)
{
    pgr_schema_cache *sc = pgr_ctx_schema(ctx);
    if (sc == NULL)
        return pgr_error_no_schema_cache(err, NULL);
    int rc = PGREST_OK;
    const pgr_table *t = pgr_find_table(sc, api->schema, api->name);
    if (t == NULL)
        rc = pgr_table_not_found(a, sc, api->schema, api->name, err);
    else if ((*allow = relation_allow(a, t)) == NULL)
        rc = pgr_error_oom(err);
    pgr_schema_cache_release(sc);
    return rc;
}

/* Response.hs respondInfo: empty body, Allow, and
 * Access-Control-Allow-Origin: * on every OPTIONS answer, plus the Vary
 * header App.hs adds. The root (no
 * db-root-spec: that one is a routine here) allows OPTIONS,GET,HEAD. */
int pgr_info_response(pgrest_ctx *ctx, pgrest_arena *a,
                      const pgrest_api_request *api, pgrest_response **out,
                      pgrest_error *err)
{
    const char *allow = "OPTIONS,GET,HEAD";
    int rc = PGREST_OK;
    if (api->target == PGR_TARGET_RELATION)
        rc = relation_info(ctx, a, api, &allow, err);
    else if (api->target == PGR_TARGET_ROUTINE)
        rc = routine_allow(ctx, a, api, &allow, err);
    if (rc != PGREST_OK)
        return rc;
    pgrest_response *r = pgr_response_new(a, 200);
    if (r == NULL)
        return pgr_error_oom(err);
    pgr_response_add_header(a, r, "Access-Control-Allow-Origin", "*");
    pgr_response_add_header(a, r, "Allow", allow);
    /* App.hs toWaiResponse: every application answer varies */
    pgr_response_add_header(a, r, "Vary", "Accept, Prefer, Range");
    *out = r;
    return PGREST_OK;
}
