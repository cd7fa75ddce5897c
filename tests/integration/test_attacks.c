/* The attack battery: forged and abused JWTs, and SQL injection attempts
 * through every part of a request. Each must be rejected with PostgREST's
 * status, and no attacker text may reach PostgreSQL as SQL: wherever the
 * request is accepted far enough to emit SQL, the marker may only appear
 * inside a quoted identifier or as a $n parameter value. A canary table
 * that every payload tries to create must never exist afterwards. */
#include <check.h>
#include <jwt.h>
#include <libpq-fe.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_run.h"
#include "harness.h"

#define SECRET "reallyreallyreallyreallyverysafe"
#define MARKER "pwned"
#define PAYLOAD "x');CREATE TABLE api.pwned(i int);--"

static pgrest_ctx *ctx;

static void setup(void)
{
    ctx = harness_ctx(NULL);
}

static void teardown(void)
{
    pgrest_ctx_free(ctx);
}

static char *sign(jwt_alg_t alg, const void *key, size_t key_len, const char *claims)
{
    jwt_t *jwt = NULL;
    ck_assert_int_eq(jwt_new(&jwt), 0);
    ck_assert_int_eq(jwt_add_grants_json(jwt, claims), 0);
    ck_assert_int_eq(jwt_set_alg(jwt, alg, key, (int)key_len), 0);
    char *s = jwt_encode_str(jwt);
    jwt_free(jwt);
    ck_assert_ptr_nonnull(s);
    return s;
}

static char *hs256(const char *secret, const char *claims)
{
    return sign(JWT_ALG_HS256, secret, strlen(secret), claims);
}

/* GET /artists with the token; returns the status, checks the code. */
static int with_token(const char *token, const char *code)
{
    char *auth = malloc(strlen(token) + 8);
    memcpy(auth, "Bearer ", 7);
    strcpy(auth + 7, token);
    const char *h[] = {"Authorization", auth, NULL};
    test_response r;
    harness_request(ctx, "GET", "/artists", "select=id&id=eq.1", h, NULL, &r);
    int st = r.status;
    if (code != NULL)
        ck_assert_msg(strstr(r.body, code) != NULL, "want %s, got %d %s", code, st, r.body);
    if (st == 401)
        ck_assert_ptr_nonnull(harness_header(&r, "WWW-Authenticate"));
    harness_free(&r);
    free(auth);
    return st;
}

START_TEST(alg_none_is_rejected)
{
    /* {"alg":"none","typ":"JWT"}.{"role":"web_user"}. */
    ck_assert_int_eq(with_token("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0."
                                "eyJyb2xlIjoid2ViX3VzZXIifQ.", "PGRST301"), 401);
}
END_TEST

START_TEST(wrong_key_and_tampered_payload)
{
    char *t = hs256("an-entirely-different-secret-of-32+", "{\"role\":\"web_user\"}");
    ck_assert_int_eq(with_token(t, "PGRST301"), 401);
    free(t);
    /* a valid anon token whose payload is swapped for a web_user one */
    char *good = hs256(SECRET, "{\"role\":\"web_anon\"}");
    char *evil = hs256(SECRET, "{\"role\":\"web_user\"}");
    char *dot1 = strchr(good, '.'), *dot2 = strchr(dot1 + 1, '.');
    char *edot1 = strchr(evil, '.'), *edot2 = strchr(edot1 + 1, '.');
    char forged[1024];
    snprintf(forged, sizeof forged, "%.*s%.*s%s", (int)(dot1 - good), good,
             (int)(edot2 - edot1), edot1, dot2);
    ck_assert_int_eq(with_token(forged, "PGRST301"), 401);
    free(good);
    free(evil);
}
END_TEST

START_TEST(expired_and_not_yet_valid)
{
    char claims[128];
    snprintf(claims, sizeof claims, "{\"role\":\"web_user\",\"exp\":%ld}", (long)time(NULL) - 3600);
    char *t = hs256(SECRET, claims);
    ck_assert_int_eq(with_token(t, "PGRST303"), 401);
    free(t);
    snprintf(claims, sizeof claims, "{\"role\":\"web_user\",\"nbf\":%ld}", (long)time(NULL) + 3600);
    t = hs256(SECRET, claims);
    ck_assert_int_eq(with_token(t, "PGRST303"), 401);
    free(t);
}
END_TEST

