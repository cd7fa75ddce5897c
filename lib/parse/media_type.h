/* Media types (PostgREST src/MediaType.hs decodeMediaType) and the Accept
 * header (wai's parseHttpAccept: q-values, specificity, stable order). */
#ifndef PGR_MEDIA_TYPE_H
#define PGR_MEDIA_TYPE_H

#include "parse/api_request.h"
#include "util/arena.h"

/* Parses one media type with parameters ("Application/JSON; charset=x").
 * text is "type/subtype" lower-cased (for unknown types: the part before
 * the first ';'), q = 1. Kinds follow decodeMediaType:
 * vnd.pgrst.array[+json] is PGR_MEDIA_ARRAY only with nulls=stripped,
 * otherwise PGR_MEDIA_JSON; vnd.pgrst.object[+json] is PGR_MEDIA_OBJECT
 * (nulls_stripped set by ;nulls=stripped); vnd.pgrst.plan[+text|+json]
 * fills plan_text, plan_for (unquoted `for` param, lower-cased) and
 * plan_options (raw `options`, e.g. "analyze|verbose"). Never fails except
 * on OOM (NULL); a NULL text gives NULL. */
pgr_media_type *pgr_parse_media_type(pgrest_arena *a, const char *text);

/* Parses an Accept header into a list ordered by q descending, then by
 * specificity (';' count minus '*' count) descending, otherwise as
 * written. Spaces are removed and anything after ";q=" other than the q
 * value is dropped, as wai does; a missing or unreadable q is 1.0.
 * NULL or empty header gives NULL. */
pgr_media_type *pgr_parse_accept(pgrest_arena *a, const char *header);

#endif
