/* GET/HEAD / (PostgREST Plan.hs inspectPlan): the OpenAPI document, or the
 * db-root-spec function that replaces it. Media types: the root produces
 * application/openapi+json, and also answers application/json and * / *;
 * anything else is 406 PGRST107. */
#include <string.h>

#include "context.h"
#include "plan/plan.h"
#include "util/error.h"
#include "util/strbuf.h"

#define CT_OPENAPI "application/openapi+json; charset=utf-8"
#define CT_JSON "application/json; charset=utf-8"

/* PostgREST answers the built-in document as application/openapi+json
 * whichever of the accepted types was asked for (Response.hs
 * openApiResponse); a root-spec function is a call, so application/json
 * and * / * get application/json. */
static int negotiate_root(pgrest_arena *a, const pgrest_api_request *api,
                          bool root_spec, pgrest_query_plan *plan,
                          pgrest_error *err)
{
    plan->output = PGR_OUT_JSON;
    plan->content_type = root_spec ? CT_JSON : CT_OPENAPI;
    if (api->accept == NULL)
        return PGREST_OK;
    for (const pgr_media_type *m = api->accept; m != NULL; m = m->next) {
        if (m->q <= 0)
            continue;
        if (m->kind == PGR_MEDIA_OPENAPI) {
            plan->content_type = CT_OPENAPI;
            return PGREST_OK;
        }
        if (m->kind == PGR_MEDIA_JSON || m->kind == PGR_MEDIA_ANY)
            return PGREST_OK;
    }
    return pgr_not_acceptable(a, api->accept, err);
}

int pgr_plan_schema_read(pgrest_ctx *ctx, pgrest_arena *arena,
                         const pgrest_api_request *api,
                         pgrest_query_plan *plan, pgrest_error *err)
{
    const pgr_config *cfg = pgr_cfg(ctx, arena);
    const char *root_spec = cfg->db_root_spec;
    if (root_spec == NULL && cfg->openapi_mode == PGR_OPENAPI_DISABLED)
        return pgr_error(err, 404, "PGRST126", "Root endpoint metadata is disabled",
                         NULL, NULL);
    int rc = negotiate_root(arena, api, root_spec != NULL, plan, err);
    if (rc != PGREST_OK)
        return rc;
    plan->read_only = true;
    if (root_spec == NULL)
        return PGREST_OK;
    const pgr_routine *r;
    if (pgr_find_routines(plan->schema, api->schema, root_spec, &r, 1) == 0)
        return pgr_errorf(err, arena, 404, "PGRST202", NULL, NULL,
                          "Could not find the function %s.%s without parameters in the schema cache",
                          api->schema, root_spec);
    plan->root_spec = r;
    plan->read_only = r->volatility != 'v';
    return PGREST_OK;
}
