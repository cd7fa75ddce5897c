/* Responses of function calls (PostgREST Response.hs actionResponse for
 * DbCallResult): ranges and counts as for reads, 204 without Content-Type
 * for void functions, the raw bytes of a bytea result. */
#include <string.h>
#include <strings.h>

#include "exec/response.h"
#include "plan/call_plan.h"
#include "util/error.h"

static void remove_header(pgrest_response *r, const char *name)
{
    size_t k = 0;
    for (size_t i = 0; i < r->n_headers; i++)
        if (strcasecmp(r->headers[i].name, name) != 0)
            r->headers[k++] = r->headers[i];
    r->n_headers = k;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* bytea arrives in PostgreSQL's text form "\x0a1b..."; the client gets the
 * bytes (application/octet-stream). */
static int decode_bytea(pgrest_arena *a, pgrest_response *r, pgrest_error *err)
{
    const char *s = r->body;
    size_t n = r->body_len;
    if (n < 2 || s[0] != '\\' || s[1] != 'x')
        return PGREST_OK;
    char *out = pgr_alloc(a, (n - 2) / 2 + 1);
    if (out == NULL)
        return pgr_error_oom(err);
    size_t k = 0;
    for (size_t i = 2; i + 1 < n; i += 2) {
        int hi = hex_value(s[i]), lo = hex_value(s[i + 1]);
        if (hi < 0 || lo < 0)
            return PGREST_OK;
        out[k++] = (char)(hi << 4 | lo);
    }
    r->body = out;
    r->body_len = k;
    return PGREST_OK;
}

int pgr_call_response(pgrest_ctx *ctx, pgrest_arena *a,
                      const pgrest_query_plan *plan, const pgr_main_row *row,
                      pgrest_response *r, pgrest_error *err)
{
    (void)ctx;
    const pgr_call_plan *cp = plan->call;
    if (cp != NULL && cp->result == PGR_CALL_RESULT_VOID) {
        /* PostgREST 11+: void functions answer 204 without Content-Type */
        r->status = 204;
        remove_header(r, "Content-Type");
        r->body = "";
        r->body_len = 0;
        return PGREST_OK;
    }
    int rc = pgr_read_response(a, plan, row, r, err);
    if (rc != PGREST_OK)
        return rc;
    if (cp != NULL && cp->raw_bytea && !plan->api->is_head)
        return decode_bytea(a, r, err);
    return PGREST_OK;
}
