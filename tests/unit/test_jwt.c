/* JWT verification, claims and role extraction (lib/auth/jwt.c). Expected
 * errors come from PostgREST's AuthSpec, AudienceJwtSecretSpec,
 * BinaryJwtSecretSpec and ErrorSpec (the conformance cases) and from
 * Error.hs. Tokens are made here with libjwt, RSA/EC keys with OpenSSL. */
#include <check.h>

#include "check_run.h"
#include <jwt.h>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth/jwt.h"
#include "engine/context.h"
#include "util/arena.h"
#include "util/error.h"
#include "util/strbuf.h"

#define SECRET "reallyreallyreallyreallyverysafe"

typedef struct fixture {
    pgr_config cfg;
    pgrest_arena *a;
    pgrest_api_request api;
    pgrest_error err;
} fixture;

static void fx_init(fixture *f, const char *secret)
{
    memset(f, 0, sizeof *f);
    pgr_config_defaults(&f->cfg);
    f->cfg.jwt_secret = secret;
    f->cfg.db_anon_role = "anon";
    f->a = pgrest_arena_new(0);
}

static int fx_auth(fixture *f, const char *token)
{
    memset(&f->api, 0, sizeof f->api);
    memset(&f->err, 0, sizeof f->err);
    return pgr_jwt_authenticate(NULL, &f->cfg, f->a, token, &f->api, &f->err);
}

static void fx_free(fixture *f)
{
    pgrest_arena_free(f->a);
}

static void expect_error(fixture *f, const char *token, int status, const char *code,
                         const char *message)
{
    int rc = fx_auth(f, token);
    ck_assert_int_ne(rc, PGREST_OK);
    ck_assert_int_eq(f->err.http_status, status);
    ck_assert_str_eq(f->err.code, code);
    ck_assert_str_eq(f->err.message, message);
}

static void expect_role(fixture *f, const char *token, const char *role)
{
    int rc = fx_auth(f, token);
    ck_assert_msg(rc == PGREST_OK, "auth failed: %s", rc ? f->err.message : "");
    ck_assert_str_eq(f->api.role, role);
}

/* ------------------------------------------------------------ token makers */

/* A token with the given claims (JSON) and header kid, signed with alg and
 * key; the string lives in the arena. */
static const char *make_token(pgrest_arena *a, jwt_alg_t alg, const void *key,
                              size_t key_len, const char *claims, const char *kid)
{
    jwt_t *jwt = NULL;
    ck_assert_int_eq(jwt_new(&jwt), 0);
    ck_assert_int_eq(jwt_add_grants_json(jwt, claims), 0);
    if (kid != NULL)
        ck_assert_int_eq(jwt_add_header(jwt, "kid", kid), 0);
    ck_assert_int_eq(jwt_set_alg(jwt, alg, key, (int)key_len), 0);
    char *s = jwt_encode_str(jwt);
    ck_assert_ptr_nonnull(s);
    const char *copy = pgr_strdup(a, s);
    free(s);
    jwt_free(jwt);
    return copy;
}

static const char *hs256(pgrest_arena *a, const char *secret, const char *claims)
{
    return make_token(a, JWT_ALG_HS256, secret, strlen(secret), claims, NULL);
}

static const char *claims_at(pgrest_arena *a, const char *name, long offset)
{
    return pgr_asprintf(a, "{\"role\":\"author\",\"%s\":%ld}", name,
                        (long)time(NULL) + offset);
}

/* base64url without padding, via OpenSSL. */
static const char *b64url(pgrest_arena *a, const unsigned char *bytes, size_t n)
{
    char *out = pgr_alloc(a, (n + 2) / 3 * 4 + 1);
    int len = EVP_EncodeBlock((unsigned char *)out, bytes, (int)n);
    while (len > 0 && out[len - 1] == '=')
        len--;
    out[len] = '\0';
    for (char *p = out; *p; p++)
        *p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
    return out;
}

/* An HS256 token whose claims text is sent exactly as written (libjwt
 * re-encodes claims and refuses null or out-of-range numbers). */
static const char *raw_hs256(pgrest_arena *a, const char *secret, const char *claims)
{
    static const char header[] = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";
    const char *payload = pgr_asprintf(a, "%s.%s",
                                       b64url(a, (const unsigned char *)header, strlen(header)),
                                       b64url(a, (const unsigned char *)claims, strlen(claims)));
    unsigned char mac[EVP_MAX_MD_SIZE];
    size_t maclen = 0;
    ck_assert_ptr_nonnull(EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, secret, strlen(secret),
                                    (const unsigned char *)payload, strlen(payload), mac,
                                    sizeof mac, &maclen));
    return pgr_asprintf(a, "%s.%s", payload, b64url(a, mac, maclen));
}

static const char *bn_b64url(pgrest_arena *a, EVP_PKEY *pkey, const char *param, int pad)
{
    BIGNUM *bn = NULL;
    ck_assert_int_eq(EVP_PKEY_get_bn_param(pkey, param, &bn), 1);
    int n = pad > 0 ? pad : BN_num_bytes(bn);
    unsigned char *buf = pgr_alloc(a, (size_t)n);
    ck_assert_int_eq(BN_bn2binpad(bn, buf, n), n);
    BN_free(bn);
    return b64url(a, buf, (size_t)n);
}

static const char *private_pem(pgrest_arena *a, EVP_PKEY *pkey)
{
    BIO *bio = BIO_new(BIO_s_mem());
    ck_assert_int_eq(PEM_write_bio_PrivateKey(bio, pkey, NULL, NULL, 0, NULL, NULL), 1);
    char *data = NULL;
    long n = BIO_get_mem_data(bio, &data);
    const char *pem = pgr_strndup(a, data, (size_t)n);
    BIO_free(bio);
    return pem;
}

static const char *public_pem(pgrest_arena *a, EVP_PKEY *pkey)
{
    BIO *bio = BIO_new(BIO_s_mem());
    ck_assert_int_eq(PEM_write_bio_PUBKEY(bio, pkey), 1);
    char *data = NULL;
    long n = BIO_get_mem_data(bio, &data);
    const char *pem = pgr_strndup(a, data, (size_t)n);
    BIO_free(bio);
    return pem;
}

typedef struct keypair {
    const char *priv_pem;
    const char *pub_pem;
    const char *jwk_fields;   /* "kty":...,"n":...,"e":... without braces */
} keypair;

static keypair make_rsa_keypair(pgrest_arena *a)
{
    EVP_PKEY *pkey = EVP_RSA_gen(2048);
    ck_assert_ptr_nonnull(pkey);
    keypair kp;
    kp.priv_pem = private_pem(a, pkey);
    kp.pub_pem = public_pem(a, pkey);
    kp.jwk_fields = pgr_asprintf(a, "\"kty\":\"RSA\",\"n\":\"%s\",\"e\":\"%s\"",
                                 bn_b64url(a, pkey, OSSL_PKEY_PARAM_RSA_N, 0),
                                 bn_b64url(a, pkey, OSSL_PKEY_PARAM_RSA_E, 0));
    EVP_PKEY_free(pkey);
    return kp;
}

