/* The pieces of an INSERT that reads its rows from a JSON body, shared by
 * the plain write (sql/emit_mutate.c) and the nested insert's levels
 * (sql/emit_nested.c); emit_mutate.c calls emit_nested.c, so they live
 * here, below both. */
#include "sql/emit_write.h"

#include <string.h>

/* A domain with a json -> domain cast function reads its value as json
 * and converts it with that function (PostgREST api/domain_
 * representations, "Domain Request Body Format"). */
static const char *body_transform(const pgr_schema_cache *sc, const pgr_column *c)
{
    if (c->nominal_type == NULL)
        return NULL;
    const pgr_representation *r = pgr_find_representation(sc, "json", c->nominal_type);
    return r ? r->function : NULL;
}

bool pgr_record_column_is_json(const pgr_schema_cache *sc, const pgr_column *c)
{
    return body_transform(sc, c) != NULL || strcmp(c->type, "json") == 0 ||
           strcmp(c->type, "jsonb") == 0;
}

bool pgr_record_column_transformed(const pgr_schema_cache *sc, const pgr_column *c)
{
    return body_transform(sc, c) != NULL;
}

void pgr_emit_body_value(pgr_sql *q, const pgr_schema_cache *sc, const pgr_column *c)
{
    const char *fn = body_transform(sc, c);
    if (fn != NULL) {
        pgr_sql_put(q, fn);
        pgr_sql_put(q, "(");
    }
    pgr_sql_put(q, "\"pgrst_body\".");
    pgr_sql_ident(q, c->name);
    if (fn != NULL)
        pgr_sql_put(q, ")");
}

void pgr_emit_body_values(pgr_sql *q, const pgr_schema_cache *sc,
                          const pgr_column *const *columns, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            pgr_sql_put(q, ", ");
        pgr_emit_body_value(q, sc, columns[i]);
    }
}

const char *pgr_record_column_type(const pgr_schema_cache *sc, const pgr_column *c)
{
    return body_transform(sc, c) ? "json" : c->nominal_type ? c->nominal_type : c->type;
}

void pgr_emit_record_columns(pgr_sql *q, const pgr_schema_cache *sc,
                             const pgr_column *const *columns, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const pgr_column *c = columns[i];
        if (i > 0)
            pgr_sql_put(q, ", ");
        pgr_sql_ident(q, c->name);
        pgr_sql_put(q, " ");
        pgr_sql_put(q, pgr_record_column_type(sc, c));
    }
}

/* missing=default: jsonb_build_object('<col>', <default>, ...) with the
 * defaults of the written columns, so absent keys take them. Default
 * expressions come from the catalog (pg_get_expr), never from the
 * request. */
void pgr_emit_defaults_object(pgr_sql *q, const pgr_column *const *columns, size_t n)
{
    pgr_sql_put(q, "jsonb_build_object(");
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        const pgr_column *c = columns[i];
        if (c->default_expr == NULL)
            continue;
        if (!first)
            pgr_sql_put(q, ", ");
        first = false;
        pgr_sb_put_literal(&q->sb, c->name);
        pgr_sql_put(q, ", ");
        pgr_sql_put(q, c->default_expr);
    }
    pgr_sql_put(q, ")");
}

void pgr_emit_returning(pgr_sql *q, const pgr_mutate_plan *mp)
{
    const pgr_table *t = mp->table;
    pgr_sql_put(q, " RETURNING ");
    if (mp->returning_star) {
        pgr_sql_qualified(q, t->schema, t->name);
        pgr_sql_put(q, ".*");
        return;
    }
    if (mp->n_returning == 0) {
        pgr_sql_put(q, "1");
        return;
    }
    for (size_t i = 0; i < mp->n_returning; i++) {
        if (i > 0)
            pgr_sql_put(q, ", ");
        pgr_sql_qualified(q, t->schema, t->name);
        pgr_sql_put(q, ".");
        pgr_sql_ident(q, mp->returning[i]);
    }
}
