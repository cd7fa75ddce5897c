/* Media types: PostgREST src/MediaType.hs decodeMediaType; Accept: wai
 * Network.Wai.Parse.parseHttpAccept. */
#include "parse/media_type.h"

#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

static inline bool is_ws(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static char *lower_trimmed(pgrest_arena *a, const char *s, size_t n)
{
    while (n > 0 && is_ws(*s)) {
        s++;
        n--;
    }
    while (n > 0 && is_ws(s[n - 1]))
        n--;
    char *r = pgr_strndup(a, s, n);
    if (r == NULL)
        return NULL;
    for (char *p = r; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
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
};

static pgr_media_kind classify(const char *type)
{
    for (size_t i = 0; i < sizeof(known_types) / sizeof(known_types[0]); i++)
        if (strcmp(known_types[i].name, type) == 0)
            return known_types[i].kind;
    return PGR_MEDIA_OTHER;
}

static char *unquote(char *v)
{
    size_t n = strlen(v);
    if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
        v[n - 1] = '\0';
        return v + 1;
    }
    return v;
}

/* one `;k=v` parameter */
static void apply_param(pgrest_arena *a, pgr_media_type *mt, const char *p,
                        size_t n)
{
    const char *eq = memchr(p, '=', n);
    if (eq == NULL)
        return;
    char *key = lower_trimmed(a, p, (size_t)(eq - p));
    char *val = lower_trimmed(a, eq + 1, n - (size_t)(eq - p) - 1);
    if (key == NULL || val == NULL)
        return;
    val = unquote(val);
    if (strcmp(key, "nulls") == 0 && strcmp(val, "stripped") == 0)
        mt->nulls_stripped = true;
    else if (strcmp(key, "for") == 0)
        mt->plan_for = val;
    else if (strcmp(key, "options") == 0)
        mt->plan_options = val;
}

pgr_media_type *pgr_parse_media_type(pgrest_arena *a, const char *text)
{
    if (text == NULL)
        return NULL;
    pgr_media_type *mt = PGR_NEW(a, pgr_media_type);
    if (mt == NULL)
        return NULL;
    size_t n = strcspn(text, ";");
    mt->text = lower_trimmed(a, text, n);
    if (mt->text == NULL)
        return NULL;
    mt->q = 1.0;
    mt->kind = classify(mt->text);
    for (const char *p = text + n; *p == ';';) {
        p++;
        size_t m = strcspn(p, ";");
        apply_param(a, mt, p, m);
        p += m;
    }
    if (mt->kind == PGR_MEDIA_PLAN)
        mt->plan_text = strcmp(mt->text, "application/vnd.pgrst.plan+json") != 0;
    else
        mt->plan_for = mt->plan_options = NULL;
    /* vnd.pgrst.array without nulls=stripped is plain JSON (checkArrayNullStrip) */
    if (mt->kind == PGR_MEDIA_ARRAY && !mt->nulls_stripped)
        mt->kind = PGR_MEDIA_JSON;
    if (mt->kind != PGR_MEDIA_ARRAY && mt->kind != PGR_MEDIA_OBJECT)
        mt->nulls_stripped = false;
    return mt;
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

/* Haskell `reads :: Double` prefix, default 1.0 */
static double read_q(const char *s)
{
    if (*s < '0' || *s > '9')
        return 1.0;
    double v = 0;
    for (; *s >= '0' && *s <= '9'; s++)
        v = v * 10 + (*s - '0');
    if (s[0] == '.' && s[1] >= '0' && s[1] <= '9') {
        double scale = 0.1;
        for (s++; *s >= '0' && *s <= '9'; s++, scale /= 10)
            v += (*s - '0') * scale;
    }
    return v;
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
    if (header == NULL || *header == '\0')
        return NULL;
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
