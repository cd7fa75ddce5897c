/* What the files of the JWT stage share (lib/auth/jwt*.c): the key and
 * algorithm types, the token's parts, PostgREST's error wording and the
 * functions one job offers another. Private to lib/auth. */
#ifndef PGR_JWT_INTERNAL_H
#define PGR_JWT_INTERNAL_H

#include <json-c/json.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stddef.h>

#include "auth/jwt.h"
#include "util/error.h"
#include "util/strbuf.h"

/* ------------------------------------------------------------ errors */

/* Error.hs: a token that does not decode or verify is 401 PGRST301
 * (JwtDecodeError), claims that do not hold 401 PGRST303 (JwtClaimsError). */
static inline int decode_error(pgrest_error *err, const char *message, const char *details)
{
    return pgr_error(err, 401, "PGRST301", message, details, NULL);
}

static inline int claims_error(pgrest_error *err, const char *message)
{
    return pgr_error(err, 401, "PGRST303", message, NULL, NULL);
}

static inline int crypto_error(pgrest_error *err)
{
    return decode_error(err, "JWT cryptographic operation failed", NULL);
}

/* jose-jwt's KeyError; PostgREST shows its text as details. */
static inline int key_error(pgrest_error *err, const char *details)
{
    return decode_error(err, "No suitable key or wrong key type", details);
}

static inline int bad_alg_error(pgrest_error *err, const char *details)
{
    return decode_error(err, "Wrong or unsupported encoding algorithm", details);
}

/* The whitespace RFC 8259 allows around a JSON text. */
static inline bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* ------------------------------------------------------------ algorithms, keys */

typedef enum key_kind { KEY_OCT, KEY_RSA, KEY_EC, KEY_OKP } key_kind;

typedef struct alg_info {
    const char *name;
    const EVP_MD *(*md)(void); /* NULL: EdDSA hashes internally */
    key_kind kind;
    const char *crv;          /* EC curve the algorithm requires */
} alg_info;

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

/* The JWS algorithm named alg, or NULL (jwt_verify.c). */
const alg_info *pgr_jwt_find_alg(const char *name);

/* jwt_base64.c: base64url. */
unsigned char *pgr_jwt_b64_decode(pgrest_arena *a, const char *s, size_t n, size_t *out_len);

/* jwt_keys.c: the secret as keys, keys as OpenSSL public keys. */
const unsigned char *pgr_jwt_secret_bytes(pgrest_arena *a, const pgr_config *cfg, size_t *len);
int pgr_jwt_load_keys(pgrest_arena *a, const unsigned char *bytes, size_t len, jwt_keyset *ks,
                      bool *is_jwk);
/* -1 out of memory, 0 read, 1 not a JWK Set ({"keys": [JWK, ...]}). */
int pgr_jwt_load_jwks(pgrest_arena *a, const char *text, size_t len, jwt_keyset *ks);
bool pgr_jwt_key_fits(const jwt_key *k, const alg_info *ai, const char *kid);
const char *pgr_jwt_ec_group(const char *crv, size_t *coord);
EVP_PKEY *pgr_jwt_rsa_pkey(pgrest_arena *a, json_object *jwk);
EVP_PKEY *pgr_jwt_ec_pkey(pgrest_arena *a, json_object *jwk, const char *crv);
EVP_PKEY *pgr_jwt_okp_pkey(pgrest_arena *a, json_object *jwk, const char *crv);

/* ------------------------------------------------------------ token */

typedef struct jwt_parts {
    const char *header;
    size_t header_len;
    const char *payload;
    size_t payload_len;
    const char *signature;
    size_t signature_len;
} jwt_parts;

/* jwt_verify.c: the token's parts and its signature. */
int pgr_jwt_split_token(pgrest_arena *a, const char *token, jwt_parts *p, pgrest_error *err);
json_object *pgr_jwt_decode_segment(pgrest_arena *a, const char *s, size_t n);
/* With jwt-secret's keys and, when jwks is not NULL, the jwks_len bytes
 * of a fetched JWK Set; *no_key_fits tells a token no key fits (its kid
 * unknown, say) from one whose signature is wrong. */
int pgr_jwt_verify_token(const pgr_config *cfg, pgrest_arena *a, const jwt_parts *parts,
                         json_object *header, const char *jwks, size_t jwks_len,
                         bool *no_key_fits, pgrest_error *err);

/* jwt_json.c: JSON read and written as aeson does. */
json_object *pgr_jwt_parse_object(pgrest_arena *a, const char *s, size_t n);
const char *pgr_jwt_json_str(json_object *obj, const char *key);
json_object *pgr_jwt_decode_claims(pgrest_arena *a, const char *s, size_t n);
void pgr_jwt_put_json(pgr_sb *sb, json_object *v);
const char *pgr_jwt_claims_text(pgrest_arena *a, json_object *claims, const char *role);

/* jwt_claims.c: exp, nbf, iat and aud. */
int pgr_jwt_check_times(pgrest_arena *a, json_object *claims, double now, pgrest_error *err);
int pgr_jwt_check_aud(json_object *claims, const char *want, pgrest_error *err);

/* jwt_role.c: the role at jwt-role-claim-key. */
int pgr_jwt_claims_role(pgrest_arena *a, const char *path, json_object *claims,
                        const char **role, pgrest_error *err);

#endif
