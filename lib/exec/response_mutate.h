/* Responses of writes (exec/response_mutate.c). */
#ifndef PGR_RESPONSE_MUTATE_H
#define PGR_RESPONSE_MUTATE_H

#include "engine/stage_view.h"
#include "exec/main_row.h"
#include "exec/response_record.h"
#include "plan/plan.h"

/* The per-action part of a write's success response: status, Location,
 * Content-Range, Preference-Applied. r already has Content-Type. */
int pgr_mutation_response(pgrest_ctx *ctx, pgrest_arena *a,
                          const pgrest_query_plan *plan, const pgr_main_row *row,
                          pgrest_response *r, pgrest_error *err);

/* The Location of an insert: "/<table>?k1=eq.v1&..." from the text[]
 * of "key=value" strings the statement returns (array_out's text form),
 * each side percent-encoded as http-types renderSimpleQuery does. NULL
 * for an empty array or a value that is no such array. */
const char *pgr_location_header(pgrest_arena *a, const char *table, const char *pairs);

#endif
