/* The transaction-settings statement (PostgREST Query/PreQuery.hs
 * txVarQuery) and the pre-request call. */
#ifndef PGR_EMIT_PREAMBLE_H
#define PGR_EMIT_PREAMBLE_H

#include "engine/stage_view.h"
#include "plan/plan.h"
#include "sql/sql_builder.h"

int pgr_emit_settings(pgr_sql *q, const pgrest_ctx *ctx,
                      const pgrest_query_plan *plan, pgrest_error *err);
/* The transaction's isolation level (PostgREST MainTx.hs planIsoLvl): the
 * called function's default_transaction_isolation, else the role's:
 * "REPEATABLE READ", "SERIALIZABLE", or NULL for read committed. */
const char *pgr_emit_isolation_level(const pgrest_query_plan *plan);
/* SELECT "schema"."fn"() for db-pre-request; false when not configured. */
bool pgr_emit_pre_request(pgr_sql *q, const pgrest_ctx *ctx);

#endif
