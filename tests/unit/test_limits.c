/* Unit tests of the request limits (issue "reliability under hostile
 * input"): select and logic-tree nesting (request-max-depth), number of
 * filters (request-max-filters), JSON body nesting (request-max-json-depth),
 * body size (server-max-body-size), their configuration, and form bodies
 * with many keys. No database. */
#include <check.h>

#include "check_run.h"
#include <stdlib.h>
#include <string.h>

#include "engine/context.h"
#include "parse/api_request.h"
#include "parse/filter_parser.h"
#include "parse/query_string.h"
#include "parse/select_parser.h"
#include "util/strbuf.h"

static pgrest_arena *arena;

static void setup(void)
{
    arena = pgrest_arena_new(0);
    ck_assert_ptr_nonnull(arena);
}

static void teardown(void)
{
    pgrest_arena_free(arena);
    arena = NULL;
}

/* "a0(a1(...(id)...))" nesting `depth` embeds */
static const char *nested_select(int depth)
{
    pgr_sb sb;
    pgr_sb_init(&sb, arena, 64);
    for (int i = 0; i < depth; i++) {
        pgr_sb_puts(&sb, "a");
        pgr_sb_put_long(&sb, i);
        pgr_sb_putc(&sb, '(');
    }
    pgr_sb_puts(&sb, "id");
    for (int i = 0; i < depth; i++)
        pgr_sb_putc(&sb, ')');
    return pgr_sb_finish(&sb);
}

/* "(or(or(...(id.eq.1)...)))": the value of or= with depth-1 inner nodes */
static const char *nested_logic(int depth)
{
    pgr_sb sb;
    pgr_sb_init(&sb, arena, 64);
    pgr_sb_putc(&sb, '(');
    for (int i = 1; i < depth; i++)
        pgr_sb_puts(&sb, "or(");
    pgr_sb_puts(&sb, "id.eq.1");
    for (int i = 1; i < depth; i++)
        pgr_sb_putc(&sb, ')');
    pgr_sb_putc(&sb, ')');
    return pgr_sb_finish(&sb);
}

static void assert_depth_error(int rc, const pgrest_error *err, const char *msg)
{
    ck_assert_int_ne(rc, PGREST_OK);
    ck_assert_int_eq(err->http_status, 400);
    ck_assert_str_eq(err->code, "PGRST100");
    ck_assert_str_eq(err->message, msg);
    ck_assert_ptr_nonnull(strstr(err->details, "request-max-depth"));
}

START_TEST(select_depth_default)
{
    pgr_select_item *items = NULL;
    pgrest_error err = {0};
    ck_assert_int_eq(pgr_parse_select(arena, nested_select(PGR_DEFAULT_MAX_DEPTH),
                                      &items, &err), PGREST_OK);
    ck_assert_ptr_nonnull(items);
    int rc = pgr_parse_select(arena, nested_select(PGR_DEFAULT_MAX_DEPTH + 1), &items, &err);
    assert_depth_error(rc, &err, "Select parameter nesting too deep");
    ck_assert_ptr_null(items);
}
END_TEST

START_TEST(select_depth_custom)
{
    pgr_select_item *items = NULL;
    pgrest_error err = {0};
    ck_assert_int_eq(pgr_parse_select_max(arena, nested_select(3), 3, &items, &err),
                     PGREST_OK);
    assert_depth_error(pgr_parse_select_max(arena, nested_select(4), 3, &items, &err),
                       &err, "Select parameter nesting too deep");
    /* siblings do not add up: width is not depth */
    ck_assert_int_eq(pgr_parse_select_max(arena, "a(b(x)),c(d(y)),e(f(z))", 2,
                                          &items, &err), PGREST_OK);
}
END_TEST

START_TEST(select_depth_huge_input)
{
    /* 100000 levels: refused at the limit, without deep recursion */
    pgr_select_item *items = NULL;
    pgrest_error err = {0};
    int rc = pgr_parse_select(arena, nested_select(100000), &items, &err);
    assert_depth_error(rc, &err, "Select parameter nesting too deep");
}
END_TEST

