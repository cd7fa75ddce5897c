/* The jwt-secret as keys (PostgREST Config.hs decodeSecret / parseSecret,
 * jose-jwt's Jwk and JwkSet parsers and its key selection): base64url,
 * a JWK Set, a JWK or an HMAC secret, and JWKs as OpenSSL public keys. */
#include "auth/jwt_internal.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>

/* Reads one JWK; false if jose-jwt's Jwk parser would refuse it (unknown
 * kty or use, a required member missing). */
static bool key_from_jwk(pgrest_arena *a, json_object *jwk, jwt_key *k)
{
    const char *kty = pgr_jwt_json_str(jwk, "kty");
    if (kty == NULL)
        return false;
    memset(k, 0, sizeof *k);
    k->alg = pgr_jwt_json_str(jwk, "alg");
    k->kid = pgr_jwt_json_str(jwk, "kid");
    k->use = pgr_jwt_json_str(jwk, "use");
    k->crv = pgr_jwt_json_str(jwk, "crv");
    k->jwk = jwk;
    if (k->use != NULL && strcmp(k->use, "sig") != 0 && strcmp(k->use, "enc") != 0)
        return false;
    if (strcmp(kty, "RSA") == 0) {
        k->kind = KEY_RSA;
        return pgr_jwt_json_str(jwk, "n") != NULL && pgr_jwt_json_str(jwk, "e") != NULL;
    }
    if (strcmp(kty, "EC") == 0) {
        k->kind = KEY_EC;
        return k->crv != NULL && pgr_jwt_json_str(jwk, "x") != NULL &&
               pgr_jwt_json_str(jwk, "y") != NULL;
    }
    if (strcmp(kty, "OKP") == 0) {
        k->kind = KEY_OKP;
        return k->crv != NULL && pgr_jwt_json_str(jwk, "x") != NULL;
    }
    if (strcmp(kty, "oct") == 0) {
        const char *ks = pgr_jwt_json_str(jwk, "k");
        k->kind = KEY_OCT;
        k->secret = ks == NULL ? NULL : pgr_jwt_b64_decode(a, ks, strlen(ks), &k->secret_len);
        return k->secret != NULL;
    }
    return false;
}

/* -1 out of memory, 0 read, 1 some key is not a JWK (so the text is no
 * JWK Set: a JwkSet parses all its keys or fails). */
static int keys_from_jwks(pgrest_arena *a, json_object *keys, jwt_keyset *ks)
{
    size_t n = json_object_array_length(keys);
    ks->keys = PGR_NEW_ARRAY(a, jwt_key, n + 1);
    if (ks->keys == NULL)
        return -1;
    for (size_t i = 0; i < n; i++) {
        json_object *jwk = json_object_array_get_idx(keys, i);
        if (!json_object_is_type(jwk, json_type_object) ||
            !key_from_jwk(a, jwk, &ks->keys[ks->n]))
            return 1;
        ks->n++;
    }
    return 0;
}

/* The secret as PostgREST's Config.parseSecret reads it: a JWK Set, a JWK,
 * or else (also when the JSON does not parse as either) an HMAC key pinned
 * to HS256. *is_jwk tells which. */
int pgr_jwt_load_keys(pgrest_arena *a, const unsigned char *bytes, size_t len,
                      jwt_keyset *ks, bool *is_jwk)
{
    memset(ks, 0, sizeof *ks);
    *is_jwk = true;
    size_t i = 0;
    while (i < len && is_space((char)bytes[i]))
        i++;
    json_object *obj = NULL;
    if (i < len && bytes[i] == '{')
        obj = pgr_jwt_parse_object(a, (const char *)bytes, len);
    json_object *keys;
    if (obj != NULL && json_object_object_get_ex(obj, "keys", &keys) &&
        json_object_is_type(keys, json_type_array)) {
        int rc = keys_from_jwks(a, keys, ks);
        if (rc <= 0)
            return rc;
    }
    ks->keys = PGR_NEW(a, jwt_key);
    if (ks->keys == NULL)
        return -1;
    ks->n = 1;
    if (obj != NULL && key_from_jwk(a, obj, &ks->keys[0]))
        return 0;
    *is_jwk = false;
    memset(&ks->keys[0], 0, sizeof ks->keys[0]);
    ks->keys[0].kind = KEY_OCT;
    ks->keys[0].alg = "HS256";
    ks->keys[0].secret = bytes;
    ks->keys[0].secret_len = len;
    return 0;
}

/* A fetched key set (jwt-jwks-uri): only the JWK Set form, never the
 * HMAC fallback of a jwt-secret, so a page of HTML is no key. */
int pgr_jwt_load_jwks(pgrest_arena *a, const char *text, size_t len, jwt_keyset *ks)
{
    memset(ks, 0, sizeof *ks);
    json_object *obj = pgr_jwt_parse_object(a, text, len);
    json_object *keys;
    if (obj == NULL)
        return pgr_arena_exhausted(a) ? -1 : 1;
    if (!json_object_object_get_ex(obj, "keys", &keys) ||
        !json_object_is_type(keys, json_type_array))
        return 1;
    return keys_from_jwks(a, keys, ks);
}

