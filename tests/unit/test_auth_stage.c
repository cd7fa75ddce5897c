/* Authentication as a public stage (pgrest_authenticate, pgrest_auth_supply,
 * pgrest_request_set_auth): the outcome is readable, a host can supply an
 * identity, and parsing never authenticates (no JWT secret, cache or
 * token needed; a bad token is not its concern). Expected values
 * from PostgREST's Auth.hs (role claim, claims with "role" inserted, keys
 * sorted; PGRST301/302) and AuthSpec. No database. */
#include <check.h>
#include <string.h>

#include "check_run.h"
#include "engine/context.h"
#include "parse/api_request.h"
#include "util/arena.h"
#include "util/error.h"

#define SECRET "reallyreallyreallyreallyverysafe"
/* AuthSpec's token: {"role":"postgrest_test_author","id":"jdoe"}, HS256 with SECRET */
#define AUTHOR_TOKEN "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoicG9zdGdyZXN0X3Rlc3RfYXV0aG9yIiwiaWQiOiJqZG9lIn0.B-lReuGNDwAlU1GOC476MlO0vAt9JNoHIlxg2vwMaO0"

static pgrest_ctx *new_ctx(void)
{
    pgrest_ctx *ctx = pgrest_ctx_new();
    pgrest_error err;
    ck_assert_int_eq(pgrest_ctx_set(ctx, "jwt-secret", SECRET, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-anon-role", "anon", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "jwt-cache-max-entries", "10", &err), PGREST_OK);
    return ctx;
}

static pgrest_request *bearer_request(pgrest_arena *a, const char *token)
{
    pgrest_request *req = pgrest_request_new(a, "GET", "/items", "");
    if (token != NULL)
        pgrest_request_add_header(req, "Authorization",
                                  pgr_asprintf(a, "Bearer %s", token));
    return req;
}

START_TEST(outcome_of_a_valid_token)
{
    pgrest_ctx *ctx = new_ctx();
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_auth *auth = NULL;
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_authenticate(ctx, a, bearer_request(a, AUTHOR_TOKEN), &auth, &err),
                     PGREST_OK);
    ck_assert_str_eq(pgrest_auth_role(auth), "postgrest_test_author");
    ck_assert_str_eq(pgrest_auth_claims(auth),
                     "{\"id\":\"jdoe\",\"role\":\"postgrest_test_author\"}");
    ck_assert_int_eq(pgrest_auth_authenticated(auth), 1);
    ck_assert_ptr_null(pgrest_auth_error(auth));
    pgrest_arena_free(a);
    pgrest_ctx_free(ctx);
}
END_TEST

START_TEST(outcome_without_token_is_anon)
{
    pgrest_ctx *ctx = new_ctx();
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_auth *auth = NULL;
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_authenticate(ctx, a, bearer_request(a, NULL), &auth, &err), PGREST_OK);
    ck_assert_str_eq(pgrest_auth_role(auth), "anon");
    ck_assert_str_eq(pgrest_auth_claims(auth), "{\"role\":\"anon\"}");
    ck_assert_int_eq(pgrest_auth_authenticated(auth), 0);
    pgrest_arena_free(a);
    pgrest_ctx_free(ctx);
}
END_TEST

/* A failed outcome carries PostgREST's error, and parsing a request it is
 * attached to fails with that error. */
START_TEST(failed_outcome_is_readable_and_fails_parse)
{
    pgrest_ctx *ctx = new_ctx();
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_auth *auth = NULL;
    pgrest_error err = {0};
    pgrest_request *req = bearer_request(a, "a.b");
    ck_assert_int_eq(pgrest_authenticate(ctx, a, req, &auth, &err), PGREST_ERR_REQUEST);
    ck_assert_ptr_nonnull(auth);
    ck_assert_ptr_null(pgrest_auth_role(auth));
    const pgrest_error *e = pgrest_auth_error(auth);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(e->http_status, 401);
    ck_assert_str_eq(e->code, "PGRST301");
    ck_assert_str_eq(err.code, "PGRST301");
    pgrest_request_set_auth(req, auth);
    pgrest_api_request *api;
    pgrest_error perr = {0};
    ck_assert_int_eq(pgrest_parse_request(ctx, a, req, &api, &perr), PGREST_ERR_REQUEST);
    ck_assert_str_eq(perr.code, "PGRST301");
    pgrest_arena_free(a);
    pgrest_ctx_free(ctx);
}
END_TEST

static const char *metric_line(pgrest_ctx *ctx, pgrest_arena *a, const char *name)
{
    const char *text = pgrest_ctx_metrics(ctx, a);
    const char *at = text;
    size_t n = strlen(name);
    while ((at = strstr(at, name)) != NULL) {
        if ((at == text || at[-1] == '\n') && at[n] == ' ')
            return pgr_strndup(a, at, strcspn(at, "\n"));
        at += n;
    }
    return "";
}

