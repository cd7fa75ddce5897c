/* Data.FuzzySet (the fuzzyset package PostgREST's Error.hs hints use): the
 * entries closest to a query by cosine similarity of character n-grams
 * (3-grams, else 2-grams), the best 50 re-scored by Levenshtein
 * similarity. Pure; allocations in the arena. */
#ifndef PGR_FUZZYSET_H
#define PGR_FUZZYSET_H

#include <stddef.h>

#include "util/arena.h"

/* FuzzySet getOneWithMinScore over fromList entries[0..n): the best entry
 * scoring at least min_score (an entry equal to query ignoring case scores
 * 1), or NULL. getOne is min_score 0.33. Entries are compared in the
 * order given (ties keep it). */
const char *pgr_fuzzyset_get_one(pgrest_arena *a, const char *query,
                                 const char *const *entries, size_t n,
                                 double min_score);

/* The Levenshtein distance of s and t; row has room for strlen(t) + 1
 * entries. */
size_t pgr_levenshtein(const char *s, const char *t, size_t *row);

#endif
