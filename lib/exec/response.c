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
                                     plan->openapi_version, row->body, &doc->body_len, err);
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
