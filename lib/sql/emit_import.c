/* The statements of a streamed body (emit_import.h). */
#include "sql/emit_import.h"

#include <string.h>

#include "plan/mutate_plan.h"
#include "util/error.h"
#include "util/strbuf.h"

bool pgr_import_eligible(const pgrest_query_plan *plan)
{
    const pgr_mutate_plan *mp = plan->mutate;
    return plan->action == PGR_ACTION_CREATE && mp != NULL && mp->nested == NULL &&
           !mp->representation && !plan->explain && !plan->in_batch &&
           plan->api != NULL && plan->api->target == PGR_TARGET_RELATION;
}

/* The table is created by the connection's own role, before the
 * request's role is set (whose TEMP privilege is no concern of a write);
 * every role may read it, and only this session can see it. */
const char *pgr_emit_import_open(pgrest_arena *a, const pgrest_statements *st)
{
    const char *begin = NULL;
    for (size_t i = 0; i < st->n && begin == NULL; i++)
        if (st->items[i].role == PGR_STMT_BEGIN)
            begin = st->items[i].sql;
    if (begin == NULL)
        return NULL;
    return pgr_asprintf(a,
                        "%s; CREATE TEMPORARY TABLE pgrst_import (json_data json) "
                        "ON COMMIT DROP; GRANT SELECT ON " PGR_IMPORT_TABLE " TO PUBLIC; "
                        "COPY " PGR_IMPORT_TABLE " (json_data) FROM STDIN",
                        begin);
}

int pgr_emit_import_statements(pgrest_arena *a, const pgrest_statements *st,
                               pgrest_statements **out, pgrest_error *err)
{
    pgrest_statements *copy = pgr_statements_rewrite(a, st, 0);
    if (copy == NULL)
        return pgr_error_oom(err);
    for (size_t i = 0; i < st->n; i++) {
        pgr_stmt s = st->items[i];
        if (s.role == PGR_STMT_BEGIN)
            continue;
        s.prepare = false;
        copy->items[copy->n++] = s;
    }
    *out = copy;
    return PGREST_OK;
}
