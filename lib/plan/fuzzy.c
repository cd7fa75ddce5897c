#include "plan/fuzzy.h"

#include <stdlib.h>
#include <string.h>

#include "plan/fuzzyset.h"
#include "util/error.h"

/* Plain Levenshtein distance, for pgr_fuzzy_similarity (table hints use
 * fuzzyset.c, Data.FuzzySet itself). */
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

/* SchemaCache.hs builds the fuzzy index only for schemas of fewer
 * relations than this (maxDbTablesForFuzzySearch). */
#define FUZZY_MAX_TABLES 500
/* Error.hs getFuzzyHint HintTable */
#define TABLE_HINT_MIN_SCORE 0.75

const char *pgr_fuzzy_table(pgrest_arena *a, const pgr_schema_cache *sc,
                            const char *schema, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < sc->n_tables; i++)
        n += strcmp(sc->tables[i].schema, schema) == 0;
    if (n == 0 || n >= FUZZY_MAX_TABLES)
        return NULL;
    const char **names = PGR_NEW_ARRAY(a, const char *, n);
    if (names == NULL)
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < sc->n_tables; i++)
        if (strcmp(sc->tables[i].schema, schema) == 0)
            names[m++] = sc->tables[i].name;
    double score = 0;
    return pgr_fuzzyset_best(a, name, names, m, TABLE_HINT_MIN_SCORE, &score);
}

int pgr_table_not_found(pgrest_arena *a, const pgr_schema_cache *sc,
                        const char *schema, const char *name, pgrest_error *err)
{
    const char *best = pgr_fuzzy_table(a, sc, schema, name);
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