/* Two RSA key pairs made once per run, in an unchecked fixture (the parent
 * process, before Check forks a test): a 2048-bit key took ~25 s under
 * valgrind, and the tests asked for seven. Tests that need two different
 * keys take pair 0 and pair 1. */
static pgrest_arena *rsa_arena;
static keypair rsa_keys[2];

static void rsa_keys_setup(void)
{
    rsa_arena = pgrest_arena_new(0);
    ck_assert_ptr_nonnull(rsa_arena);
    for (size_t i = 0; i < sizeof rsa_keys / sizeof rsa_keys[0]; i++)
        rsa_keys[i] = make_rsa_keypair(rsa_arena);
}

static void rsa_keys_teardown(void)
{
    pgrest_arena_free(rsa_arena);
    rsa_arena = NULL;
}

static keypair rsa_keypair(size_t which)
{
    ck_assert_ptr_nonnull(rsa_arena);
    return rsa_keys[which];
}

static keypair ec_keypair(pgrest_arena *a)
{
    EVP_PKEY *pkey = EVP_EC_gen("P-256");
    ck_assert_ptr_nonnull(pkey);
    keypair kp;
    kp.priv_pem = private_pem(a, pkey);
    kp.pub_pem = public_pem(a, pkey);
    kp.jwk_fields = pgr_asprintf(a, "\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"%s\",\"y\":\"%s\"",
                                 bn_b64url(a, pkey, OSSL_PKEY_PARAM_EC_PUB_X, 32),
                                 bn_b64url(a, pkey, OSSL_PKEY_PARAM_EC_PUB_Y, 32));
    EVP_PKEY_free(pkey);
    return kp;
}

static const char *rs256(pgrest_arena *a, const keypair *kp, const char *claims,
                         const char *kid)
{
    return make_token(a, JWT_ALG_RS256, kp->priv_pem, strlen(kp->priv_pem), claims, kid);
}

/* ------------------------------------------------------------ HS256 */

START_TEST(hs256_valid_token)
{
    fixture f;
    fx_init(&f, SECRET);
    const char *t = hs256(f.a, SECRET, "{\"role\":\"author\",\"id\":\"jdoe\"}");
    expect_role(&f, t, "author");
    ck_assert(f.api.authenticated);
    ck_assert_str_eq(f.api.jwt_claims, "{\"id\":\"jdoe\",\"role\":\"author\"}");
    fx_free(&f);
}
END_TEST

/* AuthSpec-0002 / -0026: a token PostgREST's test suite signs. */
START_TEST(postgrest_fixture_token)
{
    fixture f;
    fx_init(&f, SECRET);
    expect_role(&f, "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoicG9zdGdyZXN0X3Rlc3RfYXV0aG9yIiwiaWQiOiJqZG9lIn0.B-lReuGNDwAlU1GOC476MlO0vAt9JNoHIlxg2vwMaO0",
                "postgrest_test_author");
    /* AuthSpec-0007: standard claims pass through, keys sorted */
    expect_role(&f, "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJmdW4iLCJqdGkiOiJmb28iLCJuYmYiOjEzMDA4MTkzODAsImV4cCI6OTk5OTk5OTk5OSwiaHR0cDovL3Bvc3RncmVzdC5jb20vZm9vIjp0cnVlLCJpc3MiOiJqb2UiLCJyb2xlIjoicG9zdGdyZXN0X3Rlc3RfYXV0aG9yIiwiaWF0IjoxMzAwODE5MzgwfQ.V5fEpXfpb7feqwVqlcDleFdKu86bdwU2cBRT4fcMhXg",
                "postgrest_test_author");
    ck_assert_str_eq(f.api.jwt_claims,
                     "{\"exp\":9999999999,\"http://postgrest.com/foo\":true,\"iat\":1300819380,"
                     "\"iss\":\"joe\",\"jti\":\"foo\",\"nbf\":1300819380,"
                     "\"role\":\"postgrest_test_author\",\"sub\":\"fun\"}");
    fx_free(&f);
}
END_TEST

/* AuthSpec-0015/0016: no role claim means db-anon-role, not authenticated
 * (so 42501 stays 401). */
START_TEST(no_role_claim_uses_anon_role)
{
    fixture f;
    fx_init(&f, SECRET);
    expect_role(&f, "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpZCI6Impkb2UifQ.RVlZDaSyKbFPvxUf3V_NQXybfRB4dlBIkAUQXVXLUAI",
                "anon");
    ck_assert(!f.api.authenticated);
    ck_assert_str_eq(f.api.jwt_claims, "{\"id\":\"jdoe\",\"role\":\"anon\"}");
    expect_role(&f, "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.e30.CUIP5V9thWsGGFsFyGijSZf1fJMfarLHI9CEJL-TGNk",
                "anon");
    ck_assert_str_eq(f.api.jwt_claims, "{\"role\":\"anon\"}");
    f.cfg.db_anon_role = NULL;
    expect_error(&f, "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.e30.CUIP5V9thWsGGFsFyGijSZf1fJMfarLHI9CEJL-TGNk",
                 401, "PGRST302", "Anonymous access is disabled");
    ck_assert_str_eq(pgr_jwt_www_authenticate(f.a, &f.err), "Bearer");
    fx_free(&f);
}
END_TEST

/* BinaryJwtSecretSpec-0001 */
START_TEST(base64_secret)
{
    fixture f;
    fx_init(&f, "cmVhbGx5cmVhbGx5cmVhbGx5cmVhbGx5dmVyeXNhZmU=");
    f.cfg.jwt_secret_is_base64 = true;
    expect_role(&f, "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjk5OTk5OTk5OTksInJvbGUiOiJwb3N0Z3Jlc3RfdGVzdF9hdXRob3IiLCJpZCI6Impkb2UifQ.Dpss-QoLYjec5OTsOaAc3FNVsSjA89wACoV-0ra3ClA",
                "postgrest_test_author");
    /* Config.hs decodeSecret strips the text and reads '.' as '=' */
    f.cfg.jwt_secret = " \tcmVhbGx5cmVhbGx5cmVhbGx5cmVhbGx5dmVyeXNhZmU.\n";
    expect_role(&f, "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjk5OTk5OTk5OTksInJvbGUiOiJwb3N0Z3Jlc3RfdGVzdF9hdXRob3IiLCJpZCI6Impkb2UifQ.Dpss-QoLYjec5OTsOaAc3FNVsSjA89wACoV-0ra3ClA",
                "postgrest_test_author");
    /* binary secret with bytes a C string cannot hold */
    const unsigned char bin[] = {0x00, 0xff, 0x10, 0x00, 0x7f, 0x80, 0x01, 0x02};
    const char *b64 = b64url(f.a, bin, sizeof bin);
    f.cfg.jwt_secret = b64;
    const char *t = make_token(f.a, JWT_ALG_HS256, bin, sizeof bin,
                               "{\"role\":\"bin\"}", NULL);
    expect_role(&f, t, "bin");
    fx_free(&f);
}
END_TEST

