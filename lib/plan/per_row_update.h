/* PATCH with a JSON array whose elements carry the target's whole primary
 * key: each row is updated with its own element's values (pgrest's
 * extension, docs/bulk-patch.md). PostgREST runs one UPDATE ... FROM over
 * every element, so each matched row takes an arbitrary element's values;
 * a body without the whole key keeps exactly that. */
#ifndef PGR_PER_ROW_UPDATE_H
#define PGR_PER_ROW_UPDATE_H

#include "plan/mutate_plan.h"

/* Sets mp->row_keys when api is such a PATCH (every element of a PostgREST
 * body has the same keys, so the first element decides); 400 PGRST102 when
 * two elements name the same row. Leaves mp alone otherwise. */
int pgr_plan_per_row_update(pgrest_arena *a, const pgrest_api_request *api,
                            pgr_mutate_plan *mp, pgrest_error *err);

#endif
