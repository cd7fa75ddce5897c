/* Data.FuzzySet, the fuzzy matcher behind PostgREST's "Perhaps you
 * meant ..." hints. */
#ifndef PGR_FUZZYSET_H
#define PGR_FUZZYSET_H

#include <stddef.h>

#include "util/arena.h"

/* The first result of Data.FuzzySet's getWithMinScore min_score over the
 * set cands[0..n): an exact (case-insensitive) match with *score = 1, else
 * the best-scored candidate with score >= min_score, else NULL. Scratch
 * memory comes from a; the result points into cands. */
const char *pgr_fuzzyset_best(pgrest_arena *a, const char *name,
                              const char *const *cands, size_t n,
                              double min_score, double *score);

#endif
