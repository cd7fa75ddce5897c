/* CORS as PostgREST's Cors.hs policy runs through wai-cors
 * (Network.Wai.Middleware.Cors.cors with corsIgnoreFailures = True):
 *
 *   no Origin header                -> the request runs, nothing added
 *   Origin not in the allowed list  -> the request runs, nothing added
 *   OPTIONS, preflight valid        -> 200, empty body, preflight headers
 *   OPTIONS, preflight invalid      -> the request runs, nothing added
 *   other methods                   -> the request runs, allow-origin and
 *                                      expose headers appended
 *
 * A preflight is valid when Access-Control-Request-Method names one of the
 * supported methods and every header name parsed from
 * Access-Control-Request-Headers is supported (always true for the names
 * PostgREST echoes, unless the list is not a plain token list). */
#include "exec/cors.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "util/strbuf.h"

/* corsMethods `union` simpleMethods (GET, HEAD, POST) */
static const char *const cors_methods[] = {"GET", "POST", "PATCH", "PUT",
                                           "DELETE", "OPTIONS", "HEAD"};
#define CORS_METHODS "GET, POST, PATCH, PUT, DELETE, OPTIONS, HEAD"
#define CORS_EXPOSE                                                         \
    "Content-Encoding, Content-Location, Content-Range, Content-Type, "     \
    "Date, Location, Server, Transfer-Encoding, Range-Unit"
/* wai-cors simpleHeadersWithoutContentType, appended unless requested */
static const char *const simple_headers[] = {"Accept", "Accept-Language",
                                             "Content-Language"};

#define N_OF(x) (sizeof(x) / sizeof((x)[0]))

/* A slice of the request's header text. */
typedef struct span {
    const char *p;
    size_t n;
} span;

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static span strip(const char *p, size_t n)
{
    while (n > 0 && is_space(*p)) {
        p++;
        n--;
    }
    while (n > 0 && is_space(p[n - 1]))
        n--;
    return (span){p, n};
}

static bool span_eq(span s, const char *text)
{
    return s.n == strlen(text) && memcmp(s.p, text, s.n) == 0;
}

static bool span_ieq(span a, span b)
{
    return a.n == b.n && strncasecmp(a.p, b.p, a.n) == 0;
}

/* Calls fn on each element of text split at every ',' (Data.Text.splitOn /
 * BS.split: empty elements included), stripped; stops when fn returns
 * true and returns whether it did. */
static bool any_element(const char *text, bool (*fn)(span item, void *arg), void *arg)
{
    for (const char *p = text;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (fn(strip(p, n), arg))
            return true;
        if (comma == NULL)
            return false;
        p = comma + 1;
    }
}

/* ------------------------------------------------------------ origins */

static bool is_origin(span item, void *origin)
{
    return span_eq(item, origin);
}

/* Config.hs parseCORSAllowedOrigins: T.strip <$> T.splitOn ","; unset
 * (or empty) allows every origin. wai-cors compares bytes exactly. */
static bool origin_allowed(const pgrest_ctx *ctx, pgrest_arena *a, const char *origin)
{
    const char *list = pgr_cfg(ctx, a)->server_cors_allowed_origins;
    return list == NULL || any_element(list, is_origin, (void *)origin);
}

/* wai-cors commonCorsHeaders: "*" for any origin, else the origin with
 * credentials (corsOrigins = Just (origins, True)). */
static void add_origin_headers(const pgrest_ctx *ctx, pgrest_arena *a,
                               pgrest_response *r, const char *origin)
{
    if (pgr_cfg(ctx, a)->server_cors_allowed_origins == NULL) {
        pgr_response_add_header(a, r, "Access-Control-Allow-Origin", "*");
        return;
    }
    const char *copy = pgr_strdup(a, origin);
    if (copy == NULL)
        return;
    pgr_response_add_header(a, r, "Access-Control-Allow-Origin", copy);
    pgr_response_add_header(a, r, "Access-Control-Allow-Credentials", "true");
}

/* ------------------------------------------------------------ preflight */

static bool method_supported(const char *method)
{
    for (size_t i = 0; i < N_OF(cors_methods); i++)
        if (strcmp(method, cors_methods[i]) == 0)
            return true;
    return false;
}

/* RFC 7230 tchar */
static bool is_token_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static bool is_requested(span item, void *name)
{
    return span_ieq(item, *(span *)name);
}

/* A parsed header name is supported when it is Authorization, a simple
 * header or (case-insensitively) one of the requested list's elements. */
