/* HTTP pieces -> api request (PostgREST's ApiRequest.hs). No database and
 * no schema cache: only the configuration is read. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <time.h>

#include "auth/auth.h"
#include "context.h"
#include "parse/api_request.h"
#include "parse/media_type.h"
#include "parse/payload.h"
#include "parse/preferences.h"
#include "parse/query_string.h"
#include "util/error.h"
#include "util/strbuf.h"

/* Path -> target: "/" root, "/name" relation, "/rpc/name" routine. */
static int parse_target(pgrest_arena *a, const char *path,
                        pgrest_api_request *api, pgrest_error *err)
{
    while (*path == '/')
        path++;
    size_t n = strlen(path);
    while (n > 0 && path[n - 1] == '/')
        n--;
    const char *slash = memchr(path, '/', n);
    if (n == 0) {
        api->target = PGR_TARGET_ROOT;
        return PGREST_OK;
    }
    if (slash == NULL) {
        api->target = PGR_TARGET_RELATION;
        api->name = pgr_percent_decode(a, path, n, false);
        return api->name ? PGREST_OK : pgr_error_oom(err);
    }
    size_t first = (size_t)(slash - path);
    const char *rest = slash + 1;
    size_t rest_n = n - first - 1;
    if (first == 3 && memcmp(path, "rpc", 3) == 0 && rest_n > 0 &&
        memchr(rest, '/', rest_n) == NULL) {
        api->target = PGR_TARGET_ROUTINE;
        api->name = pgr_percent_decode(a, rest, rest_n, false);
        return api->name ? PGREST_OK : pgr_error_oom(err);
    }
    return pgr_error(err, 404, "PGRST125", "Invalid path specified in request URL",
                     NULL, NULL);
}

static int unsupported_method(pgrest_arena *a, const char *method,
                              pgrest_error *err)
{
    return pgr_errorf(err, a, 405, "PGRST117", NULL, NULL,
                      "Unsupported HTTP method: %s", method);
}

static int parse_action(pgrest_arena *a, pgrest_api_request *api,
                        pgrest_error *err)
{
    const char *m = api->method;
    bool get = strcmp(m, "GET") == 0, head = strcmp(m, "HEAD") == 0;
    api->is_head = head;
    if (strcmp(m, "OPTIONS") == 0) {
        api->action = PGR_ACTION_INFO;
        return PGREST_OK;
    }
    switch (api->target) {
    case PGR_TARGET_ROOT:
        if (get || head) {
            api->action = PGR_ACTION_SCHEMA_READ;
            return PGREST_OK;
        }
        return unsupported_method(a, m, err);
    case PGR_TARGET_ROUTINE:
        if (get || head || strcmp(m, "POST") == 0) {
            api->action = PGR_ACTION_CALL;
            return PGREST_OK;
        }
        return pgr_errorf(err, a, 405, "PGRST101", NULL, NULL,
                          "Cannot use the %s method on RPC", m);
    case PGR_TARGET_RELATION:
        break;
    }
    static const struct { const char *m; pgr_action act; } map[] = {
        {"GET", PGR_ACTION_READ}, {"HEAD", PGR_ACTION_READ},
        {"POST", PGR_ACTION_CREATE}, {"PATCH", PGR_ACTION_UPDATE},
        {"PUT", PGR_ACTION_UPSERT}, {"DELETE", PGR_ACTION_DELETE},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(m, map[i].m) == 0) {
            api->action = map[i].act;
            return PGREST_OK;
        }
    return unsupported_method(a, m, err);
}

static bool reads_profile_from_accept(const pgrest_api_request *api)
{
    return api->is_head || strcmp(api->method, "GET") == 0 ||
           strcmp(api->method, "OPTIONS") == 0;
}

