/* INSERT / UPDATE / DELETE statements (PostgREST QueryBuilder
 * mutatePlanToQuery, Statements.mainWrite). */
#include "sql/emit_main.h"
#include "util/error.h"

int pgr_emit_main_mutation(pgr_sql *q, const pgrest_ctx *ctx,
                           const pgrest_query_plan *plan,
                           pgrest_statements *st, pgrest_error *err)
{
    (void)q; (void)ctx; (void)plan; (void)st;
    return pgr_error(err, 400, "PGRST127", "Feature not implemented", NULL, NULL);
}
