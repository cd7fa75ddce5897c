/* HTTP pieces -> api request (PostgREST's ApiRequest.hs). No database and
 * no schema cache: only the configuration is read. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <time.h>

#include "auth/auth.h"
#include "engine/stage_view.h"
#include "parse/api_request.h"
#include "parse/media_type.h"
#include "parse/payload.h"
#include "parse/preferences.h"
#include "parse/query_string.h"
#include "parse/ranges.h"
#include "util/error.h"
#include "util/qualified_ident.h"
#include "util/strbuf.h"
#include "util/utf8.h"

/* One path segment as Wai's pathInfo has it (http-types
 * decodePathSegment): %-decoded, then read as UTF-8 leniently. */
static const char *path_segment(pgrest_arena *a, const char *s, size_t n)
{
    const char *raw = pgr_percent_decode(a, s, n, false);
    return raw ? pgr_utf8_lenient(a, raw, strlen(raw), NULL) : NULL;
}

/* Path -> target, as PostgREST's getResource reads Wai's pathInfo
 * (http-types decodePathSegments: "" and "/" are no segment; otherwise one
 * leading '/' is dropped and every '/' splits, so empty segments count):
 * [] root, [name] relation, ["rpc", name] routine, anything else -- a
 * trailing or doubled slash included -- 404 PGRST125. */
static int parse_target(pgrest_arena *a, const char *path,
                        pgrest_api_request *api, pgrest_error *err)
{
    if (*path == '/')
        path++;
    size_t n = strlen(path);
    if (n == 0) {
        api->target = PGR_TARGET_ROOT;
        return PGREST_OK;
    }
    const char *slash = memchr(path, '/', n);
    if (slash == NULL) {
        api->target = PGR_TARGET_RELATION;
        api->name = path_segment(a, path, n);
        return api->name ? PGREST_OK : pgr_error_oom(err);
    }
    size_t first = (size_t)(slash - path);
    const char *rest = slash + 1;
    size_t rest_n = n - first - 1;
    if (first == 3 && memcmp(path, "rpc", 3) == 0 &&
        memchr(rest, '/', rest_n) == NULL) {
        api->target = PGR_TARGET_ROUTINE;
        api->name = path_segment(a, rest, rest_n);
        return api->name ? PGREST_OK : pgr_error_oom(err);
    }
    return pgr_error(err, 404, "PGRST125", "Invalid path specified in request URL",
                     NULL, NULL);
}

/* db-root-spec names a function, maybe schema-qualified (toQi); "/"
 * calls it by its name part in the request's schema (ApiRequest.hs
 * getResource: QualifiedIdentifier _ pathName). */
static const char *root_spec_name(pgrest_arena *a, const char *spec)
{
    pgr_qualified_ident qi;
    return pgr_to_qi(a, spec, &qi) ? qi.name : NULL;
}

/* ApiRequest.hs getResource for "/": openapi-mode=disabled refuses every
 * method (PGRST126), db-root-spec turns it into that function's resource,
 * otherwise it is the schema (OpenAPI document, OPTIONS). */
static int resolve_root(pgrest_arena *a, const pgr_config *cfg, pgrest_api_request *api,
                        pgrest_error *err)
{
    if (api->target != PGR_TARGET_ROOT)
        return PGREST_OK;
    if (cfg->openapi_mode == PGR_OPENAPI_DISABLED)
        return pgr_error(err, 404, "PGRST126", "Root endpoint metadata is disabled",
                         NULL, NULL);
    if (cfg->db_root_spec != NULL) {
        api->target = PGR_TARGET_ROUTINE;
        api->name = root_spec_name(a, cfg->db_root_spec);
        if (api->name == NULL)
            return pgr_error_oom(err);
    }
    return PGREST_OK;
}

/* The decoded target name keeps a %00 as a NUL byte. No PostgreSQL
 * relation or function can be named with one, so PostgREST's schema cache
 * lookup fails: 404 PGRST205 / PGRST202 (the NUL shown as JSON's \u0000). */