/* Accept-Profile / Content-Profile -> schema (PostgREST ApiRequest getSchema). */
static int parse_schema(pgrest_ctx *ctx, pgrest_arena *a,
                        const pgrest_request *req, pgrest_api_request *api,
                        pgrest_error *err)
{
    const pgr_config *cfg = &ctx->cfg;
    const char *hdr = pgr_request_header(
        req, reads_profile_from_accept(api) ? "Accept-Profile" : "Content-Profile");
    api->schema = cfg->db_schemas[0];
    if (hdr == NULL)
        return PGREST_OK;
    api->negotiated_by_profile = true;
    for (size_t i = 0; i < cfg->n_db_schemas; i++)
        if (strcmp(cfg->db_schemas[i], hdr) == 0) {
            api->schema = cfg->db_schemas[i];
            return PGREST_OK;
        }
    pgr_sb sb;
    pgr_sb_init(&sb, a, 64);
    pgr_sb_puts(&sb, "The schema must be one of the following: ");
    for (size_t i = 0; i < cfg->n_db_schemas; i++) {
        if (i > 0)
            pgr_sb_puts(&sb, ", ");
        pgr_sb_puts(&sb, cfg->db_schemas[i]);
    }
    return pgr_error(err, 406, "PGRST106", pgr_sb_finish(&sb), NULL, NULL);
}

