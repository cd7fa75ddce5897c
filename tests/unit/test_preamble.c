/* The transaction around a request, without a database (PostgREST
 * Query/PreQuery.hs txVarQuery, MainTx.hs planIsoLvl): role settings from
 * the snapshot's "role_settings" go between search_path and role, the
 * role's isolation level opens the transaction, a function's own level
 * wins, and hoisted function settings come before app.settings. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_run.h"
#include "config/config_snapshot.h"
#include "engine/context.h"
#include "parse/api_request.h"
#include "sql/statements.h"

static const char snapshot[] =
    "{\"pg_version\": 150000,"
    " \"tables\": [{\"schema\": \"api\", \"name\": \"items\", \"kind\": \"r\","
    "   \"pk\": [\"id\"], \"columns\": [{\"name\": \"id\", \"type\": \"integer\","
    "   \"nominal_type\": \"integer\", \"nullable\": false, \"position\": 1}]}],"
    " \"routines\": [{\"schema\": \"api\", \"name\": \"tick\", \"params\": [],"
    "   \"return_schema\": \"pg_catalog\", \"return_type\": \"int4\","
    "   \"return_kind\": \"scalar\", \"returns_set\": false, \"volatility\": \"v\","
    "   \"isolation_level\": \"serializable\","
    "   \"settings\": [[\"statement_timeout\", \"7s\"]]}],"
    " \"role_settings\": ["
    "   {\"role\": \"web_anon\", \"isolation_level\": \"repeatable read\","
    "    \"settings\": [[\"statement_timeout\", \"5s\"], [\"work_mem\", \"5MB\"]]},"
    "   {\"role\": \"other\", \"isolation_level\": null,"
    "    \"settings\": [[\"work_mem\", \"1MB\"]]}]}";

/* HS256 with the secret below, payload {"role":"web_user"}. */
#define SECRET "reallyreallyreallyreallyverysafe"
#define WEB_USER_BEARER                                                        \
    "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoid2ViX3VzZXIifQ." \
    "6wrCou4-1o3Bp-OORQWhFf6FJwmF255Bv1kepHf4-BU"

static pgrest_ctx *ctx;
static pgrest_arena *arena;

static void setup(void)
{
    ctx = pgrest_ctx_new();
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-schemas", "api", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-anon-role", "web_anon", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "jwt-secret", SECRET, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "app.settings.color", "blue", &err), PGREST_OK);
    pgr_schema_cache *sc = pgr_schema_cache_from_json(snapshot, NULL, &err);
    ck_assert_msg(sc != NULL, "snapshot: %s %s", err.message, err.details);
    pgr_ctx_swap_schema(ctx, sc);
    arena = pgrest_arena_new(0);
}

static void teardown(void)
{
    pgrest_arena_free(arena);
    pgrest_ctx_free(ctx);
}

static pgrest_statements *emit_request(pgrest_request *req, const char *method,
                                       const char *path)
{
    pgrest_api_request *api;
    pgrest_query_plan *plan;
    pgrest_statements *st;
    pgrest_error err = {0};
    pgrest_auth *auth;
    ck_assert_msg(pgrest_authenticate(ctx, arena, req, &auth, &err) == PGREST_OK,
                  "%s %s: %s", method, path, err.message);
    pgrest_request_set_auth(req, auth);
    ck_assert_msg(pgrest_parse_request(ctx, arena, req, &api, &err) == PGREST_OK &&
                      pgrest_plan(ctx, arena, api, &plan, &err) == PGREST_OK &&
                      pgrest_emit_sql(ctx, arena, plan, &st, &err) == PGREST_OK,
                  "%s %s: %s", method, path, err.message);
    return st;
}

static pgrest_statements *emit(const char *method, const char *path,
                               const char *bearer)
{
    pgrest_request *req = pgrest_request_new(arena, method, path, "");
    if (bearer != NULL)
        pgrest_request_add_header(req, "Authorization", bearer);
    if (strcmp(method, "POST") == 0)
        pgrest_request_set_body(req, "{}", 2);
    return emit_request(req, method, path);
}

static size_t find(const pgrest_statements *st, pgr_stmt_role role)
{
    for (size_t i = 0; i < pgrest_statements_count(st); i++)
        if (st->items[i].role == role)
            return i;
    return (size_t)-1;
}

