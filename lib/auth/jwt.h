/* JWT verification with libjwt (PostgREST Auth.hs, Auth/Jwt.hs). */
#ifndef PGR_JWT_H
#define PGR_JWT_H

#include <stdbool.h>
#include <stddef.h>

#include "config/config_types.h"

/* Verifies token with jwt-secret (HS256 for a plain secret; HS*, RS*, ES*, EdDSA
 * with a JWK or a JWK Set), checks exp/nbf/iat (30 s skew) and aud,
 * extracts the role via jwt-role-claim-key (falling back to db-anon-role),
 * and fills api->role, api->jwt_claims (compact JSON, keys sorted, "role"
 * inserted) and api->authenticated (role differs from db-anon-role, as
 * PostgREST's App.hs decides 401 vs 403). Everything is allocated in a.
 * Errors: PGRST300 (500), PGRST301/302/303 (401). ctx (may be NULL) gets
 * the JWT cache metrics and observations. Thread-safe. */
int pgr_jwt_authenticate(pgrest_ctx *ctx, const pgr_config *cfg, pgrest_arena *a,
                         const char *token, pgrest_api_request *api, pgrest_error *err);

/* The token of an Authorization header value as wai-extra's
 * extractBearerAuth reads it (PostgREST ApiRequest.userBearerAuth): the
 * scheme "Bearer" in any case, then whitespace, then the rest (possibly
 * empty); NULL for any other scheme. Points into authorization. */
const char *pgr_jwt_bearer_token(const char *authorization);

/* The WWW-Authenticate header value PostgREST sends with err:
 * `Bearer error="invalid_token", error_description="<message>"` for
 * PGRST301/PGRST303, "Bearer" for any other 401 (PGRST302, 42501 while
 * anonymous), NULL when the response has no such header. The string is a
 * constant or lives in a. */
const char *pgr_jwt_www_authenticate(pgrest_arena *a, const pgrest_error *err);

/* Whether the len bytes of a (decoded) jwt-secret are a JWK Set or a JWK
 * as PostgREST's Config.hs parseSecret decodes them (jose's JwkSet / Jwk:
 * every key of a set, or the one key, with a known kty and its members),
 * rather than an HMAC secret. False also when a runs out of memory. */
bool pgr_jwt_secret_is_jwk(pgrest_arena *a, const unsigned char *bytes, size_t len);

/* PostgREST's Config.hs decodeSecret and parseSecret: a base64 secret
 * must decode, and one that is neither a JWK Set nor a JWK is an HS256
 * key of at least 32 bytes. PGREST_ERR_CONFIG with PostgREST's message. */
int pgr_jwt_check_secret(pgrest_arena *a, const pgr_config *cfg, pgrest_error *err);

/* Checks that path is a jwt-role-claim-key PostgREST accepts (legacy JSPath
 * `.a.b[0]."k"[?(@ == "x")]` or RFC 9535 `$.a['b'][0][?@ == 'x']`), so a
 * configuration can reject it up front. Returns PGREST_OK or fills err. */
int pgr_jwt_check_role_claim_key(pgrest_arena *a, const char *path,
                                 pgrest_error *err);

#endif
