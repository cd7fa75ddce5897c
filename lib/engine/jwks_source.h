/* The context's JWKS fetcher (lib/auth/jwks.h): started when a
 * configuration with jwt-jwks-uri is put in force, replaced when the URI
 * or its CA file change, stopped with the context. Its fetches are counted
 * in /metrics and reported to the host's observer. */
#ifndef PGR_ENGINE_JWKS_SOURCE_H
#define PGR_ENGINE_JWKS_SOURCE_H

#include "auth/jwks.h"
#include "pgrest/pgrest.h"

/* Brings the fetcher in line with the configuration in force; called
 * after every configuration swap. Out of memory leaves no fetcher: tokens
 * then verify with jwt-secret alone, and the next swap tries again. */
void pgr_ctx_jwks_sync(pgrest_ctx *ctx);
/* The fetcher with a reference taken (pgr_jwks_release), or NULL. */
pgr_jwks *pgr_ctx_jwks(pgrest_ctx *ctx);
/* Stops the fetcher (pgrest_ctx_free). */
void pgr_ctx_jwks_stop(pgrest_ctx *ctx);

#endif
