/* Transactional batches (docs/batch.md): POST / with
 * application/vnd.pgrest.batch+json carries a JSON array of requests that
 * run in order, in one transaction, on one connection. Each item goes
 * through the single request's stages (parse, plan, emit) with the
 * batch's identity; its statements are then rewritten so that the batch,
 * not the item, owns the transaction: the first item opens it, the last
 * one ends it, and every item's response is built by the single request
 * path (exec/execute.c) and collected here. */
#ifndef PGR_BATCH_H
#define PGR_BATCH_H

#include <stdbool.h>

#include "pgrest/pgrest.h"
#include "sql/statements.h"

#define PGR_BATCH_MEDIA_TYPE "application/vnd.pgrest.batch+json"

typedef struct pgr_batch pgr_batch;

/* POST / with the batch media type (parameters ignored), unless
 * server-max-batch-items is 0; any other request to / keeps PostgREST's
 * meaning. */
struct pgr_config;
bool pgr_batch_requested(const struct pgr_config *cfg, const pgrest_request *req);

/* Reads the batch body and prepares every item with auth (the batch's
 * authentication outcome). The first failing item fails the batch with
 * its own error, details naming its index. */
int pgr_batch_prepare(pgrest_ctx *ctx, pgrest_arena *arena, const pgrest_request *req,
                      const pgrest_auth *auth, pgr_batch **out, pgrest_error *err);

size_t pgr_batch_count(const pgr_batch *b);
/* Item i's statements, rewritten for the batch's transaction. */
const pgrest_statements *pgr_batch_statements(const pgr_batch *b, size_t i);
/* All of them, in order: the units of the batch's one pipeline. */
const pgrest_statements *const *pgr_batch_units(const pgr_batch *b);

/* Item i's answer came (exec/execute.h pgr_unit_done): rc and its
 * response as the single request path built them. Returns true when the
 * batch goes on with item i + 1; otherwise the batch is over and *resp,
 * *err, *rc hold its answer (the array of responses, or item i's error
 * with its index in the details). */
bool pgr_batch_item_done(pgr_batch *b, size_t i, int *rc, pgrest_response **resp,
                         pgrest_error *err);

#endif
