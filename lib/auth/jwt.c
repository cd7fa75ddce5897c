/* JWT verification (PostgREST Auth.hs / Auth/Jwt.hs, jose-jwt's key
 * selection in Jose/Jwk.hs). libjwt checks the signature, OpenSSL turns JWKs
 * into PEM public keys and decodes base64, json-c reads the JSON. */
#include "auth/jwt.h"
#include "auth/jwt_cache.h"

#include <jwt.h>
#include <json-c/json.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <limits.h>
#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "context.h"
#include "observe.h"
#include "util/error.h"
#include "util/strbuf.h"

/* PostgREST's allowedSkewSeconds (Auth.hs). */
#define JWT_SKEW_SECONDS 30

/* ------------------------------------------------------------ errors */

static int decode_error(pgrest_error *err, const char *message, const char *details)
{
    return pgr_error(err, 401, "PGRST301", message, details, NULL);
}

static int claims_error(pgrest_error *err, const char *message)
{
    return pgr_error(err, 401, "PGRST303", message, NULL, NULL);
}

static int crypto_error(pgrest_error *err)
{
    return decode_error(err, "JWT cryptographic operation failed", NULL);
}

/* jose-jwt's KeyError; PostgREST shows its text as details. */
static int key_error(pgrest_error *err, const char *details)
{
    return decode_error(err, "No suitable key or wrong key type", details);
}

static int bad_alg_error(pgrest_error *err, const char *details)
{
    return decode_error(err, "Wrong or unsupported encoding algorithm", details);
}

/* ------------------------------------------------------------ base64, JSON */

static bool b64_char_ok(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9') || c == '+' || c == '/' || c == '-' || c == '_';
}

/* Decodes base64 or base64url, padding optional, with OpenSSL's
 * EVP_DecodeBlock. Returns an arena buffer (NUL-terminated) or NULL. */
