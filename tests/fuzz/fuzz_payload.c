/* Fuzz target: request bodies (JSON, CSV, x-www-form-urlencoded, other
 * media types) through pgrest_parse_request, for the writes and calls
 * that read a body. Input: two bytes of arena cap (fuzz_arena_cap), one
 * selector byte, then the body. */
#include "fuzz_common.h"

#include <limits.h>

#include "parse/api_request.h"
#include "util/json_strict.h"

/* json-c's verdict on the whole body (strict, UTF-8 as Data.Text, without
 * the leniencies aeson lacks, the default depth limit): the reference the
 * element-by-element reading of arrays in lib/parse/payload.c must agree
 * with. */
static bool whole_body_is_json(const uint8_t *body, size_t len)
{
    if (len == 0 || len > INT_MAX || !pgr_utf8_valid((const char *)body, len) ||
        !pgr_json_lexically_strict((const char *)body, len))
        return false;
    json_tokener *tok = json_tokener_new_ex(PGR_DEFAULT_MAX_JSON_DEPTH + 1);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *doc = json_tokener_parse_ex(tok, (const char *)body, (int)len);
    size_t used = json_tokener_get_parse_end(tok);
    if (doc == NULL && json_tokener_get_error(tok) == json_tokener_continue) {
        doc = json_tokener_parse_ex(tok, "", 1);
        used = len;
    }
    bool ok = json_tokener_get_error(tok) == json_tokener_success;
    json_tokener_free(tok);
    json_object_put(doc);
    for (size_t i = used; ok && i < len; i++)
        ok = body[i] == ' ' || body[i] == '\t' || body[i] == '\r' || body[i] == '\n';
    return ok;
}

static const char *const content_types[] = {
    "application/json", "text/csv", "application/x-www-form-urlencoded",
    "text/plain", "application/octet-stream",
    "application/vnd.pgrst.object+json",
};

static const struct { const char *method, *path, *query; } targets[] = {
    {"POST", "/items", ""},
    {"PATCH", "/items", "id=eq.1"},
    {"PUT", "/items", "id=eq.1"},
    {"POST", "/rpc/fn", ""},
    {"POST", "/items", "columns=id,name"},
    {"POST", "/items", "on_conflict=id"},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static pgrest_ctx *ctx;
    if (ctx == NULL) {
        ctx = pgrest_ctx_new();
        if (ctx == NULL)
            abort();
        fuzz_set(ctx, "db-anon-role", "web_anon");
    }
    fuzz_reader r;
    fuzz_reader_init(&r, data, size);
    size_t cap = fuzz_arena_cap(&r);
    unsigned sel = fuzz_byte(&r);
    size_t nct = sizeof content_types / sizeof content_types[0];
    size_t nt = sizeof targets / sizeof targets[0];
    size_t t = (sel / nct) % nt;
    pgrest_arena *a = pgrest_arena_new(cap);
    if (a == NULL)
        abort();
    pgrest_request *req = pgrest_request_new(a, targets[t].method,
                                             targets[t].path, targets[t].query);
    if (req == NULL) {
        if (!pgr_arena_exhausted(a))
            abort();
        pgrest_arena_free(a);
        return 0;
    }
    pgrest_request_add_header(req, "Content-Type", content_types[sel % nct]);
    pgrest_request_add_header(req, "Prefer", "return=representation");
    pgrest_request_set_body(req, (const char *)r.p, r.left);
    pgrest_api_request *api = NULL;
    pgrest_error err = {0};
    int rc = pgrest_parse_request(ctx, a, req, &api, &err);
    if (rc != PGREST_OK) {
        fuzz_check_error(&err);
        fuzz_check_error_body(ctx, a, &err);
    }
    /* a JSON body on a table (no ?columns=): "Empty or invalid json"
     * exactly when json-c refuses the whole text */
    if (sel % nct == 0 && t != 3 && t != 4 && !pgr_arena_exhausted(a) && r.left > 0 &&
        memchr(r.p, '\0', r.left) == NULL) {
        bool said_invalid = rc != PGREST_OK && strcmp(err.code, "PGRST102") == 0 &&
                            strcmp(err.message, "Empty or invalid json") == 0;
        if (said_invalid == whole_body_is_json(r.p, r.left)) {
            fprintf(stderr, "payload verdict differs from json-c: %s\n",
                    rc == PGREST_OK ? "ok" : err.message);
            abort();
        }
    }
    pgrest_arena_free(a);
    return 0;
}
