/* distinct= on a read node (pgrest's own, docs/distinct.md). */
#ifndef PGR_DISTINCT_PLAN_H
#define PGR_DISTINCT_PLAN_H

#include "plan/plan.h"

/* True when node reads distinct rows (SELECT DISTINCT or DISTINCT ON). */
bool pgr_node_is_distinct(const pgr_read_node *node);

/* Makes node read d's distinct rows; the first distinct written for a
 * node wins, as the first order= does (later ones change nothing). For
 * DISTINCT ON the node's order becomes the distinct columns in d's order
 * -- each taking the direction and nulls of an order term naming the same
 * plain column -- followed by the other order terms, so PostgreSQL keeps
 * the first row of each group in the requested order. Unknown columns are
 * left to PostgreSQL (42703, as for order=). */
int pgr_plan_distinct(pgrest_arena *a, pgr_read_node *node,
                      const pgr_path_distinct *d, pgrest_error *err);

#endif
