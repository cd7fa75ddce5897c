#include "exec/response.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "openapi/openapi.h"
#include "util/error.h"
#include "util/json_strict.h"
#include "util/number.h"
#include "util/strbuf.h"

pgrest_response *pgr_response_new(pgrest_arena *a, int status)
{
    pgrest_response *r = PGR_NEW(a, pgrest_response);
    if (r != NULL) {
        r->status = status;
        r->body = "";
    }
    return r;
}

void pgr_response_add_header(pgrest_arena *a, pgrest_response *r,
                             const char *name, const char *value)
{
    /* a NULL is a copy that failed: the arena is exhausted and the stage
     * fails at its boundary; never hand the host a NULL header */
    if (name == NULL || value == NULL)
        return;
    if (r->n_headers == r->cap_headers) {
        size_t ncap = r->cap_headers ? r->cap_headers * 2 : 8;
        pgrest_header *n = pgr_realloc(a, r->headers,
                                       r->cap_headers * sizeof(pgrest_header),
                                       ncap * sizeof(pgrest_header));
        if (n == NULL)
            return;
        r->headers = n;
        r->cap_headers = ncap;
    }
    r->headers[r->n_headers].name = name;
    r->headers[r->n_headers].value = value;
    r->n_headers++;
}

void pgr_response_set_reason(pgrest_arena *a, pgrest_response *r, const char *text)
{
    char *phrase = pgr_strdup(a, text);
    if (phrase == NULL)
        return;
    for (char *p = phrase; *p != '\0'; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    r->reason = phrase;
}

void pgr_response_set_header(pgrest_arena *a, pgrest_response *r,
                             const char *name, const char *value)
{
    if (name == NULL || value == NULL)
        return;
    for (size_t i = 0; i < r->n_headers; i++)
        if (strcasecmp(r->headers[i].name, name) == 0) {
            r->headers[i].value = value;
            return;
        }
    pgr_response_add_header(a, r, name, value);
}

const char *pgr_response_get_header(const pgrest_response *r, const char *name)
{
    for (size_t i = 0; i < r->n_headers; i++)
        if (strcasecmp(r->headers[i].name, name) == 0)
            return r->headers[i].value;
    return NULL;
}

/* Content-Range "lower-upper/total" (PostgREST RangeQuery contentRangeH). */
const char *pgr_content_range(pgrest_arena *a, long long lower, long long upper,
                              bool has_total, long long total)
{
    bool total_nonzero = !has_total || total != 0;
    pgr_sb sb;
    pgr_sb_init(&sb, a, 48);
    if (total_nonzero && lower <= upper) {
        pgr_sb_put_long(&sb, lower);
        pgr_sb_putc(&sb, '-');
        pgr_sb_put_long(&sb, upper);
    } else {
        pgr_sb_putc(&sb, '*');
    }
    pgr_sb_putc(&sb, '/');
    if (has_total)
        pgr_sb_put_long(&sb, total);
    else
        pgr_sb_putc(&sb, '*');
    return pgr_sb_finish(&sb);
}

void pgr_response_remove_header(pgrest_response *r, const char *name)
{
    size_t k = 0;
    for (size_t i = 0; i < r->n_headers; i++)
        if (strcasecmp(r->headers[i].name, name) != 0)
            r->headers[k++] = r->headers[i];
    r->n_headers = k;
}

/* Headers named in response.headers replace the response's own; the GUC
 * may repeat a name (two Set-Cookie), all are kept (PostgREST Response.hs
 * overrideStatusHeaders). */
static void drop_overridden(pgrest_response *r, json_object *arr)
{
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        json_object *o = json_object_array_get_idx(arr, i);
        if (!json_object_is_type(o, json_type_object))
            continue;
        json_object_object_foreach(o, k, v) {
            (void)v;
            pgr_response_remove_header(r, k);
        }
    }
}

/* response.headers: a JSON array of objects with exactly one key each
 * (GucHeader.hs), whose value is a string; read with aeson's
 * eitherDecode (Response.hs decodeGucHeaders), so strictly. */