static bool parse_nonneg(const char *s, size_t n, long long *out)
{
    if (n == 0 || n > 18)
        return false;
    long long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

/* Range: "a-b" or "a-" (PostgREST RangeQuery: ^([0-9]+)-([0-9]*)$), only on
 * GET; anything else is ignored. Returns false when no valid header. */
static bool header_range(const pgrest_request *req, long long *lo, long long *hi)
{
    const char *h = pgr_request_header(req, "Range");
    if (h == NULL)
        return false;
    if (strncasecmp(h, "items=", 6) == 0)
        h += 6;
    const char *dash = strchr(h, '-');
    if (dash == NULL || !parse_nonneg(h, (size_t)(dash - h), lo))
        return false;
    *hi = -1;
    if (dash[1] != '\0' && !parse_nonneg(dash + 1, strlen(dash + 1), hi))
        return false;
    return true;
}

static const pgr_path_range *root_range(const pgr_query_params *qp)
{
    for (const pgr_path_range *r = qp->ranges; r != NULL; r = r->next)
        if (r->path.n == 0)
            return r;
    return NULL;
}

/* Range header intersected with limit/offset (ApiRequest getRanges). */
static int compute_range(pgrest_arena *a, const pgrest_request *req,
                         pgrest_api_request *api, pgrest_error *err)
{
    long long offset = 0, limit = -1;
    const pgr_path_range *r = root_range(&api->qp);
    if (r != NULL) {
        if (r->offset > 0)
            offset = r->offset;
        limit = r->limit;
    }
    long long lo, hi;
    if (strcmp(api->method, "GET") == 0 && header_range(req, &lo, &hi)) {
        if (hi >= 0 && lo > hi) /* ApiRequest getRanges: InvalidRange LowerGTUpper */
            return pgr_error(err, 416, "PGRST103", "Requested range not satisfiable",
                             "The lower boundary must be lower than or equal to the upper boundary in the Range header.",
                             NULL);
        api->range_from_header = true;
        /* intersect [lo, hi] with [offset, offset+limit-1] */
        long long ulo = lo > offset ? lo : offset;
        long long uhi = hi;
        if (limit >= 0) {
            long long qhi = offset + limit - 1;
            if (uhi < 0 || qhi < uhi)
                uhi = qhi;
        }
        offset = ulo;
        limit = uhi < 0 ? -1 : (uhi - ulo + 1 < 0 ? 0 : uhi - ulo + 1);
    }
    (void)a;
    api->range_offset = offset;
    api->range_limit = limit;
    return PGREST_OK;
}

static pgr_kv *parse_cookies(pgrest_arena *a, const char *header)
{
    pgr_kv *head = NULL, **tail = &head;
    const char *p = header;
    while (p != NULL && *p) {
        while (*p == ' ' || *p == ';')
            p++;
        const char *end = strchr(p, ';');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        if (eq != NULL && eq > p) {
            pgr_kv *kv = PGR_NEW(a, pgr_kv);
            if (kv == NULL)
                return head;
            kv->name = pgr_strndup(a, p, (size_t)(eq - p));
            kv->value = pgr_strndup(a, eq + 1, n - (size_t)(eq - p) - 1);
            *tail = kv;
            tail = &kv->next;
        }
        p = end;
    }
    return head;
}

static int parse_media(pgrest_arena *a, const pgrest_request *req,
                       pgrest_api_request *api)
{
    const char *accept = pgr_request_header(req, "Accept");
    api->accept = accept ? pgr_parse_accept(a, accept) : NULL;
    const char *ct = pgr_request_header(req, "Content-Type");
    api->content_type = ct ? pgr_parse_media_type(a, ct) : NULL;
    return PGREST_OK;
}

/* server-max-body-size: checked before anything else, as a host's HTTP
 * layer would (the reference server also refuses early, while reading). */
static int check_body_size(pgrest_arena *a, const pgrest_request *req,
                           const pgr_parse_limits *lim, pgrest_error *err)
{
    if ((long long)req->body_len <= lim->max_body_size)
        return PGREST_OK;
    return pgr_errorf(err, a, 413, "PGRST413",
                      pgr_asprintf(a, "The limit is %lld bytes (server-max-body-size)",
                                   lim->max_body_size),
                      NULL, "Request body too large");
}

int pgrest_parse_request(pgrest_ctx *ctx, pgrest_arena *arena,
                         const pgrest_request *req, pgrest_api_request **out,
                         pgrest_error *err)
{
    if (ctx == NULL || arena == NULL || req == NULL || out == NULL)
        return pgr_error(err, 500, "PGRSTX00", "invalid arguments", NULL, NULL);
    pgrest_api_request *api = PGR_NEW(arena, pgrest_api_request);
    if (api == NULL)
        return pgr_error_oom(err);
    api->raw = req;
    api->method = req->method;
    api->prefs.max_affected = -1;
    api->range_limit = -1;
    int rc = check_body_size(arena, req, &ctx->cfg.limits, err);
    if (rc != PGREST_OK)
        return rc;
    /* PostgREST authenticates before it parses anything else (Auth.hs
     * middleware), so JWT errors win over request errors. */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = pgr_authenticate(ctx, arena, api, err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    api->auth_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
                   (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (rc != PGREST_OK)
        return rc;
    if ((rc = parse_target(arena, req->path, api, err)) != PGREST_OK ||
        (rc = parse_action(arena, api, err)) != PGREST_OK ||
        (rc = parse_schema(ctx, arena, req, api, err)) != PGREST_OK)
        return rc;
    api->path = pgr_percent_decode(arena, req->path, strlen(req->path), false);
    pgr_kv *params = pgr_query_string_decode(arena, req->query);
    if ((rc = pgr_query_params_parse(arena, params,
                                     api->target == PGR_TARGET_ROUTINE,
                                     &ctx->cfg.limits, &api->qp, err)) != PGREST_OK)
        return rc;
    pgr_parse_preferences(arena, req, &api->prefs);
    if ((rc = compute_range(arena, req, api, err)) != PGREST_OK ||
        (rc = parse_media(arena, req, api)) != PGREST_OK)
        return rc;
    api->cookies = parse_cookies(arena, pgr_request_header(req, "Cookie"));
    api->body = req->body;
    api->body_len = req->body_len;
    if ((rc = pgr_parse_payload(arena, api, &ctx->cfg.limits, err)) != PGREST_OK)
        return rc;
    if (pgr_arena_exhausted(arena))
        return pgr_error_oom(err);
    *out = api;
    return PGREST_OK;
}
