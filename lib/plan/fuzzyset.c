/* Data.FuzzySet (the fuzzyset package PostgREST's hints use), default
 * set: gram sizes 3 then 2, Levenshtein rescoring.
 *
 *   get name = [(1, exact)] when a candidate equals name case-insensitively;
 *              otherwise, for the largest gram size that yields a result:
 *              the candidates sharing a gram with name, ranked by the cosine
 *              of their gram-count vectors, the first 50 rescored by
 *              1 - levenshtein / longer length (lower-cased), sorted by
 *              that score, those >= min_score kept.
 *
 * Grams are taken from '-' + name + '-', lower-cased and stripped of all
 * but alphanumerics, spaces and commas.
 * Strings are compared by code point. */
#include "plan/fuzzyset.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GRAM_MAX 3
#define RESCORED_MAX 50

typedef struct cps {
    uint32_t *v;
    size_t n;
} cps;

static uint32_t lower(uint32_t c)
{
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* UTF-8 → lower-cased code points; a stray byte counts as one. */
static cps decode_lower(pgrest_arena *a, const char *s)
{
    size_t len = strlen(s);
    cps out = { PGR_NEW_ARRAY(a, uint32_t, len + 1), 0 };
    if (out.v == NULL)
        return out;
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        uint32_t c = p[i];
        size_t k = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
        if (i + k >= len)
            k = 0;
        for (size_t j = 1; j <= k; j++)
            if ((p[i + j] & 0xC0) != 0x80)
                k = 0;
        if (k > 0) {
            c &= 0x3Fu >> k;
            for (size_t j = 1; j <= k; j++)
                c = (c << 6) | (p[i + j] & 0x3F);
        }
        out.v[out.n++] = lower(c);
        i += k + 1;
    }
    return out;
}

static bool cps_eq(cps x, cps y)
{
    return x.n == y.n && memcmp(x.v, y.v, x.n * sizeof(*x.v)) == 0;
}

/* Haskell's isAlphaNum is Unicode-wide: non-ASCII counts as a letter. */
static bool gram_char(uint32_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == ' ' ||
           (c >= '\t' && c <= '\r') || c == ',' || c >= 0x80;
}

/* '-' + stripped + '-' (shorter than the gram size: no grams) */
static cps gram_source(pgrest_arena *a, cps s)
{
    cps out = { PGR_NEW_ARRAY(a, uint32_t, s.n + 2), 0 };
    if (out.v == NULL)
        return out;
    out.v[out.n++] = '-';
    for (size_t i = 0; i < s.n; i++)
        if (gram_char(s.v[i]))
            out.v[out.n++] = s.v[i];
    out.v[out.n++] = '-';
    return out;
}

/* A word's grams of one size, each packed in a uint64 (code points have
 * 21 bits), sorted so that equal grams are adjacent. */
typedef struct grams {
    uint64_t *v;
    size_t n;
} grams;

static int key_cmp(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

static grams make_grams(pgrest_arena *a, cps word, size_t size)
{
    grams g = { NULL, 0 };
    cps src = gram_source(a, word);
    if (src.v == NULL)
        return g;
    g.v = PGR_NEW_ARRAY(a, uint64_t, src.n);
    if (g.v == NULL)
        return g;
    for (size_t i = 0; i + size <= src.n; i++) {
        uint64_t k = 0;
        for (size_t j = 0; j < size; j++)
            k = (k << 21) | src.v[i + j];
        g.v[g.n++] = k;
    }
    qsort(g.v, g.n, sizeof(*g.v), key_cmp);
    return g;
}

/* Dot product of the gram-count vectors (merge of two sorted lists). */
static double gram_dot(grams x, grams y)
{
    double dot = 0;
    size_t i = 0, j = 0;
    while (i < x.n && j < y.n) {
        if (x.v[i] != y.v[j]) {
            if (x.v[i] < y.v[j])
                i++;
            else
                j++;
            continue;
        }
        uint64_t k = x.v[i];
        size_t cx = 0, cy = 0;
        for (; i < x.n && x.v[i] == k; i++)
            cx++;
        for (; j < y.n && y.v[j] == k; j++)
            cy++;
        dot += (double)cx * (double)cy;
    }
    return dot;
}

static double levenshtein_score(pgrest_arena *a, cps s, cps t)
{
    size_t longer = s.n > t.n ? s.n : t.n;
    if (longer == 0)
        return 1.0;
    size_t *row = PGR_NEW_ARRAY(a, size_t, t.n + 1);
    if (row == NULL)
        return 0.0;
    for (size_t j = 0; j <= t.n; j++)
        row[j] = j;
    for (size_t i = 1; i <= s.n; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= t.n; j++) {
            size_t up = row[j];
            size_t best = diag + (s.v[i - 1] != t.v[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return 1.0 - (double)row[t.n] / (double)longer;
}

typedef struct scored {
    size_t idx;
    double score;
} scored;

/* Descending by score; equal scores keep their order (Haskell's sortOn is
 * stable). */
static void sort_desc(scored *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        scored x = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1].score < x.score; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

static const char *best_for_gram_size(pgrest_arena *a, cps q, const cps *lc,
                                      const char *const *cands, size_t n,
                                      size_t size, double min_score,
                                      double *score)
{
    scored *v = PGR_NEW_ARRAY(a, scored, n + 1);
    grams qg = make_grams(a, q, size);
    if (v == NULL || qg.v == NULL)
        return NULL;
    double qnorm2 = gram_dot(qg, qg);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        grams cg = make_grams(a, lc[i], size);
        if (cg.v == NULL)
            return NULL;
        double dot = gram_dot(qg, cg);
        if (dot > 0)
            /* the squared cosine ranks alike */
            v[m++] = (scored){ i, dot * dot / (qnorm2 * gram_dot(cg, cg)) };
    }
    sort_desc(v, m);
    if (m > RESCORED_MAX)
        m = RESCORED_MAX;
    for (size_t i = 0; i < m; i++)
        v[i].score = levenshtein_score(a, q, lc[v[i].idx]);
    sort_desc(v, m);
    if (m == 0 || v[0].score < min_score)
        return NULL;
    *score = v[0].score;
    return cands[v[0].idx];
}

const char *pgr_fuzzyset_best(pgrest_arena *a, const char *name,
                              const char *const *cands, size_t n,
                              double min_score, double *score)
{
    cps q = decode_lower(a, name);
    cps *lc = PGR_NEW_ARRAY(a, cps, n + 1);
    if (q.v == NULL || lc == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        lc[i] = decode_lower(a, cands[i]);
        if (lc[i].v == NULL)
            return NULL;
        if (cps_eq(q, lc[i])) {
            *score = 1.0;
            return cands[i];
        }
    }
    for (size_t size = GRAM_MAX; size >= 2; size--) {
        const char *best = best_for_gram_size(a, q, lc, cands, n, size,
                                              min_score, score);
        if (best != NULL)
            return best;
    }
    return NULL;
}
