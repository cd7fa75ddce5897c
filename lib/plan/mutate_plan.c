/* Mutations (PostgREST Plan/MutatePlan.hs). */
#include "plan/plan.h"
#include "util/error.h"

int pgr_plan_mutation(pgrest_ctx *ctx, pgrest_arena *a,
                      const pgrest_api_request *api, pgrest_query_plan *plan,
                      pgrest_error *err)
{
    (void)ctx; (void)a; (void)api; (void)plan;
    return pgr_error(err, 400, "PGRST127", "Feature not implemented",
                     "Writes are not supported by pgrest yet", NULL);
}
