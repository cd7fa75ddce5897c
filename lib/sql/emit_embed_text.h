/* Embeds and the body built as text in the bytes jsonb and json_agg print
 * ("candidate D" of bench/README.md, issue 34 item 4): the same body as
 * the jsonb embeds of sql/emit_embed.c and json_agg, at a third to a half
 * less of PostgreSQL's CPU. Used only where the text is provably the
 * same (pgr_embed_text_applies); everything else keeps the jsonb shape. */
#ifndef PGR_EMIT_EMBED_TEXT_H
#define PGR_EMIT_EMBED_TEXT_H

#include <stdbool.h>

#include "plan/plan.h"
#include "sql/sql_builder.h"
#include "sql/statements.h"

/* The alias of the marker column a to-one embed's lateral subquery
 * selects last in the text shape: true when a row matched. */
#define PGR_EMBED_TEXT_MATCH "pgrst_m"

/* Whether plan's body is a plain JSON array whose read tree has embeds,
 * all of them ordinary to-one / to-many embeds over plain columns, `*`
 * and aliases, with every output key distinct within its object. a holds
 * scratch lists. */
bool pgr_embed_text_applies(pgrest_arena *a, const pgrest_query_plan *plan);

/* A to-many embed's lateral select list:
 * SELECT '[' || string_agg(<object of the child row>, ', ') || ']' AS "a" */
void pgr_emit_embed_text_agg(pgr_sql *q, const pgr_embed *e);
/* A to-one embed's value above its join:
 * CASE WHEN "a"."pgrst_m" THEN <object of the lateral row> END */
void pgr_emit_embed_text_object(pgr_sql *q, const pgr_embed *e);
/* One row of _postgrest_t as to_json(_postgrest_t)::text prints it (a
 * streamed read's row): '{"c":' || v || ... '}' */
void pgr_emit_row_text(pgr_sql *q, const pgr_read_node *root);
/* The body over _postgrest_t, json_agg's bytes:
 * coalesce('[' || string_agg('{"c":' || v || ...  '}', E', \n ') || ']', '[]') */
void pgr_emit_body_text(pgr_sql *q, const pgr_read_node *root);

#endif
