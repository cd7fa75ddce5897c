/* --dump-schema: the schema cache as JSON in the shape of PostgREST's
 * `JSON.encode SchemaCache` (SchemaCache.hs ToJSON, aeson generic
 * encoding): {"dbTables", "dbRelationships", "dbRoutines",
 * "dbRepresentations", "dbMediaHandlers"}; maps keyed by a qualified
 * identifier are arrays of [key, value] pairs. Built from pgrest's schema
 * snapshot; PostgREST calls the structure unstable, and docs/operations.md
 * lists where this one differs. */
#ifndef PGRS_SCHEMA_DUMP_H
#define PGRS_SCHEMA_DUMP_H

#include <stdio.h>

/* Reads the snapshot at path and writes the dump to out. 0 or -1. */
int schema_dump(FILE *out, const char *snapshot_path);

#endif