static unsigned char *b64_decode(pgrest_arena *a, const char *s, size_t n,
                                 size_t *out_len)
{
    while (n > 0 && s[n - 1] == '=')
        n--;
    if (n % 4 == 1 || n > INT32_MAX / 2)
        return NULL;
    size_t padded = (n + 3) / 4 * 4;
    unsigned char *in = pgr_alloc(a, padded + 1);
    unsigned char *out = pgr_alloc(a, padded / 4 * 3 + 1);
    if (in == NULL || out == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (!b64_char_ok(s[i]))
            return NULL;
        in[i] = (unsigned char)(s[i] == '-' ? '+' : s[i] == '_' ? '/' : s[i]);
    }
    for (size_t i = n; i < padded; i++)
        in[i] = '=';
    int r = EVP_DecodeBlock(out, in, (int)padded);
    if (r < 0)
        return NULL;
    *out_len = (size_t)r - (padded - n);
    out[*out_len] = '\0';
    return out;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* jansson's JSON_PARSER_MAX_DEPTH, which libjwt parses tokens with */
#define JWT_JSON_MAX_DEPTH 2048

static void json_put_cb(void *obj)
{
    json_object_put(obj);
}

/* Parses n bytes as one JSON object; the object is released with the
 * arena. NULL if the text is not exactly one JSON object. */
static json_object *parse_json_object(pgrest_arena *a, const char *s, size_t n)
{
    if (n > INT32_MAX)
        return NULL;
    /* aeson (PostgREST) reads claims at any depth; json-c's default is 32
     * levels. Deeper than jansson's 2048 libjwt has refused the token
     * already, so that bound takes nothing PostgREST would accept. */
    json_tokener *tok = json_tokener_new_ex(JWT_JSON_MAX_DEPTH + 1);
    if (tok == NULL)
        return NULL;
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *obj = json_tokener_parse_ex(tok, s, (int)n);
    bool ok = json_tokener_get_error(tok) == json_tokener_success;
    size_t end = ok ? json_tokener_get_parse_end(tok) : 0;
    json_tokener_free(tok);
    while (ok && end < n && is_space(s[end]))
        end++;
    ok = ok && end == n;
    if (!ok || !json_object_is_type(obj, json_type_object) ||
        !pgr_arena_on_free(a, json_put_cb, obj)) {
        json_object_put(obj);
        return NULL;
    }
    return obj;
}

/* The string member key of obj, or NULL. */
static const char *json_str(json_object *obj, const char *key)
{
    json_object *v;
    if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return json_object_get_string(v);
}

/* ------------------------------------------------------------ algorithms */

typedef enum key_kind { KEY_OCT, KEY_RSA, KEY_EC } key_kind;

typedef struct alg_info {
    const char *name;
    jwt_alg_t alg;
    key_kind kind;
    const char *crv;          /* EC curve the algorithm requires */
} alg_info;

static const alg_info ALGS[] = {
    {"HS256", JWT_ALG_HS256, KEY_OCT, NULL},
    {"HS384", JWT_ALG_HS384, KEY_OCT, NULL},
    {"HS512", JWT_ALG_HS512, KEY_OCT, NULL},
    {"RS256", JWT_ALG_RS256, KEY_RSA, NULL},
    {"RS384", JWT_ALG_RS384, KEY_RSA, NULL},
    {"RS512", JWT_ALG_RS512, KEY_RSA, NULL},
    {"ES256", JWT_ALG_ES256, KEY_EC, "P-256"},
    {"ES384", JWT_ALG_ES384, KEY_EC, "P-384"},
    {"ES512", JWT_ALG_ES512, KEY_EC, "P-521"},
};

static const alg_info *find_alg(const char *name)
{
    for (size_t i = 0; i < sizeof ALGS / sizeof ALGS[0]; i++)
        if (strcmp(ALGS[i].name, name) == 0)
            return &ALGS[i];
    return NULL;
}

/* ------------------------------------------------------------ keys */

typedef struct jwt_key {
    key_kind kind;
    const char *alg;          /* the JWK's "alg"; NULL = any of its family */
    const char *kid;
    const char *use;
    const char *crv;
    json_object *jwk;         /* RSA/EC: the JWK, turned into PEM on demand */
    const unsigned char *secret; /* oct: the HMAC key */
    size_t secret_len;
} jwt_key;

typedef struct jwt_keyset {
    jwt_key *keys;
    size_t n;
} jwt_keyset;

/* Reads one JWK; false if it is not a key we can use (skipped, as jose-jwt
 * would refuse it). */
static bool key_from_jwk(pgrest_arena *a, json_object *jwk, jwt_key *k)
{
    const char *kty = json_str(jwk, "kty");
    if (kty == NULL)
        return false;
    memset(k, 0, sizeof *k);
    k->alg = json_str(jwk, "alg");
    k->kid = json_str(jwk, "kid");
    k->use = json_str(jwk, "use");
    k->crv = json_str(jwk, "crv");
    k->jwk = jwk;
    if (strcmp(kty, "RSA") == 0) {
        k->kind = KEY_RSA;
        return true;
    }
    if (strcmp(kty, "EC") == 0) {
        k->kind = KEY_EC;
        return k->crv != NULL;
    }
    if (strcmp(kty, "oct") == 0) {
        const char *ks = json_str(jwk, "k");
        k->kind = KEY_OCT;
        k->secret = ks == NULL ? NULL : b64_decode(a, ks, strlen(ks), &k->secret_len);
        return k->secret != NULL;
    }
    return false;
}

static int keys_from_jwks(pgrest_arena *a, json_object *keys, jwt_keyset *ks)
{
    size_t n = json_object_array_length(keys);
    ks->keys = PGR_NEW_ARRAY(a, jwt_key, n + 1);
    if (ks->keys == NULL)
        return -1;
    for (size_t i = 0; i < n; i++) {
        json_object *jwk = json_object_array_get_idx(keys, i);
        if (json_object_is_type(jwk, json_type_object) &&
            key_from_jwk(a, jwk, &ks->keys[ks->n]))
            ks->n++;
    }
    return 0;
}

/* The secret as PostgREST's Config.parseSecret reads it: a JWK Set, a JWK,
 * or else an HMAC key pinned to HS256. */
static int load_keys(pgrest_arena *a, const unsigned char *bytes, size_t len,
                     jwt_keyset *ks)
{
    memset(ks, 0, sizeof *ks);
    size_t i = 0;
    while (i < len && is_space((char)bytes[i]))
        i++;
    json_object *obj = NULL;
    if (i < len && bytes[i] == '{')
        obj = parse_json_object(a, (const char *)bytes, len);
    json_object *keys;
    if (obj != NULL && json_object_object_get_ex(obj, "keys", &keys) &&
        json_object_is_type(keys, json_type_array))
        return keys_from_jwks(a, keys, ks);
    ks->keys = PGR_NEW(a, jwt_key);
    if (ks->keys == NULL)
        return -1;
    if (obj != NULL && json_str(obj, "kty") != NULL) {
        ks->n = key_from_jwk(a, obj, &ks->keys[0]) ? 1 : 0;
        return 0;
    }
    ks->keys[0].kind = KEY_OCT;
    ks->keys[0].alg = "HS256";
    ks->keys[0].secret = bytes;
    ks->keys[0].secret_len = len;
    ks->n = 1;
    return 0;
}

/* jose-jwt's canDecodeJws: not an encryption key, kid equal when the token
 * names one, alg compatible, key type and curve matching the algorithm. */
static bool key_fits(const jwt_key *k, const alg_info *ai, const char *kid)
{
    if (k->use != NULL && strcmp(k->use, "enc") == 0)
        return false;
    if (kid != NULL && (k->kid == NULL || strcmp(k->kid, kid) != 0))
        return false;
    if (k->alg != NULL && strcmp(k->alg, ai->name) != 0)
        return false;
    if (k->kind != ai->kind)
        return false;
    return ai->crv == NULL || (k->crv != NULL && strcmp(k->crv, ai->crv) == 0);
}

/* ------------------------------------------------------------ JWK -> PEM */

static BIGNUM *jwk_bignum(pgrest_arena *a, json_object *jwk, const char *field)
{
    const char *s = json_str(jwk, field);
    size_t len = 0;
    unsigned char *bytes = s == NULL ? NULL : b64_decode(a, s, strlen(s), &len);
    if (bytes == NULL || len == 0 || len > INT32_MAX)
        return NULL;
    return BN_bin2bn(bytes, (int)len, NULL);
}

static EVP_PKEY *pkey_fromdata(const char *type, OSSL_PARAM *params)
{
    EVP_PKEY *pkey = NULL;
    EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
    if (pctx != NULL && EVP_PKEY_fromdata_init(pctx) == 1 &&
        EVP_PKEY_fromdata(pctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) != 1)
        pkey = NULL;
    EVP_PKEY_CTX_free(pctx);
    return pkey;
}

static char *pkey_pem(pgrest_arena *a, EVP_PKEY *pkey, size_t *len)
{
    char *pem = NULL;
    BIO *bio = BIO_new(BIO_s_mem());
    if (bio != NULL && PEM_write_bio_PUBKEY(bio, pkey) == 1) {
        char *data = NULL;
        long n = BIO_get_mem_data(bio, &data);
        if (n > 0 && data != NULL) {
            pem = pgr_strndup(a, data, (size_t)n);
            *len = (size_t)n;
        }
    }
    BIO_free(bio);
    return pem;
}

/* Builds the OSSL_PARAM list for an RSA public key from n and e. */
static OSSL_PARAM *rsa_params(OSSL_PARAM_BLD *bld, const BIGNUM *n, const BIGNUM *e)
{
    if (bld == NULL || n == NULL || e == NULL ||
        OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) != 1 ||
        OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e) != 1)
        return NULL;
    return OSSL_PARAM_BLD_to_param(bld);
}

