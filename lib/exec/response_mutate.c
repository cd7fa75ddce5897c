/* Responses of writes (PostgREST Response.hs for Create/Update/Delete). */
#include "exec/response.h"
#include "util/error.h"

int pgr_mutation_response(pgrest_ctx *ctx, pgrest_arena *a,
                          const pgrest_query_plan *plan, const pgr_main_row *row,
                          pgrest_response *r, pgrest_error *err)
{
    (void)ctx; (void)a; (void)plan; (void)row; (void)r; (void)err;
    return PGREST_OK;
}
