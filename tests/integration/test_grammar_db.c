/* The request grammar's hostile edges end to end on a real PostgreSQL:
 * percent-encoded NULs, limits and offsets beyond bigint, and order terms
 * that do not end where PostgREST's pOrder requires. Expected answers are
 * PostgREST's (QueryParams.hs, RangeQuery.hs, SqlFragment limitOffsetF)
 * and PostgreSQL's own errors for what PostgREST would send it. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "harness.h"

static pgrest_ctx *ctx;

static void setup(void)
{
    ctx = harness_ctx(NULL);
}

static void teardown(void)
{
    pgrest_ctx_free(ctx);
}

typedef struct db_case {
    const char *why;
    const char *method, *path, *query, *range, *body;
    int status;
    const char *code;    /* NULL: a success */
    const char *message; /* NULL: not checked */
    const char *ctype;   /* Content-Type, NULL: none */
} db_case;

#define BIG "99999999999999999999"

static const db_case cases[] = {
    {"a NUL in a value is refused as PostgreSQL refuses it in text (22021)",
     "GET", "/artists", "name=eq.The%20Quiet%20Ones%00xyz", NULL, NULL, 400,
     "22021", "invalid byte sequence for encoding \\\"UTF8\\\": 0x00", NULL},
    {"a NUL in the path is part of the name: no such table (PGRST205)",
     "GET", "/artists%00", "select=name", NULL, NULL, 404, "PGRST205", NULL, NULL},
    {"offset beyond bigint: PostgreSQL's 22003 for the OFFSET parameter",
     "GET", "/artists", "offset=" BIG "&limit=1", NULL, NULL, 400, "22003",
     "value \\\"" BIG "\\\" is out of range for type bigint", NULL},
    {"limit beyond bigint: 22003, never every row", "GET", "/artists",
     "limit=" BIG, NULL, NULL, 400, "22003",
     "value \\\"" BIG "\\\" is out of range for type bigint", NULL},
    {"an embedded limit beyond bigint is not ignored", "GET", "/artists",
     "select=name,albums(title)&albums.limit=" BIG, NULL, NULL, 400, "22003",
     "value \\\"" BIG "\\\" is out of range for type bigint", NULL},
    {"Range: 0-BIG asks 1 + upper - lower rows", "GET", "/artists", "",
     "0-" BIG, NULL, 400, "22003",
     "value \\\"100000000000000000000\\\" is out of range for type bigint", NULL},
    {"the largest bigint limit is fine", "GET", "/artists",
     "limit=9223372036854775807&select=name", NULL, NULL, 200, NULL, NULL, NULL},
    {"pOrder: a term must end at ',' or the end (';' sent as %3B)", "GET",
     "/artists", "order=name%3Bdrop%20table%20artists", NULL, NULL, 400,
     "PGRST100",
     "\\\"failed to parse order (name;drop table artists)\\\" (line 1, column "
     "5)", NULL},
    {"http-types splits a literal ';' like '&': order=name is valid", "GET",
     "/artists", "order=name;drop+table+artists", NULL, NULL, 200, NULL, NULL, NULL},
    {"a JSON body with \\u0000 reaches PostgreSQL, which refuses it (22P05)",
     "POST", "/rpc/add", "", NULL, "{\"a\":\"1\\u0000\",\"b\":1}", 400,
     "22P05", "unsupported Unicode escape sequence", NULL},
    /* form arguments are DirectArgs (Plan.hs), each sent as a text-like
     * parameter (QueryBuilder.hs fmtArgs), which refuses NUL */
    {"a form argument with %00 is refused as text refuses NUL (22021)", "POST",
     "/rpc/add", "", NULL, "a=1%00&b=1", 400, "22021",
     "invalid byte sequence for encoding \\\"UTF8\\\": 0x00",
     "application/x-www-form-urlencoded"},
};

START_TEST(test_grammar_db)
{
    const db_case *c = &cases[_i];
    const char *headers[5] = {NULL};
    size_t h = 0;
    if (c->range != NULL) {
        headers[h++] = "Range";
        headers[h++] = c->range;
    }
    if (c->ctype != NULL) {
        headers[h++] = "Content-Type";
        headers[h++] = c->ctype;
    }
    test_response r;
    harness_request(ctx, c->method, c->path, c->query, h ? headers : NULL,
                    c->body, &r);
    ck_assert_msg(r.status == c->status, "%s: %d %s", c->why, r.status, r.body);
    if (c->code != NULL) {
        char want[160];
        snprintf(want, sizeof want, "\"code\":\"%s\"", c->code);
        ck_assert_msg(strstr(r.body, want) != NULL, "%s: %s", c->why, r.body);
    }
    if (c->message != NULL) {
        char want[256];
        snprintf(want, sizeof want, "\"message\":\"%s\"", c->message);
        ck_assert_msg(strstr(r.body, want) != NULL, "%s: %s", c->why, r.body);
    }
    harness_free(&r);
}
END_TEST

/* The relation is still there (nothing ran as SQL) and a NUL never
 * truncated a filter into matching the row. */
START_TEST(test_nul_never_truncates)
{
    test_response r;
    harness_request(ctx, "GET", "/artists", "name=eq.The%20Quiet%20Ones%00",
                    NULL, NULL, &r);
    ck_assert_int_eq(r.status, 400);
    ck_assert_ptr_null(strstr(r.body, "The Quiet Ones\","));
    harness_free(&r);
    harness_request(ctx, "GET", "/artists", "select=name&order=name", NULL,
                    NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "The Quiet Ones"));
    harness_free(&r);
}
END_TEST

static Suite *grammar_db_suite(void)
{
    Suite *s = suite_create("grammar_db");
    TCase *tc = tcase_create("grammar_db");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_grammar_db, 0,
                        (int)(sizeof(cases) / sizeof(cases[0])));
    tcase_add_test(tc, test_nul_never_truncates);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(grammar_db_suite());
}
