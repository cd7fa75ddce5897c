/* The raw request a host builds from its HTTP layer. */
#include <strings.h>
#include <string.h>

#include "parse/request.h"
#include "util/arena.h"

pgrest_request *pgrest_request_new(pgrest_arena *arena, const char *method,
                                   const char *path, const char *query)
{
    if (arena == NULL)
        return NULL;
    pgrest_request *r = PGR_NEW(arena, pgrest_request);
    if (r == NULL)
        return NULL;
    r->arena = arena;
    r->method = pgr_strdup(arena, method ? method : "GET");
    r->path = pgr_strdup(arena, path ? path : "/");
    r->query = pgr_strdup(arena, query ? query : "");
    r->body = "";
    if (r->method == NULL || r->path == NULL || r->query == NULL)
        return NULL;
    return r;
}

void pgrest_request_add_header(pgrest_request *req, const char *name,
                               const char *value)
{
    pgrest_request_add_header_n(req, name, value, value ? strlen(value) : 0);
}

void pgrest_request_add_header_n(pgrest_request *req, const char *name,
                                 const char *value, size_t value_len)
{
    if (req == NULL || name == NULL)
        return;
    pgr_kv *h = PGR_NEW(req->arena, pgr_kv);
    if (h == NULL)
        return;
    h->name = pgr_strdup(req->arena, name);
    h->value = pgr_strndup(req->arena, value ? value : "", value ? value_len : 0);
    h->name_len = strlen(name);
    h->value_len = value ? value_len : 0;
    /* a failed copy leaves the arena exhausted: parsing refuses it */
    if (h->name == NULL || h->value == NULL)
        return;
    if (req->headers_tail != NULL)
        req->headers_tail->next = h;
    else
        req->headers = h;
    req->headers_tail = h;
}

void pgrest_request_set_body(pgrest_request *req, const char *body, size_t len)
{
    if (req == NULL)
        return;
    char *copy = pgr_strndup(req->arena, body ? body : "", body ? len : 0);
    if (copy == NULL)
        return;
    req->body = copy;
    req->body_len = body ? len : 0;
    req->body_follows = false;
}

void pgrest_request_body_follows(pgrest_request *req)
{
    if (req == NULL)
        return;
    req->body = "";
    req->body_len = 0;
    req->body_follows = true;
}

const pgr_parse_limits *pgr_parse_limits_default(void)
{
    static const pgr_parse_limits defaults = {
        PGR_DEFAULT_MAX_BODY_SIZE, PGR_DEFAULT_MAX_DEPTH,
        PGR_DEFAULT_MAX_FILTERS, PGR_DEFAULT_MAX_JSON_DEPTH, PGR_DEFAULT_MAX_BATCH_ITEMS, 0};
    return &defaults;
}

const char *pgr_request_header(const pgrest_request *req, const char *name)
{
    for (const pgr_kv *h = req->headers; h != NULL; h = h->next)
        if (strcasecmp(h->name, name) == 0)
            return h->value;
    return NULL;
}

void pgrest_request_set_min_lsn(pgrest_request *req, const char *lsn)
{
    if (lsn != NULL)
        pgrest_request_add_header(req, PGREST_MIN_LSN_HEADER, lsn);
}

/* The default past which a following body may stream: bodies a client
 * sends at once stay whole, bulk imports stream. */
#define DEFAULT_IMPORT_THRESHOLD ((size_t)1024 * 1024)

void pgrest_request_allow_streamed_body(pgrest_request *req, size_t threshold_bytes)
{
    if (req != NULL)
        req->import_threshold = threshold_bytes > 0 ? threshold_bytes
                                                    : DEFAULT_IMPORT_THRESHOLD;
}
