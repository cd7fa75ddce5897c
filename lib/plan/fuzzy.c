#include "plan/fuzzy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

/* PostgREST's hints come from Data.FuzzySet (the fuzzyset package, a port
 * of fuzzyset.js) with its defaults: gram sizes 3 then 2, Levenshtein
 * rescoring. A query equal to a member (case-insensitively) scores 1.
 * Otherwise, for gram size 3 and, if nothing qualifies, 2: the members
 * sharing a gram with the query are ranked by the cosine of their gram
 * vectors, the best 50 are rescored by 1 - levenshtein / longer length
 * (on the lowercased names) and kept when that score reaches min_score.
 * Grams are taken over the lowercased name stripped of everything but
 * letters, digits, spaces and commas, padded with '-' on both sides. */

#define FUZZY_MAX_CHARS 256 /* longer names are never suggested */
#define FUZZY_RESCORED 50

typedef struct fuzzy_text {
    uint32_t cp[FUZZY_MAX_CHARS];
    size_t n;
} fuzzy_text;

typedef struct gram {
    uint32_t cp[3];
    int count;
} gram;

typedef struct gram_vector {
    gram g[FUZZY_MAX_CHARS + 2];
    size_t n;
    double sum_sq; /* the squared magnitude */
} gram_vector;

typedef struct fuzzy_candidate {
    size_t index;     /* in the caller's list: ties keep that order */
    double cosine;    /* squared, which ranks the same */
    double score;
} fuzzy_candidate;

