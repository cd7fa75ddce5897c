/* The api request: what parse_request makes of the HTTP pieces
 * (PostgREST's ApiRequest). Its types are in parse/api_types.h, the raw
 * request in parse/request.h. */
#ifndef PGR_API_REQUEST_H
#define PGR_API_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "parse/api_types.h"
#include "parse/request.h"
#include "pgrest/pgrest.h"

/* The checks an HTTP layer makes before anything else (server-max-body-size,
 * NUL bytes in header values): they win over authentication errors. */
int pgr_request_admissible(pgrest_ctx *ctx, pgrest_arena *arena,
                           const pgrest_request *req, pgrest_error *err);

/* 413 PGRST413, the answer to a body longer than server-max-body-size
 * (max_body_size), whether it came whole or in chunks (pgrest_task_write_body). */
int pgr_error_body_too_large(pgrest_arena *a, long long max_body_size, pgrest_error *err);
/* The same for the limit an option sets (server-max-streamed-body-size). */
int pgr_error_body_over(pgrest_arena *a, long long limit, const char *option, pgrest_error *err);

/* pgrest_parse_request of a request that passed pgr_request_admissible,
 * with the identity given (an authentication outcome, copied; NULL: the
 * api request has no role). Never authenticates. */
int pgr_parse_request_as(pgrest_ctx *ctx, pgrest_arena *arena,
                         const pgrest_request *req, const pgrest_auth *auth,
                         pgrest_api_request **out, pgrest_error *err);

#endif