/* The SQL of the BEGIN statement, or "" when the request runs as an
 * implicit transaction. */
static const char *begin_sql(const pgrest_statements *st)
{
    size_t i = find(st, PGR_STMT_BEGIN);
    return i == (size_t)-1 ? "" : pgrest_statements_sql(st, i);
}

/* The settings statement as "name=value" pairs in order. */
static const char *settings(const pgrest_statements *st, char *buf, size_t cap)
{
    size_t i = find(st, PGR_STMT_SETTINGS);
    ck_assert_uint_ne(i, (size_t)-1);
    const char *sql = pgrest_statements_sql(st, i);
    size_t n = 0, param = 0;
    buf[0] = '\0';
    for (const char *p = sql; (p = strstr(p, "set_config('")) != NULL;) {
        p += strlen("set_config('");
        const char *end = strchr(p, '\'');
        const char *value = strstr(end, "$") ? pgrest_statements_param(st, i, param) : "";
        /* transaction_read_only is a constant, not a parameter */
        bool constant = strncmp(end, "', '", 4) == 0;
        if (!constant)
            param++;
        n += (size_t)snprintf(buf + n, cap - n, "%s%.*s=%s", n ? " " : "",
                              (int)(end - p), p, constant ? "on" : value);
        p = end;
    }
    return buf;
}

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

