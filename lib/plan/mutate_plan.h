/* The write part of a mutation plan (PostgREST Plan/MutatePlan.hs:
 * Insert / Update / Delete). The representation of the returned rows is
 * the plan's read tree (plan->read), read from the pgrst_source CTE. */
#ifndef PGR_MUTATE_PLAN_H
#define PGR_MUTATE_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "plan/plan.h"

typedef struct pgr_mutate_plan {
    const pgr_table *table;
    /* written columns: payload keys (or ?columns=), in name order */
    const pgr_column **columns;
    size_t n_columns;
    bool apply_defaults;           /* Prefer: missing=default */
    /* root filters: WHERE of UPDATE/DELETE, body match of PUT */
    pgr_read_node *target;         /* table node without alias: "s"."t" */
    /* ON CONFLICT target (on_conflict= or the PK) and action */
    const char **conflict_cols;
    size_t n_conflict_cols;
    pgr_pref_resolution resolution;
    bool resolution_applied;       /* Preference-Applied lists it */
    bool count_inserted;           /* response_inserted (merge / PUT) */
    /* RETURNING: star, or these columns; nothing means RETURNING 1 */
    bool returning_star;
    const char **returning;
    size_t n_returning;
    bool representation;           /* return=representation */
    bool location;                 /* headers-only insert into a table with a PK */
    /* post-checks that roll back (MainTx.hs) */
    bool singular;                 /* Accept: vnd.pgrst.object: PGRST116 */
    bool check_max_affected;       /* PGRST124 above max_affected */
    long long max_affected;
    /* PATCH with an array body carrying the whole primary key: each row
     * joins its own element on these columns (plan/per_row_update.h) */
    const char *const *row_keys;
    size_t n_row_keys;
    /* POST: rows nested under body keys that name relationships
     * (plan/nested_insert.h), inserted after this table's */
    struct pgr_nested_insert *nested;
} pgr_mutate_plan;

#endif
