/* The names under which requests refer to a node's aggregates: the output
 * name of `count()`, `col.sum()` or its alias (`n:count()`). pgrest's
 * extension beyond PostgREST (docs/aggregates.md): order= by an aggregate,
 * where PostgREST can only read the name as a column of the relation, and
 * having=(...) conditions on aggregates. */
#ifndef PGR_AGGREGATE_NAMES_H
#define PGR_AGGREGATE_NAMES_H

#include "plan/plan.h"

/* The aggregate whose output column at node is called name: node's own
 * aggregates and those hoisted to it from to-one spreads below; NULL when
 * none (a to-one spread's aggregates belong to the node above it). */
const pgr_plan_field *pgr_find_aggregate_output(const pgr_read_node *node,
                                                const char *name);

/* In every node of the tree: marks the order terms that name an
 * aggregate of the node's select and nothing PostgREST could read
 * (by_aggregate, on a copy of the term list), and checks that every field
 * of a having=(...) tree names an aggregate of the select (else 400
 * PGRST100). */
int pgr_resolve_aggregate_names(pgrest_arena *a, pgr_read_node *root,
                                pgrest_error *err);

#endif
