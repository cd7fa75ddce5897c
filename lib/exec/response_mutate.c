/* Responses of writes (PostgREST Response.hs actionResponse for
 * MutationCreate / MutationUpdate / MutationSingleUpsert / MutationDelete)
 * and the post-checks that roll the write back (MainTx.hs failNotSingular,
 * failPut, failExceedsMaxAffectedPref). */
#include <string.h>

#include "exec/preference_applied.h"
#include "exec/response_mutate.h"
#include "plan/mutate_plan.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/text_array.h"

/* Percent-encoding of http-types urlEncode True (query strings): only
 * alphanumerics and -_.~ stay, a space is %20 (PostgREST's InsertSpec:
 * "Rock & R+ll" gives k2=eq.Rock%20%26%20R%2Bll). */
static void url_encode(pgr_sb *sb, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
            (*p >= '0' && *p <= '9') || (*p != '\0' && strchr("-_.~", *p) != NULL))
            pgr_sb_putc(sb, (char)*p);
        else {
            pgr_sb_putc(sb, '%');
            pgr_sb_putc(sb, hex[*p >> 4]);
            pgr_sb_putc(sb, hex[*p & 15]);
        }
    }
}

/* "/table?k1=eq.v1&k2=is.null" from the text[] of "k=v" strings
 * (Response.hs renderSimpleQuery over rsLocation, splitKeyValue at the
 * first '='); none for an empty array. */
const char *pgr_location_header(pgrest_arena *a, const char *table, const char *pairs)
{
    pgr_str_list kvs = {0};
    if (!pgr_text_array_parse(a, pairs, &kvs) || kvs.n == 0)
        return NULL;
    pgr_sb sb;
    pgr_sb_init(&sb, a, 64);
    pgr_sb_putc(&sb, '/');
    pgr_sb_puts(&sb, table);
    for (size_t i = 0; i < kvs.n; i++) {
        const char *kv = kvs.items[i];
        const char *eq = strchr(kv, '=');
        if (eq == NULL)
            continue;
        pgr_sb_putc(&sb, i == 0 ? '?' : '&');
        url_encode(&sb, pgr_strndup(a, kv, (size_t)(eq - kv)));
        pgr_sb_putc(&sb, '=');
        url_encode(&sb, eq + 1);
    }
    return pgr_sb_finish(&sb);
}

static int post_checks(pgrest_arena *a, const pgrest_query_plan *plan,
                       const pgr_main_row *row, pgrest_error *err)
{
    const pgr_mutate_plan *mp = plan->mutate;
    long long n = row->page_total;
    /* MainTx.hs failMutation: PUT (MutationSingleUpsert) runs failPut
     * alone, so a key mismatch is PGRST115 whatever the Accept */
    if (mp->singular && plan->action != PGR_ACTION_UPSERT && n != 1)
        return pgr_error(err, 406, "PGRST116",
                         "Cannot coerce the result to a single JSON object",
                         pgr_asprintf(a, "The result contains %lld rows", n), NULL);
    if (plan->action == PGR_ACTION_UPSERT && n != 1)
        return pgr_error(err, 400, "PGRST115",
                         "Payload values do not match URL in primary key column(s)",
                         NULL, NULL);
    if (mp->check_max_affected && n > mp->max_affected)
        return pgr_error(err, 400, "PGRST124",
                         "Query result exceeds max-affected preference constraint",
                         pgr_asprintf(a, "The query affects %lld rows", n), NULL);
    return PGREST_OK;
}

static void add_optional(pgrest_arena *a, pgrest_response *r, const char *name,
                         const char *value)
{
    if (value != NULL)
        pgr_response_add_header(a, r, name, value);
}

/* Response.hs: `maybe status200 isInsertIfGTZero rsInserted`, where a
 * merge-duplicates insert reads pgrst.inserted, NULL when no row reached
 * the counter (an empty array): 200 unless a row was inserted. Other
 * inserts read '' there, which decodes as 0: 201. */
static int create_status(const pgr_mutate_plan *mp, const pgr_main_row *row)
{
    if (mp->resolution == PGR_PREF_RESOLUTION_MERGE &&
        !(row->has_inserted && row->inserted > 0))
        return 200;
    return 201;
}

int pgr_mutation_response(pgrest_ctx *ctx, pgrest_arena *a,
                          const pgrest_query_plan *plan, const pgr_main_row *row,
                          pgrest_response *r, pgrest_error *err)
{
    (void)ctx;
    const pgr_mutate_plan *mp = plan->mutate;
    int rc = post_checks(a, plan, row, err);
    if (rc != PGREST_OK)
        return rc;
    /* Preferences.hs shouldCount: exact or estimated (planned counts
     * only reads, by EXPLAIN) */
    bool counted = plan->count == PGR_PREF_COUNT_EXACT ||
                   plan->count == PGR_PREF_COUNT_ESTIMATED;
    long long n = row->page_total;
    unsigned base = PGR_PREFS_RETURN;
    switch (plan->action) {
    case PGR_ACTION_CREATE:
        r->status = create_status(mp, row);
        if (row->location != NULL)
            add_optional(a, r, "Location", pgr_location_header(a, plan->table->name, row->location));
        pgr_response_add_header(a, r, "Content-Range", pgr_content_range(a, 1, 0, counted, n));
        add_optional(a, r, "Preference-Applied", pgr_preference_applied(
                         a, plan, base | PGR_PREFS_MISSING |
                                      (mp->resolution_applied ? PGR_PREFS_RESOLUTION : 0)));
        return PGREST_OK;
    case PGR_ACTION_UPDATE:
        r->status = mp->representation ? 200 : 204;
        pgr_response_add_header(a, r, "Content-Range", pgr_content_range(a, 0, n - 1, counted, n));
        add_optional(a, r, "Preference-Applied", pgr_preference_applied(
                         a, plan, base | PGR_PREFS_MISSING | PGR_PREFS_MAX_AFFECTED));
        return PGREST_OK;
    case PGR_ACTION_UPSERT:
        r->status = !mp->representation ? 204
                    : row->has_inserted && row->inserted > 0 ? 201 : 200;
        add_optional(a, r, "Preference-Applied", pgr_preference_applied(a, plan, base));
        return PGREST_OK;
    default:
        r->status = mp->representation ? 200 : 204;
        pgr_response_add_header(a, r, "Content-Range", pgr_content_range(a, 1, 0, counted, n));
        add_optional(a, r, "Preference-Applied", pgr_preference_applied(
                         a, plan, base | PGR_PREFS_MAX_AFFECTED));
        return PGREST_OK;
    }
}
