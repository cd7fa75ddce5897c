/* "Perhaps you meant ..." hints (PostgREST's fuzzy index on the schema
 * cache, used for PGRST200/202/205). */
#ifndef PGR_FUZZY_H
#define PGR_FUZZY_H

#include "schema/schema_cache.h"

/* 404 PGRST205 with PostgREST's "Perhaps you meant the table" hint. */
int pgr_table_not_found(pgrest_arena *a, const pgr_schema_cache *sc,
                        const char *schema, const char *name, pgrest_error *err);

/* Closest of cands[0..n) to name, skipping exact matches (PostgREST's
 * noRelBetweenHint ignores candidates with weight 1.0), or NULL. */
const char *pgr_fuzzy_pick(const char *name, const char *const *cands,
                           size_t n);

#endif
