/* Embedded resources in SQL: LEFT/INNER JOIN LATERAL subqueries whose
 * result is json (PostgREST QueryBuilder getJoins / getJoinSelects). */
#ifndef PGR_EMIT_EMBED_H
#define PGR_EMIT_EMBED_H

#include <stdbool.h>

#include "plan/plan.h"
#include "sql/sql_builder.h"

/* Appends ", <embed json> AS "name"" for each visible embed of node. */
void pgr_emit_embed_selects(pgr_sql *q, const pgr_read_node *node, bool *first);
/* Appends the JOIN LATERAL clauses of node's embeds. */
int pgr_emit_embed_joins(pgr_sql *q, const pgr_read_node *node,
                         long long max_rows, pgrest_error *err);
/* For count queries: only the joins that filter (!inner, is.null). */
int pgr_emit_embed_inner_joins(pgr_sql *q, const pgr_read_node *node,
                               pgrest_error *err);
/* Writes " WHERE <join to parent>" when node is an embedded child; returns
 * whether a WHERE was written. */
bool pgr_emit_embed_join_condition(pgr_sql *q, const pgr_read_node *node);
/* embed=is.null / not.is.null filters on the node. */
void pgr_emit_embed_null_filters(pgr_sql *q, const pgr_read_node *node);
/* GROUP BY reference for an embed's output. */
void pgr_emit_embed_group_ref(pgr_sql *q, const pgr_embed *e);

#endif