static int check_name_nul(pgrest_arena *a, const char *path,
                          const pgrest_api_request *api, pgrest_error *err)
{
    if (api->target == PGR_TARGET_ROOT)
        return PGREST_OK;
    size_t n;
    char *full = pgr_percent_decode_n(a, path, strlen(path), false, &n);
    if (full == NULL)
        return pgr_error_oom(err);
    if (memchr(full, '\0', n) == NULL)
        return PGREST_OK;
    pgr_sb sb;
    pgr_sb_init(&sb, a, n + 8);
    /* the name is the last path segment: find it after the last '/' */
    const char *seg = full + n;
    while (seg > full && seg[-1] != '/')
        seg--;
    for (const char *p = seg; p < full + n; p++) {
        if (*p == '\0')
            pgr_sb_puts(&sb, "\\u0000");
        else
            pgr_sb_putc(&sb, *p);
    }
    const char *shown = pgr_sb_finish(&sb);
    if (shown == NULL)
        return pgr_error_oom(err);
    if (api->target == PGR_TARGET_ROUTINE)
        return pgr_errorf(err, a, 404, "PGRST202", NULL, NULL,
                          "Could not find the function %s.%s in the schema cache",
                          api->schema, shown);
    return pgr_errorf(err, a, 404, "PGRST205", NULL, NULL,
                      "Could not find the table '%s.%s' in the schema cache",
                      api->schema, shown);
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
    const pgr_config *cfg = pgr_cfg(ctx, a);
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
    /* Error.hs UnacceptableSchema */
    pgr_sb sb;
    pgr_sb_init(&sb, a, 64);
    pgr_sb_puts(&sb, "Only the following schemas are exposed: ");
    for (size_t i = 0; i < cfg->n_db_schemas; i++) {
        if (i > 0)
            pgr_sb_puts(&sb, ", ");
        pgr_sb_puts(&sb, cfg->db_schemas[i]);
    }
    return pgr_errorf(err, a, 406, "PGRST106", NULL, pgr_sb_finish(&sb),
                      "Invalid schema: %s", hdr);
}

/* RangeQuery rangeParse: ^([0-9]+)-([0-9]*)$ on the whole value, numbers
 * of any size; anything else is allRange. Returns false for allRange. */
static bool header_range(pgrest_arena *a, const pgrest_request *req,
                         pgr_hs_int *lo, pgr_hs_int *hi, bool *has_hi)
{
    const char *h = pgr_request_header(req, "Range");
    if (h == NULL)
        return false;
    size_t nlo = strspn(h, "0123456789");
    if (nlo == 0 || h[nlo] != '-')
        return false;
    const char *u = h + nlo + 1;
    size_t nhi = strspn(u, "0123456789");
    if (u[nhi] != '\0')
        return false;
    *has_hi = nhi > 0;
    return pgr_hs_digits(a, h, nlo, lo) &&
           (!*has_hi || pgr_hs_digits(a, u, nhi, hi));
}

static const pgr_path_range *root_range(const pgr_query_params *qp)
{
    for (const pgr_path_range *r = qp->ranges; r != NULL; r = r->next)
        if (r->path.n == 0)
            return r;
    return NULL;
}

static int range_not_satisfiable(const char *details, pgrest_error *err)
{
    return pgr_error(err, 416, "PGRST103", "Requested range not satisfiable",
                     details, NULL);
}

/* ApiRequest getRanges: the Range header (GET only) intersected with the
 * root limit/offset; limit=0 bypasses it; an empty result is 416. */
static int compute_range(pgrest_arena *a, const pgrest_request *req,
                         pgrest_api_request *api, pgrest_error *err)
{
    pgr_hs_int zero = pgr_hs_from_ll(a, 0), minus_one = pgr_hs_from_ll(a, -1);
    pgr_hs_int lower = zero, upper = zero;
    bool bounded = false;
    const pgr_path_range *r = root_range(&api->qp);
    if (r != NULL && pgr_range_of_path(a, r, &lower, &upper, &bounded) != PGREST_OK)
        return pgr_error_oom(err);
    if (zero.digits == NULL || minus_one.digits == NULL)
        return pgr_error_oom(err);
    bool limit_zero = bounded && pgr_hs_cmp(upper, minus_one) == 0;
    pgr_hs_int hlo = zero, hhi = zero;
    bool hbounded = false, header_empty = false;
    if (strcmp(api->method, "GET") == 0 &&
        header_range(a, req, &hlo, &hhi, &hbounded)) {
        api->range_from_header = true;
        header_empty = hbounded && pgr_hs_cmp(hhi, hlo) < 0;
    }
    bool limit_empty = bounded && pgr_hs_cmp(upper, lower) < 0;
    /* rangeIntersection (Data.Ranged): empty if either is, else the larger
     * lower bound and the smaller upper bound */
    pgr_hs_int top_lo = pgr_hs_cmp(hlo, lower) > 0 ? hlo : lower;
    pgr_hs_int top_hi = upper;
    bool top_bounded = bounded || hbounded;
    if (hbounded && (!bounded || pgr_hs_cmp(hhi, upper) < 0))
        top_hi = hhi;
    bool top_empty = header_empty || limit_empty ||
                     (top_bounded && pgr_hs_cmp(top_hi, top_lo) < 0);
    if (limit_zero) {
        top_lo = zero;
        top_hi = minus_one;
        top_bounded = true;
    } else if (top_empty) {
        return range_not_satisfiable(
            header_empty ? "The lower boundary must be lower than or equal to "
                           "the upper boundary in the Range header."
                         : "Limit should be greater than or equal to zero.",
            err);
    }
    return pgr_range_sql_values(a, top_lo, top_hi, top_bounded,
                                &api->range_offset, &api->range_limit, err);
}