/* ------------------------------------------------------------ decode errors */

START_TEST(format_errors)
{
    fixture f;
    fx_init(&f, SECRET);
    expect_error(&f, "", 401, "PGRST301", "Empty JWT is sent in Authorization header");
    /* AuthSpec-0014 / ErrorSpec-0005 */
    expect_error(&f, "ey9zdGdyZXN0X3Rlc3RfYXV0aG9yIiwiaWQiOiJqZG9lIn0.y4vZuu1dDdwAl0-S00MCRWRYMlJ5YAMSir6Es6WtWx0",
                 401, "PGRST301", "Expected 3 parts in JWT; got 2");
    ck_assert_str_eq(pgr_jwt_www_authenticate(f.a, &f.err),
                     "Bearer error=\"invalid_token\", error_description=\"Expected 3 parts in JWT; got 2\"");
    expect_error(&f, "a.b.c.d.e", 401, "PGRST301", "Expected 3 parts in JWT; got 5");
    /* ErrorSpec-0017 */
    expect_error(&f, "quifquirndsjagnrgniur.fonvoienqhhdj.iuqvnvhojah", 401, "PGRST301",
                 "JWT cryptographic operation failed");
    /* ErrorSpec-0018 */
    expect_error(&f, "eyJ0eXAiOiJKV1QiLCJhbGciOiJub25lIn0.e30.yOBhlOIqn56T-4NvyEXCjfi3UmyQZ-BzXtePMO2NgRI",
                 401, "PGRST301", "Wrong or unsupported encoding algorithm");
    ck_assert_str_eq(f.err.details, "JWT is unsecured but expected 'alg' was not 'none'");
    fx_free(&f);
}
END_TEST

START_TEST(alg_none_from_libjwt_is_rejected)
{
    fixture f;
    fx_init(&f, SECRET);
    const char *t = make_token(f.a, JWT_ALG_NONE, NULL, 0, "{\"role\":\"author\"}", NULL);
    expect_error(&f, t, 401, "PGRST301", "Wrong or unsupported encoding algorithm");
    fx_free(&f);
}
END_TEST

START_TEST(missing_secret)
{
    fixture f;
    fx_init(&f, NULL);
    expect_error(&f, "a.b.c", 500, "PGRST300", "Server lacks JWT secret");
    ck_assert_ptr_null(pgr_jwt_www_authenticate(f.a, &f.err));
    /* without keys even the empty token is refused so (JwtCache.hs decode
     * runs before Jwt.hs parseToken) */
    expect_error(&f, "", 500, "PGRST300", "Server lacks JWT secret");
    fx_free(&f);
}
END_TEST

/* wai-extra extractBearerAuth: the scheme in any case, split at Word8
 * whitespace; other schemes are no token at all. */
START_TEST(bearer_token_extraction)
{
    ck_assert_str_eq(pgr_jwt_bearer_token("Bearer a.b.c"), "a.b.c");
    ck_assert_str_eq(pgr_jwt_bearer_token("bearer a.b.c"), "a.b.c");
    ck_assert_str_eq(pgr_jwt_bearer_token("BEARER \t  a.b.c"), "a.b.c");
    ck_assert_str_eq(pgr_jwt_bearer_token("Bearer\ta.b.c"), "a.b.c");
    ck_assert_str_eq(pgr_jwt_bearer_token("Bearer"), "");
    ck_assert_str_eq(pgr_jwt_bearer_token("Bearer   "), "");
    ck_assert_ptr_null(pgr_jwt_bearer_token("Bearera.b.c"));
    ck_assert_ptr_null(pgr_jwt_bearer_token("Basic YWxhZGRpbjpvcGVuc2VzYW1l"));
    ck_assert_ptr_null(pgr_jwt_bearer_token("Beare a.b.c"));
    ck_assert_ptr_null(pgr_jwt_bearer_token(""));
    ck_assert_ptr_null(pgr_jwt_bearer_token(" Bearer a.b.c"));
}
END_TEST

START_TEST(bad_signature)
{
    fixture f;
    fx_init(&f, SECRET);
    const char *t = hs256(f.a, "anotheranotheranotheranothersecret", "{\"role\":\"author\"}");
    expect_error(&f, t, 401, "PGRST301", "No suitable key or wrong key type");
    ck_assert_str_eq(f.err.details, "None of the keys was able to decode the JWT");
    /* tampered payload, original signature */
    const char *good = hs256(f.a, SECRET, "{\"role\":\"author\"}");
    const char *evil = hs256(f.a, SECRET, "{\"role\":\"postgres\"}");
    const char *sig = strrchr(good, '.');
    size_t head = (size_t)(strrchr(evil, '.') - evil);
    const char *forged = pgr_asprintf(f.a, "%.*s%s", (int)head, evil, sig);
    expect_error(&f, forged, 401, "PGRST301", "No suitable key or wrong key type");
    fx_free(&f);
}
END_TEST

/* jose-jwt checks the signature before anything reads the payload, and
 * Aeson reads any JSON number: a signed payload that is not a JSON object
 * is PGRST303, numbers beyond int64 or double are claims like others. */
START_TEST(payload_read_only_after_the_signature)
{
    fixture f;
    fx_init(&f, SECRET);
    expect_error(&f, raw_hs256(f.a, SECRET, "notjson"), 401, "PGRST303", "Parsing claims failed");
    expect_error(&f, raw_hs256(f.a, SECRET, "\"str\""), 401, "PGRST303", "Parsing claims failed");
    expect_error(&f, raw_hs256(f.a, SECRET, "[1]"), 401, "PGRST303", "Parsing claims failed");
    /* aeson, not json-c's leniencies */
    expect_error(&f, raw_hs256(f.a, SECRET, "{'role':'author'}"), 401, "PGRST303",
                 "Parsing claims failed");
    expect_error(&f, raw_hs256(f.a, SECRET, "{\"role\":\"author\",\"n\":NaN}"), 401,
                 "PGRST303", "Parsing claims failed");
    expect_error(&f, raw_hs256(f.a, SECRET, "{\"role\":\"a\tb\"}"), 401, "PGRST303",
                 "Parsing claims failed");
    /* a NUL in the role: PostgreSQL refuses it in set_config's text (it is
     * not the role before the NUL) */
    expect_error(&f, raw_hs256(f.a, SECRET, "{\"role\":\"author\\u0000x\"}"), 400, "22021",
                 "invalid byte sequence for encoding \"UTF8\": 0x00");
    expect_error(&f, raw_hs256(f.a, SECRET, "{\"role\":\"anon\\u0000\"}"), 400, "22021",
                 "invalid byte sequence for encoding \"UTF8\": 0x00");
    expect_role(&f, raw_hs256(f.a, SECRET, "{\"role\":\"author\",\"n\":99999999999999999999}"),
                "author");
    expect_role(&f, raw_hs256(f.a, SECRET, "{\"role\":\"author\",\"nbf\":-99999999999999999999}"),
                "author");
    /* toBoundedInteger fails, the time counts as 0 */
    expect_error(&f, raw_hs256(f.a, SECRET, "{\"role\":\"author\",\"exp\":99999999999999999999}"),
                 401, "PGRST303", "JWT expired");
    expect_error(&f, raw_hs256(f.a, SECRET, "{\"role\":\"author\",\"exp\":1e400}"),
                 401, "PGRST303", "JWT expired");
    /* a payload that is not base64url fails every key, signed or not */
    {
        const char *good = raw_hs256(f.a, SECRET, "{\"role\":\"author\"}");
        const char *d1 = strchr(good, '.');
        const char *bad_input = pgr_asprintf(f.a, "%.*s.e30!", (int)(d1 - good), good);
        unsigned char mac[EVP_MAX_MD_SIZE];
        size_t maclen = 0;
        ck_assert_ptr_nonnull(EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, SECRET, strlen(SECRET),
                                        (const unsigned char *)bad_input, strlen(bad_input),
                                        mac, sizeof mac, &maclen));
        expect_error(&f, pgr_asprintf(f.a, "%s.%s", bad_input, b64url(f.a, mac, maclen)), 401,
                     "PGRST301", "No suitable key or wrong key type");
        ck_assert_str_eq(f.err.details, "None of the keys was able to decode the JWT");
    }
    /* a bad signature is still reported first */
    expect_error(&f, raw_hs256(f.a, "anotheranotheranotheranothersecret", "notjson"), 401,
                 "PGRST301", "No suitable key or wrong key type");
    fx_free(&f);
}
END_TEST

