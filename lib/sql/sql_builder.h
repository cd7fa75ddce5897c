/* SQL text plus $n parameters. User values only ever enter through
 * pgr_sql_param: they become $n and the value is recorded, never spliced
 * into the text. Identifiers are always quoted. */
#ifndef PGR_SQL_BUILDER_H
#define PGR_SQL_BUILDER_H

#include <stdbool.h>
#include <stddef.h>

#include "util/strbuf.h"

typedef struct pgr_sql {
    pgr_sb sb;
    pgrest_arena *arena;
    const char **params;
    size_t n_params;
    size_t cap_params;
    /* embeds and body as text (sql/emit_embed_text.c), set by the main
     * statement when pgr_embed_text_applies; false: the jsonb shape */
    bool embed_text;
} pgr_sql;

void pgr_sql_init(pgr_sql *q, pgrest_arena *a);
/* Inline, so that the length of a literal is known at compile time. */
static inline void pgr_sql_put(pgr_sql *q, const char *text)
{
    pgr_sb_puts(&q->sb, text);
}
void pgr_sql_ident(pgr_sql *q, const char *ident);
/* "schema"."name" */
void pgr_sql_qualified(pgr_sql *q, const char *schema, const char *name);
/* "schema"."name" from a catalog name "schema.name" (functions the schema
 * cache names); both parts quoted. */
void pgr_sql_qualified_text(pgr_sql *q, const char *qualified);
/* Appends $n for value (NULL = SQL NULL). */
void pgr_sql_param(pgr_sql *q, const char *value);
/* Appends $n::type (type is library-controlled text). */
void pgr_sql_param_cast(pgr_sql *q, const char *value, const char *type);
bool pgr_sql_ok(const pgr_sql *q);

/* A PostgreSQL array literal {"a","b"} from elements (for = ANY($n)). */
char *pgr_pg_array_literal(pgrest_arena *a, const char *const *items, size_t n);

#endif