START_TEST(logic_depth)
{
    pgr_logic_tree *t = NULL;
    pgrest_error err = {0};
    ck_assert_int_eq(pgr_parse_logic_tree(arena, true, false,
                                          nested_logic(PGR_DEFAULT_MAX_DEPTH), &t, &err),
                     PGREST_OK);
    assert_depth_error(pgr_parse_logic_tree(arena, true, false,
                                            nested_logic(PGR_DEFAULT_MAX_DEPTH + 1), &t, &err),
                       &err, "Logic tree nesting too deep");
    ck_assert_int_eq(pgr_parse_logic_tree_max(arena, false, true, nested_logic(2), 2,
                                              &t, &err), PGREST_OK);
    assert_depth_error(pgr_parse_logic_tree_max(arena, false, true, nested_logic(3), 2,
                                                &t, &err),
                       &err, "Logic tree nesting too deep");
    assert_depth_error(pgr_parse_logic_tree(arena, true, false, nested_logic(50000), &t, &err),
                       &err, "Logic tree nesting too deep");
}
END_TEST

static int parse_qs(const char *qs, const pgr_parse_limits *lim, pgrest_error *err)
{
    pgr_query_params qp;
    return pgr_query_params_parse(arena, pgr_query_string_decode(arena, qs), false,
                                  lim, &qp, err);
}

START_TEST(filter_count)
{
    pgr_parse_limits lim = *pgr_parse_limits_default();
    lim.max_filters = 4;
    pgrest_error err = {0};
    ck_assert_int_eq(parse_qs("a=eq.1&b=eq.2&c=eq.3&d=eq.4&select=a&order=a", &lim, &err),
                     PGREST_OK);
    ck_assert_int_ne(parse_qs("a=eq.1&b=eq.2&c=eq.3&d=eq.4&e=eq.5", &lim, &err), PGREST_OK);
    ck_assert_int_eq(err.http_status, 400);
    ck_assert_str_eq(err.code, "PGRST100");
    ck_assert_str_eq(err.message, "Too many filters");
    /* logic-tree leaves count too */
    ck_assert_int_eq(parse_qs("a=eq.1&or=(b.eq.1,and(c.eq.1,d.eq.2))", &lim, &err), PGREST_OK);
    ck_assert_int_ne(parse_qs("a=eq.1&or=(b.eq.1,c.eq.2)&and=(d.eq.1,e.eq.1)", &lim, &err),
                     PGREST_OK);
    ck_assert_str_eq(err.message, "Too many filters");
    /* embedded filters count like root ones */
    ck_assert_int_ne(parse_qs("x.a=eq.1&x.b=eq.1&y.c=eq.1&d=eq.1&e=eq.1", &lim, &err), PGREST_OK);
    /* default */
    pgr_sb sb;
    pgr_sb_init(&sb, arena, 4096);
    for (int i = 0; i <= PGR_DEFAULT_MAX_FILTERS; i++) {
        pgr_sb_puts(&sb, i ? "&c=gt." : "c=gt.");
        pgr_sb_put_long(&sb, i);
    }
    ck_assert_int_ne(parse_qs(pgr_sb_finish(&sb), NULL, &err), PGREST_OK);
    ck_assert_str_eq(err.message, "Too many filters");
}
END_TEST

/* ------------------------------------------------------------ through a context */

static pgrest_ctx *ctx;

static void ctx_setup(void)
{
    setup();
    ctx = pgrest_ctx_new();
    ck_assert_ptr_nonnull(ctx);
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-anon-role", "anon", &err), PGREST_OK);
}

static void ctx_teardown(void)
{
    pgrest_ctx_free(ctx);
    ctx = NULL;
    teardown();
}

static int post(const char *ctype, const char *body, pgrest_api_request **api,
                pgrest_error *err)
{
    pgrest_request *req = pgrest_request_new(arena, "POST", "/items", "");
    pgrest_request_add_header(req, "Content-Type", ctype);
    pgrest_request_set_body(req, body, strlen(body));
    return pgrest_parse_request(ctx, arena, req, api, err);
}

