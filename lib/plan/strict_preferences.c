/* Prefer: handling=strict (PostgREST ApiRequest/Preferences.hs): checked
 * by the dispatcher (planner.c) for most actions and by the call planner
 * at its own point, so it is below both. */
#include "plan/strict_preferences.h"

#include "util/error.h"
#include "util/strbuf.h"

/* Prefer: handling=strict rejects preferences PostgREST does not know
 * (ApiRequest/Preferences.hs, PGRST122). */
int pgr_check_strict_preferences(pgrest_arena *a, const pgrest_api_request *api,
                                 pgrest_error *err)
{
    const pgr_preferences *p = &api->prefs;
    if (p->handling != PGR_PREF_HANDLING_STRICT || p->n_invalid == 0)
        return PGREST_OK;
    pgr_sb sb;
    pgr_sb_init(&sb, a, 64);
    pgr_sb_puts(&sb, "Invalid preferences: ");
    for (size_t i = 0; i < p->n_invalid; i++) {
        if (i > 0)
            pgr_sb_puts(&sb, ", ");
        pgr_sb_puts(&sb, p->invalid[i]);
    }
    return pgr_error(err, 400, "PGRST122", "Invalid preferences given with handling=strict",
                     pgr_sb_finish(&sb), NULL);
}
