#include "exec/cors.h"

#include <string.h>
#include <strings.h>

#include "util/strbuf.h"

#define CORS_METHODS "GET, POST, PATCH, PUT, DELETE, OPTIONS, HEAD"
#define CORS_EXPOSE                                                         \
    "Content-Encoding, Content-Location, Content-Range, Content-Type, "     \
    "Date, Location, Server, Transfer-Encoding, Range-Unit"
/* wai-cors appends the CORS-safelisted request headers. */
#define CORS_SIMPLE_HEADERS "Accept, Accept-Language, Content-Language"

/* Calls fn for each trimmed, non-empty item of a comma-separated list
 * until it returns true; returns whether one did. */
static bool any_list_item(const char *list,
                          bool (*fn)(const char *item, size_t len, void *arg),
                          void *arg)
{
    for (const char *p = list; *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len > 0 && p[len - 1] == ' ')
            len--;
        if (len > 0 && fn(p, len, arg))
            return true;
        if (end == NULL)
            break;
        p = end + 1;
    }
    return false;
}

static bool same_origin(const char *item, size_t len, void *origin)
{
    return len == strlen(origin) && strncmp(item, origin, len) == 0;
}

static bool origin_allowed(const pgrest_ctx *ctx, pgrest_arena *a, const char *origin)
{
    const char *list = pgr_cfg(ctx, a)->server_cors_allowed_origins;
    return list == NULL || any_list_item(list, same_origin, (void *)origin);
}

/* "*" when any origin is allowed, else the origin itself with credentials. */
static void allow_origin(const pgrest_ctx *ctx, pgrest_arena *a,
                         pgrest_response *r, const char *origin)
{
    if (pgr_cfg(ctx, a)->server_cors_allowed_origins == NULL) {
        pgr_response_set_header(a, r, "Access-Control-Allow-Origin", "*");
        return;
    }
    pgr_response_set_header(a, r, "Access-Control-Allow-Origin", pgr_strdup(a, origin));
    pgr_response_set_header(a, r, "Access-Control-Allow-Credentials", "true");
}

static bool append_header_name(const char *item, size_t len, void *sb)
{
    if (!(len == 13 && strncasecmp(item, "authorization", 13) == 0)) {
        pgr_sb_puts(sb, ", ");
        pgr_sb_putn(sb, item, len);
    }
    return false;
}

static const char *allow_headers(pgrest_arena *a, const char *requested)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, 128);
    pgr_sb_puts(&sb, "Authorization");
    any_list_item(requested ? requested : "", append_header_name, &sb);
    pgr_sb_puts(&sb, ", " CORS_SIMPLE_HEADERS);
    return pgr_sb_finish(&sb);
}

pgrest_response *pgr_cors_preflight(const pgrest_ctx *ctx, pgrest_arena *a,
                                    const pgrest_request *req)
{
    const char *origin = pgr_request_header(req, "Origin");
    if (origin == NULL || strcmp(req->method, "OPTIONS") != 0 ||
        pgr_request_header(req, "Access-Control-Request-Method") == NULL)
        return NULL;
    pgrest_response *r = pgr_response_new(a, 200);
    if (r == NULL || !origin_allowed(ctx, a, origin))
        return r;
    allow_origin(ctx, a, r, origin);
    pgr_response_add_header(a, r, "Access-Control-Allow-Methods", CORS_METHODS);
    pgr_response_add_header(a, r, "Access-Control-Allow-Headers",
                            allow_headers(a, pgr_request_header(req, "Access-Control-Request-Headers")));
    pgr_response_add_header(a, r, "Access-Control-Max-Age", "86400");
    return r;
}

void pgr_cors_annotate(const pgrest_ctx *ctx, pgrest_arena *a,
                       const pgrest_request *req, pgrest_response *r)
{
    const char *origin = pgr_request_header(req, "Origin");
    if (origin == NULL || r == NULL || !origin_allowed(ctx, a, origin))
        return;
    allow_origin(ctx, a, r, origin);
    pgr_response_set_header(a, r, "Access-Control-Expose-Headers", CORS_EXPOSE);
}
