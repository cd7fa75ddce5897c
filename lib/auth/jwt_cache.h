/* Verified tokens remembered until they expire (PostgREST Auth/JwtCache.hs,
 * jwt-cache-max-entries): a repeated bearer token skips signature checks.
 * Bounded; thread-safe. */
#ifndef PGR_JWT_CACHE_H
#define PGR_JWT_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "util/arena.h"

typedef struct pgr_jwt_cache pgr_jwt_cache;

typedef struct pgr_jwt_auth {
    const char *role;
    const char *claims;
    bool authenticated;
} pgr_jwt_auth;

/* max_entries 0 disables caching (returns NULL). Reference counted:
 * configuration snapshots that verify tokens alike share one cache
 * (PostgREST JwtCache.update keeps the cache while the key stays). */
pgr_jwt_cache *pgr_jwt_cache_new(size_t max_entries);
void pgr_jwt_cache_retain(pgr_jwt_cache *c);
/* Drops a reference; the last one frees the cache. Accepts NULL. */
void pgr_jwt_cache_free(pgr_jwt_cache *c);
/* Copies the cached result into the arena; false when absent, expired
 * at now, or verified under another key generation: keys_gen is the
 * generation of the jwt-jwks-uri key set (0 without one), which changes
 * when a key leaves the set, so a token whose key left is verified again
 * (and refused) instead of staying valid until its exp. */
bool pgr_jwt_cache_get(pgr_jwt_cache *c, const char *token, time_t now,
                       unsigned long keys_gen, pgrest_arena *a, pgr_jwt_auth *out);
/* Remembers a token verified under key generation keys_gen until
 * expires (0 = no exp claim); true when a full cache evicted its oldest
 * entry to make room. */
bool pgr_jwt_cache_put(pgr_jwt_cache *c, const char *token,
                       const pgr_jwt_auth *auth, time_t expires, unsigned long keys_gen);
void pgr_jwt_cache_clear(pgr_jwt_cache *c);

#endif