START_TEST(roles_the_authenticator_may_not_become)
{
    char *t = hs256(SECRET, "{\"role\":\"not_granted\"}");
    ck_assert_int_eq(with_token(t, "42501"), 403);
    free(t);
    t = hs256(SECRET, "{\"role\":\"postgres\"}");
    ck_assert_int_eq(with_token(t, "42501"), 403);
    free(t);
    t = hs256(SECRET, "{\"role\":\"no such role\"}");
    ck_assert_int_eq(with_token(t, "22023"), 401);
    free(t);
    char evil[160];
    snprintf(evil, sizeof evil, "{\"role\":\"web_user'; %s\"}", PAYLOAD);
    t = hs256(SECRET, evil);
    with_token(t, NULL);
    free(t);
}
END_TEST

START_TEST(very_long_token)
{
    size_t n = 200 * 1024;
    char *t = malloc(n + 1);
    memset(t, 'A', n);
    t[n / 3] = '.';
    t[2 * n / 3] = '.';
    t[n] = '\0';
    ck_assert_int_eq(with_token(t, "PGRST301"), 401);
    free(t);
}
END_TEST

static char *b64url_bn(const BIGNUM *bn)
{
    unsigned char buf[512];
    int len = BN_bn2bin(bn, buf);
    char out[1024];
    int n = EVP_EncodeBlock((unsigned char *)out, buf, len);
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (out[i] == '=')
            break;
        out[k++] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
    }
    out[k] = '\0';
    return strdup(out);
}

/* The server trusts an RS256 public key; the attacker signs HS256 with
 * that public key as the HMAC secret. */
START_TEST(key_confusion_rs256_public_key_as_hs256_secret)
{
    EVP_PKEY *pkey = EVP_RSA_gen(2048);
    BIGNUM *n = NULL, *e = NULL;
    EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_N, &n);
    EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_E, &e);
    char *bn = b64url_bn(n), *be = b64url_bn(e);
    char jwk[2048];
    snprintf(jwk, sizeof jwk, "{\"kty\":\"RSA\",\"alg\":\"RS256\",\"n\":\"%s\",\"e\":\"%s\"}", bn, be);
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "jwt-secret", jwk, &err), PGREST_OK);
    BIO *bio = BIO_new(BIO_s_mem());
    PEM_write_bio_PUBKEY(bio, pkey);
    char *pem;
    long pem_len = BIO_get_mem_data(bio, &pem);
    char *t = sign(JWT_ALG_HS256, pem, (size_t)pem_len, "{\"role\":\"web_user\"}");
    ck_assert_int_eq(with_token(t, "PGRST301"), 401);
    free(t);
    t = sign(JWT_ALG_HS256, jwk, strlen(jwk), "{\"role\":\"web_user\"}");
    ck_assert_int_eq(with_token(t, "PGRST301"), 401);
    free(t);
    BIO_free(bio);
    BN_free(n);
    BN_free(e);
    free(bn);
    free(be);
    EVP_PKEY_free(pkey);
}
END_TEST

/* ------------------------------------------------------------ injection */

/* The marker outside "quoted identifiers" in SQL text means user input
 * became SQL. */
static bool marker_outside_identifiers(const char *sql)
{
    for (const char *p = sql; *p; p++) {
        if (*p == '"') {
            for (p++; *p; p++)
                if (*p == '"' && p[1] != '"')
                    break;
                else if (*p == '"')
                    p++;
            if (*p == '\0')
                return false;
            continue;
        }
        if (strncmp(p, MARKER, strlen(MARKER)) == 0)
            return true;
    }
    return false;
}

typedef struct attack {
    const char *method, *path, *query, *header, *value, *body;
} attack;

