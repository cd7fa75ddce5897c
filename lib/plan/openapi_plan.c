/* GET/HEAD / (PostgREST Plan.hs inspectPlan): the OpenAPI document.
 * Media types: the root produces application/openapi+json, and also
 * answers application/json and * / *; anything else is 406 PGRST107. */
#include <string.h>

#include "engine/stage_view.h"
#include "plan/plan.h"
#include "util/error.h"
#include "util/strbuf.h"

#define CT_OPENAPI "application/openapi+json; charset=utf-8"

/* The version the accepted type asks for: application/openapi+json with
 * version=3.1 (or 3.1.0) or version=2.0 (or 2); without one, and for the
 * other types, openapi-version's. */
static pgr_openapi_version wanted_version(const pgr_config *cfg, const pgr_media_type *m)
{
    const char *v = m != NULL ? m->openapi_version : NULL;
    if (v == NULL)
        return cfg->openapi_version;
    if (strcmp(v, "3.1") == 0 || strcmp(v, "3.1.0") == 0)
        return PGR_OPENAPI_V3_1;
    if (strcmp(v, "2.0") == 0 || strcmp(v, "2") == 0)
        return PGR_OPENAPI_V2;
    return cfg->openapi_version;
}

/* Plan.hs inspectPlan: any of application/openapi+json, application/json
 * or * / * among the accepted types gives the document, always as
 * application/openapi+json (Response.hs); anything else is 406. The
 * first of them chooses the document's version (docs/openapi.md). */
static int negotiate_root(const pgr_config *cfg, pgrest_arena *a,
                          const pgrest_api_request *api, pgrest_query_plan *plan,
                          pgrest_error *err)
{
    plan->output = PGR_OUT_JSON;
    plan->content_type = CT_OPENAPI;
    plan->openapi_version = wanted_version(cfg, NULL);
    if (api->accept == NULL)
        return PGREST_OK;
    for (const pgr_media_type *m = api->accept; m != NULL; m = m->next) {
        if (m->kind == PGR_MEDIA_OPENAPI || m->kind == PGR_MEDIA_JSON ||
            m->kind == PGR_MEDIA_ANY) {
            plan->openapi_version = wanted_version(cfg, m);
            return PGREST_OK;
        }
    }
    return pgr_not_acceptable(a, api->accept, err);
}

/* With db-root-spec the root is a routine (parse/api_request.c
 * resolve_root), so only the built-in document is planned here. */
int pgr_plan_schema_read(pgrest_ctx *ctx, pgrest_arena *arena,
                         const pgrest_api_request *api,
                         pgrest_query_plan *plan, pgrest_error *err)
{
    const pgr_config *cfg = pgr_cfg(ctx, arena);
    if (cfg->openapi_mode == PGR_OPENAPI_DISABLED)
        return pgr_error(err, 404, "PGRST126", "Root endpoint metadata is disabled",
                         NULL, NULL);
    plan->read_only = true;
    return negotiate_root(cfg, arena, api, plan, err);
}