/* parse never reads the token, let alone looks it up in the cache;
 * pgrest_authenticate does (PostgREST JwtCacheLookup, counted), and parse
 * then copies its outcome. */
START_TEST(parse_does_not_touch_the_jwt_cache)
{
    pgrest_ctx *ctx = new_ctx();
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = bearer_request(a, AUTHOR_TOKEN);
    pgrest_api_request *api;
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_parse_request(ctx, a, req, &api, &err), PGREST_OK);
    ck_assert_ptr_null(api->role);
    ck_assert_ptr_null(api->jwt_claims);
    ck_assert(!api->authenticated);
    ck_assert_str_eq(metric_line(ctx, a, "pgrst_jwt_cache_requests_total"),
                     "pgrst_jwt_cache_requests_total 0.0");
    pgrest_auth *auth;
    ck_assert_int_eq(pgrest_authenticate(ctx, a, req, &auth, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_authenticate(ctx, a, req, &auth, &err), PGREST_OK);
    ck_assert_str_eq(metric_line(ctx, a, "pgrst_jwt_cache_requests_total"),
                     "pgrst_jwt_cache_requests_total 2.0");
    ck_assert_str_eq(metric_line(ctx, a, "pgrst_jwt_cache_hits_total"),
                     "pgrst_jwt_cache_hits_total 1.0");
    pgrest_request_set_auth(req, auth);
    ck_assert_int_eq(pgrest_parse_request(ctx, a, req, &api, &err), PGREST_OK);
    ck_assert_str_eq(api->role, "postgrest_test_author");
    ck_assert_str_eq(api->jwt_claims, pgrest_auth_claims(auth));
    ck_assert(api->authenticated);
    ck_assert_str_eq(metric_line(ctx, a, "pgrst_jwt_cache_requests_total"),
                     "pgrst_jwt_cache_requests_total 2.0");
    pgrest_arena_free(a);
    pgrest_ctx_free(ctx);
}
END_TEST

/* Parsing is pure: a context without any JWT secret, and without
 * db-anon-role, parses a request whose bearer token is garbage, expired or
 * signed with another key -- tokens PGRST300/301/302 for
 * pgrest_authenticate -- and only the query string's own error shows.
 * Planning works on the result; emitting refuses it, since its statements
 * would run as the authenticator. */
START_TEST(parse_never_authenticates)
{
    pgrest_ctx *ctx = pgrest_ctx_new(); /* no jwt-secret, no db-anon-role */
    pgrest_arena *a = pgrest_arena_new(0);
    static const char *const tokens[] = {"a.b", "not-a-token", AUTHOR_TOKEN, "", NULL};
    for (size_t i = 0; i < sizeof tokens / sizeof *tokens; i++) {
        pgrest_request *req = bearer_request(a, tokens[i]);
        pgrest_auth *auth = NULL;
        pgrest_error err = {0};
        ck_assert_int_ne(pgrest_authenticate(ctx, a, req, &auth, &err), PGREST_OK);
        ck_assert(strcmp(err.code, "PGRST300") == 0 || strcmp(err.code, "PGRST301") == 0 ||
                  strcmp(err.code, "PGRST302") == 0);
        pgrest_api_request *api = NULL;
        memset(&err, 0, sizeof err);
        ck_assert_int_eq(pgrest_parse_request(ctx, a, req, &api, &err), PGREST_OK);
        ck_assert_ptr_nonnull(api);
        ck_assert_ptr_null(api->role);
        ck_assert_ptr_null(err.code);
        /* a bad query string is the parse's only error */
        pgrest_request *bad = pgrest_request_new(a, "GET", "/items", "order=id.sideways");
        if (tokens[i] != NULL)
            pgrest_request_add_header(bad, "Authorization",
                                      pgr_asprintf(a, "Bearer %s", tokens[i]));
        ck_assert_int_eq(pgrest_parse_request(ctx, a, bad, &api, &err), PGREST_ERR_REQUEST);
        ck_assert_str_eq(err.code, "PGRST100");
    }
    pgrest_arena_free(a);
    pgrest_ctx_free(ctx);
}
END_TEST

/* The staged API in PostgREST's order: authentication's error comes
 * before the query string's (Auth.hs runs as a middleware, before
 * ApiRequest parses). */
