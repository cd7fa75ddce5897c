/* Fuzz target: request bodies (JSON, CSV, x-www-form-urlencoded, other
 * media types) through pgrest_parse_request, for the writes and calls
 * that read a body. Input: two bytes of arena cap (fuzz_arena_cap), one
 * selector byte, then the body. */
#include "fuzz_common.h"

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
    if (pgrest_parse_request(ctx, a, req, &api, &err) != PGREST_OK) {
        fuzz_check_error(&err);
        fuzz_check_error_body(ctx, a, &err);
    }
    pgrest_arena_free(a);
    return 0;
}
