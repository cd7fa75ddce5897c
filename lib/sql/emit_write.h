/* The pieces of an INSERT that reads its rows from a JSON body, shared by
 * the plain write (sql/emit_mutate.c) and the nested insert's levels
 * (sql/emit_nested.c). */
#ifndef PGR_EMIT_WRITE_H
#define PGR_EMIT_WRITE_H

#include <stddef.h>

#include "plan/mutate_plan.h"
#include "sql/sql_builder.h"

/* "pgrst_body"."col", through the column's json representation function
 * (a domain's cast) if it has one. */
void pgr_emit_body_value(pgr_sql *q, const pgr_schema_cache *sc, const pgr_column *c);
/* pgr_emit_body_value for each column, comma separated. */
void pgr_emit_body_values(pgr_sql *q, const pgr_schema_cache *sc,
                          const pgr_column *const *columns, size_t n);
/* A column's type in json_to_record(set)'s column definition list. */
const char *pgr_record_column_type(const pgr_schema_cache *sc, const pgr_column *c);
/* The column definition list of json_to_record(set): declared types keep
 * their modifiers (bit(5), character(3)). */
void pgr_emit_record_columns(pgr_sql *q, const pgr_schema_cache *sc,
                             const pgr_column *const *columns, size_t n);
/* Whether the column's json_to_record type is json or jsonb (a domain's
 * json representation included): a JSON string for it stays a string. */
bool pgr_record_column_is_json(const pgr_schema_cache *sc, const pgr_column *c);
/* The column's body value goes through its domain's json representation
 * function (PostgREST's "Domain Request Body Format"). */
bool pgr_record_column_transformed(const pgr_schema_cache *sc, const pgr_column *c);
/* missing=default: jsonb_build_object('<col>', <default>, ...) for the
 * columns that have a default (from the catalog, never the request). */
void pgr_emit_defaults_object(pgr_sql *q, const pgr_column *const *columns, size_t n);
/* " RETURNING ..." of the request's own table. */
void pgr_emit_returning(pgr_sql *q, const pgr_mutate_plan *mp);

#endif
