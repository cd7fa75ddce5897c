/* Media types (PostgREST src/MediaType.hs decodeMediaType) and the Accept
 * header (wai's parseHttpAccept: q-values, specificity, stable order). */
#ifndef PGR_MEDIA_TYPE_H
#define PGR_MEDIA_TYPE_H

#include "parse/api_types.h"
#include "util/arena.h"

/* Parses one media type with parameters as decodeMediaType does: type and
 * subtype are read as a prefix and lower-cased into text (for types
 * PostgREST does not know, MTOther, text is the whole input as written,
 * which is also what a text without a type/subtype prefix gives);
 * parameters follow tokenizeMediaType (names case-insensitive, values as
 * written, the list ends at the first one that does not parse); q = 1.
 * vnd.pgrst.array[+json] is PGR_MEDIA_ARRAY only with nulls=stripped,
 * otherwise PGR_MEDIA_JSON; vnd.pgrst.object[+json] is PGR_MEDIA_OBJECT
 * (nulls_stripped set by ;nulls=stripped); vnd.pgrst.plan[+text|+json]
 * fills plan_text, plan_for (the `for` value) and plan_options (raw
 * `options`, e.g. "analyze|verbose"). Never fails except on OOM (NULL); a
 * NULL text gives NULL. */
pgr_media_type *pgr_parse_media_type(pgrest_arena *a, const char *text);

/* Parses an Accept header into a list ordered by q descending, then by
 * specificity (';' count minus '*' count) descending, otherwise as
 * written. Spaces are removed and anything after ";q=" other than the q
 * value is dropped, as wai does; a missing or unreadable q is 1.0.
 * NULL gives NULL (anything accepted); an empty header one empty type. */
pgr_media_type *pgr_parse_accept(pgrest_arena *a, const char *header);

/* MediaType.toMime: the canonical text of a parsed media type, as PostgREST
 * names it in Content-Type and in PGRST107/PGRST102 messages. */
const char *pgr_media_type_mime(pgrest_arena *a, const pgr_media_type *m);

/* The known plan options of a vnd.pgrst.plan type in MediaType.hs's order
 * joined by '|' ("analyze|verbose"), NULL when none. */
const char *pgr_media_plan_options(pgrest_arena *a, const pgr_media_type *m);

#endif
