/* "Perhaps you meant ..." hints (PostgREST's fuzzy index on the schema
 * cache, used for PGRST200/202/205). */
#ifndef PGR_FUZZY_H
#define PGR_FUZZY_H

#include "schema/schema_cache.h"

/* Closest relation name in schema by Data.FuzzySet (min score 0.75), or
 * NULL if none is close enough or the schema is too large to index. */
const char *pgr_fuzzy_table(pgrest_arena *a, const pgr_schema_cache *sc,
                            const char *schema, const char *name);

/* 404 PGRST205 with PostgREST's "Perhaps you meant the table" hint. */
int pgr_table_not_found(pgrest_arena *a, const pgr_schema_cache *sc,
                        const char *schema, const char *name, pgrest_error *err);

/* 1 - Levenshtein distance / longer length, in [0, 1]; 0 for names too
 * long to compare. */
double pgr_fuzzy_similarity(const char *a, const char *b);

#endif
