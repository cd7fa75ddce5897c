/* WHERE and ORDER BY fragments (PostgREST Query/SqlFragment.hs:
 * pgFmtFilter, pgFmtLogicTree, pgFmtJsonPath, pgFmtOrderTerm). */
#ifndef PGR_EMIT_FILTER_H
#define PGR_EMIT_FILTER_H

#include "plan/plan.h"
#include "sql/sql_builder.h"

/* How a node's relation is referred to: "schema"."table" or "alias". */
void pgr_emit_node_ref(pgr_sql *q, const pgr_read_node *node);
/* node_ref."col" followed by its JSON path, if any. */
void pgr_emit_field(pgr_sql *q, const pgr_read_node *node, const pgr_field *f);
/* One filter as a boolean SQL expression. */
void pgr_emit_filter(pgr_sql *q, const pgr_read_node *node, const pgr_filter *f);
/* The same as in a count query (embeds not joined: `embed=is.null` is
 * [NOT] EXISTS (its count query)). */
void pgr_emit_filter_count(pgr_sql *q, const pgr_read_node *node,
                           const pgr_filter *f);
void pgr_emit_logic_tree(pgr_sql *q, const pgr_read_node *node,
                         const pgr_logic_tree *t);
/* " WHERE ..." for all filters and logic trees of node (nothing if none);
 * extra (may be NULL) is AND-ed text such as a join condition. */
void pgr_emit_where(pgr_sql *q, const pgr_read_node *node, bool have_where);
/* The WHERE of an UPDATE / DELETE: filters first, then logic trees
 * (PostgREST Plan.mutatePlan combinedLogic); AND-ed onto a WHERE already
 * written when have_where. */
void pgr_emit_mutation_where(pgr_sql *q, const pgr_read_node *node, bool have_where);
/* pgr_emit_where for count queries (PostgREST readPlanToCountQuery):
 * `embed=is.null` becomes NOT EXISTS (...) as the embed is not joined. */
void pgr_emit_where_count(pgr_sql *q, const pgr_read_node *node,
                          bool have_where);
/* " HAVING ..." for node's having=(...) trees, AND-ed, each field the
 * SQL of the aggregate it names (nothing if none). */
void pgr_emit_having(pgr_sql *q, const pgr_read_node *node);
/* " ORDER BY ..." (nothing if no terms, or when node is a to-many spread:
 * its arrays are ordered where they are aggregated). */
void pgr_emit_order(pgr_sql *q, const pgr_read_node *node);
/* A to-many spread's order terms as extra select items of its subquery,
 * ", <term> AS "<agg alias>_<column>_<i>"" (PostgREST addToManyOrderSelects),
 * and the " ORDER BY" over them inside each json_agg of e's columns. */
void pgr_emit_spread_order_selects(pgr_sql *q, const pgr_read_node *node,
                                   bool *first);
void pgr_emit_spread_aggregate_order(pgr_sql *q, const pgr_embed *e);
/* " LIMIT $n OFFSET $m" as needed; max_rows caps the limit (-1 none). */
void pgr_emit_range(pgr_sql *q, long long offset, long long limit,
                    long long max_rows);

#endif
