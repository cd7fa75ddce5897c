/* PostgREST's deprecation warning for legacy target names (Plan.hs
 * legacyWarnings, App.hs warningHeaders and LegacyTargetNameWarningObs):
 * a filter, order or limit that named an aliased embed by its relation
 * name, allowed by url-use-legacy-target-names. */
#include "plan/plan.h"

#include "util/strbuf.h"

/* readPlanWarnings: the node first, then its embeds, depth first. */
static void collect(pgr_sb *sb, const pgr_read_node *n, size_t *count)
{
    if (n->legacy_match && n->alias_in_request != NULL) {
        if ((*count)++ > 0)
            pgr_sb_puts(sb, ", ");
        pgr_sb_putc(sb, '`');
        pgr_sb_puts(sb, n->name_in_request);
        pgr_sb_puts(sb, "` to `");
        pgr_sb_puts(sb, n->alias_in_request);
        pgr_sb_putc(sb, '`');
    }
    for (const pgr_embed *e = n->embeds; e != NULL; e = e->next)
        collect(sb, e->node, count);
}

const char *pgr_plan_legacy_hint(pgrest_arena *a, const pgrest_query_plan *plan)
{
    if (plan == NULL || plan->read == NULL)
        return NULL;
    pgr_sb sb;
    pgr_sb_init(&sb, a, 64);
    size_t count = 0;
    collect(&sb, plan->read, &count);
    return count > 0 ? pgr_sb_finish(&sb) : NULL;
}
