/* The token's signature (jose-jwt's decode as PostgREST's Auth/Jwt.hs
 * calls it): three parts, the header's algorithm, then the first key that
 * fits and verifies the signature over the first two parts; the payload
 * is not parsed until the signature holds. */
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

static const alg_info ALGS[] = {
    {"HS256", EVP_sha256, KEY_OCT, NULL},
    {"HS384", EVP_sha384, KEY_OCT, NULL},
    {"HS512", EVP_sha512, KEY_OCT, NULL},
    {"RS256", EVP_sha256, KEY_RSA, NULL},
    {"RS384", EVP_sha384, KEY_RSA, NULL},
    {"RS512", EVP_sha512, KEY_RSA, NULL},
    {"ES256", EVP_sha256, KEY_EC, "P-256"},
    {"ES384", EVP_sha384, KEY_EC, "P-384"},
    {"ES512", EVP_sha512, KEY_EC, "P-521"},
    {"EdDSA", NULL, KEY_OKP, NULL},
};

const alg_info *pgr_jwt_find_alg(const char *name)
{
    for (size_t i = 0; i < sizeof ALGS / sizeof ALGS[0]; i++)
        if (strcmp(ALGS[i].name, name) == 0)
            return &ALGS[i];
    return NULL;
}

/* PostgREST's splitToken: exactly three dot-separated parts. */
int pgr_jwt_split_token(pgrest_arena *a, const char *token, jwt_parts *p,
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
    p->signature = d2 + 1;
    p->signature_len = strlen(d2 + 1);
    return PGREST_OK;
}

json_object *pgr_jwt_decode_segment(pgrest_arena *a, const char *s, size_t n)
{
    size_t len = 0;
    unsigned char *bytes = pgr_jwt_b64_decode(a, s, n, &len);
    return bytes == NULL ? NULL : pgr_jwt_parse_object(a, (const char *)bytes, len);
}

/* The header's algorithm; alg "none" and unknown algorithms are refused
 * before any key is looked at (jose-jwt's BadAlgorithm). */
static int header_alg(json_object *header, const alg_info **ai, pgrest_error *err)
{
    const char *alg = pgr_jwt_json_str(header, "alg");
    if (alg == NULL)
        return crypto_error(err);
    if (strcmp(alg, "none") == 0)
        return bad_alg_error(err, "JWT is unsecured but expected 'alg' was not 'none'");
    *ai = pgr_jwt_find_alg(alg);
    if (*ai == NULL)
        return bad_alg_error(err, NULL);
    return PGREST_OK;
}

/* HMAC over the signing input, compared in constant time. */
static bool hmac_ok(const jwt_key *k, const alg_info *ai, const char *input,
                    size_t input_len, const unsigned char *sig, size_t sig_len)
{
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    if (k->secret_len > INT32_MAX ||
        HMAC(ai->md(), k->secret, (int)k->secret_len, (const unsigned char *)input,
             input_len, mac, &mac_len) == NULL)
        return false;
    return mac_len == sig_len && CRYPTO_memcmp(mac, sig, sig_len) == 0;
}

/* JWS ES* signatures are r || s, each as long as the curve's coordinates;
 * OpenSSL verifies the DER ECDSA-Sig-Value. */
static unsigned char *ecdsa_der(pgrest_arena *a, const char *crv,
                                const unsigned char *sig, size_t sig_len,
                                size_t *der_len)
{
    size_t coord = 0;
    if (pgr_jwt_ec_group(crv, &coord) == NULL || sig_len != 2 * coord)
        return NULL;
    ECDSA_SIG *es = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(sig, (int)coord, NULL);
    BIGNUM *sv = BN_bin2bn(sig + coord, (int)coord, NULL);
    unsigned char *der = NULL;
    if (es != NULL && r != NULL && sv != NULL && ECDSA_SIG_set0(es, r, sv) == 1) {
        r = sv = NULL; /* owned by es now */
        int n = i2d_ECDSA_SIG(es, NULL);
        der = n > 0 ? pgr_alloc(a, (size_t)n) : NULL;
        unsigned char *p = der;
        if (der != NULL && i2d_ECDSA_SIG(es, &p) == n)
            *der_len = (size_t)n;
        else
            der = NULL;
    }
    BN_free(r);
    BN_free(sv);
    ECDSA_SIG_free(es);
    return der;
}

static bool pkey_verify(EVP_PKEY *pkey, const alg_info *ai, const char *input,
                        size_t input_len, const unsigned char *sig, size_t sig_len)
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    bool ok = md != NULL &&
              EVP_DigestVerifyInit(md, NULL, ai->md ? ai->md() : NULL, NULL, pkey) == 1 &&
              EVP_DigestVerify(md, sig, sig_len, (const unsigned char *)input, input_len) == 1;
    EVP_MD_CTX_free(md);
    return ok;
}

