/* Resource embedding in the read tree (PostgREST ReadPlan addRels/findRel). */
#ifndef PGR_EMBED_H
#define PGR_EMBED_H

#include "context.h"
#include "plan/plan.h"

/* Resolves one EMBED/SPREAD select item under node and appends it. */
int pgr_plan_embed(pgrest_ctx *ctx, pgrest_arena *a,
                   const pgrest_api_request *api, const pgr_schema_cache *sc,
                   pgr_read_node *node, const pgr_select_item *item,
                   const char **path, size_t depth, pgr_embed ***tail,
                   pgrest_error *err);

/* Plans a node's select list, embeds and params (used recursively). */
int pgr_plan_node(pgrest_ctx *ctx, pgrest_arena *a,
                  const pgrest_api_request *api, const pgr_schema_cache *sc,
                  pgr_read_node *node, const pgr_select_item *items,
                  const char **path, size_t depth, pgrest_error *err);

/* PGRST108: filters/order/limit on an embed path that is not selected. */
int pgr_check_embed_params(pgrest_arena *a, const pgrest_api_request *api,
                           const pgr_read_node *root, pgrest_error *err);

#endif
