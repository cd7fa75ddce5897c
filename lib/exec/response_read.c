/* The read part of a response (PostgREST Response.hs for reads, MainTx.hs
 * failNotSingular): Content-Range, 206, 416, Content-Location. Function
 * results reuse it (exec/response_call.c), so it is not in response.c,
 * which dispatches to that file. */
#include "exec/response_read.h"

#include <string.h>

#include "util/error.h"
#include "util/strbuf.h"

/* MainTx.hs failNotSingular: vnd.pgrst.object needs exactly one row. */
int pgr_check_singular(pgrest_arena *a, const pgrest_query_plan *plan,
                       const pgr_main_row *row, pgrest_error *err)
{
    if (plan->output == PGR_OUT_OBJECT && row->page_total != 1)
        return pgr_error(err, 406, "PGRST116",
                         "Cannot coerce the result to a single JSON object",
                         pgr_asprintf(a, "The result contains %lld rows", row->page_total),
                         NULL);
    return PGREST_OK;
}

/* Response.hs: a range starting past the total answers 416 with the
 * error as the body, the negotiated Content-Type and the other headers of
 * a read (no Proxy-Status: it is no error response). */
static int range_not_satisfiable(pgrest_ctx *ctx, pgrest_arena *a,
                                 const pgrest_query_plan *plan, long long lower,
                                 const pgr_main_row *row, pgrest_response *r,
                                 pgrest_error *err)
{
    pgrest_error e = {0};
    pgr_errorf(&e, a, 416, "PGRST103", NULL, NULL, "Requested range not satisfiable");
    e.details = pgr_asprintf(a, "An offset of %lld was requested, but there are only %lld rows.",
                             lower, row->total);
    const char *body = pgr_error_json(a, &e, pgr_cfg(ctx, a)->client_error_minimal);
    if (body == NULL || e.details == NULL)
        return pgr_error_oom(err);
    r->status = 416;
    if (!plan->api->is_head) {
        r->body = body;
        r->body_len = strlen(body);
    }
    return PGREST_OK;
}

/* "/name?canonical", "/name" without a query (no printf: every read
 * answer has it) */
static const char *content_location(pgrest_arena *a, const char *name, const char *canonical)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, 64);
    pgr_sb_putc(&sb, '/');
    pgr_sb_puts(&sb, name);
    if (canonical != NULL && *canonical != '\0') {
        pgr_sb_putc(&sb, '?');
        pgr_sb_puts(&sb, canonical);
    }
    return pgr_sb_finish(&sb);
}

int pgr_read_response(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_query_plan *plan,
                      const pgr_main_row *row, pgrest_response *r,
                      pgrest_error *err)
{
    long long lower = plan->read ? plan->read->offset : 0;
    long long upper = lower + row->page_total - 1;
    const char *cr = pgr_content_range(a, lower, upper, row->has_total, row->total);
    /* MainTx.hs failNotSingular runs in the transaction, before
     * Response.hs checks the range */
    int rc = pgr_check_singular(a, plan, row, err);
    if (rc != PGREST_OK)
        return rc;
    if (row->has_total && lower > row->total) {
        if ((rc = range_not_satisfiable(ctx, a, plan, lower, row, r, err)) != PGREST_OK)
            return rc;
    } else if (row->has_total && 1 + upper - lower < row->total) {
        r->status = 206;
    }
    pgr_response_add_header(a, r, "Content-Range", cr);
    const char *canonical = plan->api->qp.canonical;
    if (plan->action == PGR_ACTION_READ)
        pgr_response_add_header(a, r, "Content-Location",
                                content_location(a, plan->api->name, canonical));
    return PGREST_OK;
}