static const char *nested_json(int depth)
{
    pgr_sb sb;
    pgr_sb_init(&sb, arena, 64);
    pgr_sb_puts(&sb, "{\"a\":");
    for (int i = 1; i < depth; i++)
        pgr_sb_putc(&sb, '[');
    pgr_sb_putc(&sb, '1');
    for (int i = 1; i < depth; i++)
        pgr_sb_putc(&sb, ']');
    pgr_sb_putc(&sb, '}');
    return pgr_sb_finish(&sb);
}

START_TEST(json_depth)
{
    pgrest_api_request *api = NULL;
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "request-max-json-depth", "4", &err), PGREST_OK);
    ck_assert_int_eq(post("application/json", nested_json(4), &api, &err), PGREST_OK);
    ck_assert_int_ne(post("application/json", nested_json(5), &api, &err), PGREST_OK);
    ck_assert_int_eq(err.http_status, 400);
    ck_assert_str_eq(err.code, "PGRST102");
    ck_assert_str_eq(err.message, "Empty or invalid json");
    ck_assert_ptr_nonnull(strstr(err.details, "request-max-json-depth"));
    /* the default allows 128 levels; requests started before the change
     * keep the configuration they began with, so a new arena */
    ck_assert_int_eq(pgrest_ctx_set(ctx, "request-max-json-depth", "128", &err), PGREST_OK);
    pgrest_arena_free(arena);
    arena = pgrest_arena_new(0);
    ck_assert_int_eq(post("application/json", nested_json(128), &api, &err), PGREST_OK);
    ck_assert_int_ne(post("application/json", nested_json(129), &api, &err), PGREST_OK);
    ck_assert_str_eq(err.code, "PGRST102");
}
END_TEST

START_TEST(body_size)
{
    pgrest_api_request *api = NULL;
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "server-max-body-size", "16", &err), PGREST_OK);
    ck_assert_int_eq(post("application/json", "{\"a\":1234567890}", &api, &err), PGREST_OK);
    ck_assert_int_ne(post("application/json", "{\"a\":12345678901}", &api, &err), PGREST_OK);
    ck_assert_int_eq(err.http_status, 413);
    ck_assert_str_eq(err.code, "PGRST413");
    ck_assert_str_eq(err.message, "Request body too large");
    ck_assert_ptr_nonnull(strstr(err.details, "server-max-body-size"));
    /* the refusal is a PostgREST-style JSON error response */
    pgrest_response *resp = pgrest_error_response(ctx, arena, &err);
    ck_assert_int_eq(pgrest_response_status(resp), 413);
    size_t len;
    const char *body = pgrest_response_body(resp, &len);
    ck_assert_ptr_nonnull(strstr(body, "\"code\":\"PGRST413\""));
}
END_TEST

START_TEST(limit_config)
{
    static const char *const keys[] = {"server-max-body-size", "request-max-depth",
                                       "request-max-filters", "request-max-json-depth"};
    static const char *const bad[] = {"0", "-1", "abc", "", "12x", "99999999999999999999"};
    for (size_t k = 0; k < 4; k++)
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            pgrest_error err = {0};
            ck_assert_msg(pgrest_ctx_set(ctx, keys[k], bad[b], &err) == PGREST_ERR_CONFIG,
                          "%s = '%s' accepted", keys[k], bad[b]);
        }
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "request-max-depth", "2", &err), PGREST_OK);
    ck_assert_int_eq(pgr_cfg(ctx, arena)->limits.max_depth, 2);
    ck_assert_str_eq(pgrest_ctx_get(ctx, "request-max-depth"), "2");
    /* the context's limits reach the parser */
    pgrest_request *req = pgrest_request_new(arena, "GET", "/items", "select=a(b(c(id)))");
    pgrest_api_request *api = NULL;
    ck_assert_int_ne(pgrest_parse_request(ctx, arena, req, &api, &err), PGREST_OK);
    ck_assert_str_eq(err.message, "Select parameter nesting too deep");
    ck_assert_int_eq(pgrest_ctx_set(ctx, "request-max-filters", "1", &err), PGREST_OK);
    /* a request keeps the configuration it started with: the next one
     * (a new arena) sees the change */
    req = pgrest_request_new(arena, "GET", "/items", "a=eq.1&b=eq.2");
    ck_assert_int_eq(pgrest_parse_request(ctx, arena, req, &api, &err), PGREST_OK);
    pgrest_arena *next = pgrest_arena_new(0);
    req = pgrest_request_new(next, "GET", "/items", "a=eq.1&b=eq.2");
    ck_assert_int_ne(pgrest_parse_request(ctx, next, req, &api, &err), PGREST_OK);
    ck_assert_str_eq(err.message, "Too many filters");
    pgrest_arena_free(next);
}
END_TEST