static char *rsa_pem(pgrest_arena *a, json_object *jwk, size_t *len)
{
    BIGNUM *n = jwk_bignum(a, jwk, "n");
    BIGNUM *e = jwk_bignum(a, jwk, "e");
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = rsa_params(bld, n, e);
    EVP_PKEY *pkey = params == NULL ? NULL : pkey_fromdata("RSA", params);
    char *pem = pkey == NULL ? NULL : pkey_pem(a, pkey, len);
    EVP_PKEY_free(pkey);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_free(n);
    BN_free(e);
    return pem;
}

/* OpenSSL group name and coordinate size of a JOSE curve. */
static const char *ec_group(const char *crv, size_t *coord)
{
    if (strcmp(crv, "P-256") == 0) {
        *coord = 32;
        return "prime256v1";
    }
    if (strcmp(crv, "P-384") == 0) {
        *coord = 48;
        return "secp384r1";
    }
    if (strcmp(crv, "P-521") == 0) {
        *coord = 66;
        return "secp521r1";
    }
    return NULL;
}

/* The uncompressed point 04 || x || y. */
static unsigned char *ec_point(pgrest_arena *a, json_object *jwk, size_t coord,
                               size_t *len)
{
    const char *xs = json_str(jwk, "x");
    const char *ys = json_str(jwk, "y");
    size_t xl = 0, yl = 0;
    unsigned char *x = xs == NULL ? NULL : b64_decode(a, xs, strlen(xs), &xl);
    unsigned char *y = ys == NULL ? NULL : b64_decode(a, ys, strlen(ys), &yl);
    if (x == NULL || y == NULL || xl != coord || yl != coord)
        return NULL;
    unsigned char *pt = pgr_alloc(a, 1 + 2 * coord);
    if (pt == NULL)
        return NULL;
    pt[0] = 0x04;
    memcpy(pt + 1, x, coord);
    memcpy(pt + 1 + coord, y, coord);
    *len = 1 + 2 * coord;
    return pt;
}

static char *ec_pem(pgrest_arena *a, json_object *jwk, const char *crv, size_t *len)
{
    size_t coord = 0, pt_len = 0;
    const char *group = ec_group(crv, &coord);
    unsigned char *pt = group == NULL ? NULL : ec_point(a, jwk, coord, &pt_len);
    if (pt == NULL)
        return NULL;
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    if (bld != NULL &&
        OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, group, 0) == 1 &&
        OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pt, pt_len) == 1)
        params = OSSL_PARAM_BLD_to_param(bld);
    EVP_PKEY *pkey = params == NULL ? NULL : pkey_fromdata("EC", params);
    char *pem = pkey == NULL ? NULL : pkey_pem(a, pkey, len);
    EVP_PKEY_free(pkey);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    return pem;
}

/* The bytes libjwt wants for k: the HMAC secret or a PEM public key. */
static const unsigned char *key_material(pgrest_arena *a, const jwt_key *k, size_t *len)
{
    switch (k->kind) {
    case KEY_OCT:
        *len = k->secret_len;
        return k->secret;
    case KEY_RSA:
        return (const unsigned char *)rsa_pem(a, k->jwk, len);
    case KEY_EC:
        return (const unsigned char *)ec_pem(a, k->jwk, k->crv, len);
    }
    return NULL;
}

/* libjwt verifies the signature with the algorithm named in the header; the
 * caller has already checked that the key belongs to that algorithm, so an
 * RSA public key can never be used as an HMAC secret. */
static bool verify_with(pgrest_arena *a, const jwt_key *k, const alg_info *ai,
                        const char *token)
{
    size_t len = 0;
    const unsigned char *material = key_material(a, k, &len);
    if (material == NULL || len == 0 || len > INT32_MAX)
        return false;
    jwt_t *jwt = NULL;
    int rc = jwt_decode(&jwt, token, material, (int)len);
    bool ok = rc == 0 && jwt != NULL && jwt_get_alg(jwt) == ai->alg;
    if (jwt != NULL)
        jwt_free(jwt);
    return ok;
}

/* ------------------------------------------------------------ token */

typedef struct jwt_parts {
    const char *header;
    size_t header_len;
    const char *payload;
    size_t payload_len;
} jwt_parts;

/* PostgREST's splitToken: exactly three dot-separated parts. */
static int split_token(pgrest_arena *a, const char *token, jwt_parts *p,
                       pgrest_error *err)
{
    int parts = 1;
    for (const char *c = token; *c != '\0'; c++)
        if (*c == '.')
            parts++;
    if (parts != 3)
        return pgr_errorf(err, a, 401, "PGRST301", NULL, NULL,
                          "Expected 3 parts in JWT; got %d", parts);
    const char *d1 = strchr(token, '.');
    const char *d2 = strchr(d1 + 1, '.');
    p->header = token;
    p->header_len = (size_t)(d1 - token);
    p->payload = d1 + 1;
    p->payload_len = (size_t)(d2 - (d1 + 1));
    return PGREST_OK;
}