static int apply_guc_headers(pgrest_arena *a, pgrest_response *r,
                             const char *json, pgrest_error *err)
{
    json_object *arr = NULL;
    bool ok = pgr_json_parse_strict(json, strlen(json), &arr) &&
              json_object_is_type(arr, json_type_array);
    if (ok)
        drop_overridden(r, arr);
    for (size_t i = 0; ok && i < json_object_array_length(arr); i++) {
        json_object *o = json_object_array_get_idx(arr, i);
        if (!json_object_is_type(o, json_type_object) || json_object_object_length(o) != 1) {
            ok = false;
            break;
        }
        json_object_object_foreach(o, k, v) {
            if (!json_object_is_type(v, json_type_string)) {
                ok = false;
                break;
            }
            pgr_response_add_header(a, r, pgr_strdup(a, k),
                                    pgr_strdup(a, json_object_get_string(v)));
        }
    }
    json_object_put(arr);
    if (!ok)
        return pgr_error(err, 500, "PGRST111",
                         "response.headers guc must be a JSON array composed of objects with a single key and a string value",
                         NULL, NULL);
    return PGREST_OK;
}

/* response.status: Response.hs decodeGucStatus reads it with
 * Data.Text.Read.decimal, the leading digits (no sign, no space) with
 * anything after them ignored. PostgREST takes any number there; three
 * digits is what an HTTP status line can carry, so others fail too. */
static int apply_guc_status(pgrest_response *r, const char *text,
                            pgrest_error *err)
{
    int st = 0;
    size_t n = 0;
    for (; text[n] >= '0' && text[n] <= '9'; n++)
        if (st <= 999)
            st = st * 10 + (text[n] - '0');
    if (n == 0 || st < 100 || st > 999)
        return pgr_error(err, 500, "PGRST112",
                         "response.status guc must be a valid status code",
                         NULL, NULL);
    r->status = st;
    return PGREST_OK;
}

int pgr_apply_gucs(pgrest_arena *a, pgrest_response *r, const pgr_main_row *row,
                   pgrest_error *err)
{
    int rc;
    if (row->guc_headers != NULL &&
        (rc = apply_guc_headers(a, r, row->guc_headers, err)) != PGREST_OK)
        return rc;
    if (row->guc_status != NULL &&
        (rc = apply_guc_status(r, row->guc_status, err)) != PGREST_OK)
        return rc;
    return PGREST_OK;
}

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


/* A bytea body arrives in PostgreSQL's text form "\x0a1b..."; PostgREST
 * reads it in binary format, so the client gets the bytes. */
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
        int hi = pgr_hex_value(s[i]), lo = pgr_hex_value(s[i + 1]);
        if (hi < 0 || lo < 0)
            return PGREST_OK;
        out[k++] = (char)(hi << 4 | lo);
    }
    r->body = out;
    r->body_len = k;
    return PGREST_OK;
}

/* Accept: application/vnd.pgrst.plan: 200 with the plan (PostgREST
 * Response.hs, RSPlan). */
static pgrest_response *explain_response(pgrest_ctx *ctx, pgrest_arena *a,
                                         const pgrest_query_plan *plan,
                                         const pgr_main_row *row)
{
    pgrest_response *r = pgr_response_new(a, 200);
    if (r == NULL)
        return NULL;
    pgr_response_add_header(a, r, "Content-Type", plan->content_type);
    if (plan->api->negotiated_by_profile || pgr_cfg(ctx, a)->n_db_schemas > 1)
        pgr_response_add_header(a, r, "Content-Profile", plan->api->schema);
    /* a HEAD keeps the plan as the body (DbPlanResult, whose
     * Content-Length is the plan's); the HTTP layer sends no body */
    r->body = row->body;
    r->body_len = row->body_len;
    /* App.hs toWaiResponse varies every answer postgrestResponse builds,
     * the plan's too */
    pgr_response_add_header(a, r, "Vary", "Accept, Prefer, Range");
    return r;
}

/* GET /: the statement returned what the document needs from the
 * database; the document replaces it as the body (Response.hs
 * openApiResponse). */
