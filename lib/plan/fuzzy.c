#include "plan/fuzzy.h"

#include <stdlib.h>
#include <string.h>

#include "plan/fuzzyset.h"
#include "util/error.h"

/* Relationship hints (pgr_fuzzy_pick) approximate Data.FuzzySet with the
 * Levenshtein distance relative to the longer name; table and function
 * hints use plan/fuzzyset.c. */
static size_t levenshtein(const char *s, const char *t)
{
    size_t row[129];
    if (strlen(s) > 128 || strlen(t) > 128)
        return (size_t)-1;
    return pgr_levenshtein(s, t, row);
}

/* Error.hs tableNotFoundHint: getFuzzyHint HintTable over the schema's
 * table names, getOneWithMinScore 0.75. */
#define TABLE_MIN_SCORE 0.75

static const char *fuzzy_table(pgrest_arena *a, const pgr_schema_cache *sc,
                               const char *schema, const char *name)
{
    const char **names = PGR_NEW_ARRAY(a, const char *, sc->n_tables + 1);
    if (names == NULL)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < sc->n_tables; i++)
        if (strcmp(sc->tables[i].schema, schema) == 0)
            names[n++] = sc->tables[i].name;
    return pgr_fuzzyset_get_one(a, name, names, n, TABLE_MIN_SCORE);
}

int pgr_table_not_found(pgrest_arena *a, const pgr_schema_cache *sc,
                        const char *schema, const char *name, pgrest_error *err)
{
    const char *best = fuzzy_table(a, sc, schema, name);
    const char *hint = best ? pgr_asprintf(a, "Perhaps you meant the table '%s.%s'",
                                           schema, best)
                            : NULL;
    return pgr_errorf(err, a, 404, "PGRST205", NULL, hint,
                      "Could not find the table '%s.%s' in the schema cache",
                      schema, name);
}

const char *pgr_fuzzy_pick(const char *name, const char *const *cands, size_t n)
{
    const char *best = NULL;
    double best_score = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(cands[i], name) == 0)
            continue;
        size_t d = levenshtein(name, cands[i]);
        size_t len = strlen(name) > strlen(cands[i]) ? strlen(name) : strlen(cands[i]);
        if (d == (size_t)-1 || len == 0)
            continue;
        double score = 1.0 - (double)d / (double)len;
        if (score > best_score) {
            best_score = score;
            best = cands[i];
        }
    }
    return best_score >= 0.5 ? best : NULL;
}
