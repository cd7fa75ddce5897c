/* Fuzz target: pgrest_parse_request on arbitrary HTTP pieces, then the
 * planner and SQL emitter on a schema snapshot for whatever parses.
 *
 * Input layout: two bytes of arena cap (fuzz_arena_cap), then fields
 * separated by '\n':
 *   METHOD \n PATH \n QUERY \n (Header-Name: value \n)* \n BODY
 * The body is the remaining bytes (binary). Whatever parses also goes
 * through pgrest_handle (no pool: 503 after emitting), whose response
 * must be complete. */
#include "fuzz_common.h"

#ifndef FUZZ_SNAPSHOT
#error "FUZZ_SNAPSHOT (schema snapshot path) must be defined"
#endif

static pgrest_ctx *make_ctx(void)
{
    pgrest_ctx *ctx = pgrest_ctx_new();
    if (ctx == NULL)
        abort();
    fuzz_set(ctx, "db-schemas", "test,public");
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

static void add_headers(fuzz_reader *r, pgrest_request *req)
{
    for (;;) {
        char *line = fuzz_line(r);
        if (line[0] == '\0') {
            free(line);
            return;
        }
        char *colon = strchr(line, ':');
        const char *value = "";
        if (colon != NULL) {
            *colon = '\0';
            value = colon + 1;
            while (*value == ' ')
                value++;
        }
        pgrest_request_add_header(req, line, value);
        free(line);
    }
}

/* Later stages on a parsed request: they must fail cleanly or succeed. */
static void plan_and_emit(pgrest_ctx *ctx, pgrest_arena *a,
                          const pgrest_api_request *api)
{
    pgrest_error err = {0};
    pgrest_query_plan *plan = NULL;
    if (pgrest_plan(ctx, a, api, &plan, &err) != PGREST_OK) {
        fuzz_check_error(&err);
        fuzz_check_error_body(ctx, a, &err);
        return;
    }
    pgrest_statements *st = NULL;
    memset(&err, 0, sizeof err);
    if (pgrest_emit_sql(ctx, a, plan, &st, &err) != PGREST_OK) {
        fuzz_check_error(&err);
        return;
    }
    for (size_t i = 0; i < pgrest_statements_count(st); i++)
        if (pgrest_statements_sql(st, i) == NULL)
            abort();
}

/* A response handed to a host has every piece: status, named headers
 * with values, a body. */
static void check_response(const pgrest_response *resp)
{
    size_t len = 0;
    int status = pgrest_response_status(resp);
    if (status < 100 || status > 599 || pgrest_response_body(resp, &len) == NULL)
        abort();
    for (size_t i = 0; i < pgrest_response_header_count(resp); i++) {
        const pgrest_header *h = pgrest_response_header(resp, i);
        if (h == NULL || h->name == NULL || h->value == NULL)
            abort();
    }
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
    char *method = fuzz_line(&r), *path = fuzz_line(&r), *query = fuzz_line(&r);
    pgrest_arena *a = pgrest_arena_new(cap);
    if (a == NULL)
        abort();
    pgrest_request *req = pgrest_request_new(a, method, path, query);
    free(method);
    free(path);
    free(query);
    if (req == NULL) {
        /* only a cap too small for the request itself refuses it */
        if (!pgr_arena_exhausted(a))
            abort();
        pgrest_arena_free(a);
        return 0;
    }
    add_headers(&r, req);
    pgrest_request_set_body(req, (const char *)r.p, r.left);
    fuzz_authenticate(ctx, a, req);
    pgrest_api_request *api = NULL;
    pgrest_error err = {0};
    if (pgrest_parse_request(ctx, a, req, &api, &err) == PGREST_OK)
        plan_and_emit(ctx, a, api);
    else {
        fuzz_check_error(&err);
        pgrest_response *resp = pgrest_error_response(ctx, a, &err);
        if (resp == NULL)
            abort();
        check_response(resp);
        fuzz_check_error_body(ctx, a, &err);
    }
    pgrest_response *resp = pgrest_handle(ctx, a, req);
    if (resp == NULL)
        abort();
    check_response(resp);
    pgrest_arena_free(a);
    return 0;
}
