/* Media types: PostgREST src/MediaType.hs decodeMediaType; Accept: wai
 * Network.Wai.Parse.parseHttpAccept. */
#include "parse/media_type.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/error.h"
#include "util/strbuf.h"

static inline bool is_alnum(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Parsec's `spaces`: any isSpace character. */
static const char *skip_spaces(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || (*p >= '\t' && *p <= '\r')))
        p++;
    return p;
}

/* many1 over alphaNum plus the given extra characters */
static const char *span_token(const char *p, const char *end, const char *extra)
{
    while (p < end && *p != '\0' && (is_alnum(*p) || strchr(extra, *p) != NULL))
        p++;
    return p;
}

static char *lowered(pgrest_arena *a, const char *s, size_t n)
{
    char *r = pgr_strndup(a, s, n);
    for (char *c = r; c != NULL && *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
    return r;
}

static const struct {
    const char *name;
    pgr_media_kind kind;
} known_types[] = {
    {"*/*", PGR_MEDIA_ANY},
    {"application/json", PGR_MEDIA_JSON},
    {"application/vnd.pgrst.object+json", PGR_MEDIA_OBJECT},
    {"application/vnd.pgrst.object", PGR_MEDIA_OBJECT},
    {"application/vnd.pgrst.array+json", PGR_MEDIA_ARRAY},
    {"application/vnd.pgrst.array", PGR_MEDIA_ARRAY},
    {"text/csv", PGR_MEDIA_CSV},
    {"text/plain", PGR_MEDIA_TEXT},
    {"text/xml", PGR_MEDIA_XML},
    {"application/octet-stream", PGR_MEDIA_OCTET},
    {"application/geo+json", PGR_MEDIA_GEOJSON},
    {"application/openapi+json", PGR_MEDIA_OPENAPI},
    {"application/vnd.pgrst.plan", PGR_MEDIA_PLAN},
    {"application/vnd.pgrst.plan+text", PGR_MEDIA_PLAN},
    {"application/vnd.pgrst.plan+json", PGR_MEDIA_PLAN},
    {"application/x-www-form-urlencoded", PGR_MEDIA_URLENCODED},
    {"application/x-ndjson", PGR_MEDIA_NDJSON},
};

static pgr_media_kind classify(const char *type)
{
    for (size_t i = 0; i < sizeof(known_types) / sizeof(known_types[0]); i++)
        if (strcmp(known_types[i].name, type) == 0)
            return known_types[i].kind;
    return PGR_MEDIA_OTHER;
}

/* pKeyVal's value: a quoted string up to the next '"', or many1 of
 * alphaNum and "|-". Returns the end of the value, NULL if none. */
static const char *param_value(const char *p, const char *end, const char **v, size_t *n)
{
    if (p < end && *p == '"') {
        const char *close = memchr(p + 1, '"', (size_t)(end - p - 1));
        if (close != NULL) {
            *v = p + 1;
            *n = (size_t)(close - p - 1);
            return close + 1;
        }
    }
    const char *e = span_token(p, end, "|-");
    if (e == p)
        return NULL;
    *v = p;
    *n = (size_t)(e - p);
    return e;
}

/* Parameters PostgREST reads; their names are case-insensitive (lowered
 * like the Map keys), their values are compared as written. */
static void apply_param(pgrest_arena *a, pgr_media_type *mt, const char *k, size_t kn,
                        const char *v, size_t vn)
{
    char *key = lowered(a, k, kn);
    char *val = pgr_strndup(a, v, vn);
    if (key == NULL || val == NULL)
        return;
    if (strcmp(key, "nulls") == 0)
        mt->nulls_stripped = strcmp(val, "stripped") == 0;
    else if (strcmp(key, "for") == 0)
        mt->plan_for = val;
    else if (strcmp(key, "options") == 0)
        mt->plan_options = val;
}

/* tokenizeMediaType's parameter list: each `; key = value` is tried as a
 * whole and the list ends at the first that does not parse (no eof). */
static void parse_params(pgrest_arena *a, pgr_media_type *mt, const char *p, const char *end)
{
    for (;;) {
        const char *q = skip_spaces(p, end);
        if (q >= end || *q != ';')
            return;
        q = skip_spaces(q + 1, end);
        const char *k = q;
        q = span_token(q, end, "-");
        if (q == k)
            return;
        size_t kn = (size_t)(q - k);
        q = skip_spaces(q, end);
        if (q >= end || *q != '=')
            return;
        const char *v = NULL;
        size_t vn = 0;
        q = skip_spaces(q + 1, end);
        /* pgrest's OpenAPI version ("3.1"): the value's '.' would end
         * PostgREST's list, which the document type does not read */
        if (mt->kind == PGR_MEDIA_OPENAPI && kn == 7 && strncasecmp(k, "version", 7) == 0) {
            const char *e = span_token(q, end, ".");
            if (e == q)
                return;
            mt->openapi_version = pgr_strndup(a, q, (size_t)(e - q));
            p = e;
            continue;
        }
        q = param_value(q, end, &v, &vn);
        if (q == NULL)
            return;
        apply_param(a, mt, k, kn, v, vn);
        p = q;
    }
}

/* decodeMediaType: type and subtype are read as a prefix (tokenizeMediaType
 * has no eof); text that does not start with one is MTOther as written. */
pgr_media_type *pgr_parse_media_type(pgrest_arena *a, const char *text)
{
    if (text == NULL)
        return NULL;
    pgr_media_type *mt = PGR_NEW(a, pgr_media_type);
    if (mt == NULL)
        return NULL;
    const char *end = text + strlen(text);
    mt->q = 1.0;
    const char *main_end = span_token(text, end, ".*");
    const char *sub = main_end + 1;
    const char *sub_end = main_end > text && *main_end == '/' ? span_token(sub, end, ".*+-") : sub;
    if (sub_end == sub) {
        mt->kind = PGR_MEDIA_OTHER;
        mt->text = pgr_strdup(a, text);
        return mt->text ? mt : NULL;
    }
    char *type = lowered(a, text, (size_t)(sub_end - text));
    if (type == NULL)
        return NULL;
    mt->kind = classify(type);
    parse_params(a, mt, sub_end, end);
    /* NDJSON is pgrest's own type, MTOther to PostgREST: it keeps the
     * text as written, so handler lookups and error texts stay PostgREST's */
    mt->text = mt->kind == PGR_MEDIA_OTHER || mt->kind == PGR_MEDIA_NDJSON ? pgr_strdup(a, text)
                                                                          : type;
    if (mt->text == NULL)
        return NULL;
    if (mt->kind == PGR_MEDIA_PLAN)
        mt->plan_text = strcmp(type, "application/vnd.pgrst.plan+json") != 0;
    else
        mt->plan_for = mt->plan_options = NULL;
    /* vnd.pgrst.array without nulls=stripped is plain JSON (checkArrayNullStrip) */
    if (mt->kind == PGR_MEDIA_ARRAY && !mt->nulls_stripped)
        mt->kind = PGR_MEDIA_JSON;
    if (mt->kind != PGR_MEDIA_ARRAY && mt->kind != PGR_MEDIA_OBJECT)
        mt->nulls_stripped = false;
    return mt;
}

static const char *const plan_option_names[] = {"analyze", "verbose", "settings", "buffers",
                                                "wal"};

static bool has_plan_option(const char *given, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = given; p != NULL && *p;) {
        size_t k = strcspn(p, "|");
        if (k == n && strncmp(p, name, n) == 0)
            return true;
        p += k + (p[k] == '|');
    }
    return false;
}