/* A successful parse of a large body. No timing here (performance is for
 * bench/): the sizes are such that a quadratic parser would run for hours
 * and hit the test's timeout, whatever the machine's load. */
static void post_ok(const char *ctype, const char *body, pgrest_api_request **api)
{
    pgrest_error err = {0};
    ck_assert_int_eq(post(ctype, body, api, &err), PGREST_OK);
}

START_TEST(form_many_keys)
{
    /* the last occurrence wins (Payload.hs HM.fromList), at its place */
    pgrest_api_request *api = NULL;
    pgrest_error err = {0};
    ck_assert_int_eq(post("application/x-www-form-urlencoded", "b=1&a=2&b=3&c=4&a=5",
                          &api, &err), PGREST_OK);
    ck_assert_str_eq(api->payload_json, "{\"b\":\"3\",\"c\":\"4\",\"a\":\"5\"}");
    ck_assert_int_eq((int)api->n_payload_keys, 3);
    /* 200000 distinct keys: linearithmic */
    pgr_sb sb;
    pgr_sb_init(&sb, arena, 2 << 20);
    for (int i = 0; i < 200000; i++) {
        pgr_sb_puts(&sb, i ? "&k" : "k");
        pgr_sb_put_long(&sb, i);
        pgr_sb_puts(&sb, "=v");
    }
    post_ok("application/x-www-form-urlencoded", pgr_sb_finish(&sb), &api);
    ck_assert_int_eq((int)api->n_payload_keys, 200000);
}
END_TEST

START_TEST(csv_many_columns)
{
    /* a header of 100000 names (half of them repeated) and two records:
     * the names are indexed once, linearithmic */
    pgrest_api_request *api = NULL;
    pgr_sb sb;
    pgr_sb_init(&sb, arena, 4 << 20);
    for (int row = 0; row < 3; row++) {
        for (int i = 0; i < 100000; i++) {
            if (i > 0)
                pgr_sb_putc(&sb, ',');
            pgr_sb_putc(&sb, row == 0 ? 'k' : 'v');
            pgr_sb_put_long(&sb, i % 50000);
        }
        pgr_sb_putc(&sb, '\n');
    }
    post_ok("text/csv", pgr_sb_finish(&sb), &api);
    ck_assert_int_eq((int)api->n_payload_keys, 50000);
}
END_TEST

static Suite *limits_suite(void)
{
    Suite *s = suite_create("limits");
    TCase *tc = tcase_create("parser");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, select_depth_default);
    tcase_add_test(tc, select_depth_custom);
    tcase_add_test(tc, select_depth_huge_input);
    tcase_add_test(tc, logic_depth);
    tcase_add_test(tc, filter_count);
    suite_add_tcase(s, tc);
    tc = tcase_create("context");
    tcase_add_checked_fixture(tc, ctx_setup, ctx_teardown);
    tcase_add_test(tc, json_depth);
    tcase_add_test(tc, body_size);
    tcase_add_test(tc, limit_config);
    tcase_add_test(tc, form_many_keys);
    tcase_add_test(tc, csv_many_columns);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(limits_suite());
}
