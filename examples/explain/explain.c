/* pgrest-explain: prints the SQL and parameters pgrest would run for a
 * request, planned against a schema snapshot; no database needed.
 *
 *   pgrest-explain SNAPSHOT.json METHOD 'PATH?QUERY' [-H 'Name: value']...
 *                  [-d BODY] [-c key=value]...
 *
 * Options -c set configuration (db-schemas, db-anon-role, ...). Bad input
 * prints PostgREST's error body and exits 1. Uses only the public API. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgrest/pgrest.h"

static int usage(void)
{
    fprintf(stderr, "usage: pgrest-explain SNAPSHOT METHOD 'PATH?QUERY' "
                    "[-H 'Name: value']... [-d BODY] [-c key=value]...\n");
    return 2;
}

static int fail(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_error *err)
{
    pgrest_response *r = pgrest_error_response(ctx, a, err);
    size_t len;
    const char *body = pgrest_response_body(r, &len);
    printf("HTTP %d\n%.*s\n", pgrest_response_status(r), (int)len, body);
    return 1;
}

static void print_statements(const pgrest_statements *st)
{
    for (size_t i = 0; i < pgrest_statements_count(st); i++) {
        printf("-- statement %zu\n%s;\n", i + 1, pgrest_statements_sql(st, i));
        for (size_t j = 0; j < pgrest_statements_param_count(st, i); j++) {
            const char *p = pgrest_statements_param(st, i, j);
            printf("--   $%zu = %s\n", j + 1, p ? p : "NULL");
        }
    }
}

static int configure(pgrest_ctx *ctx, int argc, char **argv, pgrest_error *err)
{
    for (int i = 4; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-c") != 0)
            continue;
        char *eq = strchr(argv[i + 1], '=');
        if (eq == NULL)
            return -1;
        *eq = '\0';
        if (pgrest_ctx_set(ctx, argv[i + 1], eq + 1, err) != PGREST_OK)
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4 || (argc - 4) % 2 != 0)
        return usage();
    pgrest_ctx *ctx = pgrest_ctx_new();
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_error err = {0};
    int rc = 1;
    if (configure(ctx, argc, argv, &err) != 0) {
        fprintf(stderr, "pgrest-explain: bad -c option: %s\n", err.message ? err.message : "");
        goto out;
    }
    if (pgrest_ctx_load_schema_file(ctx, argv[1], &err) != PGREST_OK) {
        fprintf(stderr, "pgrest-explain: %s (%s)\n", err.message, argv[1]);
        goto out;
    }
    char *target = strdup(argv[3]);
    char *q = strchr(target, '?');
    if (q != NULL)
        *q++ = '\0';
    pgrest_request *req = pgrest_request_new(a, argv[2], target, q);
    free(target);
    for (int i = 4; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-H") == 0) {
            char *h = argv[i + 1], *colon = strchr(h, ':');
            if (colon == NULL)
                continue;
            *colon = '\0';
            const char *v = colon + 1;
            while (*v == ' ')
                v++;
            pgrest_request_add_header(req, h, v);
        } else if (strcmp(argv[i], "-d") == 0) {
            pgrest_request_set_body(req, argv[i + 1], strlen(argv[i + 1]));
        }
    }
    pgrest_auth *auth;
    pgrest_api_request *api;
    pgrest_query_plan *plan;
    pgrest_statements *st;
    /* authentication first, as PostgREST: a bad token wins over a bad
     * query string; parsing never reads the token */
    if (pgrest_authenticate(ctx, a, req, &auth, &err) != PGREST_OK) {
        rc = fail(ctx, a, &err);
        goto out;
    }
    pgrest_request_set_auth(req, auth);
    if (pgrest_parse_request(ctx, a, req, &api, &err) != PGREST_OK ||
        pgrest_plan(ctx, a, api, &plan, &err) != PGREST_OK ||
        pgrest_emit_sql(ctx, a, plan, &st, &err) != PGREST_OK) {
        rc = fail(ctx, a, &err);
        goto out;
    }
    print_statements(st);
    rc = 0;
out:
    pgrest_arena_free(a);
    pgrest_ctx_free(ctx);
    return rc;
}