/* A plain jwt-secret is an HS256 key (Config.hs parseSecret). */
START_TEST(plain_secret_is_hs256_only)
{
    fixture f;
    fx_init(&f, SECRET);
    const char *t = make_token(f.a, JWT_ALG_HS512, SECRET, strlen(SECRET),
                               "{\"role\":\"author\"}", NULL);
    expect_error(&f, t, 401, "PGRST301", "No suitable key or wrong key type");
    ck_assert_str_eq(f.err.details, "No suitable key was found to decode the JWT");
    fx_free(&f);
}
END_TEST

START_TEST(oct_jwk_with_hs512)
{
    fixture f;
    fx_init(&f, NULL);
    const char *k = b64url(f.a, (const unsigned char *)SECRET SECRET, 64);
    f.cfg.jwt_secret = pgr_asprintf(f.a, "{\"kty\":\"oct\",\"alg\":\"HS512\",\"k\":\"%s\"}", k);
    const char *t = make_token(f.a, JWT_ALG_HS512, SECRET SECRET, 64,
                               "{\"role\":\"author\"}", NULL);
    expect_role(&f, t, "author");
    fx_free(&f);
}
END_TEST

/* ------------------------------------------------------------ claims */

START_TEST(time_claims)
{
    fixture f;
    fx_init(&f, SECRET);
    expect_error(&f, hs256(f.a, SECRET, claims_at(f.a, "exp", -60)), 401, "PGRST303",
                 "JWT expired");
    ck_assert_str_eq(pgr_jwt_www_authenticate(f.a, &f.err),
                     "Bearer error=\"invalid_token\", error_description=\"JWT expired\"");
    expect_role(&f, hs256(f.a, SECRET, claims_at(f.a, "exp", -10)), "author");
    expect_role(&f, hs256(f.a, SECRET, claims_at(f.a, "exp", 3600)), "author");
    expect_error(&f, hs256(f.a, SECRET, claims_at(f.a, "nbf", 60)), 401, "PGRST303",
                 "JWT not yet valid");
    expect_role(&f, hs256(f.a, SECRET, claims_at(f.a, "nbf", 10)), "author");
    expect_error(&f, hs256(f.a, SECRET, claims_at(f.a, "iat", 60)), 401, "PGRST303",
                 "JWT issued at future");
    expect_role(&f, hs256(f.a, SECRET, claims_at(f.a, "iat", 10)), "author");
    fx_free(&f);
}
END_TEST

/* AuthSpec-0018/0019/0020 */
START_TEST(non_numeric_time_claims)
{
    fixture f;
    fx_init(&f, SECRET);
    expect_error(&f, "eyJhbGciOiJIUzI1NiJ9.eyJleHAiOiJpbnZhbGlkIiwicm9sZSI6InBvc3RncmVzdF90ZXN0X2F1dGhvciJ9.E2UXDXFKbmdapB8XTW6f959orcdVpfSlL-GjDq1E9Qg",
                 401, "PGRST303", "The JWT 'exp' claim must be a number");
    expect_error(&f, "eyJhbGciOiJIUzI1NiJ9.eyJuYmYiOiJpbnZhbGlkIiwicm9sZSI6InBvc3RncmVzdF90ZXN0X2F1dGhvciJ9.R7ziy_zndtSh-RaPVtC08pCHv89Yb4tHoxoAlvfb2GY",
                 401, "PGRST303", "The JWT 'nbf' claim must be a number");
    expect_error(&f, "eyJhbGciOiJIUzI1NiJ9.eyJpYXQiOiJpbnZhbGlkIiwicm9sZSI6InBvc3RncmVzdF90ZXN0X2F1dGhvciJ9.5tHMRLaWT3gqYdQKtnCBrqaWCRLDaB62wVzpNrIGenE",
                 401, "PGRST303", "The JWT 'iat' claim must be a number");
    fx_free(&f);
}
END_TEST

/* Jwt.hs checkForErrors: `.:?` makes a null claim absent, and sciToInt
 * (toBoundedInteger, default 0) turns a fraction or a value beyond Int64
 * into the epoch: such an exp has expired, such an nbf/iat is past. */
START_TEST(time_claims_read_as_postgrest_does)
{
    fixture f;
    fx_init(&f, SECRET);
    expect_role(&f, raw_hs256(f.a, SECRET, "{\"role\":\"author\",\"exp\":null}"), "author");
    expect_role(&f, raw_hs256(f.a, SECRET, "{\"role\":\"author\",\"nbf\":null,\"iat\":null}"),
                "author");
    expect_error(&f, raw_hs256(f.a, SECRET, "{\"role\":\"author\",\"exp\":1e30}"), 401,
                 "PGRST303", "JWT expired");
    expect_error(&f, raw_hs256(f.a, SECRET, "{\"role\":\"author\",\"exp\":4102444800.5}"), 401,
                 "PGRST303", "JWT expired");
    expect_role(&f, raw_hs256(f.a, SECRET, "{\"role\":\"author\",\"exp\":4.1024448e9}"), "author");
    expect_role(&f, raw_hs256(f.a, SECRET, "{\"role\":\"author\",\"nbf\":4102444800.5}"), "author");
    expect_role(&f, raw_hs256(f.a, SECRET, "{\"role\":\"author\",\"iat\":1e30}"), "author");
    fx_free(&f);
}
END_TEST