static json_object *decode_segment(pgrest_arena *a, const char *s, size_t n)
{
    size_t len = 0;
    unsigned char *bytes = b64_decode(a, s, n, &len);
    return bytes == NULL ? NULL : parse_json_object(a, (const char *)bytes, len);
}

/* The header's algorithm; alg "none" and unknown algorithms are refused
 * before any key is looked at (jose-jwt's BadAlgorithm). */
static int header_alg(json_object *header, const alg_info **ai, pgrest_error *err)
{
    const char *alg = json_str(header, "alg");
    if (alg == NULL)
        return crypto_error(err);
    if (strcmp(alg, "none") == 0)
        return bad_alg_error(err, "JWT is unsecured but expected 'alg' was not 'none'");
    *ai = find_alg(alg);
    if (*ai == NULL)
        return bad_alg_error(err, NULL);
    return PGREST_OK;
}

/* The jwt-secret bytes, base64-decoded when jwt-secret-is-base64. */
static const unsigned char *secret_bytes(pgrest_arena *a, const pgr_config *cfg,
                                         size_t *len)
{
    const char *s = cfg->jwt_secret;
    if (!cfg->jwt_secret_is_base64) {
        *len = strlen(s);
        return (const unsigned char *)s;
    }
    size_t n = strlen(s);
    while (n > 0 && is_space(s[n - 1]))
        n--;
    return b64_decode(a, s, n, len);
}

static int verify_token(const pgr_config *cfg, pgrest_arena *a, const char *token,
                        json_object *header, pgrest_error *err)
{
    const alg_info *ai = NULL;
    int rc = header_alg(header, &ai, err);
    if (rc != PGREST_OK)
        return rc;
    size_t secret_len = 0;
    const unsigned char *secret = secret_bytes(a, cfg, &secret_len);
    if (secret == NULL)
        return pgr_error(err, 500, "PGRST300", "Server lacks JWT secret",
                         "jwt-secret is not valid base64", NULL);
    jwt_keyset ks;
    if (load_keys(a, secret, secret_len, &ks) != 0)
        return pgr_error_oom(err);
    const char *kid = json_str(header, "kid");
    bool any = false;
    for (size_t i = 0; i < ks.n; i++) {
        if (!key_fits(&ks.keys[i], ai, kid))
            continue;
        any = true;
        if (verify_with(a, &ks.keys[i], ai, token))
            return PGREST_OK;
    }
    if (pgr_arena_exhausted(a))
        return pgr_error_oom(err);
    return key_error(err, any ? "None of the keys was able to decode the JWT"
                              : "No suitable key was found to decode the JWT");
}

/* ------------------------------------------------------------ claims */

/* PostgREST reads a time claim with Scientific's toBoundedInteger and
 * falls back to 0: a fraction or a value outside Int64 counts as the epoch
 * (so such an exp has expired, such an nbf or iat is in the past). */
static int64_t claim_seconds(json_object *v)
{
    if (json_object_is_type(v, json_type_int)) {
        int64_t n = json_object_get_int64(v);
        if (n == INT64_MAX && json_object_get_uint64(v) > (uint64_t)INT64_MAX)
            return 0;
        return n;
    }
    double d = json_object_get_double(v);
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != (double)(int64_t)d)
        return 0;
    return (int64_t)d;
}

/* A time claim (Jwt.hs checkForErrors, `.:?`): absent or null is fine,
 * other non-numbers are refused. */
static int time_claim(pgrest_arena *a, json_object *claims, const char *name,
                      bool *present, double *value, pgrest_error *err)
{
    json_object *v = NULL;
    *present = json_object_object_get_ex(claims, name, &v) && v != NULL;
    if (!*present)
        return PGREST_OK;
    if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
        return pgr_errorf(err, a, 401, "PGRST303", NULL, NULL,
                          "The JWT '%s' claim must be a number", name);
    *value = (double)claim_seconds(v);
    return PGREST_OK;
}

static int check_times(pgrest_arena *a, json_object *claims, double now,
                       pgrest_error *err)
{
    bool present;
    double t = 0;
    int rc = time_claim(a, claims, "exp", &present, &t, err);
    if (rc != PGREST_OK)
        return rc;
    if (present && now > t + JWT_SKEW_SECONDS)
        return claims_error(err, "JWT expired");
    rc = time_claim(a, claims, "nbf", &present, &t, err);
    if (rc != PGREST_OK)
        return rc;
    if (present && now < t - JWT_SKEW_SECONDS)
        return claims_error(err, "JWT not yet valid");
    rc = time_claim(a, claims, "iat", &present, &t, err);
    if (rc != PGREST_OK)
        return rc;
    if (present && now < t - JWT_SKEW_SECONDS)
        return claims_error(err, "JWT issued at future");
    return PGREST_OK;
}

static int aud_type_error(pgrest_error *err)
{
    return claims_error(err, "The JWT 'aud' claim must be a string or an array of strings");
}

/* aud (Auth.hs): absent, null or [] is accepted; a string or an array of
 * strings must contain jwt-aud when it is set; other types are refused
 * whether or not jwt-aud is set. */
