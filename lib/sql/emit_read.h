/* SELECT statements for read trees (PostgREST QueryBuilder
 * readPlanToQuery / readPlanToCountQuery). */
#ifndef PGR_EMIT_READ_H
#define PGR_EMIT_READ_H

#include "plan/plan.h"
#include "sql/sql_builder.h"

/* SELECT <fields> FROM <relation> [joins] [WHERE] [GROUP BY] [ORDER] [LIMIT]
 * for node. join_cond (may be NULL) is written by the caller after WHERE. */
int pgr_emit_read_node(pgr_sql *q, const pgr_read_node *node,
                       long long max_rows, pgrest_error *err);
/* SELECT 1 FROM <relation> WHERE <filters> for count=exact. */
int pgr_emit_count_node(pgr_sql *q, const pgr_read_node *node,
                        pgrest_error *err);
/* " GROUP BY ..." of node's non-aggregated outputs when it aggregates
 * (SqlFragment groupF); nothing otherwise. */
void pgr_emit_group_by(pgr_sql *q, const pgr_read_node *node);
/* The SQL of an aggregate that node computes (f: one of its own fields,
 * or one a to-one spread lifts to it), as in its select list without the
 * alias: what HAVING tests, since it cannot name output columns. */
void pgr_emit_aggregate_value(pgr_sql *q, const pgr_read_node *node,
                              const pgr_plan_field *f);
/* The select-list entry for one plan field. */
int pgr_emit_select_field(pgr_sql *q, const pgr_read_node *node,
                          const pgr_plan_field *f, pgrest_error *err);
/* The node's star and fields in select order, each preceded by ", "
 * unless *first (which is cleared). */
int pgr_emit_select_fields(pgr_sql *q, const pgr_read_node *node, bool *first,
                           pgrest_error *err);

#endif
