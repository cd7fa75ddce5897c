/* Prefer: handling=strict (plan/strict_preferences.c). */
#ifndef PGR_STRICT_PREFERENCES_H
#define PGR_STRICT_PREFERENCES_H

#include "parse/api_request.h"
#include "pgrest/pgrest.h"

/* Prefer: handling=strict with preferences PostgREST does not know:
 * PGRST122 (ApiRequest/Preferences.hs invalidPrefs). */
int pgr_check_strict_preferences(pgrest_arena *a, const pgrest_api_request *api,
                                 pgrest_error *err);

#endif
