/* Schema cache introspection: one statement, JSON out of PostgreSQL
 * (PostgREST SchemaCache.hs querySchemaCache). */
#ifndef PGR_INTROSPECT_H
#define PGR_INTROSPECT_H

#include <stdbool.h>

#include "pgrest/pgrest.h"

typedef struct pgr_introspect_opts {
    const char *const *schemas;            /* db-schemas, NULL-terminated */
    const char *const *extra_search_path;  /* db-extra-search-path or NULL */
    /* db-hoisted-tx-settings: regular expressions matched against a
     * function's "name=value" settings; NULL = PostgREST's default */
    const char *const *hoisted_settings;
    bool role_settings;                    /* db-config: read ALTER ROLE SET */
    /* log-level debug: time each part as PostgREST times its statements
     * (read them with pgr_introspect_timings) */
    bool timings;
} pgr_introspect_opts;

/* Runs the introspection query on pgconn (a PGconn*, idle, not in
 * pipeline mode) and stores the snapshot document (the JSON format of
 * schema/schema_cache.h) in *json_out, allocated in a.
 * One round trip; the statement leaves search_path as it found it.
 * Routine "settings" are the proconfig entries matching
 * opts->hoisted_settings; "role_settings" are read when
 * opts->role_settings (PostgREST reads them only with db-config on).
 * Errors: 503 PGRST002 "Could not query the database for the schema
 * cache. Retrying." with the PostgreSQL message in details; out of memory
 * via pgr_error_oom. Returns PGREST_OK or a negative pgrest_status. */
int pgr_introspect(void *pgconn, const pgr_introspect_opts *opts,
                   pgrest_arena *a, char **json_out, pgrest_error *err);

/* After a pgr_introspect with opts->timings on the same connection: the
 * line PostgREST logs after "Schema cache queried in ..." at debug,
 * "tables: X ms, keydeps: X ms, rels: X ms, funcs: X ms, comprels: X ms,
 * dreps: X ms, mhdrs: X ms" (X as PostgreSQL prints the milliseconds of
 * the interval), into *line_out. */
int pgr_introspect_timings(void *pgconn, pgrest_arena *a, char **line_out,
                           pgrest_error *err);

/* Only the snapshot's "role_settings" array (as above with
 * opts->role_settings), into *json_out: a config reload reads them again
 * (PostgREST readInDbConfig queryRoleSettings). */
int pgr_introspect_role_settings(void *pgconn, pgrest_arena *a, char **json_out,
                                 pgrest_error *err);

#endif
