/* "Perhaps you meant ..." hints (PostgREST's fuzzy index on the schema
 * cache, used for PGRST200/202/205). */
#ifndef PGR_FUZZY_H
#define PGR_FUZZY_H

#include "schema/schema_cache.h"

/* Closest relation name in schema, or NULL if none is close enough. */
const char *pgr_fuzzy_table(const pgr_schema_cache *sc, const char *schema,
                            const char *name);

/* Closest of cands[0..n) to name, skipping exact matches (PostgREST's
 * noRelBetweenHint ignores candidates with weight 1.0), or NULL. */
const char *pgr_fuzzy_pick(const char *name, const char *const *cands,
                           size_t n);

#endif
