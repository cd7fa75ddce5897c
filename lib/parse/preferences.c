/* Prefer header parsing: PostgREST src/ApiRequest/Preferences.hs
 * fromHeaders (first occurrence of each preference wins). */
#include "parse/preferences.h"
#include "parse/hs_integer.h"

#include <limits.h>
#include <string.h>
#include <strings.h>

typedef struct pref_value {
    const char *token;
    int value;
} pref_value;

static const pref_value return_values[] = {
    {"return=minimal", PGR_PREF_RETURN_MINIMAL},
    {"return=headers-only", PGR_PREF_RETURN_HEADERS_ONLY},
    {"return=representation", PGR_PREF_RETURN_REPRESENTATION},
    {NULL, 0}};
static const pref_value count_values[] = {
    {"count=exact", PGR_PREF_COUNT_EXACT},
    {"count=planned", PGR_PREF_COUNT_PLANNED},
    {"count=estimated", PGR_PREF_COUNT_ESTIMATED},
    {NULL, 0}};
static const pref_value resolution_values[] = {
    {"resolution=merge-duplicates", PGR_PREF_RESOLUTION_MERGE},
    {"resolution=ignore-duplicates", PGR_PREF_RESOLUTION_IGNORE},
    {NULL, 0}};
static const pref_value missing_values[] = {
    {"missing=default", PGR_PREF_MISSING_DEFAULT},
    {"missing=null", PGR_PREF_MISSING_NULL},
    {NULL, 0}};
static const pref_value tx_values[] = {
    {"tx=commit", PGR_PREF_TX_COMMIT},
    {"tx=rollback", PGR_PREF_TX_ROLLBACK},
    {NULL, 0}};
static const pref_value handling_values[] = {
    {"handling=strict", PGR_PREF_HANDLING_STRICT},
    {"handling=lenient", PGR_PREF_HANDLING_LENIENT},
    {NULL, 0}};

static int lookup(const pref_value *vals, const char *tok)
{
    for (; vals->token != NULL; vals++)
        if (strcmp(vals->token, tok) == 0)
            return vals->value;
    return -1;
}

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}


/* first occurrence wins: keeps current once set; true if tok is in vals */
static bool pick(const pref_value *vals, const char *tok, int current,
                 int *next)
{
    int v = lookup(vals, tok);
    if (v < 0)
        return false;
    *next = current != 0 ? current : v;
    return true;
}

typedef struct pref_state {
    pgrest_arena *a;
    pgr_preferences *out;
    bool seen_tz, seen_max;
    size_t cap_invalid;
} pref_state;

static void add_invalid(pref_state *st, const char *tok)
{
    pgr_preferences *out = st->out;
    if (out->n_invalid == st->cap_invalid) {
        size_t ncap = st->cap_invalid ? st->cap_invalid * 2 : 4;
        const char **n = pgr_realloc(st->a, (void *)out->invalid,
                                     st->cap_invalid * sizeof(*n),
                                     ncap * sizeof(*n));
        if (n == NULL)
            return;
        out->invalid = n;
        st->cap_invalid = ncap;
    }
    out->invalid[out->n_invalid++] = tok;
}

static void prefix_pref(pref_state *st, const char *tok)
{
    if (starts_with(tok, "timezone=")) {
        if (!st->seen_tz)
            st->out->timezone = tok + strlen("timezone=");
        st->seen_tz = true;
    } else if (!st->seen_max) {
        /* readMaybe :: Maybe Int64 (PreferMaxAffected Int64): any Integer
         * literal, kept modulo 2^64 as fromInteger does */
        const char *num = tok + strlen("max-affected=");
        long long v;
        bool oom;
        if (pgr_hs_read_int64_wrapped(st->a, num, strlen(num), &v, &oom)) {
            st->out->max_affected = v;
            st->out->has_max_affected = true;
        }
        st->seen_max = true;
    }
}

static void apply_token(pref_state *st, const char *tok)
{
    pgr_preferences *out = st->out;
    int v;
    if (pick(return_values, tok, (int)out->ret, &v)) {
        out->ret = (pgr_pref_return)v;
        return;
    }
    if (pick(count_values, tok, (int)out->count, &v)) {
        out->count = (pgr_pref_count)v;
        return;
    }
    if (pick(resolution_values, tok, (int)out->resolution, &v)) {
        out->resolution = (pgr_pref_resolution)v;
        return;
    }
    if (pick(missing_values, tok, (int)out->missing, &v)) {
        out->missing = (pgr_pref_missing)v;
        return;
    }
    if (pick(tx_values, tok, (int)out->tx, &v)) {
        out->tx = (pgr_pref_tx)v;
        return;
    }
    if (pick(handling_values, tok, (int)out->handling, &v)) {
        out->handling = (pgr_pref_handling)v;
        return;
    }
    if (starts_with(tok, "timezone=") || starts_with(tok, "max-affected="))
        prefix_pref(st, tok);
    else
        add_invalid(st, tok);
}

static inline bool is_ws(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* BS.split ',' then BS.strip: an empty value has no token, but every
 * comma separates one, so "a,,b" carries an empty (invalid) preference */
static void parse_value(pref_state *st, const char *v)
{
    if (*v == '\0')
        return;
    for (;;) {
        size_t n = strcspn(v, ",");
        const char *b = v, *e = v + n;
        while (b < e && is_ws(*b))
            b++;
        while (e > b && is_ws(e[-1]))
            e--;
        char *tok = pgr_strndup(st->a, b, (size_t)(e - b));
        if (tok != NULL)
            apply_token(st, tok);
        if (v[n] == '\0')
            return;
        v += n + 1;
    }
}

void pgr_parse_preferences(pgrest_arena *a, const pgrest_request *req,
                           pgr_preferences *out)
{
    memset(out, 0, sizeof(*out));
    out->max_affected = -1;
    pref_state st = {a, out, false, false, 0};
    if (req == NULL)
        return;
    for (const pgr_kv *h = req->headers; h != NULL; h = h->next)
        if (h->name != NULL && h->value != NULL &&
            strcasecmp(h->name, "prefer") == 0)
            parse_value(&st, h->value);
}