const char *pgr_media_plan_options(pgrest_arena *a, const pgr_media_type *m)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, 32);
    bool any = false;
    for (size_t i = 0; i < sizeof plan_option_names / sizeof plan_option_names[0]; i++) {
        if (!has_plan_option(m->plan_options, plan_option_names[i]))
            continue;
        pgr_sb_puts(&sb, any ? "|" : "");
        pgr_sb_puts(&sb, plan_option_names[i]);
        any = true;
    }
    return any ? pgr_sb_finish(&sb) : NULL;
}

const char *pgr_media_type_mime(pgrest_arena *a, const pgr_media_type *m)
{
    switch (m->kind) {
    case PGR_MEDIA_ARRAY:
        return "application/vnd.pgrst.array+json;nulls=stripped";
    case PGR_MEDIA_OBJECT:
        return m->nulls_stripped ? "application/vnd.pgrst.object+json;nulls=stripped"
                                 : "application/vnd.pgrst.object+json";
    case PGR_MEDIA_PLAN: {
        const pgr_media_type *inner =
            pgr_parse_media_type(a, m->plan_for ? m->plan_for : "application/json");
        const char *opts = pgr_media_plan_options(a, m);
        return pgr_asprintf(a, "application/vnd.pgrst.plan+%s; for=\"%s\"%s%s",
                            m->plan_text ? "text" : "json",
                            inner ? pgr_media_type_mime(a, inner) : "",
                            opts ? "; options=" : "", opts ? opts : "");
    }
    case PGR_MEDIA_OTHER:
    case PGR_MEDIA_NDJSON:
        return m->text;
    default:
        for (size_t i = 0; i < sizeof(known_types) / sizeof(known_types[0]); i++)
            if (known_types[i].kind == m->kind)
                return known_types[i].name;
        return m->text;
    }
}