/* Whether sig is k's signature of input with ai; the caller has already
 * checked that the key belongs to that algorithm, so an RSA public key can
 * never be used as an HMAC secret. */
static bool verify_with(pgrest_arena *a, const jwt_key *k, const alg_info *ai,
                        const char *input, size_t input_len,
                        const unsigned char *sig, size_t sig_len)
{
    if (k->kind == KEY_OCT)
        return hmac_ok(k, ai, input, input_len, sig, sig_len);
    EVP_PKEY *pkey = k->kind == KEY_RSA ? pgr_jwt_rsa_pkey(a, k->jwk)
                   : k->kind == KEY_EC  ? pgr_jwt_ec_pkey(a, k->jwk, k->crv)
                                        : pgr_jwt_okp_pkey(a, k->jwk, k->crv);
    if (k->kind == KEY_EC)
        sig = ecdsa_der(a, k->crv, sig, sig_len, &sig_len);
    bool ok = pkey != NULL && sig != NULL && pkey_verify(pkey, ai, input, input_len, sig, sig_len);
    EVP_PKEY_free(pkey);
    return ok;
}

/* jwt-secret's keys, then the fetched set's (either may verify). */
static int all_keys(const pgr_config *cfg, pgrest_arena *a, const char *jwks, size_t jwks_len,
                    jwt_keyset *ks, pgrest_error *err)
{
    memset(ks, 0, sizeof *ks);
    jwt_keyset fetched = {NULL, 0};
    if (cfg->jwt_secret != NULL) {
        size_t secret_len = 0;
        const unsigned char *secret = pgr_jwt_secret_bytes(a, cfg, &secret_len);
        if (secret == NULL)
            return pgr_error(err, 500, "PGRST300", "Server lacks JWT secret",
                             "jwt-secret is not valid base64", NULL);
        bool is_jwk;
        if (pgr_jwt_load_keys(a, secret, secret_len, ks, &is_jwk) != 0)
            return pgr_error_oom(err);
    }
    /* checked when fetched; a set that reads no more counts as empty */
    if (jwks == NULL || pgr_jwt_load_jwks(a, jwks, jwks_len, &fetched) != 0 || fetched.n == 0)
        return pgr_arena_exhausted(a) ? pgr_error_oom(err) : PGREST_OK;
    jwt_key *keys = PGR_NEW_ARRAY(a, jwt_key, ks->n + fetched.n);
    if (keys == NULL)
        return pgr_error_oom(err);
    if (ks->n > 0)
        memcpy(keys, ks->keys, ks->n * sizeof *keys);
    memcpy(keys + ks->n, fetched.keys, fetched.n * sizeof *keys);
    ks->keys = keys;
    ks->n += fetched.n;
    return PGREST_OK;
}

int pgr_jwt_verify_token(const pgr_config *cfg, pgrest_arena *a, const jwt_parts *parts,
                         json_object *header, const char *jwks, size_t jwks_len,
                         bool *no_key_fits, pgrest_error *err)
{
    *no_key_fits = false;
    const alg_info *ai = NULL;
    int rc = header_alg(header, &ai, err);
    if (rc != PGREST_OK)
        return rc;
    jwt_keyset ks;
    rc = all_keys(cfg, a, jwks, jwks_len, &ks, err);
    if (rc != PGREST_OK)
        return rc;
    const char *kid = pgr_jwt_json_str(header, "kid");
    /* header.payload, the bytes the signature covers */
    size_t input_len = parts->header_len + 1 + parts->payload_len;
    size_t sig_len = 0, payload_len = 0;
    const unsigned char *sig =
        pgr_jwt_b64_decode(a, parts->signature, parts->signature_len, &sig_len);
    /* jose-jwt's per-key decode also fails on a payload that is not
     * base64url, which then counts as a wrong key */
    bool decodable =
        sig != NULL && pgr_jwt_b64_decode(a, parts->payload, parts->payload_len, &payload_len) != NULL;
    bool any = false;
    for (size_t i = 0; i < ks.n; i++) {
        if (!pgr_jwt_key_fits(&ks.keys[i], ai, kid))
            continue;
        any = true;
        if (decodable && verify_with(a, &ks.keys[i], ai, parts->header, input_len, sig, sig_len))
            return PGREST_OK;
    }
    if (pgr_arena_exhausted(a))
        return pgr_error_oom(err);
    *no_key_fits = !any;
    return key_error(err, any ? "None of the keys was able to decode the JWT"
                              : "No suitable key was found to decode the JWT");
}
