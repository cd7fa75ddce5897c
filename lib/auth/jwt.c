/* JWT verification (PostgREST Auth.hs / Auth/Jwt.hs, jose-jwt's key
 * selection in Jose/Jwk.hs). OpenSSL checks the signature over the token's
 * first two segments (the payload is not parsed until the signature holds,
 * as jose-jwt does), turns JWKs into public keys and decodes base64; json-c
 * reads the JSON. */
#include "auth/jwt.h"
#include "auth/jwt_cache.h"
#include "auth/jspath_legacy.h"
#include "auth/role_claim_path.h"

#include <json-c/json.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "context.h"
#include "observe.h"
#include "util/base64.h"
#include "util/error.h"
#include "util/number.h"
#include "util/hs_show.h"
#include "util/json_strict.h"
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

/* Decodes base64 or base64url, padding optional. Returns an arena buffer
 * (NUL-terminated) or NULL. */
static unsigned char *b64_decode(pgrest_arena *a, const char *s, size_t n,
                                 size_t *out_len)
{
    unsigned char *out = pgr_alloc(a, pgr_base64_decoded_size(n));
    if (out == NULL || !pgr_base64_decode(s, n, PGR_BASE64_PADDING_OPTIONAL, out, out_len))
        return NULL;
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
    /* aeson's RFC 8259, without json-c's leniencies ('key', NaN, 1.) */
    if (n > INT32_MAX || !pgr_json_lexically_strict(s, n))
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

typedef enum key_kind { KEY_OCT, KEY_RSA, KEY_EC, KEY_OKP } key_kind;

typedef struct alg_info {
    const char *name;
    const EVP_MD *(*md)(void); /* NULL: EdDSA hashes internally */
    key_kind kind;
    const char *crv;          /* EC curve the algorithm requires */
} alg_info;

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

/* Reads one JWK; false if jose-jwt's Jwk parser would refuse it (unknown
 * kty or use, a required member missing). */
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
    if (k->use != NULL && strcmp(k->use, "sig") != 0 && strcmp(k->use, "enc") != 0)
        return false;
    if (strcmp(kty, "RSA") == 0) {
        k->kind = KEY_RSA;
        return json_str(jwk, "n") != NULL && json_str(jwk, "e") != NULL;
    }
    if (strcmp(kty, "EC") == 0) {
        k->kind = KEY_EC;
        return k->crv != NULL && json_str(jwk, "x") != NULL && json_str(jwk, "y") != NULL;
    }
    if (strcmp(kty, "OKP") == 0) {
        k->kind = KEY_OKP;
        return k->crv != NULL && json_str(jwk, "x") != NULL;
    }
    if (strcmp(kty, "oct") == 0) {
        const char *ks = json_str(jwk, "k");
        k->kind = KEY_OCT;
        k->secret = ks == NULL ? NULL : b64_decode(a, ks, strlen(ks), &k->secret_len);
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
static int load_keys(pgrest_arena *a, const unsigned char *bytes, size_t len,
                     jwt_keyset *ks, bool *is_jwk)
{
    memset(ks, 0, sizeof *ks);
    *is_jwk = true;
    size_t i = 0;
    while (i < len && is_space((char)bytes[i]))
        i++;
    json_object *obj = NULL;
    if (i < len && bytes[i] == '{')
        obj = parse_json_object(a, (const char *)bytes, len);
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

/* Builds the OSSL_PARAM list for an RSA public key from n and e. */
static OSSL_PARAM *rsa_params(OSSL_PARAM_BLD *bld, const BIGNUM *n, const BIGNUM *e)
{
    if (bld == NULL || n == NULL || e == NULL ||
        OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) != 1 ||
        OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e) != 1)
        return NULL;
    return OSSL_PARAM_BLD_to_param(bld);
}

static EVP_PKEY *rsa_pkey(pgrest_arena *a, json_object *jwk)
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

static EVP_PKEY *ec_pkey(pgrest_arena *a, json_object *jwk, const char *crv)
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
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    return pkey;
}

