/* A function name from the configuration (db-pre-request, db-root-spec,
 * db-pre-config) read as PostgREST's SchemaCache/Identifiers.hs toQi reads
 * it: the text splits at its first '.'; with nothing after that dot the
 * part before it is the name, unqualified ("a." -> a, "." -> the empty
 * name); otherwise schema and the rest ("s.f" -> s, f; ".f" -> no schema,
 * f; "a.b.c" -> a, "b.c"). */
#ifndef PGR_QUALIFIED_IDENT_H
#define PGR_QUALIFIED_IDENT_H

#include "util/arena.h"

typedef struct pgr_qualified_ident {
    const char *schema; /* "" when unqualified */
    const char *name;
} pgr_qualified_ident;

/* false only when the arena is exhausted */
bool pgr_to_qi(pgrest_arena *a, const char *text, pgr_qualified_ident *out);

#endif