static const attack attacks[] = {
    {"GET", "/artists%3BCREATE%20TABLE%20api.pwned(i%20int)", "", NULL, NULL, NULL},
    {"GET", "/rpc/add%22();CREATE TABLE api.pwned(i int);--", "", NULL, NULL, NULL},
    {"GET", "/artists", "select=id,name%22);CREATE%20TABLE%20api.pwned(i%20int);--", NULL, NULL, NULL},
    {"GET", "/artists", "select=pwned:id::int);CREATE TABLE api.pwned(i int);--", NULL, NULL, NULL},
    {"GET", "/artists", "select=%22x%22%22);CREATE TABLE api.pwned(i int);--%22:id", NULL, NULL, NULL},
    {"GET", "/artists", "id=eq.1');CREATE TABLE api.pwned(i int);--", NULL, NULL, NULL},
    {"GET", "/artists", "name=in.(a,\"b');CREATE TABLE api.pwned(i int);--\")", NULL, NULL, NULL},
    {"GET", "/artists", "id=eq;CREATE TABLE api.pwned(i int);--.1", NULL, NULL, NULL},
    {"GET", "/artists", "name=fts(english');CREATE TABLE api.pwned(i int);--).x", NULL, NULL, NULL},
    {"GET", "/artists", "id=is.null;CREATE TABLE api.pwned(i int)", NULL, NULL, NULL},
    {"GET", "/artists", "order=id;CREATE TABLE api.pwned(i int);--", NULL, NULL, NULL},
    {"GET", "/artists", "order=%22id%22%22;CREATE TABLE api.pwned(i int);--%22.desc", NULL, NULL, NULL},
    {"GET", "/artists", "or=(id.eq.1,name.eq.x');CREATE TABLE api.pwned(i int);--)", NULL, NULL, NULL},
    {"GET", "/albums", "select=tags->>x');CREATE TABLE api.pwned(i int);--", NULL, NULL, NULL},
    {"GET", "/albums", "select=id&tags->>0=eq.x');CREATE TABLE api.pwned(i int);--", NULL, NULL, NULL},
    {"GET", "/artists", "limit=1;CREATE TABLE api.pwned(i int)", NULL, NULL, NULL},
    {"GET", "/artists", "select=id,albums!x');CREATE TABLE api.pwned(i int);--(id)", NULL, NULL, NULL},
    {"GET", "/artists", "", "Prefer", "count=exact');CREATE TABLE api.pwned(i int);--", NULL},
    {"GET", "/artists", "", "Prefer", "timezone=UTC');CREATE TABLE api.pwned(i int);--", NULL},
    {"GET", "/artists", "", "Accept-Profile", "api\";CREATE TABLE api.pwned(i int);--", NULL},
    {"GET", "/artists", "", "Range", "0-1;CREATE TABLE api.pwned(i int)", NULL},
    {"GET", "/artists", "", "X-Anything", "');CREATE TABLE api.pwned(i int);--", NULL},
    {"POST", "/rpc/add", "", "Content-Type", "application/json",
     "{\"a\":\"1');CREATE TABLE api.pwned(i int);--\",\"b\":2}"},
    {"POST", "/rpc/add", "", "Content-Type", "application/json",
     "{\"a);CREATE TABLE api.pwned(i int);--\":1}"},
    {"GET", "/rpc/add", "a=1');CREATE TABLE api.pwned(i int);--&b=2", NULL, NULL, NULL},
    {"PATCH", "/artists", "id=eq.1", "Content-Type", "application/json",
     "{\"name\":\"x');CREATE TABLE api.pwned(i int);--\"}"},
    {"POST", "/artists", "columns=name,pwned%22)%20VALUES%20(1);--", "Content-Type",
     "application/json", "{\"name\":\"n\"}"},
    {"POST", "/artists", "on_conflict=id);CREATE TABLE api.pwned(i int);--", "Content-Type",
     "application/json", "{\"name\":\"n\"}"},
};

static pgrest_request *attack_request(pgrest_arena *a, const attack *at)
{
    pgrest_request *req = pgrest_request_new(a, at->method, at->path, at->query);
    if (at->header != NULL)
        pgrest_request_add_header(req, at->header, at->value);
    if (at->body != NULL)
        pgrest_request_set_body(req, at->body, strlen(at->body));
    pgrest_request_add_header(req, "Prefer", "tx=rollback");
    return req;
}