static bool name_supported(span name, const char *requested)
{
    if (span_ieq(name, (span){"Authorization", 13}))
        return true;
    for (size_t i = 0; i < N_OF(simple_headers); i++)
        if (span_ieq(name, (span){simple_headers[i], strlen(simple_headers[i])}))
            return true;
    return any_element(requested, is_requested, &name);
}

/* wai-cors httpHeaderNameListParser (spaces, then token-list separated by
 * ',' with spaces after each name, a prefix of the input being enough)
 * followed by the isSubsetOf check. An input that does not start with a
 * name fails the parser (sepBy1). */
static bool requested_headers_supported(const char *requested)
{
    const char *p = requested;
    while (is_space(*p))
        p++;
    size_t parsed = 0;
    for (;;) {
        const char *start = p;
        while (is_token_char(*p))
            p++;
        if (p == start)
            break;
        if (!name_supported((span){start, (size_t)(p - start)}, requested))
            return false;
        parsed++;
        while (is_space(*p))
            p++;
        if (*p != ',' || !is_token_char(p[1]))
            break;
        p++;
    }
    return parsed > 0;
}

typedef struct header_list {
    pgr_sb *sb;
    span *seen;       /* the names written so far */
    size_t n_seen;
} header_list;

static bool append_requested(span item, void *arg)
{
    header_list *l = arg;
    pgr_sb_puts(l->sb, ", ");
    pgr_sb_putn(l->sb, item.p, item.n);
    l->seen[l->n_seen++] = item;
    return false;
}

static bool count_element(span item, void *n)
{
    (void)item;
    ++*(size_t *)n;
    return false;
}

/* wai-cors hdrLI supportedHeaders: ("Authorization" : requested, each
 * element as sent, duplicates kept) `union` the simple headers, which are
 * appended when no requested element equals them case-insensitively. */
static const char *allow_headers(pgrest_arena *a, const char *requested)
{
    size_t n = 0;
    any_element(requested, count_element, &n);
    pgr_sb sb;
    pgr_sb_init(&sb, a, 128);
    header_list l = {&sb, PGR_NEW_ARRAY(a, span, n + 1), 0};
    if (l.seen == NULL)
        return NULL;
    pgr_sb_puts(&sb, "Authorization");
    any_element(requested, append_requested, &l);
    for (size_t i = 0; i < N_OF(simple_headers); i++) {
        span simple = {simple_headers[i], strlen(simple_headers[i])};
        bool present = false;
        for (size_t j = 0; j < l.n_seen && !present; j++)
            present = span_ieq(l.seen[j], simple);
        if (!present) {
            pgr_sb_puts(&sb, ", ");
            pgr_sb_puts(&sb, simple_headers[i]);
        }
    }
    return pgr_sb_finish(&sb);
}

pgrest_response *pgr_cors_preflight(const pgrest_ctx *ctx, pgrest_arena *a,
                                    const pgrest_request *req)
{
    const char *origin = pgr_request_header(req, "Origin");
    if (origin == NULL || strcmp(req->method, "OPTIONS") != 0 ||
        !origin_allowed(ctx, a, origin))
        return NULL;
    const char *method = pgr_request_header(req, "Access-Control-Request-Method");
    const char *requested = pgr_request_header(req, "Access-Control-Request-Headers");
    if (method == NULL || !method_supported(method) ||
        (requested != NULL && !requested_headers_supported(requested)))
        return NULL;
    pgrest_response *r = pgr_response_new(a, 200);
    if (r == NULL)
        return NULL;
    add_origin_headers(ctx, a, r, origin);
    pgr_response_add_header(a, r, "Access-Control-Allow-Methods", CORS_METHODS);
    const char *allowed = requested ? allow_headers(a, requested) : NULL;
    if (requested != NULL && allowed == NULL)
        return NULL;   /* out of memory: the application answers */
    if (allowed != NULL)
        pgr_response_add_header(a, r, "Access-Control-Allow-Headers", allowed);
    pgr_response_add_header(a, r, "Access-Control-Max-Age", "86400");
    return r;
}

void pgr_cors_annotate(const pgrest_ctx *ctx, pgrest_arena *a,
                       const pgrest_request *req, pgrest_response *r)
{
    const char *origin = pgr_request_header(req, "Origin");
    /* an OPTIONS request that reached the application was not a valid
     * preflight: wai-cors ran it unchanged */
    if (origin == NULL || r == NULL || strcmp(req->method, "OPTIONS") == 0 ||
        !origin_allowed(ctx, a, origin))
        return;
    add_origin_headers(ctx, a, r, origin);
    pgr_response_add_header(a, r, "Access-Control-Expose-Headers", CORS_EXPOSE);
}
