/* "Perhaps you meant ..." hints (PostgREST's fuzzy index on the schema
 * cache, used for PGRST200/202/205). */
#ifndef PGR_FUZZY_H
#define PGR_FUZZY_H

#include "schema/schema_cache.h"

/* Data.FuzzySet's getOneWithMinScore over cands[0..n) (NULL entries are
 * skipped): the index of the best candidate, or -1 when none reaches
 * min_score; *score is its score (1 for a case-insensitive equal).
 * Scratch space comes from the arena. */
long pgr_fuzzy_get_one(pgrest_arena *a, const char *query,
                       const char *const *cands, size_t n, double min_score,
                       double *score);

/* Closest relation name in schema, or NULL if none is close enough
 * (Error.tableNotFoundHint). */
const char *pgr_fuzzy_table(pgrest_arena *a, const pgr_schema_cache *sc,
                            const char *schema, const char *name);

/* 404 PGRST205 with PostgREST's "Perhaps you meant the table" hint. */
int pgr_table_not_found(pgrest_arena *a, const pgr_schema_cache *sc,
                        const char *schema, const char *name, pgrest_error *err);

/* 1 - Levenshtein distance / longer length of the lowercased names, in
 * [0, 1]; 0 for names too long to compare. */
double pgr_fuzzy_similarity(const char *a, const char *b);

/* Closest of cands[0..n) to name by FuzzySet.get, or NULL; NULL too when
 * name is one of them (PostgREST's noRelBetweenHint ignores a match of
 * weight 1.0). */
const char *pgr_fuzzy_pick(pgrest_arena *a, const char *name,
                           const char *const *cands, size_t n);

#endif
