/* Resource embedding in the read tree (PostgREST ReadPlan addRels/findRel,
 * updateNode, addRelatedOrders, addNullEmbedFilters). */
#ifndef PGR_EMBED_H
#define PGR_EMBED_H

#include "engine/stage_view.h"
#include "plan/plan.h"

/* Resolves one EMBED/SPREAD select item under node (relationship lookup,
 * PGRST200/PGRST201), plans its subtree and appends it at *tail. path has
 * room for PGR_EMBED_MAX_DEPTH names; path[0..depth) is node's path. */
int pgr_plan_embed(pgrest_ctx *ctx, pgrest_arena *a,
                   const pgrest_api_request *api, const pgr_schema_cache *sc,
                   pgr_read_node *node, const pgr_select_item *item,
                   const char **path, size_t depth, pgr_embed ***tail,
                   pgrest_error *err);

#define PGR_EMBED_MAX_DEPTH 64

/* ReadPlan.hs findRel: the one relationship from node's relation that
 * item (`relation!hint`) names in schema; PGRST200 for none, PGRST201 for
 * several. Also resolves the body keys of nested inserts. */
int pgr_find_relationship(pgrest_arena *a, const pgr_schema_cache *sc,
                          const char *schema, const pgr_read_node *node,
                          const pgr_select_item *item, const pgr_relationship **out,
                          pgrest_error *err);

/* 400 PGRST200 (Error.hs NoRelBetween) for the EMBED/SPREAD item under a
 * relation named origin_name in schema, with noRelBetweenHint's hint. */
int pgr_no_relationship(pgrest_arena *a, const pgr_schema_cache *sc,
                        const char *schema, const char *origin_name,
                        const pgr_select_item *item, pgrest_error *err);

/* Plans a node's select list, embeds and params (used recursively). */
int pgr_plan_node(pgrest_ctx *ctx, pgrest_arena *a,
                  const pgrest_api_request *api, const pgr_schema_cache *sc,
                  pgr_read_node *node, const pgr_select_item *items,
                  const char **path, size_t depth, pgrest_error *err);

/* Plan.hs readPlan runs updateNode (addFilters, addOrders, addRanges,
 * addLogicTrees) before addRels: every embedded path of a parameter must
 * name embeds of the select tree (PGRST108) before any relationship is
 * looked up. */
int pgr_check_embed_paths(pgrest_arena *a, const pgrest_api_request *api,
                          const pgr_select_item *select, bool legacy,
                          pgrest_error *err);

/* Attaches the filters, logic trees, order and limit/offset written for
 * embedded paths (`rel.col=eq.1`, `rel.order=`, `rel.limit=`) to their
 * nodes (no ranges for a mutation's representation), then validates the
 * tree in Plan.hs readPlan's order: PGRST108 for a path that is not
 * embedded, then addRelatedOrders (PGRST108 / PGRST118 for a related order
 * on a to-many embed), validateAggFunctions (PGRST123 when
 * db-aggregates-enabled is off), addToManyOrderSelects (PGRST127 for
 * aggregates in a to-many spread). */
int pgr_check_embed_params(pgrest_arena *a, const pgrest_api_request *api,
                           bool aggregates_enabled, pgr_read_node *root,
                           pgrest_error *err);

/* The whole read tree of a request under root (Plan.hs readPlan): the
 * parameters' embed paths, the relationships, then the checks of
 * pgr_check_embed_params. Shared by reads, mutations and calls. */
int pgr_plan_tree(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_api_request *api,
                  const pgr_schema_cache *sc, pgr_read_node *root,
                  const pgr_select_item *select, pgrest_error *err);

/* The embed of node whose output name (alias, else relation) is name, or
 * NULL: what `embed=is.null` filters and `order=embed(col)` refer to. */
const pgr_embed *pgr_find_embed(const pgr_read_node *node, const char *name);

/* The embed of node a related leaf `rel.col.op.value` of an or/and tree
 * names (pgrest's extension, docs/embed-or.md), found as the embedded
 * paths of filters are: by output name, with url-use-legacy-target-names
 * also by relation name. NULL if none (the planner rejected it: PGRST108). */
const pgr_embed *pgr_find_related_embed(const pgr_read_node *node, const char *name);

#endif
