#include "engine/observe.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/context_types.h"
#include "util/error.h"

void pgrest_ctx_set_observer(pgrest_ctx *ctx, pgrest_observer fn, void *arg)
{
    if (ctx == NULL)
        return;
    ctx->observer = fn;
    ctx->observer_arg = arg;
}

void pgr_observe(pgrest_ctx *ctx, pgrest_event event, const char *message)
{
    if (ctx != NULL && ctx->observer != NULL && message != NULL)
        ctx->observer(ctx->observer_arg, event, message);
}

void pgr_observef(pgrest_ctx *ctx, pgrest_event event, const char *fmt, ...)
{
    if (ctx == NULL || ctx->observer == NULL)
        return;
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (text != NULL) {
        vsnprintf(text, (size_t)n + 1, fmt, again);
        pgr_observe(ctx, event, text);
        free(text);
    }
    va_end(again);
    va_end(ap);
}

void pgr_observe_error(pgrest_ctx *ctx, pgrest_event event, const char *prefix,
                       const pgrest_error *err)
{
    if (ctx == NULL || ctx->observer == NULL)
        return;
    pgrest_arena *a = pgrest_arena_new(0);
    const char *json = a != NULL ? pgr_error_json(a, err, false) : NULL;
    pgr_observef(ctx, event, "%s%s", prefix, json != NULL ? json : "");
    pgrest_arena_free(a);
}

void pgr_observe_query_error_high(pgrest_ctx *ctx, const pgrest_error *err)
{
    const char *code = err->code;
    if (code == NULL)
        return;
    /* PGRST001: the connection failed under the query (hasql's ClientError) */
    bool server_error = strlen(code) == 5 && strncmp(code, "PGRST", 5) != 0;
    if (strcmp(code, "PGRST001") == 0 ||
        (server_error && pgr_sqlstate_http_status(code, err->message, false) >= 500))
        pgr_observe_error(ctx, PGREST_EVENT_QUERY_ERROR, "", err);
}
