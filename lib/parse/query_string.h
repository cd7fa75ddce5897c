/* Query string decoding and classification (PostgREST
 * src/ApiRequest/QueryParams.hs `parse`, http-types parseQueryReplacePlus). */
#ifndef PGR_QUERY_STRING_H
#define PGR_QUERY_STRING_H

#include <stdbool.h>
#include <stddef.h>

#include "parse/api_types.h"
#include "util/arena.h"

/* Percent-decodes n bytes of s into a NUL-terminated arena string;
 * malformed escapes are kept literally; '+' becomes ' ' when plus_as_space.
 * Returns NULL on OOM. */
char *pgr_percent_decode(pgrest_arena *a, const char *s, size_t n,
                         bool plus_as_space);

/* Splits a raw query string (a leading '?' is dropped) on '&' and ';' (as
 * http-types does), name/value on the first '='; both percent-decoded with
 * '+' as space. Empty pieces are skipped. A piece without '=' gets
 * value == NULL (PostgREST ignores such params except in the canonical
 * string). Returns the list in written order, NULL when empty or OOM. */
pgr_kv *pgr_query_string_decode(pgrest_arena *a, const char *qs);
/* The same on n bytes that may hold NUL bytes (a form body). */
pgr_kv *pgr_query_string_decode_n(pgrest_arena *a, const char *qs, size_t n);

/* Classifies decoded params into *out (zeroed first): select, columns,
 * on_conflict (root only, first occurrence); order/limit/offset/and/or as
 * last dotted segment at any embed level; everything else a filter, or on
 * RPC (is_rpc) a function argument when the value has no operator syntax.
 * columns are deduplicated and sorted (a Set in PostgREST). limit/offset:
 * see parse/ranges.h (the root range is settled with the Range header by
 * pgrest_parse_request). Params carry their lengths: a %00 is a character
 * of the grammar (PGRST100 where it does not fit, shown as \NUL), and one
 * kept in a name or value that would reach PostgreSQL gives 400 22021.
 * Like PostgREST's parsers without eof, select, logic trees, columns,
 * on_conflict and is/in filter values ignore what follows a valid prefix;
 * order terms must end at ',' or the end.
 * Errors: PGRST100 (400) parse errors of any part, with Parsec's message;
 * embedded limit/offset as PostgreSQL reports them (22003, 2201W, 2201X).
 * Limits (lim, NULL = pgr_parse_limits_default()): select and logic trees
 * nest at most max_depth levels, and filters plus logic-tree leaves number
 * at most max_filters; beyond them PGRST100 (400). */
int pgr_query_params_parse(pgrest_arena *a, const pgr_kv *params, bool is_rpc,
                           const pgr_parse_limits *lim, pgr_query_params *out,
                           pgrest_error *err);

/* pgrest's own meanings for params PostgREST's grammar rejects, by the
 * request's action (all false: PostgREST's grammar alone). */
typedef struct pgr_params_extensions {
    /* related leaves in logic trees (pgr_parse_logic_tree_ext,
     * docs/embed-or.md): reads and calls take them, writes keep
     * PostgREST's grammar */
    bool related_leaves;
    /* `[path.]distinct=v` whose v the filter grammar rejects is a
     * distinct (parse/distinct_parser.h, docs/distinct.md): relation
     * reads only; mutations and calls keep PostgREST's meaning */
    bool distinct;
} pgr_params_extensions;

/* The same with ext (NULL: none). */
int pgr_query_params_parse_ext(pgrest_arena *a, const pgr_kv *params, bool is_rpc,
                               const pgr_params_extensions *ext,
                               const pgr_parse_limits *lim,
                               pgr_query_params *out, pgrest_error *err);

/* The same reporting the decoded length (NUL bytes may be inside). */
char *pgr_percent_decode_n(pgrest_arena *a, const char *s, size_t n,
                           bool plus_as_space, size_t *out_len);

#endif
