/* The statements of a streamed read (docs/streaming.md): the main
 * statement returns one row per result row instead of one aggregated
 * body, and the response GUCs come from a statement of their own after
 * it, in the same transaction. */
#ifndef PGR_EMIT_STREAM_H
#define PGR_EMIT_STREAM_H

#include "engine/stage_view.h"
#include "sql/sql_builder.h"
#include "sql/statements.h"

/* The engine's rule for streaming a request: a read (GET, not HEAD) of a
 * relation without Prefer: count (the total must precede the body), with
 * a plural builtin output (JSON array, nulls=stripped too, CSV, GeoJSON,
 * NDJSON), no media handler and no EXPLAIN. */
bool pgr_stream_eligible(const pgrest_query_plan *plan);

/* One row's text in a streamed body, over _postgrest_t: its JSON (the
 * element the buffered aggregate would take), or for CSV its columns; with
 * embeds built as text (sql/emit_embed_text.h, q->embed_text) the row's
 * text is built the same way. */
void pgr_emit_stream_row(pgr_sql *q, const pgrest_query_plan *plan);

/* A copy of st (the buffered statements for the same plan) with the main
 * statement replaced by its per-row form and the GUC statement after it.
 * *out lives in the arena. */
int pgr_emit_stream_statements(pgrest_arena *a, const pgrest_statements *st,
                               pgrest_statements **out, pgrest_error *err);

#endif