/* aeson reads claims at any depth: a claim nested beyond json-c's
 * default 32 levels is still a valid token. */
START_TEST(deeply_nested_claims)
{
    fixture f;
    fx_init(&f, SECRET);
    for (int depth = 40; depth <= 1000; depth *= 5) {
        pgr_sb sb;
        pgr_sb_init(&sb, f.a, 64);
        pgr_sb_puts(&sb, "{\"role\":\"author\",\"x\":");
        for (int i = 0; i < depth; i++)
            pgr_sb_putc(&sb, '[');
        for (int i = 0; i < depth; i++)
            pgr_sb_putc(&sb, ']');
        pgr_sb_putc(&sb, '}');
        expect_role(&f, raw_hs256(f.a, SECRET, pgr_sb_finish(&sb)), "author");
    }
    fx_free(&f);
}
END_TEST

/* AudienceJwtSecretSpec, AuthSpec-0022, ErrorSpec-0015 */
START_TEST(audience)
{
    fixture f;
    fx_init(&f, SECRET);
    const char *aud_ok = hs256(f.a, SECRET, "{\"aud\":\"youraudience\",\"role\":\"author\"}");
    const char *aud_bad = hs256(f.a, SECRET, "{\"aud\":\"notyouraudience\",\"role\":\"author\"}");
    const char *aud_empty = hs256(f.a, SECRET, "{\"aud\":\"\",\"role\":\"author\"}");
    const char *arr_ok = hs256(f.a, SECRET, "{\"aud\":[\"x\",\"youraudience\"],\"role\":\"author\"}");
    const char *arr_bad = hs256(f.a, SECRET, "{\"aud\":[\"notyouraudience\"],\"role\":\"author\"}");
    const char *arr_empty = hs256(f.a, SECRET, "{\"aud\":[],\"role\":\"author\"}");
    const char *aud_null = hs256(f.a, SECRET, "{\"aud\":null,\"role\":\"author\"}");
    const char *no_aud = hs256(f.a, SECRET, "{\"role\":\"author\"}");
    const char *aud_num = hs256(f.a, SECRET, "{\"aud\":1,\"role\":\"author\"}");
    const char *arr_mixed = "eyJhbGciOiJIUzI1NiJ9.eyJhdWQiOlt7ImludmFsaWQiOiJ2YWx1ZSJ9LCJ0ZXN0Il0sInJvbGUiOiJwb3N0Z3Jlc3RfdGVzdF9hdXRob3IifQ.-8t5xicNZT0m7m8WlYQYJPL96MAB6KpxIoa32iL-Yyw";

    /* jwt-aud not set: any string/array of strings */
    expect_role(&f, aud_bad, "author");
    expect_role(&f, aud_empty, "author");
    expect_role(&f, arr_bad, "author");
    expect_role(&f, aud_null, "author");
    expect_error(&f, arr_mixed, 401, "PGRST303",
                 "The JWT 'aud' claim must be a string or an array of strings");
    expect_error(&f, aud_num, 401, "PGRST303",
                 "The JWT 'aud' claim must be a string or an array of strings");

    f.cfg.jwt_aud = "youraudience";
    expect_role(&f, aud_ok, "author");
    expect_role(&f, arr_ok, "author");
    expect_role(&f, arr_empty, "author");
    expect_role(&f, aud_null, "author");
    expect_role(&f, no_aud, "author");
    expect_error(&f, aud_bad, 401, "PGRST303", "JWT not in audience");
    expect_error(&f, aud_empty, 401, "PGRST303", "JWT not in audience");
    expect_error(&f, arr_bad, 401, "PGRST303", "JWT not in audience");
    /* the conformance token itself */
    expect_error(&f, "eyJhbGciOiJIUzI1NiJ9.eyJhdWQiOiJub3R5b3VyYXVkaWVuY2UiLCJleHAiOjk5OTk5OTk5OTksImlkIjoiamRvZSIsInJvbGUiOiJwb3N0Z3Jlc3RfdGVzdF9hdXRob3IifQ.1OBcOm_RXUgDhDGQN8fSvJDZ2XiGtJZZ7yIpdBC7vwA",
                 401, "PGRST303", "JWT not in audience");
    fx_free(&f);
}
END_TEST

START_TEST(claims_are_sorted_and_role_inserted)
{
    fixture f;
    fx_init(&f, SECRET);
    f.cfg.jwt_role_claim_key = ".app.role";
    const char *t = hs256(f.a, SECRET,
                          "{\"z\":[1,{\"y\":2,\"x\":\"a/b\"}],\"app\":{\"role\":\"r1\"},\"role\":\"old\",\"n\":1.5}");
    expect_role(&f, t, "r1");
    ck_assert_str_eq(f.api.jwt_claims,
                     "{\"app\":{\"role\":\"r1\"},\"n\":1.5,\"role\":\"r1\",\"z\":[1,{\"x\":\"a/b\",\"y\":2}]}");
    fx_free(&f);
}
END_TEST

/* request.jwt.claims is Aeson's encoding of the claims: numbers as
 * Data.Aeson.Encoding.Builder prints the Scientific it read (the integer's
 * digits for an exponent in 0..1024, else Scientific's Generic format),
 * integers of any size exact. */
