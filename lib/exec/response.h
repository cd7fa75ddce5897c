/* The HTTP response a request produces (PostgREST Response.hs): the
 * dispatch over the actions. Includes the headers of its parts, so the
 * engine sees one header; the parts include only each other's, never
 * this one, so they do not loop back into the dispatcher. */
#ifndef PGR_RESPONSE_H
#define PGR_RESPONSE_H

#include <libpq-fe.h>

#include "engine/stage_view.h"
#include "exec/main_row.h"
#include "exec/preference_applied.h"
#include "exec/response_call.h"
#include "exec/response_mutate.h"
#include "exec/response_read.h"
#include "exec/response_record.h"
#include "pgrest/pgrest.h"
#include "sql/statements.h"

/* Builds the success response, or fails with the PostgREST error
 * (PGRST103 416, PGRST116 406, PGRST111/112 ...). */
int pgr_build_response(pgrest_ctx *ctx, pgrest_arena *a,
                       const pgrest_query_plan *plan, const pgr_main_row *row,
                       pgrest_response **out, pgrest_error *err);

/* OPTIONS on a relation, routine or the root (exec/response_info.c). */
int pgr_info_response(pgrest_ctx *ctx, pgrest_arena *a,
                      const pgrest_api_request *api, pgrest_response **out,
                      pgrest_error *err);

/* response.headers / response.status set by SQL override the response. */
int pgr_apply_gucs(pgrest_arena *a, pgrest_response *r, const pgr_main_row *row,
                   pgrest_error *err);

#endif
