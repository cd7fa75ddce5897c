/* The read part of a response, shared by reads (exec/response.c) and
 * function results (exec/response_call.c). */
#ifndef PGR_RESPONSE_READ_H
#define PGR_RESPONSE_READ_H

#include "engine/stage_view.h"
#include "exec/main_row.h"
#include "exec/response_record.h"
#include "plan/plan.h"

/* PGRST116 (406) when singular output (vnd.pgrst.object) has not exactly
 * one row (MainTx.hs failNotSingular). */
int pgr_check_singular(pgrest_arena *a, const pgrest_query_plan *plan,
                       const pgr_main_row *row, pgrest_error *err);

/* The read part of a response: Content-Range, 206, 416 and PGRST116 (406)
 * for singular output; also used for function results. A range past the
 * total is an ordinary response with status 416 and PGRST103 as its body
 * (Response.hs), not an error. */
int pgr_read_response(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_query_plan *plan,
                      const pgr_main_row *row, pgrest_response *r,
                      pgrest_error *err);

#endif
