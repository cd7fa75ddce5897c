/* Fuzz target: the request headers PostgREST reads (Prefer, Accept,
 * Content-Type, Range, Accept-/Content-Profile, Authorization) and the
 * path itself, each fed with arbitrary bytes (NULs included, added with
 * their length) through pgrest_parse_request, then the planner and SQL
 * emitter on the schema snapshot. Every error must come back as a JSON
 * object in well-formed UTF-8 (fuzz_check_error_body).
 *
 * Input: two bytes of arena cap (fuzz_arena_cap), a selector byte, then
 * the value. Selector % 8 picks the header (7 = the path); selector / 8
 * picks the request it goes on. */
#include "fuzz_common.h"

#ifndef FUZZ_SNAPSHOT
#error "FUZZ_SNAPSHOT (schema snapshot path) must be defined"
#endif

static const char *const header_names[] = {
    "Prefer", "Accept", "Content-Type", "Range", "Accept-Profile",
    "Content-Profile", "Authorization",
};

static const struct { const char *method, *path, *query, *body; } targets[] = {
    {"GET", "/albums", "select=id,title,artists(name)&id=gt.0", ""},
    {"POST", "/albums", "", "{\"id\":1,\"title\":\"a\"}"},
    {"PATCH", "/albums", "id=eq.1", "{\"title\":\"b\"}"},
    {"DELETE", "/albums", "id=eq.1", ""},
    {"POST", "/rpc/add", "", "{\"a\":1}"},
    {"GET", "/", "", ""},
    {"HEAD", "/albums", "limit=1", ""},
    {"OPTIONS", "/albums", "", ""},
};

static pgrest_ctx *make_ctx(void)
{
    pgrest_ctx *ctx = pgrest_ctx_new();
    if (ctx == NULL)
        abort();
    fuzz_set(ctx, "db-schemas", "api,public");
    fuzz_set(ctx, "db-anon-role", "web_anon");
    fuzz_set(ctx, "jwt-secret", FUZZ_SECRET);
    fuzz_set(ctx, "db-max-rows", "1000");
    pgrest_error err = {0};
    if (pgrest_ctx_load_schema_file(ctx, FUZZ_SNAPSHOT, &err) != PGREST_OK) {
        fprintf(stderr, "fuzz setup: cannot load %s\n", FUZZ_SNAPSHOT);
        abort();
    }
    return ctx;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static pgrest_ctx *ctx;
    if (ctx == NULL)
        ctx = make_ctx();
    fuzz_reader r;
    fuzz_reader_init(&r, data, size);
    size_t cap = fuzz_arena_cap(&r);
    unsigned sel = fuzz_byte(&r);
    unsigned which = sel % 8;
    size_t t = (sel / 8) % (sizeof targets / sizeof targets[0]);
    char *value = fuzz_strndup(r.p, r.left);
    pgrest_arena *a = pgrest_arena_new(cap);
    if (a == NULL)
        abort();
    pgrest_request *req = pgrest_request_new(a, targets[t].method,
                                             which == 7 ? value : targets[t].path,
                                             targets[t].query);
    if (req == NULL) {
        if (!pgr_arena_exhausted(a))
            abort();
        goto done;
    }
    if (which < 7)
        pgrest_request_add_header_n(req, header_names[which], value, r.left);
    if (targets[t].body[0] != '\0') {
        if (which != 2)
            pgrest_request_add_header(req, "Content-Type", "application/json");
        pgrest_request_set_body(req, targets[t].body, strlen(targets[t].body));
    }
    fuzz_authenticate(ctx, a, req);
    pgrest_api_request *api = NULL;
    pgrest_error err = {0};
    if (pgrest_parse_request(ctx, a, req, &api, &err) != PGREST_OK) {
        fuzz_check_error(&err);
        fuzz_check_error_body(ctx, a, &err);
        goto done;
    }
    pgrest_query_plan *plan = NULL;
    memset(&err, 0, sizeof err);
    if (pgrest_plan(ctx, a, api, &plan, &err) != PGREST_OK) {
        fuzz_check_error(&err);
        fuzz_check_error_body(ctx, a, &err);
        goto done;
    }
    pgrest_statements *st = NULL;
    memset(&err, 0, sizeof err);
    if (pgrest_emit_sql(ctx, a, plan, &st, &err) != PGREST_OK)
        fuzz_check_error(&err);
done:
    pgrest_arena_free(a);
    free(value);
    return 0;
}
