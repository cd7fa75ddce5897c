#include "plan/embed.h"

#include "util/error.h"

int pgr_plan_embed(pgrest_ctx *ctx, pgrest_arena *a,
                   const pgrest_api_request *api, const pgr_schema_cache *sc,
                   pgr_read_node *node, const pgr_select_item *item,
                   const char **path, size_t depth, pgr_embed ***tail,
                   pgrest_error *err)
{
    (void)ctx; (void)api; (void)sc; (void)path; (void)depth; (void)tail;
    return pgr_errorf(err, a, 400, "PGRST200", NULL, NULL,
                      "Could not find a relationship between '%s' and '%s' in the schema cache",
                      node->table ? node->table->name : "", item->relation);
}

int pgr_check_embed_params(pgrest_arena *a, const pgrest_api_request *api,
                           const pgr_read_node *root, pgrest_error *err)
{
    (void)a; (void)api; (void)root; (void)err;
    return PGREST_OK;
}
