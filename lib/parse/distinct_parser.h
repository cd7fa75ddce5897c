/* The distinct= grammar, pgrest's own (docs/distinct.md): `*`, or column
 * names `a,b,"c d"` as PostgREST's pFieldName reads them. */
#ifndef PGR_DISTINCT_PARSER_H
#define PGR_DISTINCT_PARSER_H

#include <stddef.h>

#include "parse/api_types.h"
#include "util/arena.h"

/* Parses len bytes of text (may hold NUL bytes) into out's all / columns
 * (arena). Unlike columns=, the whole text must be the list: a distinct
 * that silently dropped a misspelt tail would answer another question.
 * Errors: PGRST100 (400) `"failed to parse distinct (text)" (line 1,
 * column N)` with Parsec-style details; a NUL kept in a name 400 22021. */
int pgr_parse_distinct_n(pgrest_arena *a, const char *text, size_t len,
                         pgr_path_distinct *out, pgrest_error *err);

#endif
