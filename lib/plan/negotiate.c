/* Output media type from Accept (PostgREST Plan/Negotiate.hs): the first
 * acceptable type in q order wins; nothing acceptable is 406 PGRST107. */
#include <string.h>

#include "context.h"
#include "plan/plan.h"
#include "util/error.h"
#include "util/strbuf.h"

bool pgr_output_for(const pgr_media_type *m, pgr_output *out,
                       const char **ctype)
{
    switch (m->kind) {
    case PGR_MEDIA_ANY:
    case PGR_MEDIA_JSON:
        *out = PGR_OUT_JSON;
        *ctype = "application/json; charset=utf-8";
        return true;
    case PGR_MEDIA_ARRAY:
        *out = PGR_OUT_JSON;
        *ctype = m->nulls_stripped
                     ? "application/vnd.pgrst.array+json;nulls=stripped; charset=utf-8"
                     : "application/vnd.pgrst.array+json; charset=utf-8";
        return true;
    case PGR_MEDIA_OBJECT:
        *out = PGR_OUT_OBJECT;
        *ctype = m->nulls_stripped
                     ? "application/vnd.pgrst.object+json;nulls=stripped; charset=utf-8"
                     : "application/vnd.pgrst.object+json; charset=utf-8";
        return true;
    case PGR_MEDIA_CSV:
        *out = PGR_OUT_CSV;
        *ctype = "text/csv; charset=utf-8";
        return true;
    case PGR_MEDIA_GEOJSON:
        *out = PGR_OUT_GEOJSON;
        *ctype = "application/geo+json; charset=utf-8";
        return true;
    default:
        return false;
    }
}

int pgr_negotiate(pgrest_ctx *ctx, pgrest_arena *a,
                  const pgrest_api_request *api, pgrest_query_plan *plan,
                  pgrest_error *err)
{
    (void)ctx;
    plan->output = PGR_OUT_JSON;
    plan->content_type = "application/json; charset=utf-8";
    /* Routines negotiate in plan/call_plan.c, knowing the result type. */
    if (api->accept == NULL || api->action == PGR_ACTION_CALL)
        return PGREST_OK;
    for (const pgr_media_type *m = api->accept; m != NULL; m = m->next) {
        if (m->q <= 0)
            continue;
        if (pgr_output_for(m, &plan->output, &plan->content_type)) {
            plan->nulls_stripped = m->nulls_stripped;
            return PGREST_OK;
        }
    }
    pgr_sb sb;
    pgr_sb_init(&sb, a, 64);
    pgr_sb_puts(&sb, "None of these media types are available: ");
    for (const pgr_media_type *m = api->accept; m != NULL; m = m->next) {
        if (m != api->accept)
            pgr_sb_puts(&sb, ", ");
        pgr_sb_puts(&sb, m->text ? m->text : "");
    }
    return pgr_error(err, 406, "PGRST107", pgr_sb_finish(&sb), NULL, NULL);
}
