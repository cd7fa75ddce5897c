#include "plan/fuzzy.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

/* PostgREST's Data.FuzzySet: a candidate is suggested when its similarity
 * (based on character n-grams) is high enough. Approximated with the
 * Levenshtein distance relative to the longer name. */
static size_t levenshtein(const char *s, const char *t)
{
    size_t n = strlen(s), m = strlen(t);
    if (n > 128 || m > 128)
        return (size_t)-1;
    size_t row[129];
    for (size_t j = 0; j <= m; j++)
        row[j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t cur = row[j];
            size_t cost = s[i - 1] == t[j - 1] ? 0 : 1;
            size_t best = prev + cost;
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            prev = cur;
        }
    }
    return row[m];
}

/* PostgREST builds its fuzzy index only for schemas with fewer tables
 * (SchemaCache.hs maxDbTablesForFuzzySearch): a larger one gets no hint. */
#define MAX_TABLES_FOR_FUZZY_SEARCH 500

const char *pgr_fuzzy_table(const pgr_schema_cache *sc, const char *schema,
                            const char *name)
{
    const char *best = NULL;
    double best_score = 0.0;
    size_t in_schema = 0;
    for (size_t i = 0; i < sc->n_tables; i++) {
        const pgr_table *t = &sc->tables[i];
        if (strcmp(t->schema, schema) != 0)
            continue;
        if (++in_schema >= MAX_TABLES_FOR_FUZZY_SEARCH)
            return NULL;
        size_t d = levenshtein(name, t->name);
        size_t len = strlen(name) > strlen(t->name) ? strlen(name) : strlen(t->name);
        if (d == (size_t)-1 || len == 0)
            continue;
        double score = 1.0 - (double)d / (double)len;
        if (score > best_score) {
            best_score = score;
            best = t->name;
        }
    }
    /* The 0.7 cut-off reproduces the hints PostgREST gives and withholds in
     * its test suite (ErrorSpec, QuerySpec "nonexistent table"). */
    return best_score >= 0.7 ? best : NULL;
}

int pgr_table_not_found(pgrest_arena *a, const pgr_schema_cache *sc,
                        const char *schema, const char *name, pgrest_error *err)
{
    const char *best = pgr_fuzzy_table(sc, schema, name);
    const char *hint = best ? pgr_asprintf(a, "Perhaps you meant the table '%s.%s'",
                                           schema, best)
                            : NULL;
    return pgr_errorf(err, a, 404, "PGRST205", NULL, hint,
                      "Could not find the table '%s.%s' in the schema cache",
                      schema, name);
}

double pgr_fuzzy_similarity(const char *a, const char *b)
{
    size_t d = levenshtein(a, b);
    size_t len = strlen(a) > strlen(b) ? strlen(a) : strlen(b);
    if (d == (size_t)-1 || len == 0)
        return 0.0;
    return 1.0 - (double)d / (double)len;
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
