/* Fuzz target: JWT verification (pgr_jwt_authenticate) with a fixed HS256
 * secret and with a JWK Set (oct + RSA + EC keys). Random bytes almost
 * never carry a valid signature, so some modes sign the fuzzed header and
 * claims with the secret first: that reaches the claims checks (exp, nbf,
 * iat, aud) and the jwt-role-claim-key path language.
 *
 * Input: two bytes of arena cap (fuzz_arena_cap), a selector byte, then
 *   mode 0/1: the token (HS256 context / JWKS context)
 *   mode 2:   header JSON \n claims JSON      -> signed HS256, both contexts
 *   mode 3:   role-claim-key \n claims JSON   -> signed, fresh context */
#include "fuzz_common.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "auth/jwt.h"
#include "engine/context.h"
#include "util/arena.h"

#define FUZZ_JWKS                                                              \
    "{\"keys\":[{\"kty\":\"oct\",\"kid\":\"k1\",\"alg\":\"HS256\","          \
    "\"k\":\"cmVhbGx5cmVhbGx5cmVhbGx5cmVhbGx5dmVyeXNhZmU\"},"                  \
    "{\"kty\":\"RSA\",\"kid\":\"r1\",\"e\":\"AQAB\",\"n\":\""                  \
    "xegeFcHxlKC77HFvCqnfhymvfABFLIw2BOFOQ3XCdtneYyE6r6k7A6WFnZWesj9wlHI-BGU-" \
    "UQwmYka4v0xlJ0hJ4InsdQ1IdcEgk4fE0O4azSAyiaHo-uHNtjZMZ4qt9RoOMO9TtjiWVuhg" \
    "NNXSiAaW3V7uLc9BXBstOXsXx92yRIkXMtUazMPo1U8NNgNpMNmnwS-ITQxNuyfTB-0oxtr5" \
    "DcXH6IMB5gJBOzxOvpC8qXoRSJZxN_O9mpsFT1Q5HUu44oAKw3M8imetxnAyxkOj-6L7Z2CY" \
    "fT6ZLP7Jp-Y7gBq-62Idma3CZJmfaHDJRXuR461aqL2oypjfVuCuJw\"},"               \
    "{\"kty\":\"EC\",\"kid\":\"e1\",\"crv\":\"P-256\","                       \
    "\"x\":\"HgJSq6yLCKpz3pw98BAqR9yLXJYn15Jk2Y9MvAPZV2s\","                   \
    "\"y\":\"o7gEUnnEfSLJsDgc--V3qRdCjhL8bA6T9No9Z0lIEs4\"}]}"

static pgrest_ctx *make_ctx(const char *secret, const char *role_key)
{
    pgrest_ctx *ctx = pgrest_ctx_new();
    if (ctx == NULL)
        abort();
    fuzz_set(ctx, "db-anon-role", "web_anon");
    fuzz_set(ctx, "jwt-secret", secret);
    fuzz_set(ctx, "jwt-aud", "pgrest");
    if (role_key != NULL) {
        pgrest_error err = {0};
        if (pgrest_ctx_set(ctx, "jwt-role-claim-key", role_key, &err) != PGREST_OK) {
            pgrest_ctx_free(ctx);
            return NULL;
        }
    }
    return ctx;
}

static void b64url(char *out, const unsigned char *in, size_t n)
{
    static const char tbl[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16;
        if (i + 1 < n)
            v |= (unsigned)in[i + 1] << 8;
        if (i + 2 < n)
            v |= in[i + 2];
        out[o++] = tbl[(v >> 18) & 63];
        out[o++] = tbl[(v >> 12) & 63];
        if (i + 1 < n)
            out[o++] = tbl[(v >> 6) & 63];
        if (i + 2 < n)
            out[o++] = tbl[v & 63];
    }
    out[o] = '\0';
}

/* header.claims.HMAC-SHA256(secret) with both parts base64url-encoded. */
static char *sign(const char *header, const char *claims)
{
    size_t hn = strlen(header), cn = strlen(claims);
    char *tok = malloc((hn + cn) * 2 + 128);
    if (tok == NULL)
        abort();
    b64url(tok, (const unsigned char *)header, hn);
    size_t n = strlen(tok);
    tok[n++] = '.';
    b64url(tok + n, (const unsigned char *)claims, cn);
    n += strlen(tok + n);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned maclen = 0;
    if (HMAC(EVP_sha256(), FUZZ_SECRET, (int)strlen(FUZZ_SECRET),
             (const unsigned char *)tok, n, mac, &maclen) == NULL)
        abort();
    tok[n++] = '.';
    b64url(tok + n, mac, maclen);
    return tok;
}

static size_t arena_cap;

/* On an exhausted arena only a crash is a finding (the public stage
 * boundary reports 500 PGRST500 whatever the step left). */
static void authenticate(pgrest_ctx *ctx, const char *token)
{
    pgrest_arena *a = pgrest_arena_new(arena_cap);
    pgrest_api_request *api = a ? PGR_NEW(a, pgrest_api_request) : NULL;
    if (api == NULL) {
        if (a == NULL || !pgr_arena_exhausted(a))
            abort();
        pgrest_arena_free(a);
        return;
    }
    pgrest_error err = {0};
    if (pgr_jwt_authenticate(ctx, pgr_cfg(ctx, a), a, token, api, &err) != PGREST_OK) {
        if (!fuzz_exhausted_ok(a, &err))
            fuzz_check_error(&err);
        (void)pgr_jwt_www_authenticate(a, &err);
    } else if ((api->role == NULL || api->jwt_claims == NULL) &&
               !pgr_arena_exhausted(a)) {
        abort();
    }
    pgrest_arena_free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static pgrest_ctx *hs, *jwks;
    if (hs == NULL) {
        hs = make_ctx(FUZZ_SECRET, NULL);
        jwks = make_ctx(FUZZ_JWKS, NULL);
    }
    fuzz_reader r;
    fuzz_reader_init(&r, data, size);
    arena_cap = fuzz_arena_cap(&r);
    unsigned mode = fuzz_byte(&r) % 4;
    if (mode < 2) {
        char *token = fuzz_strndup(r.p, r.left);
        authenticate(mode == 0 ? hs : jwks, token);
        free(token);
        return 0;
    }
    char *first = fuzz_line(&r), *claims = fuzz_line(&r);
    if (mode == 2) {
        char *token = sign(first, claims);
        authenticate(hs, token);
        authenticate(jwks, token);
        free(token);
    } else {
        pgrest_ctx *ctx = make_ctx(FUZZ_SECRET, first);
        if (ctx != NULL) {
            char *token = sign("{\"alg\":\"HS256\",\"typ\":\"JWT\"}", claims);
            authenticate(ctx, token);
            free(token);
            pgrest_ctx_free(ctx);
        }
    }
    free(first);
    free(claims);
    return 0;
}
