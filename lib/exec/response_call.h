/* Responses of function calls and of RAISE SQLSTATE 'PGRST'
 * (exec/response_call.c). */
#ifndef PGR_RESPONSE_CALL_H
#define PGR_RESPONSE_CALL_H

#include "engine/stage_view.h"
#include "exec/main_row.h"
#include "exec/response_record.h"
#include "plan/plan.h"

/* The per-action part of a function call's success response: status,
 * Content-Range, Preference-Applied. r already has Content-Type. */
int pgr_call_response(pgrest_ctx *ctx, pgrest_arena *a,
                      const pgrest_query_plan *plan, const pgr_main_row *row,
                      pgrest_response *r, pgrest_error *err);

/* RAISE SQLSTATE 'PGRST' (PostgREST ref/errors "Add HTTP Headers with
 * RAISE"): message and detail are the error's JSON texts. Fills *err and
 * *out (status and headers from DETAIL) and returns PGREST_ERR_DATABASE, or
 * fails with PGRST121 (500) leaving *out alone. */
int pgr_raise_response(pgrest_ctx *ctx, pgrest_arena *a, const char *message,
                       const char *detail, pgrest_response **out,
                       pgrest_error *err);

#endif
