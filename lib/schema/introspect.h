/* Schema cache introspection: one statement, JSON out of PostgreSQL
 * (PostgREST SchemaCache.hs querySchemaCache). */
#ifndef PGR_INTROSPECT_H
#define PGR_INTROSPECT_H

#include "pgrest/pgrest.h"

/* Runs the introspection query on pgconn (a PGconn*, idle, not in
 * pipeline mode) and stores the snapshot document (the JSON format of
 * schema/schema_cache.h) in *json_out, allocated in a.
 * schemas: NULL-terminated exposed schemas (db-schemas).
 * extra_search_path: NULL-terminated (db-extra-search-path), may be NULL.
 * One round trip; the statement leaves search_path as it found it.
 * Routine "settings" carry every proconfig entry: filtering them by
 * db-hoisted-tx-settings is the caller's job.
 * Errors: 503 PGRST002 "Could not query the database for the schema
 * cache. Retrying." with the PostgreSQL message in details; out of memory
 * via pgr_error_oom. Returns PGREST_OK or a negative pgrest_status. */
int pgr_introspect(void *pgconn, const char *const *schemas,
                   const char *const *extra_search_path, pgrest_arena *a,
                   char **json_out, pgrest_error *err);

#endif
