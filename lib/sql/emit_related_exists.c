#include "sql/emit_related_exists.h"

#include "plan/embed.h"
#include "sql/emit_embed.h"
#include "sql/emit_filter.h"

void pgr_emit_related_exists(pgr_sql *q, const pgr_read_node *node,
                             const pgr_logic_tree *leaf)
{
    const pgr_embed *e = pgr_find_related_embed(node, leaf->relation);
    if (e == NULL) {
        /* the planner rejected it (PGRST108); never reached */
        pgr_sql_put(q, "false");
        return;
    }
    pgr_sql_put(q, "EXISTS (SELECT 1 FROM ");
    pgr_emit_embed_from(q, e->node);
    pgr_sql_put(q, " WHERE ");
    /* as in a count query: nothing of the embed is joined here, so a
     * nested `rel.sub.is.null` is NOT EXISTS (sub's count query) */
    pgr_emit_filter_count(q, e->node, &leaf->filter);
    pgr_emit_embed_join_condition(q, e->node, true);
    pgr_sql_put(q, ")");
}
