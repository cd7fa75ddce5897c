/* Authentication (PostgREST Auth.hs): the bearer token, if any, decides the
 * role and claims of the transaction; otherwise db-anon-role. */
#ifndef PGR_AUTH_H
#define PGR_AUTH_H

#include "context.h"

/* Fills api->role, api->jwt_claims and api->authenticated, or fails with
 * PGRST300-303 (401/500). */
int pgr_authenticate(pgrest_ctx *ctx, pgrest_arena *a, pgrest_api_request *api,
                     pgrest_error *err);

#endif
