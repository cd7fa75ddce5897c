#include "sql/sql_builder.h"

#include <string.h>

#include "util/qualified_ident.h"

void pgr_sql_init(pgr_sql *q, pgrest_arena *a)
{
    memset(q, 0, sizeof *q);
    q->arena = a;
    pgr_sb_init(&q->sb, a, 512);
}

void pgr_sql_ident(pgr_sql *q, const char *ident)
{
    pgr_sb_put_ident(&q->sb, ident);
}

void pgr_sql_qualified(pgr_sql *q, const char *schema, const char *name)
{
    pgr_sb_put_ident(&q->sb, schema);
    pgr_sb_putc(&q->sb, '.');
    pgr_sb_put_ident(&q->sb, name);
}

void pgr_sql_qualified_text(pgr_sql *q, const char *qualified)
{
    if (qualified == NULL) {
        q->sb.failed = true;
        return;
    }
    /* toQi, then SqlFragment fromQi: no schema, no qualification */
    pgr_qualified_ident qi;
    if (!pgr_to_qi(q->arena, qualified, &qi)) {
        q->sb.failed = true;
        return;
    }
    if (qi.schema[0] == '\0')
        pgr_sql_ident(q, qi.name);
    else
        pgr_sql_qualified(q, qi.schema, qi.name);
}

void pgr_sql_param(pgr_sql *q, const char *value)
{
    if (q->n_params == q->cap_params) {
        size_t ncap = q->cap_params ? q->cap_params * 2 : 8;
        const char **n = pgr_realloc(q->arena, q->params,
                                     q->cap_params * sizeof(char *),
                                     ncap * sizeof(char *));
        if (n == NULL) {
            q->sb.failed = true;
            return;
        }
        q->params = n;
        q->cap_params = ncap;
    }
    q->params[q->n_params++] = value;
    pgr_sb_putc(&q->sb, '$');
    pgr_sb_put_long(&q->sb, (long long)q->n_params);
}

void pgr_sql_param_cast(pgr_sql *q, const char *value, const char *type)
{
    pgr_sql_param(q, value);
    pgr_sb_puts(&q->sb, "::");
    pgr_sb_puts(&q->sb, type);
}

bool pgr_sql_ok(const pgr_sql *q)
{
    return pgr_sb_ok(&q->sb);
}

char *pgr_pg_array_literal(pgrest_arena *a, const char *const *items, size_t n)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, 64);
    pgr_sb_putc(&sb, '{');
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            pgr_sb_putc(&sb, ',');
        pgr_sb_putc(&sb, '"');
        for (const char *p = items[i]; *p; p++) {
            if (*p == '"' || *p == '\\')
                pgr_sb_putc(&sb, '\\');
            pgr_sb_putc(&sb, *p);
        }
        pgr_sb_putc(&sb, '"');
    }
    pgr_sb_putc(&sb, '}');
    return pgr_sb_finish(&sb);
}