static int check_aud(json_object *claims, const char *want, pgrest_error *err)
{
    json_object *aud = NULL;
    if (!json_object_object_get_ex(claims, "aud", &aud) || aud == NULL)
        return PGREST_OK;
    if (json_object_is_type(aud, json_type_string)) {
        if (want != NULL && strcmp(json_object_get_string(aud), want) != 0)
            return claims_error(err, "JWT not in audience");
        return PGREST_OK;
    }
    if (!json_object_is_type(aud, json_type_array))
        return aud_type_error(err);
    size_t n = json_object_array_length(aud);
    bool found = false;
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(aud, i);
        if (!json_object_is_type(e, json_type_string))
            return aud_type_error(err);
        if (want != NULL && strcmp(json_object_get_string(e), want) == 0)
            found = true;
    }
    if (n > 0 && want != NULL && !found)
        return claims_error(err, "JWT not in audience");
    return PGREST_OK;
}

/* ------------------------------------------------------------ JSPath */

typedef enum jsp_kind { JSP_KEY, JSP_INDEX, JSP_WILDCARD, JSP_FILTER } jsp_kind;

typedef enum jsp_op {
    JSP_EQ, JSP_NE, JSP_PREFIX, JSP_SUFFIX, JSP_CONTAINS, JSP_SEARCH, JSP_MATCH
} jsp_op;

typedef struct jsp_seg {
    jsp_kind kind;
    const char *key;
    long long index;
    jsp_op op;
    const char *lit;
    regex_t *re;              /* search / match */
    struct jsp_seg *next;
} jsp_seg;

typedef struct jsp_parser {
    pgrest_arena *a;
    const char *p;
    bool failed;
} jsp_parser;

static void jsp_ws(jsp_parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t')
        ps->p++;
}

static bool jsp_accept(jsp_parser *ps, const char *tok)
{
    size_t n = strlen(tok);
    if (strncmp(ps->p, tok, n) != 0)
        return false;
    ps->p += n;
    return true;
}

static char jsp_unescape(char c)
{
    switch (c) {
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    default: return c;
    }
}

/* A '...' or "..." literal with backslash escapes. */
static const char *jsp_quoted(jsp_parser *ps)
{
    char q = *ps->p;
    if (q != '"' && q != '\'')
        return NULL;
    ps->p++;
    pgr_sb sb;
    pgr_sb_init(&sb, ps->a, 16);
    while (*ps->p != '\0' && *ps->p != q) {
        if (*ps->p == '\\' && ps->p[1] != '\0') {
            ps->p++;
            pgr_sb_putc(&sb, jsp_unescape(*ps->p));
        } else {
            pgr_sb_putc(&sb, *ps->p);
        }
        ps->p++;
    }
    if (*ps->p != q)
        return NULL;
    ps->p++;
    return pgr_sb_finish(&sb);
}

static bool jsp_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '$' || c == '@' || c == '-' || (unsigned char)c >= 0x80;
}

/* .name or ."quoted name" (legacy) / .name (RFC 9535 shorthand) */
static const char *jsp_name(jsp_parser *ps)
{
    if (*ps->p == '"')
        return jsp_quoted(ps);
    const char *start = ps->p;
    while (jsp_name_char(*ps->p))
        ps->p++;
    return ps->p == start ? NULL : pgr_strndup(ps->a, start, (size_t)(ps->p - start));
}

static bool jsp_index(jsp_parser *ps, long long *out)
{
    bool neg = *ps->p == '-';
    if (neg)
        ps->p++;
    if (*ps->p < '0' || *ps->p > '9')
        return false;
    long long v = 0;
    while (*ps->p >= '0' && *ps->p <= '9') {
        if (v > (LLONG_MAX - 9) / 10)
            return false;
        v = v * 10 + (*ps->p - '0');
        ps->p++;
    }
    *out = neg ? -v : v;
    return true;
}

static void regex_free_cb(void *re)
{
    regfree(re);
}

/* search() finds the pattern anywhere, match() the whole string (RFC 9535
 * I-Regexp, approximated by POSIX ERE). */
static regex_t *jsp_regex(pgrest_arena *a, const char *pattern, bool whole)
{
    regex_t *re = PGR_NEW(a, regex_t);
    const char *src = whole ? pgr_asprintf(a, "^(%s)$", pattern) : pattern;
    if (re == NULL || src == NULL || regcomp(re, src, REG_EXTENDED | REG_NOSUB) != 0)
        return NULL;
    if (!pgr_arena_on_free(a, regex_free_cb, re)) {
        regfree(re);
        return NULL;
    }
    return re;
}

/* search(@, 're') / match(@, 're') */
static bool jsp_function(jsp_parser *ps, jsp_seg *s)
{
    bool search = jsp_accept(ps, "search(");
    if (!search && !jsp_accept(ps, "match("))
        return false;
    jsp_ws(ps);
    if (!jsp_accept(ps, "@"))
        return false;
    jsp_ws(ps);
    if (!jsp_accept(ps, ","))
        return false;
    jsp_ws(ps);
    s->lit = jsp_quoted(ps);
    jsp_ws(ps);
    if (s->lit == NULL || !jsp_accept(ps, ")"))
        return false;
    s->op = search ? JSP_SEARCH : JSP_MATCH;
    s->re = jsp_regex(ps->a, s->lit, !search);
    return s->re != NULL;
}

/* @ == 'x' and the legacy ^== (starts with), ==^ (ends with), *== (contains) */
static bool jsp_comparison(jsp_parser *ps, jsp_seg *s)
{
    static const struct { const char *tok; jsp_op op; } ops[] = {
        {"^==", JSP_PREFIX}, {"==^", JSP_SUFFIX}, {"*==", JSP_CONTAINS},
        {"==", JSP_EQ}, {"!=", JSP_NE},
    };
    if (!jsp_accept(ps, "@"))
        return false;
    jsp_ws(ps);
    size_t i = 0;
    while (i < sizeof ops / sizeof ops[0] && !jsp_accept(ps, ops[i].tok))
        i++;
    if (i == sizeof ops / sizeof ops[0])
        return false;
    s->op = ops[i].op;
    jsp_ws(ps);
    s->lit = jsp_quoted(ps);
    return s->lit != NULL;
}