/* jose-jwt's canDecodeJws: not an encryption key, kid equal when the token
 * names one, alg compatible, key type and curve matching the algorithm. */
bool pgr_jwt_key_fits(const jwt_key *k, const alg_info *ai, const char *kid)
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
    const char *s = pgr_jwt_json_str(jwk, field);
    size_t len = 0;
    unsigned char *bytes = s == NULL ? NULL : pgr_jwt_b64_decode(a, s, strlen(s), &len);
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

/* Builds the OSSL_PARAM list for an RSA public key from n and e. */
static OSSL_PARAM *rsa_params(OSSL_PARAM_BLD *bld, const BIGNUM *n, const BIGNUM *e)
{
    if (bld == NULL || n == NULL || e == NULL ||
        OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) != 1 ||
        OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e) != 1)
        return NULL;
    return OSSL_PARAM_BLD_to_param(bld);
}

EVP_PKEY *pgr_jwt_rsa_pkey(pgrest_arena *a, json_object *jwk)
{
    BIGNUM *n = jwk_bignum(a, jwk, "n");
    BIGNUM *e = jwk_bignum(a, jwk, "e");
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = rsa_params(bld, n, e);
    EVP_PKEY *pkey = params == NULL ? NULL : pkey_fromdata("RSA", params);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_free(n);
    BN_free(e);
    return pkey;
}

/* OpenSSL group name and coordinate size of a JOSE curve. */
const char *pgr_jwt_ec_group(const char *crv, size_t *coord)
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
    const char *xs = pgr_jwt_json_str(jwk, "x");
    const char *ys = pgr_jwt_json_str(jwk, "y");
    size_t xl = 0, yl = 0;
    unsigned char *x = xs == NULL ? NULL : pgr_jwt_b64_decode(a, xs, strlen(xs), &xl);
    unsigned char *y = ys == NULL ? NULL : pgr_jwt_b64_decode(a, ys, strlen(ys), &yl);
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

EVP_PKEY *pgr_jwt_ec_pkey(pgrest_arena *a, json_object *jwk, const char *crv)
{
    size_t coord = 0, pt_len = 0;
    const char *group = pgr_jwt_ec_group(crv, &coord);
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
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    return pkey;
}

/* An Ed25519 or Ed448 public key from the JWK's x (RFC 8037). */
EVP_PKEY *pgr_jwt_okp_pkey(pgrest_arena *a, json_object *jwk, const char *crv)
{
    int type = strcmp(crv, "Ed25519") == 0 ? EVP_PKEY_ED25519
             : strcmp(crv, "Ed448") == 0   ? EVP_PKEY_ED448
                                           : EVP_PKEY_NONE;
    const char *xs = pgr_jwt_json_str(jwk, "x");
    size_t len = 0;
    unsigned char *x = xs == NULL ? NULL : pgr_jwt_b64_decode(a, xs, strlen(xs), &len);
    if (type == EVP_PKEY_NONE || x == NULL)
        return NULL;
    return EVP_PKEY_new_raw_public_key(type, NULL, x, len);
}

/* The jwt-secret bytes, base64-decoded when jwt-secret-is-base64. */
const unsigned char *pgr_jwt_secret_bytes(pgrest_arena *a, const pgr_config *cfg,
                                          size_t *len)
{
    const char *s = cfg->jwt_secret;
    if (!cfg->jwt_secret_is_base64) {
        *len = strlen(s);
        return (const unsigned char *)s;
    }
    /* Config.hs decodeSecret: stripped, '.' read as the '=' padding */
    while (is_space(*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && is_space(s[n - 1]))
        n--;
    char *text = pgr_strndup(a, s, n);
    if (text == NULL)
        return NULL;
    for (char *c = text; *c != '\0'; c++)
        if (*c == '.')
            *c = '=';
    return pgr_jwt_b64_decode(a, text, n, len);
}

bool pgr_jwt_secret_is_jwk(pgrest_arena *a, const unsigned char *bytes, size_t len)
{
    jwt_keyset ks;
    bool is_jwk = false;
    return pgr_jwt_load_keys(a, bytes, len, &ks, &is_jwk) == 0 && is_jwk;
}

int pgr_jwt_check_secret(pgrest_arena *a, const pgr_config *cfg, pgrest_error *err)
{
    if (cfg->jwt_secret == NULL)
        return PGREST_OK;
    size_t len = 0;
    const unsigned char *bytes = pgr_jwt_secret_bytes(a, cfg, &len);
    const char *problem = NULL;
    if (bytes == NULL)
        problem = pgr_arena_exhausted(a) ? NULL : "jwt-secret is not valid base64";
    else if (!pgr_jwt_secret_is_jwk(a, bytes, len) && len < 32)
        problem = "The JWT secret must be at least 32 characters long.";
    if (pgr_arena_exhausted(a))
        return pgr_error_oom(err);
    if (problem == NULL)
        return PGREST_OK;
    pgr_error(err, 0, NULL, problem, NULL, NULL);
    return PGREST_ERR_CONFIG;
}