START_TEST(injection_never_becomes_sql)
{
    const attack *at = &attacks[_i];
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = attack_request(a, at);
    pgrest_api_request *api;
    pgrest_query_plan *plan;
    pgrest_statements *st;
    pgrest_error err = {0};
    if (harness_authenticate(ctx, a, req, &err) == PGREST_OK &&
        pgrest_parse_request(ctx, a, req, &api, &err) == PGREST_OK &&
        pgrest_plan(ctx, a, api, &plan, &err) == PGREST_OK &&
        pgrest_emit_sql(ctx, a, plan, &st, &err) == PGREST_OK) {
        for (size_t i = 0; i < pgrest_statements_count(st); i++)
            ck_assert_msg(!marker_outside_identifiers(pgrest_statements_sql(st, i)),
                          "attack %d leaked into SQL: %s", _i, pgrest_statements_sql(st, i));
    } else {
        ck_assert_int_ge(err.http_status, 400);
        ck_assert_int_lt(err.http_status, 500);
    }
    pgrest_response *resp = pgrest_handle(ctx, a, attack_request(a, at));
    int status = pgrest_response_status(resp);
    ck_assert_msg(status < 500, "attack %d: status %d", _i, status);
    pgrest_arena_free(a);
    PGconn *pg = PQconnectdb(harness_db_uri());
    PQclear(PQexec(pg, "SET ROLE web_anon"));
    PGresult *r = PQexec(pg, "SELECT to_regclass('api.pwned') IS NULL");
    ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "%s", PQerrorMessage(pg));
    ck_assert_str_eq(PQgetvalue(r, 0, 0), "t");
    PQclear(r);
    PQfinish(pg);
}
END_TEST

/* ------------------------------------------------------------ casts */

/* The code in a response body ("code":"42601"), or "" */
static void body_code(const char *body, char *code, size_t cap)
{
    const char *p = strstr(body, "\"code\":\"");
    code[0] = '\0';
    if (p == NULL)
        return;
    p += strlen("\"code\":\"");
    size_t n = strcspn(p, "\"");
    if (n < cap) {
        memcpy(code, p, n);
        code[n] = '\0';
    }
}

static bool canary_absent(void)
{
    PGconn *pg = PQconnectdb(harness_db_uri());
    PQclear(PQexec(pg, "SET ROLE web_anon"));
    PGresult *r = PQexec(pg, "SELECT to_regclass('api.pwned') IS NULL");
    ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "%s", PQerrorMessage(pg));
    bool absent = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
    PQclear(r);
    PQfinish(pg);
    return absent;
}

/* A select= cast is written into SQL unquoted, as PostgREST's
 * pgFmtApplyCast does (`CAST( <field> AS <cast> )`), and its grammar
 * (QueryParams pIdentifier: letters, digits, '_', ' ', '$') lets '$' in,
 * so one cast can open a dollar-quoted string that another closes. The
 * text swallowed is library SQL; what follows the closing quote is again
 * only cast characters, then " )": no parenthesis, comma, quote or
 * operator to leave the CAST with. Such casts must end in PostgreSQL's
 * syntax error (42601, 400, PostgREST's answer too), never run. */
