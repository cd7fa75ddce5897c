/* The Preference-Applied header (PostgREST Preferences.hs
 * prefAppliedHeader): which of the Prefer header's preferences the
 * request honoured. */
#include "exec/preference_applied.h"

#include "util/error.h"
#include "util/strbuf.h"

static const char *return_text(pgr_pref_return r)
{
    switch (r) {
    case PGR_PREF_RETURN_MINIMAL: return "return=minimal";
    case PGR_PREF_RETURN_HEADERS_ONLY: return "return=headers-only";
    case PGR_PREF_RETURN_REPRESENTATION: return "return=representation";
    default: return NULL;
    }
}

static const char *count_text(pgr_pref_count c)
{
    switch (c) {
    case PGR_PREF_COUNT_EXACT: return "count=exact";
    case PGR_PREF_COUNT_PLANNED: return "count=planned";
    case PGR_PREF_COUNT_ESTIMATED: return "count=estimated";
    default: return NULL;
    }
}

static void applied(pgr_sb *sb, const char *text)
{
    if (text == NULL)
        return;
    if (sb->len > 0)
        pgr_sb_puts(sb, ", ");
    pgr_sb_puts(sb, text);
}

/* Preferences.hs prefAppliedHeader: resolution, missing, return, count,
 * tx, handling, timezone, max-affected, in that order; `show` selects
 * which ones the action reports. */
const char *pgr_preference_applied(pgrest_arena *a, const pgrest_query_plan *plan,
                                   unsigned show)
{
    const pgr_preferences *p = &plan->api->prefs;
    pgr_sb sb;
    pgr_sb_init(&sb, a, 64);
    if (show & PGR_PREFS_RESOLUTION)
        applied(&sb, p->resolution == PGR_PREF_RESOLUTION_MERGE ? "resolution=merge-duplicates"
                     : p->resolution == PGR_PREF_RESOLUTION_IGNORE ? "resolution=ignore-duplicates"
                     : NULL);
    if (show & PGR_PREFS_MISSING)
        applied(&sb, p->missing == PGR_PREF_MISSING_DEFAULT ? "missing=default"
                     : p->missing == PGR_PREF_MISSING_NULL ? "missing=null" : NULL);
    if (show & PGR_PREFS_RETURN)
        applied(&sb, return_text(p->ret));
    applied(&sb, count_text(p->count));
    if (plan->tx_override_applied)
        applied(&sb, p->tx == PGR_PREF_TX_COMMIT ? "tx=commit"
                     : p->tx == PGR_PREF_TX_ROLLBACK ? "tx=rollback" : NULL);
    applied(&sb, p->handling == PGR_PREF_HANDLING_STRICT ? "handling=strict"
                 : p->handling == PGR_PREF_HANDLING_LENIENT ? "handling=lenient" : NULL);
    if (p->timezone != NULL)
        applied(&sb, pgr_asprintf(a, "timezone=%s", p->timezone));
    if ((show & PGR_PREFS_MAX_AFFECTED) && p->handling == PGR_PREF_HANDLING_STRICT &&
        p->has_max_affected)
        applied(&sb, pgr_asprintf(a, "max-affected=%lld", p->max_affected));
    return sb.len > 0 ? pgr_sb_finish(&sb) : NULL;
}
