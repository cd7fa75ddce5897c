/* A host program answering PostgREST requests in-process with libpgrest:
 * no HTTP server, no PostgREST process. Build against the installed
 * library:
 *
 *   cc main.c $(pkg-config --cflags --libs pgrest) -o embed_c
 *   ./embed_c 'postgresql://authenticator@localhost/pgrest_test'
 *
 * The database is tests/fixtures/test_schema.sql (schema api). Writes are
 * sent with Prefer: tx=rollback so the example leaves the data as it was. */
#include <stdio.h>
#include <string.h>

#include <pgrest/pgrest.h>

static int configure(pgrest_ctx *ctx, const char *db_uri)
{
    const char *options[][2] = {
        {"db-uri", db_uri},
        {"db-schemas", "api"},
        {"db-anon-role", "web_user"},
        {"db-pool", "2"},
        {"db-tx-end", "commit-allow-override"},
    };
    pgrest_error err;
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++)
        if (pgrest_ctx_set(ctx, options[i][0], options[i][1], &err) != PGREST_OK) {
            fprintf(stderr, "config %s: %s\n", options[i][0], err.message);
            return -1;
        }
    if (pgrest_ctx_load_schema(ctx, &err) != PGREST_OK) {
        fprintf(stderr, "schema cache: %s\n", err.message);
        return -1;
    }
    return 0;
}

/* One request through pgrest_handle; prints "STATUS body". */
static int call(pgrest_ctx *ctx, const char *method, const char *path,
                const char *query, const char *body)
{
    pgrest_arena *arena = pgrest_arena_new(0);
    pgrest_request *req = pgrest_request_new(arena, method, path, query);
    if (body != NULL) {
        pgrest_request_add_header(req, "Content-Type", "application/json");
        pgrest_request_add_header(req, "Prefer", "return=representation, tx=rollback");
        pgrest_request_set_body(req, body, strlen(body));
    }
    pgrest_response *resp = pgrest_handle(ctx, arena, req);
    size_t len;
    const char *out = pgrest_response_body(resp, &len);
    int status = pgrest_response_status(resp);
    printf("%s %s?%s -> %d %.*s\n", method, path, query, status, (int)len, out);
    pgrest_arena_free(arena);
    return status;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DB_URI\n", argv[0]);
        return 2;
    }
    pgrest_ctx *ctx = pgrest_ctx_new();
    if (ctx == NULL || configure(ctx, argv[1]) != 0) {
        pgrest_ctx_free(ctx);
        return 1;
    }
    int failures = 0;
    failures += call(ctx, "GET", "/artists", "select=name,albums(title)&id=eq.1", NULL) != 200;
    failures += call(ctx, "POST", "/artists", "select=name,country",
                     "{\"name\":\"Embedded Band\",\"country\":\"NL\"}") != 201;
    failures += call(ctx, "POST", "/rpc/add", "", "{\"a\":40,\"b\":2}") != 200;
    failures += call(ctx, "GET", "/nope", "", NULL) != 404;
    pgrest_ctx_free(ctx);
    return failures == 0 ? 0 : 1;
}
