/* Observations for the host's observer (PostgREST Observation.hs): the
 * library reports what happened in PostgREST's words and never prints. */
#ifndef PGR_OBSERVE_H
#define PGR_OBSERVE_H

#include "pgrest/pgrest.h"

/* Passes one message to the context's observer, if any. */
void pgr_observe(pgrest_ctx *ctx, pgrest_event event, const char *message);
/* Formats the message first (nothing is formatted without an observer). */
void pgr_observef(pgrest_ctx *ctx, pgrest_event event, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* PostgREST's jsonMessage: the error as its JSON body (verbose). */
void pgr_observe_error(pgrest_ctx *ctx, pgrest_event event, const char *prefix,
                       const pgrest_error *err);
/* A background query's error (schema cache, in-database settings) as
 * PostgREST's usePool reports it first: QueryErrorCodeHighObs when its
 * status would be 5xx (or it is hasql's ClientError, PGRST001); nothing
 * for other errors. */
void pgr_observe_query_error_high(pgrest_ctx *ctx, const pgrest_error *err);

#endif
