/* pgrest's or/and across embeds (docs/embed-or.md; beyond PostgREST, its
 * tracker #3162, #2668): a logic-tree leaf `rel.col.op.value` as
 * EXISTS (SELECT 1 FROM <rel> WHERE <col op value> AND <join to parent>). */
#ifndef PGR_EMIT_RELATED_EXISTS_H
#define PGR_EMIT_RELATED_EXISTS_H

#include "plan/plan.h"
#include "sql/sql_builder.h"

/* Writes the EXISTS for leaf (leaf->relation != NULL), a leaf of one of
 * node's logic trees: the embed's FROM item and join condition are the
 * ones its LATERAL subquery uses (sql/emit_embed.c), the embed's own
 * filters, !inner, order and limit do not apply. */
void pgr_emit_related_exists(pgr_sql *q, const pgr_read_node *node,
                             const pgr_logic_tree *leaf);

#endif
