/* The nested inserts of a POST (sql/emit_nested.c). */
#ifndef PGR_EMIT_NESTED_H
#define PGR_EMIT_NESTED_H

#include "plan/plan.h"
#include "sql/sql_builder.h"

/* A POST with nested rows (plan/nested_insert.h): the WITH list up to the
 * last nested insert, pgrst_source being the request's own INSERT. */
void pgr_emit_nested_insert(pgr_sql *q, const pgrest_query_plan *plan);

#endif