START_TEST(staged_order_auth_before_parse)
{
    pgrest_ctx *ctx = new_ctx();
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = pgrest_request_new(a, "GET", "/items", "order=id.sideways");
    pgrest_request_add_header(req, "Authorization", "Bearer a.b");
    pgrest_auth *auth = NULL;
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_authenticate(ctx, a, req, &auth, &err), PGREST_ERR_REQUEST);
    ck_assert_str_eq(err.code, "PGRST301");
    pgrest_request_set_auth(req, auth);
    pgrest_api_request *api;
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(pgrest_parse_request(ctx, a, req, &api, &err), PGREST_ERR_REQUEST);
    ck_assert_str_eq(err.code, "PGRST301");
    /* a valid one: the query string's error */
    req = pgrest_request_new(a, "GET", "/items", "order=id.sideways");
    pgrest_request_add_header(req, "Authorization", "Bearer " AUTHOR_TOKEN);
    ck_assert_int_eq(pgrest_authenticate(ctx, a, req, &auth, &err), PGREST_OK);
    pgrest_request_set_auth(req, auth);
    ck_assert_int_eq(pgrest_parse_request(ctx, a, req, &api, &err), PGREST_ERR_REQUEST);
    ck_assert_str_eq(err.code, "PGRST100");
    ck_assert_str_eq(api->role, "postgrest_test_author");
    pgrest_arena_free(a);
    pgrest_ctx_free(ctx);
}
END_TEST

/* A gateway's identity: the token in the request is not read at all. */
START_TEST(supplied_identity_wins_over_the_header)
{
    pgrest_ctx *ctx = new_ctx();
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_auth *auth = NULL;
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_auth_supply(ctx, a, "web_user", "{\"sub\":\"alice\",\"role\":\"x\"}",
                                        &auth, &err), PGREST_OK);
    ck_assert_str_eq(pgrest_auth_role(auth), "web_user");
    ck_assert_int_eq(pgrest_auth_authenticated(auth), 1);
    ck_assert_ptr_nonnull(strstr(pgrest_auth_claims(auth), "\"role\":\"web_user\""));
    ck_assert_ptr_nonnull(strstr(pgrest_auth_claims(auth), "\"sub\":\"alice\""));
    pgrest_request *req = bearer_request(a, "not-a-token");
    pgrest_request_set_auth(req, auth);
    pgrest_api_request *api;
    ck_assert_int_eq(pgrest_parse_request(ctx, a, req, &api, &err), PGREST_OK);
    ck_assert_str_eq(api->role, "web_user");
    ck_assert(api->authenticated);
    ck_assert_str_eq(api->jwt_claims, pgrest_auth_claims(auth));
    pgrest_arena_free(a);
    pgrest_ctx_free(ctx);
}
END_TEST

START_TEST(supplied_identity_defaults_and_errors)
{
    pgrest_ctx *ctx = new_ctx();
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_auth *auth = NULL;
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_auth_supply(ctx, a, NULL, NULL, &auth, &err), PGREST_OK);
    ck_assert_str_eq(pgrest_auth_role(auth), "anon");
    ck_assert_str_eq(pgrest_auth_claims(auth), "{\"role\":\"anon\"}");
    ck_assert_int_eq(pgrest_auth_authenticated(auth), 0);
    ck_assert_int_eq(pgrest_auth_supply(ctx, a, "web_user", "[1]", &auth, &err),
                     PGREST_ERR_INTERNAL);
    ck_assert_int_eq(pgrest_auth_supply(ctx, a, "web_user", "{", &auth, &err),
                     PGREST_ERR_INTERNAL);
    /* the arena keeps the configuration it began with: a new request */
    pgrest_arena_free(a);
    pgrest_ctx_free(ctx);
    ctx = pgrest_ctx_new();
    a = pgrest_arena_new(0);
    ck_assert_int_eq(pgrest_auth_supply(ctx, a, NULL, NULL, &auth, &err), PGREST_ERR_REQUEST);
    ck_assert_str_eq(err.code, "PGRST302");
    ck_assert_int_eq(pgrest_authenticate(NULL, a, NULL, &auth, &err), PGREST_ERR_INTERNAL);
    pgrest_arena_free(a);
    pgrest_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("auth_stage");
    TCase *tc = tcase_create("auth_stage");
    tcase_add_test(tc, outcome_of_a_valid_token);
    tcase_add_test(tc, outcome_without_token_is_anon);
    tcase_add_test(tc, failed_outcome_is_readable_and_fails_parse);
    tcase_add_test(tc, parse_does_not_touch_the_jwt_cache);
    tcase_add_test(tc, parse_never_authenticates);
    tcase_add_test(tc, staged_order_auth_before_parse);
    tcase_add_test(tc, supplied_identity_wins_over_the_header);
    tcase_add_test(tc, supplied_identity_defaults_and_errors);
    suite_add_tcase(s, tc);
    return check_run(s);
}