START_TEST(role_settings_and_isolation_of_anon)
{
    pgrest_statements *st = emit("GET", "/items", NULL);
    ck_assert_str_eq(begin_sql(st), "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    char buf[2048];
    const char *got = settings(st, buf, sizeof buf);
    ck_assert_msg(starts_with(got, "search_path=\"api\", \"public\" statement_timeout=5s "
                                   "work_mem=5MB role=web_anon request.jwt.claims="),
                  "%s", got);
    ck_assert_msg(strstr(got, " app.settings.color=blue") != NULL, "%s", got);
}
END_TEST

START_TEST(role_without_settings)
{
    pgrest_statements *st = emit("GET", "/items", WEB_USER_BEARER);
    /* read committed: no BEGIN needed (implicit transaction) */
    ck_assert_str_eq(begin_sql(st), "");
    char buf[2048];
    const char *got = settings(st, buf, sizeof buf);
    ck_assert_msg(starts_with(got, "search_path=\"api\", \"public\" role=web_user "), "%s", got);
    ck_assert_msg(strstr(got, "work_mem") == NULL, "%s", got);
}
END_TEST

/* PreQuery.hs encodes request.headers and request.cookies through
 * HashMap.fromList: header names lower-cased, the Cookie header left out,
 * and of a repeated name the last value kept. */
START_TEST(request_headers_last_repeated_wins)
{
    pgrest_request *req = pgrest_request_new(arena, "GET", "/items", "");
    pgrest_request_add_header(req, "X-Multi", "1");
    pgrest_request_add_header(req, "Cookie", "a=b; c=d; a=e");
    pgrest_request_add_header(req, "x-multi", "2");
    pgrest_statements *st = emit_request(req, "GET", "/items");
    char buf[2048];
    const char *got = settings(st, buf, sizeof buf);
    ck_assert_msg(strstr(got, " request.headers={\"x-multi\":\"2\"} ") != NULL, "%s", got);
    ck_assert_msg(strstr(got, " request.cookies={\"c\":\"d\",\"a\":\"e\"} ") != NULL, "%s", got);
}
END_TEST

/* ApiRequest.hs reads the (first) Cookie header with Web.Cookie
 * parseCookies: every ';' starts a cookie, empty pieces included, a
 * piece without '=' is a name with an empty value, only the name loses
 * its leading spaces. */
START_TEST(request_cookies_as_web_cookie_parses)
{
    static const struct {
        const char *header, *json;
    } cases[] = {
        {"a=1;;b=2 ; c=x=y", "{\"a\":\"1\",\"\":\"\",\"b\":\"2 \",\"c\":\"x=y\"}"},
        {"flag", "{\"flag\":\"\"}"},
        {"=x", "{\"\":\"x\"}"},
        {";a=1", "{\"\":\"\",\"a\":\"1\"}"},
        {"a=1;", "{\"a\":\"1\"}"},
        {" a = 1", "{\"a \":\" 1\"}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pgrest_request *req = pgrest_request_new(arena, "GET", "/items", "");
        pgrest_request_add_header(req, "Cookie", cases[i].header);
        pgrest_request_add_header(req, "Cookie", "second=ignored");
        pgrest_statements *st = emit_request(req, "GET", "/items");
        char buf[2048], want[256];
        const char *got = settings(st, buf, sizeof buf);
        snprintf(want, sizeof want, " request.cookies=%s ", cases[i].json);
        ck_assert_msg(strstr(got, want) != NULL, "%s: want%s in %s", cases[i].header, want, got);
    }
}
END_TEST

START_TEST(function_isolation_and_hoisted_settings)
{
    pgrest_statements *st = emit("POST", "/rpc/tick", NULL);
    /* the function's level wins over web_anon's repeatable read */
    ck_assert_str_eq(begin_sql(st), "BEGIN ISOLATION LEVEL SERIALIZABLE");
    char buf[2048];
    const char *got = settings(st, buf, sizeof buf);
    ck_assert_msg(starts_with(got, "search_path=\"api\", \"public\" statement_timeout=5s "
                                   "work_mem=5MB role=web_anon "),
                  "%s", got);
    /* function settings after the request ones, before app.settings */
    const char *fn = strstr(got, " statement_timeout=7s app.settings.color=blue");
    ck_assert_msg(fn != NULL, "%s", got);
    ck_assert_msg(strstr(got, "request.cookies=") < fn, "%s", got);
    pgrest_statements *st2 = emit("POST", "/rpc/tick", WEB_USER_BEARER);
    ck_assert_str_eq(begin_sql(st2), "BEGIN ISOLATION LEVEL SERIALIZABLE");
}
END_TEST

START_TEST(snapshot_role_settings_parsed)
{
    pgr_schema_cache *sc = pgr_ctx_schema(ctx);
    const pgr_role_settings *rs = pgr_find_role_settings(sc, "web_anon");
    ck_assert_ptr_nonnull(rs);
    ck_assert_str_eq(rs->isolation_level, "repeatable read");
    ck_assert_uint_eq(rs->n_settings, 2);
    ck_assert_str_eq(rs->setting_names[1], "work_mem");
    ck_assert_str_eq(rs->setting_values[1], "5MB");
    rs = pgr_find_role_settings(sc, "other");
    ck_assert_ptr_nonnull(rs);
    ck_assert_ptr_null(rs->isolation_level);
    ck_assert_ptr_null(pgr_find_role_settings(sc, "web_user"));
    ck_assert_ptr_null(pgr_find_role_settings(sc, "Web_anon"));
    pgr_schema_cache_release(sc);
    pgrest_error err = {0};
    ck_assert_ptr_null(pgr_schema_cache_from_json(
        "{\"role_settings\": [{\"settings\": []}]}", NULL, &err));
    ck_assert_ptr_null(pgr_schema_cache_from_json(
        "{\"role_settings\": [{\"role\": \"r\", \"settings\": [\"work_mem\"]}]}", NULL, &err));
}
END_TEST

/* The configuration now in force (the context keeps its reference while
 * no other set happens). */
static const pgr_config *current(void)
{
    pgr_conf *c = pgr_ctx_conf(ctx);
    pgr_conf_release(c);
    return &c->cfg;
}

/* db-hoisted-tx-settings as PostgREST's Config.hs parses it: empty is
 * the default list (NULL here), items are stripped, empty items kept. */
START_TEST(hoisted_settings_option)
{
    pgrest_error err = {0};
    ck_assert_ptr_null(current()->db_hoisted_tx_settings);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-hoisted-tx-settings",
                                    " work_mem , ^statement_.*,", &err), PGREST_OK);
    ck_assert_uint_eq(current()->n_db_hoisted_tx_settings, 3);
    ck_assert_str_eq(current()->db_hoisted_tx_settings[0], "work_mem");
    ck_assert_str_eq(current()->db_hoisted_tx_settings[1], "^statement_.*");
    ck_assert_str_eq(current()->db_hoisted_tx_settings[2], "");
    ck_assert_ptr_null(current()->db_hoisted_tx_settings[3]);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-hoisted-tx-settings", "", &err), PGREST_OK);
    ck_assert_ptr_null(current()->db_hoisted_tx_settings);
    ck_assert(current()->db_pool_automatic_recovery);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-pool-automatic-recovery", "false", &err),
                     PGREST_OK);
    ck_assert(!current()->db_pool_automatic_recovery);
    ck_assert_int_ne(pgrest_ctx_set(ctx, "db-pool-automatic-recovery", "maybe", &err),
                     PGREST_OK);
}
END_TEST