static int openapi_row(pgrest_ctx *ctx, pgrest_arena *a,
                       const pgrest_query_plan *plan, const pgr_main_row *row,
                       pgr_main_row *doc, pgrest_error *err)
{
    *doc = *row;
    if (plan->api->is_head)
        return PGREST_OK;
    doc->body = pgr_openapi_document(ctx, a, plan->schema, plan->api->schema,
                                     row->body, &doc->body_len, err);
    return doc->body != NULL ? PGREST_OK : PGREST_ERR_INTERNAL;
}

int pgr_build_response(pgrest_ctx *ctx, pgrest_arena *a,
                       const pgrest_query_plan *plan, const pgr_main_row *row,
                       pgrest_response **out, pgrest_error *err)
{
    pgr_main_row doc;
    if (plan->explain) {
        *out = explain_response(ctx, a, plan, row);
        return *out != NULL ? PGREST_OK : pgr_error_oom(err);
    }
    if (plan->action == PGR_ACTION_SCHEMA_READ) {
        int drc = openapi_row(ctx, a, plan, row, &doc, err);
        if (drc != PGREST_OK)
            return drc;
        row = &doc;
    }
    pgrest_response *r = pgr_response_new(a, 200);
    if (r == NULL)
        return pgr_error_oom(err);
    int rc = PGREST_OK;
    if (plan->output != PGR_OUT_NONE || plan->api->is_head)
        pgr_response_add_header(a, r, "Content-Type", plan->content_type);
    /* set first: the per-action parts may replace it (204, raw bytes) */
    if (!plan->api->is_head) {
        r->body = row->body;
        r->body_len = row->body_len;
    }
    switch (plan->action) {
    case PGR_ACTION_READ:
        rc = pgr_read_response(ctx, a, plan, row, r, err);
        if (rc == PGREST_OK) {
            const char *pa = pgr_preference_applied(a, plan, 0);
            if (pa != NULL)
                pgr_response_add_header(a, r, "Preference-Applied", pa);
        }
        break;
    case PGR_ACTION_CREATE:
    case PGR_ACTION_UPDATE:
    case PGR_ACTION_UPSERT:
    case PGR_ACTION_DELETE:
        rc = pgr_mutation_response(ctx, a, plan, row, r, err);
        break;
    case PGR_ACTION_CALL:
        rc = pgr_call_response(ctx, a, plan, row, r, err);
        break;
    default:
        break;
    }
    if (rc != PGREST_OK)
        return rc;
    if (plan->body_bytes && !plan->api->is_head &&
        (rc = decode_bytea(a, r, err)) != PGREST_OK)
        return rc;
    /* Response.hs contentTypeHeaders: the profile goes out with the
     * Content-Type only, so not on a 204 write or a void call (and before
     * response.headers may add a Content-Type of their own) */
    if ((plan->api->negotiated_by_profile || pgr_cfg(ctx, a)->n_db_schemas > 1) &&
        pgr_response_get_header(r, "Content-Type") != NULL)
        pgr_response_add_header(a, r, "Content-Profile", plan->api->schema);
    if ((rc = pgr_apply_gucs(a, r, row, err)) != PGREST_OK)
        return rc;
    if (pgr_response_get_header(r, "Vary") == NULL)
        pgr_response_add_header(a, r, "Vary", "Accept, Prefer, Range");
    *out = r;
    return PGREST_OK;
}

int pgrest_response_status(const pgrest_response *resp)
{
    return resp ? resp->status : 500;
}

const char *pgrest_response_reason(const pgrest_response *resp)
{
    return resp ? resp->reason : NULL;
}

size_t pgrest_response_header_count(const pgrest_response *resp)
{
    return resp ? resp->n_headers : 0;
}

const pgrest_header *pgrest_response_header(const pgrest_response *resp,
                                            size_t i)
{
    return resp && i < resp->n_headers ? &resp->headers[i] : NULL;
}

const char *pgrest_response_role(const pgrest_response *resp)
{
    return resp ? resp->role : NULL;
}

const char *pgrest_response_body(const pgrest_response *resp, size_t *len)
{
    if (len != NULL)
        *len = resp ? resp->body_len : 0;
    return resp ? resp->body : NULL;
}

const char *pgrest_response_commit_lsn(const pgrest_response *resp)
{
    return resp ? pgr_response_get_header(resp, PGREST_COMMIT_LSN_HEADER) : NULL;
}