/* Web.Cookie parseCookies, as ApiRequest.hs reads the Cookie header:
 * split at every ';' (empty pieces included), each piece at its first
 * '=' (none: an empty value), leading spaces dropped from the name only.
 * "a=1; " has a second cookie, named "" with value "". */
static pgr_kv *parse_cookies(pgrest_arena *a, const char *header)
{
    pgr_kv *head = NULL, **tail = &head;
    const char *p = header;
    while (p != NULL && *p) {
        const char *end = strchr(p, ';');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        size_t key_n = eq ? (size_t)(eq - p) : n;
        size_t skip = 0;
        while (skip < key_n && p[skip] == ' ')
            skip++;
        pgr_kv *kv = PGR_NEW(a, pgr_kv);
        if (kv == NULL)
            return head;
        kv->name = pgr_strndup(a, p + skip, key_n - skip);
        kv->value = eq ? pgr_strndup(a, eq + 1, n - key_n - 1) : "";
        *tail = kv;
        tail = &kv->next;
        p = end ? end + 1 : NULL;
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

/* A header value holding a NUL byte (added with its length) is refused:
 * every reader of headers here takes C strings, and reading the value up
 * to the NUL would act on something the client did not send. The error is
 * the one PostgreSQL gives for NUL in text. */
static int check_header_nul(pgrest_arena *a, const pgrest_request *req,
                            pgrest_error *err)
{
    for (const pgr_kv *h = req->headers; h != NULL; h = h->next) {
        if (h->value_len == 0 || memchr(h->value, '\0', h->value_len) == NULL)
            continue;
        return pgr_errorf(err, a, 400, "22021",
                          pgr_asprintf(a, "The request header \"%s\" contains "
                                       "a NUL byte", h->name),
                          NULL, "invalid byte sequence for encoding \"UTF8\": 0x00");
    }
    return PGREST_OK;
}

int pgr_error_body_too_large(pgrest_arena *a, long long max_body_size, pgrest_error *err)
{
    return pgr_error_body_over(a, max_body_size, "server-max-body-size", err);
}

int pgr_error_body_over(pgrest_arena *a, long long limit, const char *option, pgrest_error *err)
{
    return pgr_errorf(err, a, 413, "PGRST413",
                      pgr_asprintf(a, "The limit is %lld bytes (%s)", limit, option), NULL,
                      "Request body too large");
}

/* server-max-body-size: checked before anything else, as a host's HTTP
 * layer would (the reference server also refuses early, while reading). */
static int check_body_size(pgrest_arena *a, const pgrest_request *req,
                           const pgr_parse_limits *lim, pgrest_error *err)
{
    if ((long long)req->body_len <= lim->max_body_size)
        return PGREST_OK;
    return pgr_error_body_too_large(a, lim->max_body_size, err);
}

int pgr_request_admissible(pgrest_ctx *ctx, pgrest_arena *arena,
                           const pgrest_request *req, pgrest_error *err)
{
    int rc = check_body_size(arena, req, &pgr_cfg(ctx, arena)->limits, err);
    return rc == PGREST_OK ? check_header_nul(arena, req, err) : rc;
}

/* The identity the request runs as: the outcome the host or the engine
 * attached (pgrest_request_set_auth), copied as it is. Parsing never
 * authenticates: without one the api request has no role, and
 * pgrest_emit_sql refuses it. */
static int identity(const pgrest_auth *auth, pgrest_api_request *api, pgrest_error *err)
{
    return auth != NULL ? pgr_auth_apply(auth, api, err) : PGREST_OK;
}

static int parse_request(pgrest_ctx *ctx, pgrest_arena *arena,
                         const pgrest_request *req, const pgrest_auth *auth,
                         pgrest_api_request **out, pgrest_error *err)
{
    pgrest_api_request *api = PGR_NEW(arena, pgrest_api_request);
    if (api == NULL)
        return pgr_error_oom(err);
    api->raw = req;
    api->method = req->method;
    api->prefs.max_affected = -1;
    api->range_limit = -1;
    /* PostgREST authenticates before it parses anything else (Auth.hs
     * middleware): a failed outcome attached to the request wins over
     * request errors. */
    int rc = identity(auth, api, err);
    if (rc != PGREST_OK)
        return rc;
    /* from here on the role is known even if parsing fails: PostgREST's
     * access log shows it for every request that got past authentication */
    *out = api;
    if ((rc = parse_target(arena, req->path, api, err)) != PGREST_OK ||
        (rc = resolve_root(arena, pgr_cfg(ctx, arena), api, err)) != PGREST_OK ||
        (rc = parse_action(arena, api, err)) != PGREST_OK ||
        (rc = parse_schema(ctx, arena, req, api, err)) != PGREST_OK ||
        (rc = check_name_nul(arena, req->path, api, err)) != PGREST_OK)
        return rc;
    api->path = pgr_percent_decode(arena, req->path, strlen(req->path), false);
    pgr_kv *params = pgr_query_string_decode(arena, req->query);
    /* ApiRequest.hs actIsInvokeSafe: only GET/HEAD calls read arguments
     * from the query string; for POST (and OPTIONS) every parameter there
     * is a filter, so one without an operator is a parse error */
    bool invoke_read = api->target == PGR_TARGET_ROUTINE && api->action == PGR_ACTION_CALL &&
                       (strcmp(api->method, "GET") == 0 || strcmp(api->method, "HEAD") == 0);
    /* pgrest's extensions: or/and across embeds (docs/embed-or.md) for
     * reads and calls, distinct (docs/distinct.md) for relation reads;
     * writes keep PostgREST's grammar (and its PGRST100 for them) */
    pgr_params_extensions ext = {
        .related_leaves = api->action == PGR_ACTION_READ || api->action == PGR_ACTION_CALL,
        .distinct = api->action == PGR_ACTION_READ,
    };
    if ((rc = pgr_query_params_parse_ext(arena, params, invoke_read, &ext,
                                         &pgr_cfg(ctx, arena)->limits, &api->qp,
                                         err)) != PGREST_OK)
        return rc;
    pgr_parse_preferences(arena, req, &api->prefs);
    if ((rc = compute_range(arena, req, api, err)) != PGREST_OK ||
        (rc = parse_media(arena, req, api)) != PGREST_OK)
        return rc;
    api->cookies = parse_cookies(arena, pgr_request_header(req, "Cookie"));
    api->body = req->body;
    api->body_len = req->body_len;
    if ((rc = pgr_parse_payload(arena, api, &pgr_cfg(ctx, arena)->limits, err)) != PGREST_OK)
        return rc;
    *out = api;
    return PGREST_OK;
}

/* a header or body the host added may have been dropped by its arena */
static int arenas_intact(pgrest_arena *arena, const pgrest_request *req, pgrest_error *err)
{
    return pgr_stage_end(req->arena, pgr_stage_end(arena, PGREST_OK, err), err);
}

int pgr_parse_request_as(pgrest_ctx *ctx, pgrest_arena *arena,
                         const pgrest_request *req, const pgrest_auth *auth,
                         pgrest_api_request **out, pgrest_error *err)
{
    *out = NULL;
    int rc = arenas_intact(arena, req, err);
    if (rc == PGREST_OK)
        rc = pgr_stage_end(arena, parse_request(ctx, arena, req, auth, out, err), err);
    /* an exhausted arena may hold a half-built request: give none; else a
     * failed parse keeps the authenticated role (pgrest.h) */
    if (rc != PGREST_OK && pgr_arena_exhausted(arena))
        *out = NULL;
    return rc;
}

int pgrest_parse_request(pgrest_ctx *ctx, pgrest_arena *arena,
                         const pgrest_request *req, pgrest_api_request **out,
                         pgrest_error *err)
{
    if (ctx == NULL || arena == NULL || req == NULL || out == NULL)
        return pgr_error_misuse(err, "pgrest_parse_request");
    *out = NULL;
    /* the HTTP layer's checks come first, as in the engine */
    int rc = arenas_intact(arena, req, err);
    if (rc == PGREST_OK)
        rc = pgr_stage_end(arena, pgr_request_admissible(ctx, arena, req, err), err);
    return rc == PGREST_OK ? pgr_parse_request_as(ctx, arena, req, req->auth, out, err) : rc;
}
