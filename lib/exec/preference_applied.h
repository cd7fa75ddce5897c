/* The Preference-Applied header, reported by reads, writes and calls
 * alike (exec/response.c, response_mutate.c, response_call.c). */
#ifndef PGR_PREFERENCE_APPLIED_H
#define PGR_PREFERENCE_APPLIED_H

#include "plan/plan.h"
#include "util/arena.h"

/* Preference-Applied value (PostgREST Preferences.hs prefAppliedHeader),
 * or NULL when nothing applies. count, tx (when overridable), handling and
 * timezone are always reported; the flags add the per-action ones. */
enum {
    PGR_PREFS_RESOLUTION = 1u << 0,
    PGR_PREFS_MISSING = 1u << 1,
    PGR_PREFS_RETURN = 1u << 2,
    PGR_PREFS_MAX_AFFECTED = 1u << 3
};
const char *pgr_preference_applied(pgrest_arena *a, const pgrest_query_plan *plan,
                                   unsigned show);

#endif
