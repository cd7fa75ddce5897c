/* The HTTP response a request produces (PostgREST Response.hs). */
#ifndef PGR_RESPONSE_H
#define PGR_RESPONSE_H

#include <libpq-fe.h>

#include "context.h"
#include "pgrest/pgrest.h"
#include "sql/statements.h"

struct pgrest_response {
    int status;
    pgrest_header *headers;
    size_t n_headers;
    size_t cap_headers;
    const char *body;
    size_t body_len;
    const char *role;   /* authenticated role, for access logs; NULL if unknown */
    const char *reason; /* the status line's own phrase; NULL: the status's usual one */
    bool streamed;      /* the body comes from pgrest_task_read_body */
};

pgrest_response *pgr_response_new(pgrest_arena *a, int status);
void pgr_response_add_header(pgrest_arena *a, pgrest_response *r,
                             const char *name, const char *value);
/* Replaces (or adds) a header by case-insensitive name. */
void pgr_response_set_header(pgrest_arena *a, pgrest_response *r,
                             const char *name, const char *value);
const char *pgr_response_get_header(const pgrest_response *r, const char *name);
/* The status line's own phrase (pgrest_response_reason), control
 * characters replaced by spaces: Warp writes it as it is, and a CR LF in
 * it would end the status line. */
void pgr_response_set_reason(pgrest_arena *a, pgrest_response *r, const char *text);
/* Drops every header of that case-insensitive name. */
void pgr_response_remove_header(pgrest_response *r, const char *name);

/* The main statement's row: body, counts and GUC overrides. */
typedef struct pgr_main_row {
    bool has_total;
    long long total;
    long long page_total;
    const char *body;
    size_t body_len;
    const char *guc_headers;  /* response.headers JSON or NULL */
    const char *guc_status;   /* response.status or NULL */
    const char *location;     /* response_location column (POST) or NULL */
    bool has_inserted;
    long long inserted;       /* response_inserted column (upserts) */
} pgr_main_row;

/* Builds the success response, or fails with the PostgREST error
 * (PGRST103 416, PGRST116 406, PGRST111/112 ...). */
int pgr_build_response(pgrest_ctx *ctx, pgrest_arena *a,
                       const pgrest_query_plan *plan, const pgr_main_row *row,
                       pgrest_response **out, pgrest_error *err);

/* Per-action parts of the success response: status, Location,
 * Content-Range, Preference-Applied (exec/response_mutate.c,
 * exec/response_call.c). r already has Content-Type. */
int pgr_mutation_response(pgrest_ctx *ctx, pgrest_arena *a,
                          const pgrest_query_plan *plan, const pgr_main_row *row,
                          pgrest_response *r, pgrest_error *err);
int pgr_call_response(pgrest_ctx *ctx, pgrest_arena *a,
                      const pgrest_query_plan *plan, const pgr_main_row *row,
                      pgrest_response *r, pgrest_error *err);

/* OPTIONS on a relation, routine or the root (exec/response_info.c). */
int pgr_info_response(pgrest_ctx *ctx, pgrest_arena *a,
                      const pgrest_api_request *api, pgrest_response **out,
                      pgrest_error *err);

/* Preference-Applied value (PostgREST Preferences.hs prefAppliedHeader),
 * or NULL when nothing applies. count, tx (when overridable), handling and
 * timezone are always reported; the flags add the per-action ones. */
enum {
    PGR_PREFS_RESOLUTION = 1u << 0,
    PGR_PREFS_MISSING = 1u << 1,
    PGR_PREFS_RETURN = 1u << 2,
    PGR_PREFS_MAX_AFFECTED = 1u << 3
};
const char *pgr_preference_applied(pgrest_arena *a, const pgrest_query_plan *plan,
                                   unsigned show);

/* PGRST116 (406) when singular output (vnd.pgrst.object) has not exactly
 * one row (MainTx.hs failNotSingular). */
int pgr_check_singular(pgrest_arena *a, const pgrest_query_plan *plan,
                       const pgr_main_row *row, pgrest_error *err);

/* The read part of a response: Content-Range, 206, 416 and PGRST116 (406)
 * for singular output; also used for function results. A range past the
 * total is an ordinary response with status 416 and PGRST103 as its body
 * (Response.hs), not an error. */
int pgr_read_response(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_query_plan *plan,
                      const pgr_main_row *row, pgrest_response *r,
                      pgrest_error *err);

/* RAISE SQLSTATE 'PGRST' (PostgREST ref/errors "Add HTTP Headers with
 * RAISE"): message and detail are the error's JSON texts. Fills *err and
 * *out (status and headers from DETAIL) and returns PGREST_ERR_DATABASE, or
 * fails with PGRST121 (500) leaving *out alone. */
int pgr_raise_response(pgrest_ctx *ctx, pgrest_arena *a, const char *message,
                       const char *detail, pgrest_response **out,
                       pgrest_error *err);

/* The Location of an insert: "/<table>?k1=eq.v1&..." from the text[]
 * of "key=value" strings the statement returns (array_out's text form),
 * each side percent-encoded as http-types renderSimpleQuery does. NULL
 * for an empty array or a value that is no such array. */
const char *pgr_location_header(pgrest_arena *a, const char *table, const char *pairs);

/* Content-Range "lower-upper/total", "*" for an unknown total or an empty
 * range (PostgREST RangeQuery contentRangeH). */
const char *pgr_content_range(pgrest_arena *a, long long lower, long long upper,
                              bool has_total, long long total);

/* response.headers / response.status set by SQL override the response. */
int pgr_apply_gucs(pgrest_arena *a, pgrest_response *r, const pgr_main_row *row,
                   pgrest_error *err);

#endif
