/* Embedded resources in SQL: LEFT/INNER JOIN LATERAL subqueries whose
 * result is json (PostgREST QueryBuilder getJoins / getJoinSelects /
 * readPlanToCountQuery, SqlFragment CoercibleFilterNullEmbed). */
#ifndef PGR_EMIT_EMBED_H
#define PGR_EMIT_EMBED_H

#include <stdbool.h>

#include "plan/plan.h"
#include "sql/sql_builder.h"

/* Appends ", <embed json> AS "name"" for each visible embed of node (and
 * the lifted columns of spreads); *first tracks the leading comma. */
void pgr_emit_embed_selects(pgr_sql *q, const pgr_read_node *node, bool *first);
/* Appends the JOIN LATERAL clauses of node's embeds. */
int pgr_emit_embed_joins(pgr_sql *q, const pgr_read_node *node,
                         long long max_rows, pgrest_error *err);
/* Writes the FROM item of an embedded node: its relation (or the computed
 * relationship's function call) AS its alias, plus the junction of a
 * many-to-many. Returns false (writes nothing) for the root. */
bool pgr_emit_embed_from(pgr_sql *q, const pgr_read_node *node);
/* The whole-row reference of node ("alias" or "table"), e.g. the argument
 * of a computed field or computed relationship. */
void pgr_emit_node_row(pgr_sql *q, const pgr_read_node *node);
/* For count queries: " AND EXISTS (<count query of the embed>)" per
 * !inner embed of node; have_where says whether WHERE was written. */
int pgr_emit_embed_exists(pgr_sql *q, const pgr_read_node *node,
                          bool have_where, pgrest_error *err);
/* Writes " WHERE <join to parent>" (" AND ..." after have_where) when
 * node is an embedded child; returns whether it wrote anything. */
bool pgr_emit_embed_join_condition(pgr_sql *q, const pgr_read_node *node,
                                   bool have_where);
/* If f is `embed=is.null` / `embed=not.is.null` on an embed of node,
 * writes its condition and returns true; false (nothing written) else.
 * count: in a count query, as [NOT] EXISTS (<the embed's count query>). */
bool pgr_emit_embed_null_filter(pgr_sql *q, const pgr_read_node *node,
                                const pgr_filter *f, bool count);
/* The alias a related order term `order=rel(col)` reads col from. */
void pgr_emit_embed_order_ref(pgr_sql *q, const pgr_read_node *node,
                              const char *relation);
/* The GROUP BY terms of node's embeds, " GROUP BY " before the first one
 * (*first says whether it is still to be written). */
void pgr_emit_embed_group_refs(pgr_sql *q, const pgr_read_node *node,
                               bool *first);
/* node is a to-one spread: its aggregates are computed by an ancestor. */
bool pgr_embed_hoists(const pgr_read_node *node);
/* Whether to-one spreads under node lift aggregates that node computes. */
bool pgr_embed_has_hoisted_aggregate(pgr_sql *q, const pgr_read_node *node);
/* agg("spread alias"."col") for f, an aggregate a to-one spread of node
 * lifts to it (pgr_emit_aggregate_value); nothing when none does. */
void pgr_emit_lifted_aggregate(pgr_sql *q, const pgr_read_node *node,
                               const pgr_plan_field *f);

#endif
