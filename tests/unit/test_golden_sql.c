/* Golden SQL (PostgreSQL regress / PgBouncer hba_test style): each file in
 * golden/ holds a request and the main statement + parameters pgrest must
 * emit for it, or the error it must give. Planned against the schema
 * snapshot, no database; leading "Config: key=value" lines set options
 * for one case. PGREST_GOLDEN_UPDATE=1 rewrites the expectations
 * for review (diff them before committing). */
#include <check.h>

#include "check_run.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/auth.h"
#include "engine/context.h"
#include "sql/statements.h"

typedef struct golden_case {
    char *path;
    char *request;   /* everything before the first "---" line */
    char *expected;  /* everything after it */
} golden_case;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = '\0';
    fclose(f);
    return buf;
}

static bool split_case(char *text, golden_case *gc)
{
    char *sep = strstr(text, "\n---\n");
    if (sep == NULL)
        return false;
    *sep = '\0';
    gc->request = text;
    gc->expected = sep + 5;
    return true;
}

static pgrest_ctx *golden_ctx(void)
{
    pgrest_ctx *ctx = pgrest_ctx_new();
    pgrest_error err;
    pgrest_ctx_set(ctx, "db-schemas", "api", &err);
    pgrest_ctx_set(ctx, "db-anon-role", "web_anon", &err);
    pgrest_ctx_set(ctx, "db-aggregates-enabled", "true", &err);
    char path[1024];
    snprintf(path, sizeof path, "%s/schema_snapshot.json", getenv("PGREST_TEST_FIXTURES"));
    ck_assert_msg(pgrest_ctx_load_schema_file(ctx, path, &err) == PGREST_OK,
                  "snapshot: %s", err.message);
    return ctx;
}

/* Leading "Config: key=value" lines give the case a context of its own
 * with those options set; *request is moved past them. NULL without. */
static pgrest_ctx *case_ctx(char **request)
{
    if (strncmp(*request, "Config: ", 8) != 0)
        return NULL;
    pgrest_ctx *ctx = golden_ctx();
    while (strncmp(*request, "Config: ", 8) == 0) {
        char *key = *request + 8;
        char *nl = strchr(key, '\n');
        char *eq = strchr(key, '=');
        ck_assert_msg(nl != NULL && eq != NULL && eq < nl, "bad Config line: %s", key);
        *nl = '\0';
        *eq = '\0';
        *request = nl + 1;
        pgrest_error err;
        ck_assert_msg(pgrest_ctx_set(ctx, key, eq + 1, &err) == PGREST_OK,
                      "Config %s: %s", key, err.message);
    }
    return ctx;
}

/* First line "METHOD /path?query", then "Header: value" lines, then
 * optionally an empty line and the body. */
static pgrest_request *build_request(pgrest_arena *a, char *text)
{
    char *body = strstr(text, "\n\n");
    if (body != NULL) {
        *body = '\0';
        body += 2;
    }
    char *line = strtok_r(text, "\n", &text);
    char *sp = strchr(line, ' ');
    *sp = '\0';
    char *target = sp + 1;
    char *q = strchr(target, '?');
    if (q != NULL)
        *q++ = '\0';
    pgrest_request *req = pgrest_request_new(a, line, target, q ? q : "");
    char *h;
    while ((h = strtok_r(NULL, "\n", &text)) != NULL) {
        char *colon = strchr(h, ':');
        if (colon == NULL)
            continue;
        *colon = '\0';
        if (strcmp(h, "Body") == 0)
            pgrest_request_set_body(req, colon + 2, strlen(colon + 2));
        else
            pgrest_request_add_header(req, h, colon + 2);
    }
    if (body != NULL)
        pgrest_request_set_body(req, body, strlen(body));
    return req;
}

static char *render(pgrest_ctx *ctx, char *request_text)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = build_request(a, request_text);
    pgrest_api_request *api;
    pgrest_query_plan *plan;
    pgrest_statements *st;
    pgrest_error err = {0};
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    pgrest_auth *auth;
    int rc = pgrest_authenticate(ctx, a, req, &auth, &err);
    if (rc == PGREST_OK)
        pgrest_request_set_auth(req, auth);
    if (rc != PGREST_OK || pgrest_parse_request(ctx, a, req, &api, &err) != PGREST_OK ||
        pgrest_plan(ctx, a, api, &plan, &err) != PGREST_OK ||
        pgrest_emit_sql(ctx, a, plan, &st, &err) != PGREST_OK) {
        fprintf(f, "error %d %s\n", err.http_status, err.code);
    } else {
        for (size_t i = 0; i < pgrest_statements_count(st); i++) {
            if (st->items[i].role != PGR_STMT_MAIN)
                continue;
            fprintf(f, "%s\n", pgrest_statements_sql(st, i));
            for (size_t j = 0; j < pgrest_statements_param_count(st, i); j++) {
                const char *p = pgrest_statements_param(st, i, j);
                fprintf(f, "$%zu = %s\n", j + 1, p ? p : "NULL");
            }
        }
    }
    fclose(f);
    pgrest_arena_free(a);
    return out;
}

START_TEST(golden_files)
{
    const char *dir = getenv("PGREST_GOLDEN_DIR");
    bool update = getenv("PGREST_GOLDEN_UPDATE") != NULL;
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    pgrest_ctx *ctx = golden_ctx();
    struct dirent *e;
    int checked = 0;
    while ((e = readdir(d)) != NULL) {
        if (strstr(e->d_name, ".test") == NULL)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *text = slurp(path);
        golden_case gc = {.path = path};
        ck_assert_msg(split_case(text, &gc), "%s: no --- separator", path);
        char *req_copy = strdup(gc.request);
        char *req_text = req_copy;
        pgrest_ctx *own = case_ctx(&req_text);
        char *got = render(own != NULL ? own : ctx, req_text);
        pgrest_ctx_free(own);
        if (update) {
            FILE *f = fopen(path, "w");
            fprintf(f, "%s\n---\n%s", gc.request, got);
            fclose(f);
        } else {
            ck_assert_msg(strcmp(got, gc.expected) == 0,
                          "%s\nexpected:\n%s\ngot:\n%s", path, gc.expected, got);
        }
        checked++;
        free(got);
        free(req_copy);
        free(text);
    }
    closedir(d);
    ck_assert_int_gt(checked, 0);
    pgrest_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("golden_sql");
    TCase *tc = tcase_create("golden");
    tcase_add_test(tc, golden_files);
    suite_add_tcase(s, tc);
    return check_run(s);
}