START_TEST(claims_numbers_as_aeson_encodes_them)
{
    fixture f;
    fx_init(&f, SECRET);
    static const struct { const char *in; const char *out; } cases[] = {
        {"1e2", "100"}, {"1.50", "1.5"}, {"1e-7", "1.0e-7"}, {"1.0", "1.0"},
        {"0.1", "0.1"}, {"100.0", "100.0"}, {"12345678.9", "1.23456789e7"},
        {"1234567.8", "1234567.8"}, {"0.001", "1.0e-3"}, {"123.456e-2", "1.23456"},
        {"1e1025", "1.0e1025"}, {"-2.5E+1", "-25"}, {"0.0", "0.0"}, {"-0.0", "0.0"},
        {"0e5", "0"}, {"-0", "0"}, {"42", "42"}, {"-42", "-42"},
        {"18446744073709551615", "18446744073709551615"},
        {"18446744073709551616", "18446744073709551616"},
        {"99999999999999999999", "99999999999999999999"},
        {"-9223372036854775808", "-9223372036854775808"},
        {"-9223372036854775809", "-9223372036854775809"},
        {"12345678901234567890123", "12345678901234567890123"},
        {"-1.5e300", "-15ZEROS"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *claims = pgr_asprintf(f.a, "{\"n\":%s,\"role\":\"author\"}", cases[i].in);
        expect_role(&f, raw_hs256(f.a, SECRET, claims), "author");
        const char *want = strcmp(cases[i].out, "-15ZEROS") == 0
                               ? "-1500000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
                               : cases[i].out;
        want = pgr_asprintf(f.a, "{\"n\":%s,\"role\":\"author\"}", want);
        ck_assert_msg(strcmp(f.api.jwt_claims, want) == 0, "%s: got %s, want %s",
                      cases[i].in, f.api.jwt_claims, want);
    }
    /* big integers stay numbers inside strings' neighbourhood */
    expect_role(&f, raw_hs256(f.a, SECRET, "{\"s\":\"99999999999999999999\\\"x\",\"role\":\"author\","
                                          "\"a\":[99999999999999999999,1e99]}"), "author");
    ck_assert_str_eq(f.api.jwt_claims,
                     "{\"a\":[99999999999999999999,1000000000000000000000000000000000000000000"
                     "000000000000000000000000000000000000000000000000000000000],"
                     "\"role\":\"author\",\"s\":\"99999999999999999999\\\"x\"}");
    /* a role that is not a string is that encoding too (Jwt.hs unquoted) */
    f.cfg.jwt_role_claim_key = ".r";
    expect_role(&f, raw_hs256(f.a, SECRET, "{\"r\":1e2}"), "100");
    expect_role(&f, raw_hs256(f.a, SECRET, "{\"r\":{\"b\":1.50,\"a\":[true,null]}}"),
                "{\"a\":[true,null],\"b\":1.5}");
    fx_free(&f);
}
END_TEST

/* ------------------------------------------------------------ JSPath */

START_TEST(role_claim_key_paths)
{
    fixture f;
    fx_init(&f, SECRET);
    const char *t = hs256(f.a, SECRET,
                          "{\"role\":\"top\",\"app_metadata\":{\"roles\":[\"viewer\",\"admin_x\",\"x_editor\"]},"
                          "\"https://x.com/role\":\"ns\",\"n\":5,\"obj\":{\"a\":[true]},"
                          "\"a\":{\"b\":[\"first\",\"second\"]},\"nul\":null,\"o\":{\"k\":\"admin\"},"
                          "\"back\\\\slash\":\"bs\"}");
    static const struct { const char *path; const char *role; } cases[] = {
        {".role", "top"},
        {"$.role", "top"},
        {".app_metadata.roles[0]", "viewer"},
        {".app_metadata.roles[1]", "admin_x"},
        {"$.app_metadata.roles[-1]", "x_editor"},
        {"$.app_metadata.roles[*]", "viewer"},
        {".\"https://x.com/role\"", "ns"},
        {"$['https://x.com/role']", "ns"},
        {"$[\"https://x.com/role\"]", "ns"},
        {".app_metadata.roles[?(@ == \"admin_x\")]", "admin_x"},
        {".app_metadata.roles[?(@ != \"viewer\")]", "admin_x"},
        {".app_metadata.roles[?(@ ^== \"admin\")]", "admin_x"},
        {".app_metadata.roles[?(@ ==^ \"editor\")]", "x_editor"},
        {".app_metadata.roles[?(@ *== \"_e\")]", "x_editor"},
        {"$.app_metadata.roles[?@ == 'x_editor']", "x_editor"},
        {"$.app_metadata.roles[?search(@, 'ed')]", "x_editor"},
        {"$.app_metadata.roles[?match(@, 'admin.*')]", "admin_x"},
        {"$.a['b'][1]", "second"},
        {".n", "5"},
        {".obj", "{\"a\":[true]}"},
        {".missing", "anon"},
        {".app_metadata.roles[7]", "anon"},
        {".app_metadata.roles[?(@ == \"nope\")]", "anon"},
        {".role.deeper", "anon"},
        /* a JSON null is selected and encoded (Jwt.hs unquoted) */
        {".nul", "null"},
        {"$.nul", "null"},
        {".nul.deeper", "anon"},
        /* a deprecated-syntax filter looks into arrays only, RFC 9535's
         * into objects too; quoted keys have no escapes */
        {".obj[?(@ == \"x\")]", "anon"},
        {".o[?(@ == \"admin\")]", "anon"},
        {"$.o[?@ == 'admin']", "admin"},
        {".\"back\\slash\"", "bs"},
        {".app_metadata.roles[?(@==\"viewer\")]", "viewer"},
        {".app_metadata.roles[99999999999999999999]", "anon"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        f.cfg.jwt_role_claim_key = cases[i].path;
        int rc = fx_auth(&f, t);
        ck_assert_msg(rc == PGREST_OK, "%s: %s", cases[i].path, rc ? f.err.message : "");
        ck_assert_msg(strcmp(f.api.role, cases[i].role) == 0, "%s: got %s, want %s",
                      cases[i].path, f.api.role, cases[i].role);
    }
    /* object members in key order (Aeson's KeyMap), not the token's */
    const char *unsorted = raw_hs256(f.a, SECRET, "{\"w\":{\"z\":\"from_z\",\"a\":\"from_a\"}}");
    f.cfg.jwt_role_claim_key = "$.w.*";
    expect_role(&f, unsorted, "from_a");
    f.cfg.jwt_role_claim_key = "$.w[?@ != 'x']";
    expect_role(&f, unsorted, "from_a");
    fx_free(&f);
}
END_TEST

START_TEST(invalid_role_claim_key)
{
    fixture f;
    fx_init(&f, SECRET);
    static const char *bad[] = {"role", ".", ".a[", ".a[x]", ".a[?(@ = \"x\")]",
                                "$.a[?(@ == 'x']", "$.a[?search(@)]", "",
                                /* not in the deprecated syntax */
                                ".a[*]", ".a[-1]", ".my-role", ".a['b']",
                                ".a[?(@ == 'x')]", ".a[?(@ == \"x\")].b", ".a[?(@ == \"x\") ]",
                                /* not RFC 9535 */
                                "$.my-role", "$.0a", "$.\"a\"", "$.a[?(@ ^== 'x')]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(pgr_jwt_check_role_claim_key(f.a, bad[i], &f.err) != PGREST_OK,
                      "%s accepted", bad[i]);
    ck_assert_int_eq(pgr_jwt_check_role_claim_key(f.a, ".a.b[0][?(@ == \"x\")]", &f.err),
                     PGREST_OK);
    f.cfg.jwt_role_claim_key = "role";
    int rc = fx_auth(&f, hs256(f.a, SECRET, "{\"role\":\"x\"}"));
    ck_assert_int_ne(rc, PGREST_OK);
    ck_assert_int_eq(f.err.http_status, 500);
    fx_free(&f);
}
END_TEST

/* ------------------------------------------------------------ JWK / JWKS */

START_TEST(rs256_with_jwk)
{
    fixture f;
    fx_init(&f, NULL);
    keypair kp = rsa_keypair(0);
    f.cfg.jwt_secret = pgr_asprintf(f.a, "{\"alg\":\"RS256\",%s,\"use\":\"sig\"}",
                                        kp.jwk_fields);
    expect_role(&f, rs256(f.a, &kp, "{\"role\":\"rsa_user\"}", NULL), "rsa_user");

    /* another key pair's token */
    keypair other = rsa_keypair(1);
    expect_error(&f, rs256(f.a, &other, "{\"role\":\"rsa_user\"}", NULL), 401, "PGRST301",
                 "No suitable key or wrong key type");

    /* algorithm confusion: HS256 signed with the public key PEM as secret */
    const char *hs = make_token(f.a, JWT_ALG_HS256, kp.pub_pem, strlen(kp.pub_pem),
                                "{\"role\":\"postgres\"}", NULL);
    expect_error(&f, hs, 401, "PGRST301", "No suitable key or wrong key type");
    ck_assert_str_eq(f.err.details, "No suitable key was found to decode the JWT");
    /* an HS256 token against the secret text of the JWK itself */
    hs = hs256(f.a, f.cfg.jwt_secret, "{\"role\":\"postgres\"}");
    expect_error(&f, hs, 401, "PGRST301", "No suitable key or wrong key type");

    /* JWK alg RS256 pins the algorithm */
    const char *rs512 = make_token(f.a, JWT_ALG_RS512, kp.priv_pem, strlen(kp.priv_pem),
                                   "{\"role\":\"rsa_user\"}", NULL);
    expect_error(&f, rs512, 401, "PGRST301", "No suitable key or wrong key type");
    /* without alg in the JWK any RS* works */
    f.cfg.jwt_secret = pgr_asprintf(f.a, "{%s}", kp.jwk_fields);
    expect_role(&f, rs512, "rsa_user");
    fx_free(&f);
}
END_TEST

START_TEST(rs256_with_jwks_and_kid)
{
    fixture f;
    fx_init(&f, NULL);
    keypair k1 = rsa_keypair(0);
    keypair k2 = rsa_keypair(1);
    f.cfg.jwt_secret = pgr_asprintf(
        f.a, "{\"keys\":[{%s,\"kid\":\"one\"},{\"kty\":\"oct\",\"k\":\"c2VjcmV0\",\"use\":\"enc\"},"
             "{%s,\"kid\":\"two\",\"alg\":\"RS256\"}]}\n",
        k1.jwk_fields, k2.jwk_fields);
    /* no kid: every suitable key is tried */
    expect_role(&f, rs256(f.a, &k2, "{\"role\":\"u2\"}", NULL), "u2");
    expect_role(&f, rs256(f.a, &k1, "{\"role\":\"u1\"}", NULL), "u1");
    /* kid selects the key */
    expect_role(&f, rs256(f.a, &k2, "{\"role\":\"u2\"}", "two"), "u2");
    expect_error(&f, rs256(f.a, &k2, "{\"role\":\"u2\"}", "one"), 401, "PGRST301",
                 "No suitable key or wrong key type");
    ck_assert_str_eq(f.err.details, "None of the keys was able to decode the JWT");
    /* unknown kid: no key at all (jose-jwt keyIdCompatible) */
    expect_error(&f, rs256(f.a, &k2, "{\"role\":\"u2\"}", "three"), 401, "PGRST301",
                 "No suitable key or wrong key type");
    ck_assert_str_eq(f.err.details, "No suitable key was found to decode the JWT");
    fx_free(&f);
}
END_TEST

/* Config.hs parseSecret: a JwkSet parses every key or fails, a Jwk fails
 * on an unknown kty or use or a missing member; the text is then an HS256
 * secret like any other (at least 32 bytes). */
START_TEST(unparsable_jwk_text_is_an_hmac_secret)
{
    fixture f;
    fx_init(&f, NULL);
    keypair kp = rsa_keypair(0);
    const char *texts[] = {
        pgr_asprintf(f.a, "{\"keys\":[{%s},{\"kty\":\"XYZ\"}]}", kp.jwk_fields),
        pgr_asprintf(f.a, "{%s,\"use\":\"foo\"}", kp.jwk_fields),
        "{\"kty\":\"RSA\",\"e\":\"AQAB\",\"comment\":\"no modulus\"}",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        f.cfg.jwt_secret = texts[i];
        ck_assert_int_eq(pgr_jwt_check_secret(f.a, &f.cfg, &f.err), PGREST_OK);
        expect_error(&f, rs256(f.a, &kp, "{\"role\":\"rsa_user\"}", NULL), 401, "PGRST301",
                     "No suitable key or wrong key type");
        ck_assert_str_eq(f.err.details, "No suitable key was found to decode the JWT");
        expect_role(&f, raw_hs256(f.a, texts[i], "{\"role\":\"hs_user\"}"), "hs_user");
    }
    /* so a short one is refused like a short secret */
    f.cfg.jwt_secret = "{\"kty\":\"RSA\",\"n\":\"AQAB\"}";
    ck_assert_int_ne(pgr_jwt_check_secret(f.a, &f.cfg, &f.err), PGREST_OK);
    ck_assert_str_eq(f.err.message, "The JWT secret must be at least 32 characters long.");
    fx_free(&f);
}
END_TEST

/* The one JWK rule, which the server's configuration reader uses too. */
START_TEST(secret_is_jwk_as_parse_secret_decides)
{
    fixture f;
    fx_init(&f, NULL);
    keypair kp = rsa_keypair(0);
    static const struct { const char *text; bool jwk; } cases[] = {
        {"{\"kty\":\"oct\",\"k\":\"c2VjcmV0\"}", true},
        {" {\"keys\":[]}", true},
        {"{\"keys\":[{\"kty\":\"oct\",\"k\":\"c2VjcmV0\"}]}", true},
        {"{\"kty\":\"XYZ\"}", false},
        {"{\"kty\":\"RSA\",\"n\":\"AQAB\"}", false},
        {"{\"kty\":\"oct\",\"k\":\"c2VjcmV0\",\"use\":\"x\"}", false},
        {"{\"keys\":[{\"kty\":\"x\"}]}", false},
        {"{\"keys\":{}}", false},
        {"[{\"kty\":\"oct\",\"k\":\"c2VjcmV0\"}]", false},
        {"{\"kty\":\"oct\",\"k\":\"c2VjcmV0\"} x", false},
        {"a secret of thirty-two characters", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg(pgr_jwt_secret_is_jwk(f.a, (const unsigned char *)cases[i].text,
                                            strlen(cases[i].text)) == cases[i].jwk,
                      "%s", cases[i].text);
    const char *rsa = pgr_asprintf(f.a, "{%s}", kp.jwk_fields);
    ck_assert(pgr_jwt_secret_is_jwk(f.a, (const unsigned char *)rsa, strlen(rsa)));
    fx_free(&f);
}
END_TEST

START_TEST(es256_with_jwk)
{
    fixture f;
    fx_init(&f, NULL);
    keypair kp = ec_keypair(f.a);
    f.cfg.jwt_secret = pgr_asprintf(f.a, "{%s}", kp.jwk_fields);
    const char *t = make_token(f.a, JWT_ALG_ES256, kp.priv_pem, strlen(kp.priv_pem),
                               "{\"role\":\"ec_user\"}", NULL);
    expect_role(&f, t, "ec_user");
    keypair other = ec_keypair(f.a);
    t = make_token(f.a, JWT_ALG_ES256, other.priv_pem, strlen(other.priv_pem),
                   "{\"role\":\"ec_user\"}", NULL);
    expect_error(&f, t, 401, "PGRST301", "No suitable key or wrong key type");
    /* curve mismatch: ES384 needs P-384 */
    EVP_PKEY *p384 = EVP_EC_gen("P-384");
    const char *pem384 = private_pem(f.a, p384);
    EVP_PKEY_free(p384);
    t = make_token(f.a, JWT_ALG_ES384, pem384, strlen(pem384), "{\"role\":\"ec_user\"}", NULL);
    expect_error(&f, t, 401, "PGRST301", "No suitable key or wrong key type");
    ck_assert_str_eq(f.err.details, "No suitable key was found to decode the JWT");
    fx_free(&f);
}
END_TEST

/* An EdDSA token signed with priv, its claims sent as written. */
static const char *eddsa_token(pgrest_arena *a, EVP_PKEY *priv, const char *claims)
{
    static const char header[] = "{\"alg\":\"EdDSA\",\"typ\":\"JWT\"}";
    const char *input = pgr_asprintf(a, "%s.%s",
                                     b64url(a, (const unsigned char *)header, strlen(header)),
                                     b64url(a, (const unsigned char *)claims, strlen(claims)));
    unsigned char sig[128];
    size_t sig_len = sizeof sig;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    ck_assert_int_eq(EVP_DigestSignInit(md, NULL, NULL, NULL, priv), 1);
    ck_assert_int_eq(EVP_DigestSign(md, sig, &sig_len, (const unsigned char *)input,
                                    strlen(input)), 1);
    EVP_MD_CTX_free(md);
    return pgr_asprintf(a, "%s.%s", input, b64url(a, sig, sig_len));
}

static const char *okp_jwk(pgrest_arena *a, EVP_PKEY *pkey, const char *crv)
{
    unsigned char raw[64];
    size_t len = sizeof raw;
    ck_assert_int_eq(EVP_PKEY_get_raw_public_key(pkey, raw, &len), 1);
    return pgr_asprintf(a, "{\"kty\":\"OKP\",\"crv\":\"%s\",\"x\":\"%s\"}", crv,
                        b64url(a, raw, len));
}

/* jose-jwt verifies EdDSA with Ed25519 and Ed448 OKP keys (RFC 8037). */
START_TEST(eddsa_with_okp_jwk)
{
    fixture f;
    fx_init(&f, NULL);
    static const char *curves[][2] = {{"ED25519", "Ed25519"}, {"ED448", "Ed448"}};
    for (size_t i = 0; i < 2; i++) {
        EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, curves[i][0]);
        EVP_PKEY *other = EVP_PKEY_Q_keygen(NULL, NULL, curves[i][0]);
        ck_assert_ptr_nonnull(key);
        f.cfg.jwt_secret = okp_jwk(f.a, key, curves[i][1]);
        expect_role(&f, eddsa_token(f.a, key, "{\"role\":\"ed_user\"}"), "ed_user");
        expect_error(&f, eddsa_token(f.a, other, "{\"role\":\"ed_user\"}"), 401, "PGRST301",
                     "No suitable key or wrong key type");
        ck_assert_str_eq(f.err.details, "None of the keys was able to decode the JWT");
        /* an HS256 token never reaches an OKP key */
        expect_error(&f, raw_hs256(f.a, f.cfg.jwt_secret, "{\"role\":\"ed_user\"}"), 401,
                     "PGRST301", "No suitable key or wrong key type");
        ck_assert_str_eq(f.err.details, "No suitable key was found to decode the JWT");
        EVP_PKEY_free(key);
        EVP_PKEY_free(other);
    }
    /* an EdDSA token against an RSA key */
    keypair kp = rsa_keypair(0);
    EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
    f.cfg.jwt_secret = pgr_asprintf(f.a, "{%s}", kp.jwk_fields);
    expect_error(&f, eddsa_token(f.a, key, "{\"role\":\"ed_user\"}"), 401, "PGRST301",
                 "No suitable key or wrong key type");
    ck_assert_str_eq(f.err.details, "No suitable key was found to decode the JWT");
    EVP_PKEY_free(key);
    fx_free(&f);
}
END_TEST

START_TEST(www_authenticate_header)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_error e = {401, "42501", "permission denied for table x", NULL, NULL};
    ck_assert_str_eq(pgr_jwt_www_authenticate(a, &e), "Bearer");
    e = (pgrest_error){403, "42501", "permission denied", NULL, NULL};
    ck_assert_ptr_null(pgr_jwt_www_authenticate(a, &e));
    e = (pgrest_error){401, "PGRST303", "say \"hi\"", NULL, NULL};
    ck_assert_str_eq(pgr_jwt_www_authenticate(a, &e),
                     "Bearer error=\"invalid_token\", error_description=\"say \\\"hi\\\"\"");
    ck_assert_ptr_null(pgr_jwt_www_authenticate(a, NULL));
    pgrest_arena_free(a);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("jwt");
    TCase *tc = tcase_create("jwt");
    /* RSA key generation is slow on a loaded machine or under valgrind */
    tcase_set_timeout(tc, 120);
    tcase_add_unchecked_fixture(tc, rsa_keys_setup, rsa_keys_teardown);
    tcase_add_test(tc, hs256_valid_token);
    tcase_add_test(tc, postgrest_fixture_token);
    tcase_add_test(tc, no_role_claim_uses_anon_role);
    tcase_add_test(tc, base64_secret);
    tcase_add_test(tc, format_errors);
    tcase_add_test(tc, alg_none_from_libjwt_is_rejected);
    tcase_add_test(tc, missing_secret);
    tcase_add_test(tc, bearer_token_extraction);
    tcase_add_test(tc, bad_signature);
    tcase_add_test(tc, payload_read_only_after_the_signature);
    tcase_add_test(tc, plain_secret_is_hs256_only);
    tcase_add_test(tc, oct_jwk_with_hs512);
    tcase_add_test(tc, time_claims);
    tcase_add_test(tc, non_numeric_time_claims);
    tcase_add_test(tc, time_claims_read_as_postgrest_does);
    tcase_add_test(tc, audience);
    tcase_add_test(tc, claims_are_sorted_and_role_inserted);
    tcase_add_test(tc, claims_numbers_as_aeson_encodes_them);
    tcase_add_test(tc, role_claim_key_paths);
    tcase_add_test(tc, invalid_role_claim_key);
    tcase_add_test(tc, rs256_with_jwk);
    tcase_add_test(tc, rs256_with_jwks_and_kid);
    tcase_add_test(tc, es256_with_jwk);
    tcase_add_test(tc, unparsable_jwk_text_is_an_hmac_secret);
    tcase_add_test(tc, eddsa_with_okp_jwk);
    tcase_add_test(tc, www_authenticate_header);
    tcase_add_test(tc, deeply_nested_claims);
    tcase_add_test(tc, secret_is_jwk_as_parse_secret_decides);
    suite_add_tcase(s, tc);
    return check_run(s);
}
