/* Authentication (PostgREST Auth.hs): the bearer token, if any, decides the
 * role and claims of the transaction; otherwise db-anon-role. A stage of
 * its own (pgrest_authenticate), so a host can read the outcome or supply
 * an identity its gateway verified (pgrest_auth_supply). */
#ifndef PGR_AUTH_H
#define PGR_AUTH_H

#include <stdbool.h>

#include "engine/stage_view.h"

/* The outcome of authentication: an identity, or the error that refused
 * the request (PGRST300-303). Lives in the request's arena. */
struct pgrest_auth {
    const char *role;        /* role to SET for the transaction */
    const char *claims;      /* request.jwt.claims: JSON text with "role" */
    bool authenticated;      /* role differs from db-anon-role */
    bool failed;
    pgrest_error error;      /* when failed */
};

/* Authenticates req into *out (never NULL on PGREST_OK or an auth error;
 * NULL only when the arena is exhausted), through the JWT cache (and its
 * metrics and observations). The only place a bearer token is verified:
 * parsing never authenticates. */
int pgr_authenticate(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_request *req,
                     pgrest_auth **out, pgrest_error *err);

/* PGREST_OK, or the error of a failed outcome (also in *err). */
int pgr_auth_outcome(const pgrest_auth *auth, pgrest_error *err);

/* Copies auth's identity into api->role, api->jwt_claims and
 * api->authenticated, or fails with its error. */
int pgr_auth_apply(const pgrest_auth *auth, pgrest_api_request *api, pgrest_error *err);

#endif