static uint32_t lower_cp(uint32_t c)
{
    return c < 128 && c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* UTF-8 to lowercased code points; false if too long. Invalid bytes are
 * kept as code points of their own (names come from the catalog or a
 * decoded URL, both UTF-8). */
static bool decode_lower(const char *s, fuzzy_text *out)
{
    const unsigned char *p = (const unsigned char *)s;
    out->n = 0;
    while (*p) {
        uint32_t c = *p;
        int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
        p++;
        if (extra > 0) {
            c &= 0x3F >> extra;
            for (int i = 0; i < extra && (*p & 0xC0) == 0x80; i++)
                c = (c << 6) | (*p++ & 0x3F);
        }
        if (out->n == FUZZY_MAX_CHARS)
            return false;
        out->cp[out->n++] = lower_cp(c);
    }
    return true;
}

/* FuzzySet's `normalized`: isAlphaNum, isSpace or ','; code points past
 * ASCII count as letters. */
static bool gram_char(uint32_t c)
{
    if (c >= 128)
        return true;
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == ' ' ||
           c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' ||
           c == ',';
}

static void gram_add(gram_vector *v, const uint32_t *cp, int size)
{
    for (size_t i = 0; i < v->n; i++)
        if (memcmp(v->g[i].cp, cp, sizeof(uint32_t) * (size_t)size) == 0) {
            v->g[i].count++;
            return;
        }
    memset(v->g[v->n].cp, 0, sizeof v->g[v->n].cp);
    memcpy(v->g[v->n].cp, cp, sizeof(uint32_t) * (size_t)size);
    v->g[v->n].count = 1;
    v->n++;
}

static void gram_vector_of(const fuzzy_text *t, int size, gram_vector *v)
{
    uint32_t s[FUZZY_MAX_CHARS + 2];
    size_t n = 0;
    s[n++] = '-';
    for (size_t i = 0; i < t->n; i++)
        if (gram_char(t->cp[i]))
            s[n++] = t->cp[i];
    s[n++] = '-';
    v->n = 0;
    for (size_t i = 0; i + (size_t)size <= n; i++)
        gram_add(v, s + i, size);
    double sq = 0.0;
    for (size_t i = 0; i < v->n; i++)
        sq += (double)v->g[i].count * v->g[i].count;
    v->sum_sq = sq;
}

static double gram_dot(const gram_vector *a, const gram_vector *b)
{
    double dot = 0.0;
    for (size_t i = 0; i < a->n; i++)
        for (size_t j = 0; j < b->n; j++)
            if (memcmp(a->g[i].cp, b->g[j].cp, sizeof a->g[i].cp) == 0)
                dot += (double)a->g[i].count * b->g[j].count;
    return dot;
}

static size_t levenshtein(const fuzzy_text *s, const fuzzy_text *t)
{
    size_t row[FUZZY_MAX_CHARS + 1];
    for (size_t j = 0; j <= t->n; j++)
        row[j] = j;
    for (size_t i = 1; i <= s->n; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= t->n; j++) {
            size_t up = row[j];
            size_t best = diag + (s->cp[i - 1] == t->cp[j - 1] ? 0 : 1);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[t->n];
}

static double edit_similarity(const fuzzy_text *a, const fuzzy_text *b)
{
    size_t longer = a->n > b->n ? a->n : b->n;
    if (longer == 0)
        return 1.0;
    return 1.0 - (double)levenshtein(a, b) / (double)longer;
}

static int by_cosine(const void *x, const void *y)
{
    const fuzzy_candidate *a = x, *b = y;
    if (a->cosine != b->cosine)
        return a->cosine < b->cosine ? 1 : -1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Stable on the cosine order, as Haskell's sortOn. */
static int by_score(const void *x, const void *y)
{
    const fuzzy_candidate *a = x, *b = y;
    if (a->score != b->score)
        return a->score < b->score ? 1 : -1;
    return by_cosine(x, y);
}

typedef struct fuzzy_work {
    fuzzy_text query;
    fuzzy_text cand;
    fuzzy_text other;
    gram_vector qv;
    gram_vector cv;
} fuzzy_work;

/* One gram size of FuzzySet.getMatches: the best member, or -1. */
static long best_for_gram_size(fuzzy_work *w, const char *const *cands,
                               const bool *member, size_t n, int size,
                               double min_score, fuzzy_candidate *scratch)
{
    gram_vector_of(&w->query, size, &w->qv);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!member[i] || !decode_lower(cands[i], &w->cand))
            continue;
        gram_vector_of(&w->cand, size, &w->cv);
        double dot = gram_dot(&w->qv, &w->cv);
        if (dot <= 0.0)
            continue;
        scratch[m].index = i;
        scratch[m].cosine = dot * dot / (w->qv.sum_sq * w->cv.sum_sq);
        m++;
    }
    qsort(scratch, m, sizeof *scratch, by_cosine);
    if (m > FUZZY_RESCORED)
        m = FUZZY_RESCORED;
    for (size_t i = 0; i < m; i++) {
        decode_lower(cands[scratch[i].index], &w->cand);
        scratch[i].score = edit_similarity(&w->query, &w->cand);
    }
    qsort(scratch, m, sizeof *scratch, by_score);
    return m > 0 && scratch[0].score >= min_score ? (long)scratch[0].index : -1;
}

static bool same_lowered(const fuzzy_text *a, const fuzzy_text *b)
{
    return a->n == b->n && memcmp(a->cp, b->cp, sizeof(uint32_t) * a->n) == 0;
}

/* FuzzySet.fromList keeps the first of names equal case-insensitively;
 * *exact is the member equal to the query, if any. */
static void mark_members(fuzzy_work *w, const char *const *cands, size_t n,
                         bool *member, long *exact)
{
    *exact = -1;
    for (size_t i = 0; i < n; i++) {
        member[i] = cands[i] != NULL && decode_lower(cands[i], &w->cand);
        for (size_t j = 0; member[i] && j < i; j++)
            if (member[j] && decode_lower(cands[j], &w->other) &&
                same_lowered(&w->cand, &w->other))
                member[i] = false;
        if (member[i] && *exact < 0 && same_lowered(&w->cand, &w->query))
            *exact = (long)i;
    }
}

long pgr_fuzzy_get_one(pgrest_arena *a, const char *query,
                       const char *const *cands, size_t n, double min_score,
                       double *score)
{
    *score = 0.0;
    fuzzy_work *w = PGR_NEW(a, fuzzy_work);
    bool *member = PGR_NEW_ARRAY(a, bool, n + 1);
    fuzzy_candidate *scratch = PGR_NEW_ARRAY(a, fuzzy_candidate, n + 1);
    if (w == NULL || member == NULL || scratch == NULL || query == NULL ||
        !decode_lower(query, &w->query))
        return -1;
    long exact;
    mark_members(w, cands, n, member, &exact);
    if (exact >= 0) {
        *score = 1.0;
        return exact;
    }
    for (int size = 3; size >= 2; size--) {
        long best = best_for_gram_size(w, cands, member, n, size, min_score, scratch);
        if (best >= 0) {
            *score = scratch[0].score;
            return best;
        }
    }
    return -1;
}

/* SchemaCache.maxDbTablesForFuzzySearch: no index for larger schemas. */
#define FUZZY_MAX_TABLES 500
/* Error.getFuzzyHint HintTable */
#define TABLE_MIN_SCORE 0.75

const char *pgr_fuzzy_table(pgrest_arena *a, const pgr_schema_cache *sc,
                            const char *schema, const char *name)
{
    const char **names = PGR_NEW_ARRAY(a, const char *, sc->n_tables + 1);
    if (names == NULL)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < sc->n_tables; i++)
        if (strcmp(sc->tables[i].schema, schema) == 0)
            names[n++] = sc->tables[i].name;
    if (n >= FUZZY_MAX_TABLES)
        return NULL;
    double score;
    long best = pgr_fuzzy_get_one(a, name, names, n, TABLE_MIN_SCORE, &score);
    return best >= 0 ? names[best] : NULL;
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
    fuzzy_text ta, tb;
    if (!decode_lower(a, &ta) || !decode_lower(b, &tb))
        return 0.0;
    return edit_similarity(&ta, &tb);
}

/* FuzzySet.get's default minimum score (getOne) */
#define GET_MIN_SCORE 0.33

const char *pgr_fuzzy_pick(pgrest_arena *a, const char *name,
                           const char *const *cands, size_t n)
{
    double score;
    long best = pgr_fuzzy_get_one(a, name, cands, n, GET_MIN_SCORE, &score);
    return best >= 0 && score < 1.0 ? cands[best] : NULL;
}
