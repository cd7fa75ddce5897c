#include "sql/emit_embed.h"

/* Embedding is planned in plan/embed.c; until it lands no node has embeds,
 * so these emit nothing. */
void pgr_emit_embed_selects(pgr_sql *q, const pgr_read_node *node, bool *first)
{
    (void)q; (void)node; (void)first;
}

int pgr_emit_embed_joins(pgr_sql *q, const pgr_read_node *node,
                         long long max_rows, pgrest_error *err)
{
    (void)q; (void)node; (void)max_rows; (void)err;
    return PGREST_OK;
}

int pgr_emit_embed_inner_joins(pgr_sql *q, const pgr_read_node *node,
                               pgrest_error *err)
{
    (void)q; (void)node; (void)err;
    return PGREST_OK;
}

bool pgr_emit_embed_join_condition(pgr_sql *q, const pgr_read_node *node)
{
    (void)q; (void)node;
    return false;
}

void pgr_emit_embed_null_filters(pgr_sql *q, const pgr_read_node *node)
{
    (void)q; (void)node;
}

void pgr_emit_embed_group_ref(pgr_sql *q, const pgr_embed *e)
{
    (void)q; (void)e;
}