/* An Ed25519 or Ed448 public key from the JWK's x (RFC 8037). */
static EVP_PKEY *okp_pkey(pgrest_arena *a, json_object *jwk, const char *crv)
{
    int type = strcmp(crv, "Ed25519") == 0 ? EVP_PKEY_ED25519
             : strcmp(crv, "Ed448") == 0   ? EVP_PKEY_ED448
                                           : EVP_PKEY_NONE;
    const char *xs = json_str(jwk, "x");
    size_t len = 0;
    unsigned char *x = xs == NULL ? NULL : b64_decode(a, xs, strlen(xs), &len);
    if (type == EVP_PKEY_NONE || x == NULL)
        return NULL;
    return EVP_PKEY_new_raw_public_key(type, NULL, x, len);
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
    if (ec_group(crv, &coord) == NULL || sig_len != 2 * coord)
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
    EVP_PKEY *pkey = k->kind == KEY_RSA ? rsa_pkey(a, k->jwk)
                   : k->kind == KEY_EC  ? ec_pkey(a, k->jwk, k->crv)
                                        : okp_pkey(a, k->jwk, k->crv);
    if (k->kind == KEY_EC)
        sig = ecdsa_der(a, k->crv, sig, sig_len, &sig_len);
    bool ok = pkey != NULL && sig != NULL && pkey_verify(pkey, ai, input, input_len, sig, sig_len);
    EVP_PKEY_free(pkey);
    return ok;
}

/* ------------------------------------------------------------ token */

typedef struct jwt_parts {
    const char *header;
    size_t header_len;
    const char *payload;
    size_t payload_len;
    const char *signature;
    size_t signature_len;
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
    p->signature = d2 + 1;
    p->signature_len = strlen(d2 + 1);
    return PGREST_OK;
}

static json_object *decode_segment(pgrest_arena *a, const char *s, size_t n)
{
    size_t len = 0;
    unsigned char *bytes = b64_decode(a, s, n, &len);
    return bytes == NULL ? NULL : parse_json_object(a, (const char *)bytes, len);
}

/* Whether the integer literal's digits exceed what json-c keeps exactly
 * (uint64 for a positive, int64 for a negative one). */
static bool beyond_json_c(const char *digits, size_t n, bool negative)
{
    const char *limit = negative ? "9223372036854775808" : "18446744073709551615";
    size_t m = strlen(limit);
    while (n > 1 && *digits == '0') {
        digits++;
        n--;
    }
    return n > m || (n == m && memcmp(digits, limit, m) > 0);
}

/* The claims text with every integer literal json-c would saturate
 * written as <digits>e0: json-c then keeps it as a double with its
 * literal, which put_aeson_number prints as the integer Aeson reads. */
static const char *widen_huge_integers(pgrest_arena *a, const char *text, size_t len,
                                       size_t *out_len)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, len + 16);
    bool in_string = false, changed = false;
    for (size_t i = 0; i < len;) {
        char c = text[i];
        if (in_string || c == '"') {
            if (in_string && c == '\\' && i + 1 < len) {
                pgr_sb_putn(&sb, text + i, 2);
                i += 2;
                continue;
            }
            if (c == '"')
                in_string = !in_string;
            pgr_sb_putc(&sb, c);
            i++;
            continue;
        }
        bool negative = c == '-';
        size_t d = negative ? i + 1 : i;
        size_t digits_end = d;
        while (digits_end < len && text[digits_end] >= '0' && text[digits_end] <= '9')
            digits_end++;
        if (digits_end == d) {
            pgr_sb_putc(&sb, c);
            i++;
            continue;
        }
        /* the whole number token: fraction and exponent included */
        size_t end = digits_end;
        while (end < len && ((text[end] >= '0' && text[end] <= '9') || text[end] == '.' ||
                             text[end] == 'e' || text[end] == 'E' || text[end] == '+' ||
                             text[end] == '-'))
            end++;
        pgr_sb_putn(&sb, text + i, end - i);
        if (end == digits_end && beyond_json_c(text + d, digits_end - d, negative)) {
            pgr_sb_puts(&sb, "e0");
            changed = true;
        }
        i = end;
    }
    size_t n = sb.len;
    const char *out = pgr_sb_finish(&sb);
    if (out == NULL || !changed) {
        *out_len = len;
        return out == NULL ? NULL : text;
    }
    *out_len = n;
    return out;
}