START_TEST(dollar_quotes_in_casts_only_fail_to_parse)
{
    static const char *const opened[] = {
        "select=id::text $$,name::$$",
        "select=id::text $q$,name::$q$ CREATE TABLE api pwned",
        "select=id::$$,name::$$ DROP TABLE api artists",
        "select=id::int $1",
        "select=id::$1",
        "select=id::text $$",
        "select=id::text $$,albums(id::$$ CREATE TABLE api pwned)",
        "select=id::text $$,name::$$&id=eq.1",
    };
    for (size_t i = 0; i < sizeof opened / sizeof opened[0]; i++) {
        test_response r;
        const char *h[] = {"Prefer", "tx=rollback", NULL};
        harness_request(ctx, "GET", "/artists", opened[i], h, NULL, &r);
        char code[16];
        body_code(r.body, code, sizeof code);
        ck_assert_msg(r.status == 400 && strcmp(code, "42601") == 0, "%s: %d %s",
                      opened[i], r.status, r.body);
        harness_free(&r);
    }
    /* the aggregate's cast goes through the same CAST( ... AS ... ) */
    static const char *const gate_open[] = {"db-aggregates-enabled", "true", NULL};
    pgrest_ctx *agg = harness_ctx(gate_open);
    test_response ra;
    harness_request(agg, "GET", "/artists",
                    "select=id.sum()::text $$,name::$$ DROP TABLE api artists", NULL,
                    NULL, &ra);
    ck_assert_msg(ra.status == 400 && strstr(ra.body, "\"code\":\"42601\"") != NULL,
                  "%d %s", ra.status, ra.body);
    harness_free(&ra);
    pgrest_ctx_free(agg);
    /* the table a swallowed DROP names is still there */
    test_response r;
    harness_request(ctx, "GET", "/artists", "select=id&limit=1", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    harness_free(&r);
    ck_assert(canary_absent());
}
END_TEST

/* Every cast text over the characters that matter ('$', a letter, a
 * digit, '_', ' '), up to 4 long, in two select items: each answer is a
 * result or a parse / type error, never a server error, and nothing runs */
START_TEST(every_short_cast_text_fails_at_most)
{
    static const char alphabet[] = "$t1_ ";
    static const char *const allowed[] = {"42601", "42704", "42846", "PGRST100",
                                          "22P02", "42883", "42P18"};
    size_t na = strlen(alphabet), tried = 0, syntax = 0;
    char cast[8], query[64];
    for (size_t len = 1; len <= 4; len++) {
        size_t total = 1;
        for (size_t k = 0; k < len; k++)
            total *= na;
        for (size_t n = 0; n < total; n++) {
            size_t v = n;
            for (size_t k = 0; k < len; k++, v /= na)
                cast[k] = alphabet[v % na];
            cast[len] = '\0';
            snprintf(query, sizeof query, "select=id::text %s,name::%s&limit=1", cast, cast);
            test_response r;
            harness_request(ctx, "GET", "/artists", query, NULL, NULL, &r);
            char code[16];
            body_code(r.body, code, sizeof code);
            bool ok = r.status == 200;
            for (size_t i = 0; !ok && i < sizeof allowed / sizeof allowed[0]; i++)
                ok = r.status < 500 && strcmp(code, allowed[i]) == 0;
            ck_assert_msg(ok, "%s: %d %s", query, r.status, r.body);
            syntax += strcmp(code, "42601") == 0;
            tried++;
            harness_free(&r);
        }
    }
    /* the '$'-led casts did reach PostgreSQL's parser */
    ck_assert_uint_gt(syntax, 100);
    ck_assert_uint_eq(tried, 5 + 25 + 125 + 625);
    ck_assert(canary_absent());
}
END_TEST

/* ------------------------------------------------------------ literals */

/* Names holding a backslash under standard_conforming_strings = off:
 * the library writes catalogue names as literals (missing=default's
 * jsonb_build_object keys, Location's primary key names), which must
 * read the same as with it on: PostgREST's pgFmtLit writes E'...' with
 * backslashes doubled. With plain '...', 'c\d' would read as "cd": the
 * default would not apply and Location would lose its key. */
START_TEST(backslash_names_without_standard_conforming_strings)
{
    PGconn *admin = harness_admin_connect();
    harness_admin_exec(admin,
                       "DROP SCHEMA IF EXISTS issue39 CASCADE; CREATE SCHEMA issue39;"
                       "GRANT USAGE ON SCHEMA issue39 TO web_anon;"
                       "CREATE TABLE issue39.\"back\\slash\"(\"id\\k\" int PRIMARY KEY,"
                       " \"c\\d\" text DEFAULT 'd\\e', n int);"
                       "GRANT ALL ON issue39.\"back\\slash\" TO web_anon;"
                       "CREATE FUNCTION issue39.scs() RETURNS text LANGUAGE sql AS"
                       " $$ SELECT current_setting('standard_conforming_strings') $$;");
    const char *uri = harness_db_uri();
    char off[512];
    snprintf(off, sizeof off, "%s%coptions=-c%%20standard_conforming_strings%%3Doff", uri,
             strchr(uri, '?') != NULL ? '&' : '?');
    const char *const opts[] = {"db-uri", off, "db-schemas", "issue39", NULL};
    pgrest_ctx *c = harness_ctx(opts);
    const char *h[] = {"Content-Type", "application/json", "Prefer",
                       "return=headers-only, missing=default", NULL};
    test_response r;
    /* the second row lacks "c\d": missing=default gives it the default
     * (columns= quotes the names: QueryParams pQuotedValue, \\ for \) */
    harness_request(c, "POST", "/back\\slash",
                    "columns=%22id%5C%5Ck%22,%22c%5C%5Cd%22,n", h,
                    "[{\"id\\\\k\": 1, \"c\\\\d\": \"x\", \"n\": 2}, {\"id\\\\k\": 2, "
                    "\"n\": 3}]",
                    &r);
    ck_assert_msg(r.status == 201, "%d %s", r.status, r.body);
    harness_free(&r);
    /* one row: Location names the primary key column */
    harness_request(c, "POST", "/back\\slash", "", h, "{\"id\\\\k\": 3, \"n\": 4}", &r);
    ck_assert_msg(r.status == 201, "%d %s", r.status, r.body);
    const char *loc = harness_header(&r, "Location");
    ck_assert_ptr_nonnull(loc);
    /* Response.hs: the name as it is, the query by renderSimpleQuery True */
    ck_assert_str_eq(loc, "/back\\slash?id%5Ck=eq.3");
    harness_free(&r);
    harness_request(c, "GET", "/back\\slash", "order=n", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "[{\"id\\\\k\":1,\"c\\\\d\":\"x\",\"n\":2}, \n"
                             " {\"id\\\\k\":2,\"c\\\\d\":\"d\\\\e\",\"n\":3}, \n"
                             " {\"id\\\\k\":3,\"c\\\\d\":\"d\\\\e\",\"n\":4}]");
    harness_free(&r);
    /* the setting really is off on the library's connections */
    harness_request(c, "GET", "/rpc/scs", "", NULL, NULL, &r);
    ck_assert_msg(r.status == 200 && strcmp(r.body, "\"off\"") == 0, "%d %s", r.status,
                  r.body);
    harness_free(&r);
    pgrest_ctx_free(c);
    harness_admin_exec(admin, "DROP SCHEMA issue39 CASCADE");
    PQfinish(admin);
}
END_TEST

/* Row level security sees the role and the claims of the request. */
START_TEST(row_level_security_follows_the_token)
{
    char *alice = hs256(SECRET, "{\"role\":\"web_user\",\"sub\":\"alice\"}");
    char auth[512];
    snprintf(auth, sizeof auth, "Bearer %s", alice);
    const char *h[] = {"Authorization", auth, NULL};
    test_response r;
    harness_request(ctx, "GET", "/private_notes", "select=body&order=id", h, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "[{\"body\":\"alice 1\"}, \n {\"body\":\"alice 2\"}]");
    harness_free(&r);
    harness_request(ctx, "GET", "/private_notes", "select=body", NULL, NULL, &r);
    ck_assert_str_eq(r.body, "[]");
    harness_free(&r);
    free(alice);
}
END_TEST

int main(void)
{
    harness_db_uri();
    Suite *s = suite_create("attacks");
    TCase *jwt = tcase_create("jwt");
    tcase_set_timeout(jwt, 60);
    tcase_add_checked_fixture(jwt, setup, teardown);
    tcase_add_test(jwt, alg_none_is_rejected);
    tcase_add_test(jwt, wrong_key_and_tampered_payload);
    tcase_add_test(jwt, expired_and_not_yet_valid);
    tcase_add_test(jwt, roles_the_authenticator_may_not_become);
    tcase_add_test(jwt, very_long_token);
    tcase_add_test(jwt, key_confusion_rs256_public_key_as_hs256_secret);
    tcase_add_test(jwt, row_level_security_follows_the_token);
    suite_add_tcase(s, jwt);
    TCase *inj = tcase_create("injection");
    tcase_set_timeout(inj, 60);
    tcase_add_checked_fixture(inj, setup, teardown);
    tcase_add_loop_test(inj, injection_never_becomes_sql, 0,
                        (int)(sizeof attacks / sizeof attacks[0]));
    suite_add_tcase(s, inj);
    TCase *casts = tcase_create("casts");
    tcase_set_timeout(casts, 120);
    tcase_add_checked_fixture(casts, setup, teardown);
    tcase_add_test(casts, dollar_quotes_in_casts_only_fail_to_parse);
    tcase_add_test(casts, every_short_cast_text_fails_at_most);
    suite_add_tcase(s, casts);
    TCase *lits = tcase_create("literals");
    tcase_set_timeout(lits, 60);
    tcase_add_test(lits, backslash_names_without_standard_conforming_strings);
    suite_add_tcase(s, lits);
    return check_run(s);
}
