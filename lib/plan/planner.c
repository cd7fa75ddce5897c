/* api request -> plan (PostgREST's Plan.hs actionPlan): the dispatch to
 * the action planners. The plan's types are in plan.h, which every
 * planner includes; this file is named apart from it (as PostgreSQL's
 * optimizer/plan/planner.c) so that including the types is no dependency
 * on the dispatcher. */
#include <string.h>

#include "engine/stage_view.h"
#include "plan/fuzzy.h"
#include "plan/plan.h"
#include "plan/strict_preferences.h"
#include "util/error.h"
#include "util/strbuf.h"

static void release_schema(void *sc)
{
    pgr_schema_cache_release(sc);
}

/* Prefer: tx is honoured only with the *-allow-override settings. */
bool pgr_plan_commits(const pgr_config *cfg, pgr_pref_tx tx, bool *override_applied)
{
    bool commit = cfg->db_tx_end == PGR_TX_COMMIT ||
                  cfg->db_tx_end == PGR_TX_COMMIT_ALLOW_OVERRIDE;
    bool overridable = cfg->db_tx_end == PGR_TX_COMMIT_ALLOW_OVERRIDE ||
                       cfg->db_tx_end == PGR_TX_ROLLBACK_ALLOW_OVERRIDE;
    *override_applied = overridable && tx != PGR_PREF_TX_NONE;
    return *override_applied ? tx == PGR_PREF_TX_COMMIT : commit;
}

static void plan_tx_end(const pgr_config *cfg, const pgrest_api_request *api,
                        pgrest_query_plan *plan)
{
    plan->commit = pgr_plan_commits(cfg, api->prefs.tx, &plan->tx_override_applied);
}

/* Plan.hs findTable comes first (PGRST205), before media negotiation.
 * (PUT checks its limit/offset, an ApiRequest error, before: in
 * pgr_plan_mutation.) */
static int check_table_exists(pgrest_arena *a, const pgrest_api_request *api,
                              const pgrest_query_plan *plan, pgrest_error *err)
{
    bool relation = api->action == PGR_ACTION_READ || api->action == PGR_ACTION_CREATE ||
                    api->action == PGR_ACTION_UPDATE || api->action == PGR_ACTION_DELETE;
    if (!relation || pgr_find_table(plan->schema, api->schema, api->name) != NULL)
        return PGREST_OK;
    return pgr_table_not_found(a, plan->schema, api->schema, api->name, err);
}

/* Plan.hs wrappedReadPlan / mutateReadPlan / callReadPlan each order
 * their failures: the read plan, then (writes) mutatePlan and the strict
 * preferences before negotiation, (reads, calls) negotiation before the
 * strict preferences. inspectPlan (GET /) does not check preferences. */
static int plan_action(pgrest_ctx *ctx, pgrest_arena *arena,
                       const pgrest_api_request *api, pgrest_query_plan *plan,
                       pgrest_error *err)
{
    int rc;
    switch (api->action) {
    case PGR_ACTION_SCHEMA_READ:
        return pgr_plan_schema_read(ctx, arena, api, plan, err);
    case PGR_ACTION_READ:
        plan->read_only = true;
        if ((rc = pgr_plan_read(ctx, arena, api, plan, err)) != PGREST_OK ||
            (rc = pgr_negotiate(ctx, arena, api, plan, err)) != PGREST_OK)
            return rc;
        return pgr_check_strict_preferences(arena, api, err);
    case PGR_ACTION_CREATE:
    case PGR_ACTION_UPDATE:
    case PGR_ACTION_UPSERT:
    case PGR_ACTION_DELETE:
        if ((rc = pgr_plan_mutation(ctx, arena, api, plan, err)) != PGREST_OK ||
            (rc = pgr_check_strict_preferences(arena, api, err)) != PGREST_OK ||
            (rc = pgr_negotiate(ctx, arena, api, plan, err)) != PGREST_OK)
            return rc;
        return pgr_plan_mutation_output(arena, api, plan, err);
    case PGR_ACTION_CALL:
        /* the routine negotiates itself, knowing its result type */
        if ((rc = pgr_negotiate(ctx, arena, api, plan, err)) != PGREST_OK ||
            (rc = pgr_plan_call(ctx, arena, api, plan, err)) != PGREST_OK)
            return rc;
        return pgr_check_strict_preferences(arena, api, err);
    default:
        return pgr_error(err, 400, "PGRST127", "Feature not implemented",
                         "This request is not supported by pgrest yet", NULL);
    }
}

/* With ?columns= PostgREST sends the JSON body unparsed (Payload.hs
 * RawJSON) as a text-like parameter: PostgreSQL refuses a NUL byte in it
 * (22021) once every planning check has passed; the part before the NUL
 * is never what is inserted or called with. */
static int check_raw_payload(const pgrest_api_request *api, pgrest_error *err)
{
    if (!api->payload_raw || api->body == NULL ||
        memchr(api->body, '\0', api->body_len) == NULL)
        return PGREST_OK;
    return pgr_error(err, 400, "22021",
                     "invalid byte sequence for encoding \"UTF8\": 0x00", NULL, NULL);
}

static int plan_request(pgrest_ctx *ctx, pgrest_arena *arena,
                        const pgrest_api_request *api, pgrest_query_plan **out,
                        pgrest_error *err)
{
    pgrest_query_plan *plan = PGR_NEW(arena, pgrest_query_plan);
    if (plan == NULL)
        return pgr_error_oom(err);
    plan->api = api;
    plan->action = api->action;
    plan->max_rows = pgr_cfg(ctx, arena)->db_max_rows;
    plan->schema = pgr_ctx_schema(ctx);
    if (plan->schema == NULL)
        return pgr_error_no_schema_cache(err, NULL);
    if (!pgr_arena_on_free(arena, release_schema, plan->schema)) {
        pgr_schema_cache_release(plan->schema);
        return pgr_error_oom(err);
    }
    plan_tx_end(pgr_cfg(ctx, arena), api, plan);
    int rc;
    if ((rc = check_table_exists(arena, api, plan, err)) != PGREST_OK ||
        (rc = plan_action(ctx, arena, api, plan, err)) != PGREST_OK ||
        (rc = check_raw_payload(api, err)) != PGREST_OK)
        return rc;
    *out = plan;
    return PGREST_OK;
}

int pgrest_plan(pgrest_ctx *ctx, pgrest_arena *arena,
                const pgrest_api_request *api, pgrest_query_plan **out,
                pgrest_error *err)
{
    if (ctx == NULL || arena == NULL || api == NULL || out == NULL)
        return pgr_error_misuse(err, "pgrest_plan");
    *out = NULL;
    int rc = pgr_stage_end(arena, PGREST_OK, err);
    if (rc == PGREST_OK)
        rc = pgr_stage_end(arena, plan_request(ctx, arena, api, out, err), err);
    if (rc != PGREST_OK)
        *out = NULL;
    return rc;
}