/* db-pre-request read as toQi (SchemaCache/Identifiers.hs) and called as
 * SqlFragment fromQi writes it: no schema, no qualification; nothing
 * after the first dot makes the part before it the name. */
START_TEST(pre_request_names_as_toqi_reads_them)
{
    static const struct { const char *option, *call; } cases[] = {
        {"f", "SELECT \"f\"()"},
        {"s.f", "SELECT \"s\".\"f\"()"},
        {"a.", "SELECT \"a\"()"},
        {".f", "SELECT \"f\"()"},
        {".", "SELECT \"\"()"},
        {"a.b.c", "SELECT \"a\".\"b.c\"()"},
        {"Q\"x.y", "SELECT \"Q\"\"x\".\"y\"()"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pgrest_error err = {0};
        ck_assert_int_eq(pgrest_ctx_set(ctx, "db-pre-request", cases[i].option, &err),
                         PGREST_OK);
        /* a request's arena holds the configuration it started with */
        pgrest_arena_free(arena);
        arena = pgrest_arena_new(0);
        pgrest_statements *st = emit("GET", "/items", NULL);
        size_t at = find(st, PGR_STMT_PRE_REQUEST);
        ck_assert_uint_ne(at, (size_t)-1);
        ck_assert_str_eq(pgrest_statements_sql(st, at), cases[i].call);
    }
}
END_TEST

/* "/" with db-root-spec calls the name part of toQi (ApiRequest.hs
 * getResource: QualifiedIdentifier _ pathName) in the request's schema. */
START_TEST(root_spec_name_as_toqi_reads_it)
{
    static const struct { const char *option, *name; } cases[] = {
        {"root", "root"}, {"s.root", "root"}, {"root.", "root"},
        {".root", "root"}, {"a.b.c", "b.c"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pgrest_error err = {0};
        ck_assert_int_eq(pgrest_ctx_set(ctx, "db-root-spec", cases[i].option, &err),
                         PGREST_OK);
        pgrest_arena_free(arena);
        arena = pgrest_arena_new(0);
        pgrest_request *req = pgrest_request_new(arena, "GET", "/", "");
        pgrest_api_request *api = NULL;
        ck_assert_int_eq(pgrest_parse_request(ctx, arena, req, &api, &err), PGREST_OK);
        ck_assert_str_eq(api->name, cases[i].name);
    }
}
END_TEST

/* Parsing does not authenticate: a request parsed without an attached
 * identity plans, but its statements are refused (they would SET no role
 * and run as the authenticator), whatever its token says. */
START_TEST(no_identity_no_statements)
{
    pgrest_request *req = pgrest_request_new(arena, "GET", "/items", "");
    pgrest_request_add_header(req, "Authorization", WEB_USER_BEARER);
    pgrest_api_request *api;
    pgrest_query_plan *plan;
    pgrest_statements *st = NULL;
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_parse_request(ctx, arena, req, &api, &err), PGREST_OK);
    ck_assert_ptr_null(api->role);
    ck_assert_int_eq(pgrest_plan(ctx, arena, api, &plan, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_emit_sql(ctx, arena, plan, &st, &err), PGREST_ERR_INTERNAL);
    ck_assert_ptr_null(st);
    ck_assert_ptr_nonnull(strstr(err.details, "no identity"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("preamble");
    TCase *tc = tcase_create("preamble");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, role_settings_and_isolation_of_anon);
    tcase_add_test(tc, no_identity_no_statements);
    tcase_add_test(tc, role_without_settings);
    tcase_add_test(tc, request_headers_last_repeated_wins);
    tcase_add_test(tc, request_cookies_as_web_cookie_parses);
    tcase_add_test(tc, function_isolation_and_hoisted_settings);
    tcase_add_test(tc, snapshot_role_settings_parsed);
    tcase_add_test(tc, hoisted_settings_option);
    tcase_add_test(tc, pre_request_names_as_toqi_reads_them);
    tcase_add_test(tc, root_spec_name_as_toqi_reads_it);
    suite_add_tcase(s, tc);
    return check_run(s);
}
