/* Data.FuzzySet as PostgREST's hints use it (fuzzyset, a port of
 * fuzzyset.js): gram sizes 3 down to 2, Levenshtein re-scoring on. */
#include "plan/fuzzyset.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#define GRAM_SIZE_UPPER 3
#define GRAM_SIZE_LOWER 2
#define LEVENSHTEIN_CANDIDATES 50

typedef struct gram_count {
    const char *gram;   /* into the padded string */
    int count;
} gram_count;

typedef struct gram_vector {
    gram_count *grams;
    size_t n;
    double squares;     /* the magnitude squared */
} gram_vector;

typedef struct scored {
    const char *entry;  /* as given */
    const char *lower;  /* its normalized (lower case) form */
    double score;
} scored;

static char *lower_copy(pgrest_arena *a, const char *s)
{
    size_t n = strlen(s);
    char *out = pgr_alloc(a, n + 1);
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        out[i] = (char)tolower((unsigned char)s[i]);
    out[n] = '\0';
    return out;
}

/* fuzzyset normalized: letters, digits (bytes of non-ASCII characters
 * kept as letters), white space and commas of the lower-cased value,
 * enclosed in '-'. */
static char *gram_source(pgrest_arena *a, const char *lower)
{
    size_t n = strlen(lower);
    char *out = pgr_alloc(a, n + 3);
    if (out == NULL)
        return NULL;
    size_t k = 0;
    out[k++] = '-';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)lower[i];
        if (isalnum(c) || isspace(c) || c == ',' || c >= 0x80)
            out[k++] = (char)c;
    }
    out[k++] = '-';
    out[k] = '\0';
    return out;
}

static bool gram_vector_of(pgrest_arena *a, const char *lower, size_t size,
                           gram_vector *v)
{
    const char *src = gram_source(a, lower);
    if (src == NULL)
        return false;
    size_t len = strlen(src);
    v->n = 0;
    v->grams = len >= size ? PGR_NEW_ARRAY(a, gram_count, len - size + 1) : NULL;
    if (len >= size && v->grams == NULL)
        return false;
    for (size_t i = 0; len >= size && i + size <= len; i++) {
        size_t j = 0;
        while (j < v->n && memcmp(v->grams[j].gram, src + i, size) != 0)
            j++;
        if (j == v->n)
            v->grams[v->n++] = (gram_count){src + i, 0};
        v->grams[j].count++;
    }
    v->squares = 0.0;
    for (size_t j = 0; j < v->n; j++)
        v->squares += (double)v->grams[j].count * v->grams[j].count;
    return true;
}

static int dot_product(const gram_vector *x, const gram_vector *y, size_t size)
{
    int dot = 0;
    for (size_t i = 0; i < x->n; i++)
        for (size_t j = 0; j < y->n; j++)
            if (memcmp(x->grams[i].gram, y->grams[j].gram, size) == 0)
                dot += x->grams[i].count * y->grams[j].count;
    return dot;
}

size_t pgr_levenshtein(const char *s, const char *t, size_t *row)
{
    size_t n = strlen(s), m = strlen(t);
    for (size_t j = 0; j <= m; j++)
        row[j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t above = row[j];
            size_t best = diagonal + (s[i - 1] == t[j - 1] ? 0 : 1);
            if (above + 1 < best)
                best = above + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diagonal = above;
        }
    }
    return row[m];
}

/* 1 - Levenshtein distance / the longer length */
static double levenshtein_score(pgrest_arena *a, const char *s, const char *t)
{
    size_t n = strlen(s), m = strlen(t);
    size_t longer = n > m ? n : m;
    if (longer == 0)
        return 1.0;
    size_t *row = PGR_NEW_ARRAY(a, size_t, m + 1);
    if (row == NULL)
        return 0.0;
    return 1.0 - (double)pgr_levenshtein(s, t, row) / (double)longer;
}

/* Stable descending insertion sort: equal scores keep their order, as
 * sortOn (Down . fst) does. */
static void sort_descending(scored *xs, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        scored x = xs[i];
        size_t j = i;
        while (j > 0 && xs[j - 1].score < x.score) {
            xs[j] = xs[j - 1];
            j--;
        }
        xs[j] = x;
    }
}

/* getMatches for one gram size; the best entry of at least min_score,
 * NULL when none (the caller then tries the next gram size). */
static const char *best_match(pgrest_arena *a, const char *key, const scored *set,
                              size_t n, size_t size, double min_score)
{
    gram_vector q;
    scored *found = PGR_NEW_ARRAY(a, scored, n + 1);
    if (found == NULL || !gram_vector_of(a, key, size, &q))
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        gram_vector e;
        if (!gram_vector_of(a, set[i].lower, size, &e))
            return NULL;
        int dot = dot_product(&q, &e, size);
        if (dot == 0)
            continue;
        /* the cosine only orders the candidates: its square orders
         * them the same */
        found[k] = set[i];
        found[k].score = (double)dot * dot / (q.squares * e.squares);
        k++;
    }
    sort_descending(found, k);
    if (k > LEVENSHTEIN_CANDIDATES)
        k = LEVENSHTEIN_CANDIDATES;
    for (size_t i = 0; i < k; i++)
        found[i].score = levenshtein_score(a, key, found[i].lower);
    sort_descending(found, k);
    return k > 0 && found[0].score >= min_score ? found[0].entry : NULL;
}

const char *pgr_fuzzyset_get_one(pgrest_arena *a, const char *query,
                                 const char *const *entries, size_t n,
                                 double min_score)
{
    const char *key = lower_copy(a, query);
    scored *set = PGR_NEW_ARRAY(a, scored, n + 1);
    if (key == NULL || set == NULL)
        return NULL;
    /* fromList: an entry whose normalized form is already there is not
     * added again */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const char *lower = entries[i] ? lower_copy(a, entries[i]) : NULL;
        if (lower == NULL)
            continue;
        size_t j = 0;
        while (j < m && strcmp(set[j].lower, lower) != 0)
            j++;
        if (j < m)
            continue;
        set[m++] = (scored){entries[i], lower, 0.0};
    }
    for (size_t i = 0; i < m; i++)
        if (strcmp(set[i].lower, key) == 0)
            return set[i].entry;
    for (size_t size = GRAM_SIZE_UPPER; size >= GRAM_SIZE_LOWER; size--) {
        const char *best = best_match(a, key, set, m, size, min_score);
        if (best != NULL)
            return best;
    }
    return NULL;
}
