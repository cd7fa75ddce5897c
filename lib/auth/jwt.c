/* JWT authentication (PostgREST Auth.hs / Auth/Jwt.hs): the JWT cache,
 * then the token's signature (jwt_verify.c, with keys from jwt_keys.c),
 * its claims (jwt_claims.c), its role (jwt_role.c) and the claims' text
 * (jwt_json.c). */
#include "auth/jwt_internal.h"
#include "auth/jwt_cache.h"

#include <json-c/json.h>
#include <string.h>
#include <time.h>

#include "engine/context_types.h"
#include "engine/jwks_source.h"
#include "engine/observe.h"

static int check_claims(const pgr_config *cfg, pgrest_arena *a, json_object *claims,
                        pgrest_api_request *api, pgrest_error *err)
{
    int rc = pgr_jwt_check_times(a, claims, (double)time(NULL), err);
    if (rc == PGREST_OK)
        rc = pgr_jwt_check_aud(claims, cfg->jwt_aud, err);
    const char *role = NULL;
    if (rc == PGREST_OK)
        rc = pgr_jwt_claims_role(a, cfg->jwt_role_claim_key, claims, &role, err);
    if (rc != PGREST_OK)
        return rc;
    if (role == NULL)
        role = cfg->db_anon_role;
    if (role == NULL)
        return pgr_error(err, 401, "PGRST302", "Anonymous access is disabled", NULL, NULL);
    const char *text = pgr_jwt_claims_text(a, claims, role);
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
                     json_object *claims, const pgrest_api_request *api, unsigned long keys_gen)
{
    json_object *exp;
    time_t expires = 0;
    if (json_object_object_get_ex(claims, "exp", &exp) &&
        (json_object_is_type(exp, json_type_int) || json_object_is_type(exp, json_type_double)))
        expires = (time_t)json_object_get_int64(exp);
    pgr_jwt_auth auth = {api->role, api->jwt_claims, api->authenticated};
    if (pgr_jwt_cache_put(cfg->jwt_cache, token, &auth, expires, keys_gen) && ctx != NULL) {
        atomic_fetch_add(&ctx->metrics.jwt_cache_evictions, 1);
        pgr_observe(ctx, PGREST_EVENT_JWT_CACHE_EVICTION, "Evicted entry from JWT cache");
    }
}

/* PostgREST JwtCacheLookup: counted (and observed) when the cache is on. */
static bool cached_auth(pgrest_ctx *ctx, const pgr_config *cfg, const char *token,
                        unsigned long keys_gen, pgrest_arena *a, pgr_jwt_auth *out)
{
    if (cfg->jwt_cache == NULL)
        return false;
    bool hit = pgr_jwt_cache_get(cfg->jwt_cache, token, time(NULL), keys_gen, a, out);
    if (ctx != NULL) {
        atomic_fetch_add(&ctx->metrics.jwt_cache_requests, 1);
        if (hit)
            atomic_fetch_add(&ctx->metrics.jwt_cache_hits, 1);
        pgr_observe(ctx, PGREST_EVENT_JWT_CACHE_LOOKUP, "Looked up a JWT in JWT cache");
    }
    return hit;
}

/* jwt-jwks-uri's keys for one request: the fetcher and the set in force
 * when the request began (NULL without jwt-jwks-uri, or in a context-less
 * call). */
typedef struct fetched_keys {
    pgr_jwks *jwks;
    pgr_jwks_set *set;
} fetched_keys;

static unsigned long keys_generation(const fetched_keys *k)
{
    return k->set != NULL ? k->set->generation : 0;
}

static int verify(const pgr_config *cfg, pgrest_arena *a, const jwt_parts *parts,
                  json_object *header, const fetched_keys *k, bool *no_key_fits,
                  pgrest_error *err)
{
    const char *body = k->set != NULL ? k->set->body : NULL;
    size_t len = k->set != NULL ? k->set->len : 0;
    return pgr_jwt_verify_token(cfg, a, parts, header, body, len, no_key_fits, err);
}

/* The signature, with the fetched keys refreshed once when the token
 * names a kid none has (or none were fetched yet): the request waits at
 * most jwt-jwks-timeout for that (jwks.c). */
static int verify_refreshing(const pgr_config *cfg, pgrest_arena *a, const jwt_parts *parts,
                             json_object *header, fetched_keys *k, pgrest_error *err)
{
    bool no_key_fits = false;
    int rc = verify(cfg, a, parts, header, k, &no_key_fits, err);
    if (rc == PGREST_OK || !no_key_fits || k->jwks == NULL ||
        (k->set != NULL && pgr_jwt_json_str(header, "kid") == NULL))
        return rc;
    pgr_jwks_set_release(k->set);
    k->set = pgr_jwks_refresh_wait(k->jwks);
    return verify(cfg, a, parts, header, k, &no_key_fits, err);
}

static int authenticate(pgrest_ctx *ctx, const pgr_config *cfg, pgrest_arena *a,
                        const char *token, fetched_keys *k, pgrest_api_request *api,
                        pgrest_error *err)
{
    pgr_jwt_auth cached;
    if (cached_auth(ctx, cfg, token, keys_generation(k), a, &cached)) {
        api->role = cached.role;
        api->jwt_claims = cached.claims;
        api->authenticated = cached.authenticated;
        return PGREST_OK;
    }
    jwt_parts parts = {NULL, 0, NULL, 0, NULL, 0};
    int rc = pgr_jwt_split_token(a, token, &parts, err);
    if (rc != PGREST_OK)
        return rc;
    json_object *header = pgr_jwt_decode_segment(a, parts.header, parts.header_len);
    if (header == NULL)
        return pgr_arena_exhausted(a) ? pgr_error_oom(err) : crypto_error(err);
    rc = verify_refreshing(cfg, a, &parts, header, k, err);
    if (rc != PGREST_OK)
        return rc;
    json_object *claims = pgr_jwt_decode_claims(a, parts.payload, parts.payload_len);
    if (claims == NULL)
        return pgr_arena_exhausted(a) ? pgr_error_oom(err)
                                      : claims_error(err, "Parsing claims failed");
    rc = check_claims(cfg, a, claims, api, err);
    if (rc == PGREST_OK)
        remember(ctx, cfg, token, claims, api, keys_generation(k));
    return rc;
}

int pgr_jwt_authenticate(pgrest_ctx *ctx, const pgr_config *cfg, pgrest_arena *a,
                         const char *token, pgrest_api_request *api, pgrest_error *err)
{
    /* JwtCache.hs decode: without keys any token, even an empty one, is
     * refused before Jwt.hs parseToken looks at it */
    if (cfg->jwt_secret == NULL && cfg->jwt_jwks_uri == NULL)
        return pgr_error(err, 500, "PGRST300", "Server lacks JWT secret", NULL, NULL);
    if (token == NULL || *token == '\0')
        return decode_error(err, "Empty JWT is sent in Authorization header", NULL);
    fetched_keys k = {NULL, NULL};
    if (cfg->jwt_jwks_uri != NULL && ctx != NULL)
        k.jwks = pgr_ctx_jwks(ctx);
    if (k.jwks != NULL)
        k.set = pgr_jwks_current(k.jwks);
    int rc = authenticate(ctx, cfg, a, token, &k, api, err);
    pgr_jwks_set_release(k.set);
    pgr_jwks_release(k.jwks);
    return rc;
}