/* ?(@ op 'x') or ?@ op 'x' or ?search(@, 're'), after the '[' */
static bool jsp_filter(jsp_parser *ps, jsp_seg *s)
{
    s->kind = JSP_FILTER;
    jsp_ws(ps);
    bool paren = jsp_accept(ps, "(");
    jsp_ws(ps);
    bool ok = *ps->p == '@' ? jsp_comparison(ps, s) : jsp_function(ps, s);
    jsp_ws(ps);
    return ok && (!paren || jsp_accept(ps, ")"));
}

/* [n], ['name'], ["name"], [*], [?...] */
static bool jsp_bracket(jsp_parser *ps, jsp_seg *s)
{
    jsp_ws(ps);
    bool ok;
    if (jsp_accept(ps, "?")) {
        ok = jsp_filter(ps, s);
    } else if (jsp_accept(ps, "*")) {
        s->kind = JSP_WILDCARD;
        ok = true;
    } else if (*ps->p == '"' || *ps->p == '\'') {
        s->kind = JSP_KEY;
        s->key = jsp_quoted(ps);
        ok = s->key != NULL;
    } else {
        s->kind = JSP_INDEX;
        ok = jsp_index(ps, &s->index);
    }
    jsp_ws(ps);
    return ok && jsp_accept(ps, "]");
}

static jsp_seg *jsp_segment(jsp_parser *ps)
{
    jsp_seg *s = PGR_NEW(ps->a, jsp_seg);
    if (s == NULL)
        return NULL;
    bool ok;
    if (jsp_accept(ps, ".")) {
        if (jsp_accept(ps, "*")) {
            s->kind = JSP_WILDCARD;
            ok = true;
        } else {
            s->kind = JSP_KEY;
            s->key = jsp_name(ps);
            ok = s->key != NULL;
        }
    } else if (jsp_accept(ps, "[")) {
        ok = jsp_bracket(ps, s);
    } else {
        ok = false;
    }
    return ok ? s : NULL;
}

/* Parses a role claim key: RFC 9535 when it starts with '$', PostgREST's
 * legacy JSPath (Config/JSPath.hs) when it starts with '.' or '['. */
static jsp_seg *jsp_parse(pgrest_arena *a, const char *path, bool *ok)
{
    jsp_parser ps = {a, path, false};
    if (*ps.p == '$')
        ps.p++;
    else if (*ps.p != '.' && *ps.p != '[')
        ps.failed = true;
    jsp_seg *head = NULL;
    jsp_seg **tail = &head;
    while (!ps.failed && *ps.p != '\0') {
        jsp_seg *s = jsp_segment(&ps);
        if (s == NULL) {
            ps.failed = true;
            break;
        }
        *tail = s;
        tail = &s->next;
    }
    *ok = !ps.failed;
    return head;
}

static bool jsp_match(const jsp_seg *s, json_object *v)
{
    if (!json_object_is_type(v, json_type_string))
        return false;
    const char *str = json_object_get_string(v);
    size_t n = (size_t)json_object_get_string_len(v);
    size_t m = strlen(s->lit);
    switch (s->op) {
    case JSP_EQ: return strcmp(str, s->lit) == 0;
    case JSP_NE: return strcmp(str, s->lit) != 0;
    case JSP_PREFIX: return strncmp(str, s->lit, m) == 0;
    case JSP_SUFFIX: return n >= m && memcmp(str + n - m, s->lit, m) == 0;
    case JSP_CONTAINS: return strstr(str, s->lit) != NULL;
    case JSP_SEARCH:
    case JSP_MATCH: return regexec(s->re, str, 0, NULL, 0) == 0;
    }
    return false;
}

static bool jsp_eval(json_object *node, const jsp_seg *s, json_object **out);

/* Children of an array or object, in document order, that the segment
 * selects; the first one the rest of the path resolves wins. */
static bool jsp_eval_children(json_object *node, const jsp_seg *s, json_object **out)
{
    if (json_object_is_type(node, json_type_array)) {
        size_t n = json_object_array_length(node);
        for (size_t i = 0; i < n; i++) {
            json_object *c = json_object_array_get_idx(node, i);
            if ((s->kind == JSP_WILDCARD || jsp_match(s, c)) && jsp_eval(c, s->next, out))
                return true;
        }
        return false;
    }
    if (!json_object_is_type(node, json_type_object))
        return false;
    json_object_object_foreach(node, key, c) {
        (void)key;
        if ((s->kind == JSP_WILDCARD || jsp_match(s, c)) && jsp_eval(c, s->next, out))
            return true;
    }
    return false;
}

static bool jsp_eval(json_object *node, const jsp_seg *s, json_object **out)
{
    if (s == NULL) {
        *out = node;
        return true;
    }
    json_object *child = NULL;
    switch (s->kind) {
    case JSP_KEY:
        return json_object_is_type(node, json_type_object) &&
               json_object_object_get_ex(node, s->key, &child) &&
               jsp_eval(child, s->next, out);
    case JSP_INDEX: {
        if (!json_object_is_type(node, json_type_array))
            return false;
        long long n = (long long)json_object_array_length(node);
        long long i = s->index < 0 ? n + s->index : s->index;
        return i >= 0 && i < n &&
               jsp_eval(json_object_array_get_idx(node, (size_t)i), s->next, out);
    }
    case JSP_WILDCARD:
    case JSP_FILTER:
        return jsp_eval_children(node, s, out);
    }
    return false;
}

