/* pgrest_error_response: the answer of a failed stage, as PostgREST's
 * Error.hs errorResponseFor builds it (JSON body, Content-Type,
 * WWW-Authenticate for JWT errors, Proxy-Status). */
#include <stdbool.h>
#include <string.h>

#include "auth/jwt.h"
#include "engine/stage_view.h"
#include "exec/response_record.h"
#include "util/error.h"

/* What an error response may take beyond an exhausted arena's cap: the
 * out-of-memory error's own response and its decoration fit easily. */
#define ERROR_RESERVE ((size_t)16 * 1024)

/* SQLSTATE PTxyz: Error.hs answers HTTP.mkStatus xyz message, so the
 * error's message is the status line's phrase */
static bool raised_status(const pgrest_error *err)
{
    const char *c = err->code;
    if (c == NULL || strlen(c) != 5 || c[0] != 'P' || c[1] != 'T')
        return false;
    for (int i = 2; i < 5; i++)
        if (c[i] < '0' || c[i] > '9')
            return false;
    return c[2] != '0';
}

static pgrest_response *build_error_response(pgrest_ctx *ctx, pgrest_arena *arena,
                                             const pgrest_error *err)
{
    int status = err->http_status ? err->http_status : 500;
    pgrest_response *r = pgr_response_new(arena, status);
    if (r == NULL)
        return NULL;
    const char *body = pgr_error_json(arena, err, pgr_cfg(ctx, arena)->client_error_minimal);
    pgr_response_add_header(arena, r, "Content-Type", "application/json; charset=utf-8");
    const char *www = pgr_jwt_www_authenticate(arena, err);
    if (www != NULL)
        pgr_response_add_header(arena, r, "WWW-Authenticate", www);
    if (err->code != NULL)
        pgr_response_add_header(arena, r, "Proxy-Status",
                                pgr_asprintf(arena, "PostgREST; error=%s", err->code));
    if (raised_status(err))
        pgr_response_set_reason(arena, r, err->message ? err->message : "");
    r->body = body ? body : "";
    r->body_len = strlen(r->body);
    return r;
}

/* An error whose response does not fit (a long message on an exhausted
 * arena) is answered with the out-of-memory error instead: the host gets
 * a complete response or NULL, never one with pieces missing. */
pgrest_response *pgrest_error_response(pgrest_ctx *ctx, pgrest_arena *arena,
                                       const pgrest_error *err)
{
    if (ctx == NULL || arena == NULL || err == NULL)
        return NULL;
    pgr_arena_reserve(arena, ERROR_RESERVE);
    size_t failures = pgr_arena_failures(arena);
    pgrest_response *r = build_error_response(ctx, arena, err);
    if (r != NULL && pgr_arena_failures(arena) == failures)
        return r;
    pgrest_error oom;
    pgr_error_oom(&oom);
    pgr_arena_reserve(arena, ERROR_RESERVE);
    failures = pgr_arena_failures(arena);
    r = build_error_response(ctx, arena, &oom);
    return r != NULL && pgr_arena_failures(arena) == failures ? r : NULL;
}
