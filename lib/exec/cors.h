/* CORS as PostgREST's wai-cors middleware does it (api/cors): preflight
 * answered without touching the database, simple responses annotated. */
#ifndef PGR_CORS_H
#define PGR_CORS_H

#include "engine/stage_view.h"
#include "exec/response.h"

/* The preflight response for an OPTIONS request carrying Origin and
 * Access-Control-Request-Method, or NULL when req is not a preflight. */
pgrest_response *pgr_cors_preflight(const pgrest_ctx *ctx, pgrest_arena *a,
                                    const pgrest_request *req);
/* Adds Access-Control-Allow-Origin etc. when req has an allowed Origin. */
void pgr_cors_annotate(const pgrest_ctx *ctx, pgrest_arena *a,
                       const pgrest_request *req, pgrest_response *r);

#endif