int pgr_jwt_check_role_claim_key(pgrest_arena *a, const char *path,
                                 pgrest_error *err)
{
    bool ok = false;
    jsp_parse(a, path, &ok);
    if (ok)
        return PGREST_OK;
    if (pgr_arena_exhausted(a))
        return pgr_error_oom(err);
    /* a configuration error (validated when the configuration is built) */
    pgr_errorf(err, a, 0, NULL, NULL, NULL, "Invalid jwt-role-claim-key: %s", path);
    return PGREST_ERR_CONFIG;
}

/* A JWK Set or a JWK, as load_keys reads them. */
static bool is_jwk_text(pgrest_arena *a, const unsigned char *bytes, size_t len)
{
    size_t i = 0;
    while (i < len && is_space((char)bytes[i]))
        i++;
    if (i == len || bytes[i] != '{')
        return false;
    json_object *obj = parse_json_object(a, (const char *)bytes, len);
    json_object *keys;
    if (obj == NULL)
        return false;
    if (json_object_object_get_ex(obj, "keys", &keys))
        return json_object_is_type(keys, json_type_array);
    return json_str(obj, "kty") != NULL;
}

int pgr_jwt_check_secret(pgrest_arena *a, const pgr_config *cfg, pgrest_error *err)
{
    if (cfg->jwt_secret == NULL)
        return PGREST_OK;
    size_t len = 0;
    const unsigned char *bytes = secret_bytes(a, cfg, &len);
    const char *problem = NULL;
    if (bytes == NULL)
        problem = pgr_arena_exhausted(a) ? NULL : "jwt-secret is not valid base64";
    else if (!is_jwk_text(a, bytes, len) && len < 32)
        problem = "The JWT secret must be at least 32 characters long.";
    if (pgr_arena_exhausted(a))
        return pgr_error_oom(err);
    if (problem == NULL)
        return PGREST_OK;
    pgr_error(err, 0, NULL, problem, NULL, NULL);
    return PGREST_ERR_CONFIG;
}

/* The role at jwt-role-claim-key: a string as is, other JSON encoded
 * (PostgREST's `unquoted`); NULL when the path selects nothing. */