/* ------------------------------------------------------------ Accept */

typedef struct accept_item {
    pgr_media_type *mt;
    int specificity;
    size_t idx;
} accept_item;

static int cmp_accept(const void *x, const void *y)
{
    const accept_item *p = x, *q = y;
    if (p->mt->q != q->mt->q)
        return p->mt->q > q->mt->q ? -1 : 1;
    if (p->specificity != q->specificity)
        return p->specificity > q->specificity ? -1 : 1;
    return p->idx < q->idx ? -1 : p->idx > q->idx;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Haskell `reads :: Double` prefix (an optional minus, digits, an
 * optional fraction and exponent), default 1.0 when there is none */
static double read_q(const char *s)
{
    bool negative = *s == '-';
    if (negative)
        s++;
    if (!is_digit(*s))
        return 1.0;
    double v = 0;
    for (; is_digit(*s); s++)
        v = v * 10 + (*s - '0');
    if (s[0] == '.' && is_digit(s[1])) {
        double scale = 0.1;
        for (s++; is_digit(*s); s++, scale /= 10)
            v += (*s - '0') * scale;
    }
    const char *e = s;
    if (*e == 'e' || *e == 'E') {
        e++;
        bool minus = *e == '-';
        if (*e == '-' || *e == '+')
            e++;
        if (is_digit(*e)) {
            int exp = 0;
            for (; is_digit(*e); e++)
                if (exp < 400)
                    exp = exp * 10 + (*e - '0');
            for (int i = 0; i < exp && v != 0; i++)
                v = minus ? v / 10 : v * 10;
        }
    }
    return negative ? -v : v;
}

/* one comma-separated element: spaces removed, split at ";q=" */
static pgr_media_type *accept_element(pgrest_arena *a, const char *s, size_t n,
                                      int *specificity)
{
    char *buf = pgr_alloc(a, n + 1);
    if (buf == NULL)
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ')
            buf[m++] = s[i];
    buf[m] = '\0';
    char *qpart = strstr(buf, ";q=");
    double q = 1.0;
    if (qpart != NULL) {
        q = read_q(qpart + 3);
        *qpart = '\0';
    }
    int semis = 0, stars = 0;
    for (const char *p = buf; *p; p++) {
        semis += *p == ';';
        stars += *p == '*';
    }
    *specificity = semis - stars;
    pgr_media_type *mt = pgr_parse_media_type(a, buf);
    if (mt != NULL)
        mt->q = q;
    return mt;
}

pgr_media_type *pgr_parse_accept(pgrest_arena *a, const char *header)
{
    if (header == NULL)
        return NULL;
    /* an empty Accept accepts nothing (parseHttpAccept gives []): one
     * empty type, which nothing produces, names the same nothing in
     * PGRST107 */
    if (*header == '\0')
        return pgr_parse_media_type(a, "");
    size_t count = 1;
    for (const char *p = header; *p; p++)
        count += *p == ',';
    accept_item *items = PGR_NEW_ARRAY(a, accept_item, count);
    if (items == NULL)
        return NULL;
    const char *p = header;
    for (size_t i = 0; i < count; i++) {
        size_t n = strcspn(p, ",");
        items[i].mt = accept_element(a, p, n, &items[i].specificity);
        items[i].idx = i;
        if (items[i].mt == NULL)
            return NULL;
        p += n + (p[n] == ',' ? 1 : 0);
    }
    qsort(items, count, sizeof(*items), cmp_accept);
    for (size_t i = 0; i + 1 < count; i++)
        items[i].mt->next = items[i + 1].mt;
    return items[0].mt;
}