/* The payload as claims: one JSON object (Jwt.hs decodeClaims). */
static json_object *decode_claims(pgrest_arena *a, const char *s, size_t n)
{
    size_t len = 0, wide_len = 0;
    unsigned char *bytes = b64_decode(a, s, n, &len);
    const char *wide = bytes == NULL ? NULL
                                     : widen_huge_integers(a, (const char *)bytes, len, &wide_len);
    return wide == NULL ? NULL : parse_json_object(a, wide, wide_len);
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
    return b64_decode(a, text, n, len);
}

static int verify_token(const pgr_config *cfg, pgrest_arena *a, const jwt_parts *parts,
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
    bool is_jwk;
    if (load_keys(a, secret, secret_len, &ks, &is_jwk) != 0)
        return pgr_error_oom(err);
    const char *kid = json_str(header, "kid");
    /* header.payload, the bytes the signature covers */
    size_t input_len = parts->header_len + 1 + parts->payload_len;
    size_t sig_len = 0, payload_len = 0;
    const unsigned char *sig = b64_decode(a, parts->signature, parts->signature_len, &sig_len);
    /* jose-jwt's per-key decode also fails on a payload that is not
     * base64url, which then counts as a wrong key */
    bool decodable = sig != NULL &&
                     b64_decode(a, parts->payload, parts->payload_len, &payload_len) != NULL;
    bool any = false;
    for (size_t i = 0; i < ks.n; i++) {
        if (!key_fits(&ks.keys[i], ai, kid))
            continue;
        any = true;
        if (decodable && verify_with(a, &ks.keys[i], ai, parts->header, input_len, sig, sig_len))
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

int pgr_jwt_check_role_claim_key(pgrest_arena *a, const char *path,
                                 pgrest_error *err)
{
    bool ok = false;
    pgr_claim_path_parse(a, path, &ok);
    if (ok)
        return PGREST_OK;
    if (pgr_arena_exhausted(a))
        return pgr_error_oom(err);
    /* a configuration error (validated when the configuration is built),
     * worded as Config.hs parseRoleClaimKey does: neither JSONPath nor the
     * deprecated syntax, `fail $ show e` of the latter's Parsec error */
    char *dump = NULL, *parsec = NULL;
    bool legacy_ok = jspath_legacy_parse(path, &dump, &parsec);
    char *shown = legacy_ok || parsec == NULL ? NULL : hs_show_string(parsec);
    free(dump);
    free(parsec);
    if (shown != NULL)
        pgr_errorf(err, a, 0, NULL, NULL, NULL, "%s", shown);
    else
        pgr_errorf(err, a, 0, NULL, NULL, NULL, "Invalid jwt-role-claim-key: %s", path);
    free(shown);
    return PGREST_ERR_CONFIG;
}

bool pgr_jwt_secret_is_jwk(pgrest_arena *a, const unsigned char *bytes, size_t len)
{
    jwt_keyset ks;
    bool is_jwk = false;
    return load_keys(a, bytes, len, &ks, &is_jwk) == 0 && is_jwk;
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
    else if (!pgr_jwt_secret_is_jwk(a, bytes, len) && len < 32)
        problem = "The JWT secret must be at least 32 characters long.";
    if (pgr_arena_exhausted(a))
        return pgr_error_oom(err);
    if (problem == NULL)
        return PGREST_OK;
    pgr_error(err, 0, NULL, problem, NULL, NULL);
    return PGREST_ERR_CONFIG;
}

/* The role at jwt-role-claim-key: a string as is, other JSON encoded
 * (PostgREST's `unquoted`), so a JSON null is the role "null"; NULL when
 * the path selects nothing. */
static void put_json(pgr_sb *sb, json_object *v);

static int claims_role(pgrest_arena *a, const char *path, json_object *claims,
                       const char **role, pgrest_error *err)
{
    bool ok = false;
    jsp_seg *segs = pgr_claim_path_parse(a, path, &ok);
    if (!ok && pgr_arena_exhausted(a))
        return pgr_error_oom(err);
    if (!ok) /* a configuration refuses it; a hand-made pgr_config may not */
        return pgr_errorf(err, a, 500, PGR_CODE_INTERNAL, NULL, NULL,
                          "Invalid jwt-role-claim-key: %s", path);
    json_object *v = NULL;
    *role = NULL;
    if (!pgr_claim_path_select(claims, segs, &v))
        return PGREST_OK;
    if (v == NULL) /* json-c's JSON null */
        *role = "null";
    else if (json_object_is_type(v, json_type_string)) {
        size_t n = (size_t)json_object_get_string_len(v);
        /* "\u0000" in the role: PostgREST sends it to set_config('role', $1)
         * and PostgreSQL refuses NUL in text (22021, 400); read as a C
         * string it would be a shorter role than the token names */
        if (memchr(json_object_get_string(v), '\0', n) != NULL)
            return pgr_error(err, 400, "22021",
                             "invalid byte sequence for encoding \"UTF8\": 0x00", NULL, NULL);
        *role = pgr_strndup(a, json_object_get_string(v), n);
    } else {
        pgr_sb sb;
        pgr_sb_init(&sb, a, 64);
        put_json(&sb, v); /* Aeson's JSON.encode */
        *role = pgr_sb_finish(&sb);
    }
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

/* A number as Aeson encodes the Scientific it parses the literal to.
 * json-c keeps a parsed double's literal, so the token's text is read;
 * a text that is no JSON number (none parses so) is written as it is. */
static void put_aeson_number(pgr_sb *sb, const char *lit)
{
    const char *aeson = pgr_aeson_number(sb->arena, lit);
    pgr_sb_puts(sb, aeson != NULL ? aeson : lit);
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
    } else if (json_object_is_type(v, json_type_double)) {
        put_aeson_number(sb, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
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
    /* JwtCache.hs decode: without keys any token, even an empty one, is
     * refused before Jwt.hs parseToken looks at it */
    if (cfg->jwt_secret == NULL)
        return pgr_error(err, 500, "PGRST300", "Server lacks JWT secret", NULL, NULL);
    if (token == NULL || *token == '\0')
        return decode_error(err, "Empty JWT is sent in Authorization header", NULL);
    pgr_jwt_auth cached;
    if (cached_auth(ctx, cfg, token, a, &cached)) {
        api->role = cached.role;
        api->jwt_claims = cached.claims;
        api->authenticated = cached.authenticated;
        return PGREST_OK;
    }
    jwt_parts parts = {NULL, 0, NULL, 0, NULL, 0};
    int rc = split_token(a, token, &parts, err);
    if (rc != PGREST_OK)
        return rc;
    json_object *header = decode_segment(a, parts.header, parts.header_len);
    if (header == NULL)
        return pgr_arena_exhausted(a) ? pgr_error_oom(err) : crypto_error(err);
    rc = verify_token(cfg, a, &parts, header, err);
    if (rc != PGREST_OK)
        return rc;
    json_object *claims = decode_claims(a, parts.payload, parts.payload_len);
    if (claims == NULL)
        return pgr_arena_exhausted(a) ? pgr_error_oom(err)
                                      : claims_error(err, "Parsing claims failed");
    rc = check_claims(cfg, a, claims, api, err);
    if (rc == PGREST_OK)
        remember(ctx, cfg, token, claims, api);
    return rc;
}

/* Word8's isSpace, as wai-extra's extractBearerAuth splits with it. */
static bool is_word8_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

const char *pgr_jwt_bearer_token(const char *authorization)
{
    const char *p = authorization;
    while (*p != '\0' && !is_word8_space((unsigned char)*p))
        p++;
    if (p - authorization != 6 || strncasecmp(authorization, "bearer", 6) != 0)
        return NULL;
    while (is_word8_space((unsigned char)*p))
        p++;
    return p;
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
