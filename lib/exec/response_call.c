/* Responses of function calls (PostgREST Response.hs actionResponse for
 * DbCallResult): ranges and counts as for reads, 204 without Content-Type
 * for void functions. */
#include <json-c/json.h>
#include <string.h>

#include "exec/preference_applied.h"
#include "exec/response_call.h"
#include "exec/response_read.h"
#include "plan/call_plan.h"
#include "util/error.h"
#include "util/json_strict.h"

int pgr_call_response(pgrest_ctx *ctx, pgrest_arena *a,
                      const pgrest_query_plan *plan, const pgr_main_row *row,
                      pgrest_response *r, pgrest_error *err)
{
    (void)ctx;
    const pgr_call_plan *cp = plan->call;
    /* MainTx.hs actionResult (CallReadPlan): failNotSingular, then
     * failExceedsMaxAffectedPref on the rows the function returned */
    int rc = pgr_check_singular(a, plan, row, err);
    if (rc != PGREST_OK)
        return rc;
    if (cp != NULL && cp->check_max_affected && row->page_total > cp->max_affected)
        return pgr_error(err, 400, "PGRST124",
                         "Query result exceeds max-affected preference constraint",
                         pgr_asprintf(a, "The query affects %lld rows", row->page_total),
                         NULL);
    /* Response.hs responsePreferences: max-affected is reported for calls */
    const char *prefs = pgr_preference_applied(a, plan, PGR_PREFS_MAX_AFFECTED);
    if (prefs != NULL)
        pgr_response_add_header(a, r, "Preference-Applied", prefs);
    if (cp != NULL && cp->result == PGR_CALL_RESULT_VOID) {
        /* PostgREST 11+: void functions answer 204 without Content-Type,
         * with the Content-Range of their one row (Response.hs
         * actionResponse for CallReadPlan: contentRange : prefHeader) */
        long long lower = plan->read ? plan->read->offset : 0;
        pgr_response_add_header(a, r, "Content-Range",
                                pgr_content_range(a, lower, lower + row->page_total - 1,
                                                  row->has_total, row->total));
        r->status = 204;
        pgr_response_remove_header(r, "Content-Type");
        r->body = "";
        r->body_len = 0;
        return PGREST_OK;
    }
    return pgr_read_response(ctx, a, plan, row, r, err);
}

/* ------------------------------------------------- RAISE SQLSTATE 'PGRST' */

static const char *raise_error_title =
    "Could not parse JSON in the \"RAISE SQLSTATE 'PGRST'\" error";
static const char *raise_detail_hint =
    "DETAIL must be a JSON object with obligatory keys: 'status', 'headers' and optional key: 'status_text'.";

static void free_json(void *o)
{
    json_object_put(o);
}

/* aeson's decodeStrict (Error.hs parseRaisePGRST): strict JSON */
static json_object *parse_object(pgrest_arena *a, const char *text)
{
    json_object *o = NULL;
    if (text == NULL || !pgr_json_parse_strict(text, strlen(text), &o))
        return NULL;
    if (o != NULL && !pgr_arena_on_free(a, free_json, o)) {
        json_object_put(o);
        return NULL;
    }
    return json_object_is_type(o, json_type_object) ? o : NULL;
}

static const char *opt_string(pgrest_arena *a, json_object *o, const char *key,
                              bool *ok)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
        return NULL;
    if (!json_object_is_type(v, json_type_string)) {
        *ok = false;
        return NULL;
    }
    return pgr_strdup(a, json_object_get_string(v));
}

/* MESSAGE: {code, message, details?, hint?} (PostgREST PgRaiseErrMessage) */
static bool raise_message(pgrest_arena *a, const char *text, pgrest_error *e)
{
    json_object *o = parse_object(a, text);
    bool ok = o != NULL;
    if (ok) {
        e->code = opt_string(a, o, "code", &ok);
        e->message = opt_string(a, o, "message", &ok);
        e->details = opt_string(a, o, "details", &ok);
        e->hint = opt_string(a, o, "hint", &ok);
    }
    return ok && e->code != NULL && e->message != NULL;
}

/* An aeson Int: a JSON number with an integral value (332 or 332.0),
 * here within the three digits a status line carries. */
static bool raise_status(json_object *st, int *status)
{
    double d;
    if (json_object_is_type(st, json_type_int))
        d = (double)json_object_get_int64(st);
    else if (json_object_is_type(st, json_type_double))
        d = json_object_get_double(st);
    else
        return false;
    if (!(d >= 100 && d <= 999) || d != (double)(int)d)
        return false;
    *status = (int)d;
    return true;
}

/* DETAIL: {status, status_text?, headers{}} (PgRaiseErrDetails) */
static json_object *raise_detail(pgrest_arena *a, const char *text, int *status,
                                 const char **status_text)
{
    json_object *o = parse_object(a, text), *st, *hdrs;
    bool ok = true;
    if (o == NULL || !json_object_object_get_ex(o, "status", &st) ||
        !raise_status(st, status) ||
        !json_object_object_get_ex(o, "headers", &hdrs) ||
        !json_object_is_type(hdrs, json_type_object))
        return NULL;
    *status_text = opt_string(a, o, "status_text", &ok);
    if (!ok)
        return NULL;
    json_object_object_foreach(hdrs, k, v) {
        (void)k;
        if (!json_object_is_type(v, json_type_string))
            return NULL;
    }
    return hdrs;
}

static int raise_parse_error(pgrest_arena *a, const char *details,
                             const char *hint, pgrest_error *err)
{
    pgr_error(err, 500, "PGRST121", raise_error_title, details, hint);
    return pgr_arena_exhausted(a) ? pgr_error_oom(err) : PGREST_ERR_DATABASE;
}

int pgr_raise_response(pgrest_ctx *ctx, pgrest_arena *a, const char *message,
                       const char *detail, pgrest_response **out,
                       pgrest_error *err)
{
    pgrest_error e = {0};
    int status = 0;
    if (!raise_message(a, message, &e))
        return raise_parse_error(a, pgr_asprintf(a, "Invalid JSON value for MESSAGE: '%s'",
                                                 message ? message : ""),
                                 "MESSAGE must be a JSON object with obligatory keys: 'code', 'message' and optional keys: 'details', 'hint'.",
                                 err);
    if (detail == NULL)
        return raise_parse_error(a, "DETAIL is missing in the RAISE statement",
                                 raise_detail_hint, err);
    const char *status_text = NULL;
    json_object *hdrs = raise_detail(a, detail, &status, &status_text);
    if (hdrs == NULL)
        return raise_parse_error(a, pgr_asprintf(a, "Invalid JSON value for DETAIL: '%s'", detail),
                                 raise_detail_hint, err);
    e.http_status = status;
    *err = e;
    pgrest_response *r = pgrest_error_response(ctx, a, &e);
    if (r == NULL)
        return pgr_error_oom(err);
    /* Error.hs headers of a RAISE 'PGRST' error: only those it names (no
     * WWW-Authenticate for a raised 401) */
    pgr_response_remove_header(r, "WWW-Authenticate");
    /* HTTP.mkStatus status status_text; toEnum status without one (a
     * MESSAGE code PTxyz does not name the phrase here) */
    r->reason = NULL;
    if (status_text != NULL)
        pgr_response_set_reason(a, r, status_text);
    json_object_object_foreach(hdrs, k, v)
        pgr_response_add_header(a, r, pgr_strdup(a, k),
                                pgr_strdup(a, json_object_get_string(v)));
    *out = r;
    return PGREST_ERR_DATABASE;
}