static int claims_role(pgrest_arena *a, const char *path, json_object *claims,
                       const char **role, pgrest_error *err)
{
    bool ok = false;
    jsp_seg *segs = jsp_parse(a, path, &ok);
    if (!ok && pgr_arena_exhausted(a))
        return pgr_error_oom(err);
    if (!ok) /* a configuration refuses it; a hand-made pgr_config may not */
        return pgr_errorf(err, a, 500, PGR_CODE_INTERNAL, NULL, NULL,
                          "Invalid jwt-role-claim-key: %s", path);
    json_object *v = NULL;
    *role = NULL;
    if (!jsp_eval(claims, segs, &v) || v == NULL)
        return PGREST_OK;
    if (json_object_is_type(v, json_type_string))
        *role = pgr_strndup(a, json_object_get_string(v), (size_t)json_object_get_string_len(v));
    else
        *role = pgr_strdup(a, json_object_to_json_string_ext(
                                  v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    return *role == NULL ? pgr_error_oom(err) : PGREST_OK;
}

/* ------------------------------------------------------------ claims JSON */

static int key_cmp(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static void put_json(pgr_sb *sb, json_object *v);

/* Objects with keys sorted, as Aeson encodes its KeyMap. */
static void put_json_object(pgr_sb *sb, json_object *obj)
{
    size_t n = (size_t)json_object_object_length(obj);
    const char **keys = PGR_NEW_ARRAY(sb->arena, const char *, n + 1);
    if (keys == NULL) {
        sb->failed = true;
        return;
    }
    size_t i = 0;
    json_object_object_foreach(obj, key, val) {
        (void)val;
        keys[i++] = key;
    }
    qsort(keys, n, sizeof keys[0], key_cmp);
    pgr_sb_putc(sb, '{');
    for (i = 0; i < n; i++) {
        if (i > 0)
            pgr_sb_putc(sb, ',');
        pgr_sb_put_json_string(sb, keys[i]);
        pgr_sb_putc(sb, ':');
        put_json(sb, json_object_object_get(obj, keys[i]));
    }
    pgr_sb_putc(sb, '}');
}

static void put_json(pgr_sb *sb, json_object *v)
{
    if (json_object_is_type(v, json_type_object)) {
        put_json_object(sb, v);
    } else if (json_object_is_type(v, json_type_array)) {
        size_t n = json_object_array_length(v);
        pgr_sb_putc(sb, '[');
        for (size_t i = 0; i < n; i++) {
            if (i > 0)
                pgr_sb_putc(sb, ',');
            put_json(sb, json_object_array_get_idx(v, i));
        }
        pgr_sb_putc(sb, ']');
    } else if (json_object_is_type(v, json_type_string)) {
        pgr_sb_put_json_stringn(sb, json_object_get_string(v),
                                (size_t)json_object_get_string_len(v));
    } else {
        pgr_sb_puts(sb, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
    }
}

/* The claims with "role" set to the resolved role (Auth.hs parseClaims). */
static const char *claims_text(pgrest_arena *a, json_object *claims, const char *role)
{
    json_object *r = json_object_new_string(role);
    if (r == NULL || json_object_object_add(claims, "role", r) != 0)
        return NULL;
    pgr_sb sb;
    pgr_sb_init(&sb, a, 256);
    put_json(&sb, claims);
    return pgr_sb_finish(&sb);
}

/* ------------------------------------------------------------ entry points */

static int check_claims(const pgr_config *cfg, pgrest_arena *a, json_object *claims,
                        pgrest_api_request *api, pgrest_error *err)
{
    int rc = check_times(a, claims, (double)time(NULL), err);
    if (rc == PGREST_OK)
        rc = check_aud(claims, cfg->jwt_aud, err);
    const char *role = NULL;
    if (rc == PGREST_OK)
        rc = claims_role(a, cfg->jwt_role_claim_key, claims, &role, err);
    if (rc != PGREST_OK)
        return rc;
    if (role == NULL)
        role = cfg->db_anon_role;
    if (role == NULL)
        return pgr_error(err, 401, "PGRST302", "Anonymous access is disabled", NULL, NULL);
    const char *text = claims_text(a, claims, role);
    if (text == NULL)
        return pgr_error_oom(err);
    api->role = role;
    api->jwt_claims = text;
    api->authenticated = cfg->db_anon_role == NULL || strcmp(role, cfg->db_anon_role) != 0;
    return PGREST_OK;
}

/* Cached until the token's exp (PostgREST JwtCache: entries live as long
 * as the token); a token without exp stays until evicted. */
static void remember(pgrest_ctx *ctx, const pgr_config *cfg, const char *token,
                     json_object *claims, const pgrest_api_request *api)
{
    json_object *exp;
    time_t expires = 0;
    if (json_object_object_get_ex(claims, "exp", &exp) &&
        (json_object_is_type(exp, json_type_int) || json_object_is_type(exp, json_type_double)))
        expires = (time_t)json_object_get_int64(exp);
    pgr_jwt_auth auth = {api->role, api->jwt_claims, api->authenticated};
    if (pgr_jwt_cache_put(cfg->jwt_cache, token, &auth, expires) && ctx != NULL) {
        atomic_fetch_add(&ctx->metrics.jwt_cache_evictions, 1);
        pgr_observe(ctx, PGREST_EVENT_JWT_CACHE_EVICTION, "Evicted entry from JWT cache");
    }
}

/* PostgREST JwtCacheLookup: counted (and observed) when the cache is on. */
static bool cached_auth(pgrest_ctx *ctx, const pgr_config *cfg, const char *token,
                        pgrest_arena *a, pgr_jwt_auth *out)
{
    if (cfg->jwt_cache == NULL)
        return false;
    bool hit = pgr_jwt_cache_get(cfg->jwt_cache, token, time(NULL), a, out);
    if (ctx != NULL) {
        atomic_fetch_add(&ctx->metrics.jwt_cache_requests, 1);
        if (hit)
            atomic_fetch_add(&ctx->metrics.jwt_cache_hits, 1);
        pgr_observe(ctx, PGREST_EVENT_JWT_CACHE_LOOKUP, "Looked up a JWT in JWT cache");
    }
    return hit;
}

int pgr_jwt_authenticate(pgrest_ctx *ctx, const pgr_config *cfg, pgrest_arena *a,
                         const char *token, pgrest_api_request *api, pgrest_error *err)
{
    if (token == NULL || *token == '\0')
        return decode_error(err, "Empty JWT is sent in Authorization header", NULL);
    if (cfg->jwt_secret == NULL)
        return pgr_error(err, 500, "PGRST300", "Server lacks JWT secret", NULL, NULL);
    pgr_jwt_auth cached;
    if (cached_auth(ctx, cfg, token, a, &cached)) {
        api->role = cached.role;
        api->jwt_claims = cached.claims;
        api->authenticated = cached.authenticated;
        return PGREST_OK;
    }
    jwt_parts parts = {NULL, 0, NULL, 0};
    int rc = split_token(a, token, &parts, err);
    if (rc != PGREST_OK)
        return rc;
    json_object *header = decode_segment(a, parts.header, parts.header_len);
    if (header == NULL)
        return pgr_arena_exhausted(a) ? pgr_error_oom(err) : crypto_error(err);
    rc = verify_token(cfg, a, token, header, err);
    if (rc != PGREST_OK)
        return rc;
    json_object *claims = decode_segment(a, parts.payload, parts.payload_len);
    if (claims == NULL)
        return pgr_arena_exhausted(a) ? pgr_error_oom(err)
                                      : claims_error(err, "Parsing claims failed");
    rc = check_claims(cfg, a, claims, api, err);
    if (rc == PGREST_OK)
        remember(ctx, cfg, token, claims, api);
    return rc;
}

/* Error.hs invalidTokenHeader: the message as Haskell's `show` quotes it. */
const char *pgr_jwt_www_authenticate(pgrest_arena *a, const pgrest_error *err)
{
    if (err == NULL || err->http_status != 401)
        return NULL;
    if (err->code == NULL || (strcmp(err->code, "PGRST301") != 0 &&
                              strcmp(err->code, "PGRST303") != 0))
        return "Bearer";
    pgr_sb sb;
    pgr_sb_init(&sb, a, 96);
    pgr_sb_puts(&sb, "Bearer error=\"invalid_token\", error_description=\"");
    for (const char *p = err->message ? err->message : ""; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\')
            pgr_sb_putc(&sb, '\\');
        pgr_sb_putc(&sb, *p);
    }
    pgr_sb_putc(&sb, '"');
    return pgr_sb_finish(&sb);
}
