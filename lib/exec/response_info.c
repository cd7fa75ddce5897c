/* OPTIONS: the Allow header from the schema cache, no database
 * (PostgREST api/options; Response.hs infoResponse). */
#include <string.h>

#include "exec/response.h"
#include "plan/fuzzy.h"
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

int pgr_info_response(pgrest_ctx *ctx, pgrest_arena *a,
                      const pgrest_api_request *api, pgrest_response **out,
                      pgrest_error *err)
{
    const char *allow = "OPTIONS,GET,HEAD";
    if (api->target != PGR_TARGET_ROOT) {
        pgr_schema_cache *sc = pgr_ctx_schema(ctx);
        if (sc == NULL)
            return pgr_error(err, 503, "PGRST002",
                             "Could not query the database for the schema cache. Retrying.",
                             NULL, NULL);
        int rc = PGREST_OK;
        if (api->target == PGR_TARGET_RELATION) {
            const pgr_table *t = pgr_find_table(sc, api->schema, api->name);
            if (t == NULL)
                rc = pgr_table_not_found(a, sc, api->schema, api->name, err);
            else
                allow = relation_allow(a, t);
        } else {
            const pgr_routine *r;
            if (pgr_find_routines(sc, api->schema, api->name, &r, 1) == 0)
                rc = pgr_errorf(err, a, 404, "PGRST202", NULL, NULL,
                                "Could not find the function %s.%s in the schema cache",
                                api->schema, api->name);
            else
                allow = "OPTIONS,GET,HEAD,POST";
        }
        pgr_schema_cache_release(sc);
        if (rc != PGREST_OK)
            return rc;
    }
    pgrest_response *r = pgr_response_new(a, 200);
    if (r == NULL)
        return pgr_error_oom(err);
    pgr_response_add_header(a, r, "Allow", allow);
    *out = r;
    return PGREST_OK;
}
