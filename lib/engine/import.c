/* A streamed body's chunks into COPY data (import.h). */
#include "engine/import.h"

#include <string.h>
#include <strings.h>

#include "engine/context.h"
#include "parse/media_type.h"
#include "parse/query_string.h"
#include "util/error.h"

/* The first buffer of converted rows: a chunk's worth, reused. */
#define LINES_CAPACITY (64 * 1024)

/* Payload.hs reads a body without Content-Type as JSON. */
static bool format_of(pgrest_arena *a, const pgrest_request *req, pgr_import_format *fmt)
{
    const char *ct = pgr_request_header(req, "Content-Type");
    pgr_media_type *m = ct != NULL ? pgr_parse_media_type(a, ct) : NULL;
    pgr_media_kind kind = m != NULL ? m->kind : PGR_MEDIA_JSON;
    if (ct != NULL && m == NULL)
        return false;
    switch (kind) {
    case PGR_MEDIA_JSON:
        *fmt = PGR_IMPORT_JSON;
        return true;
    case PGR_MEDIA_NDJSON:
        *fmt = PGR_IMPORT_NDJSON;
        return true;
    case PGR_MEDIA_CSV:
        *fmt = PGR_IMPORT_CSV;
        return true;
    default:
        return false;
    }
}

/* ?columns= takes the named keys of every row, whatever else it has
 * (Payload.hs RawJSON): the rows' keys need not match then. */
static bool names_columns(pgrest_arena *a, const pgrest_request *req)
{
    for (const pgr_kv *p = pgr_query_string_decode(a, req->query); p != NULL; p = p->next)
        if (strcmp(p->name, "columns") == 0)
            return true;
    return false;
}

static bool may_stream(pgrest_arena *a, const pgrest_request *req, pgr_import_format *fmt)
{
    return req->import_threshold > 0 && strcasecmp(req->method, "POST") == 0 &&
           format_of(a, req, fmt);
}

int pgrest_request_body_may_stream(const pgrest_request *req)
{
    pgr_import_format fmt;
    return req != NULL && may_stream(req->arena, req, &fmt);
}

pgr_import *pgr_import_new(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_request *req)
{
    pgr_import_format fmt;
    if (!may_stream(a, req, &fmt))
        return NULL;
    pgr_import *imp = PGR_NEW(a, pgr_import);
    if (imp == NULL)
        return NULL;
    *imp = (pgr_import){0};
    imp->rows = pgr_import_rows_new(a, fmt, pgr_cfg(ctx, a)->limits.max_json_depth,
                                    !names_columns(a, req));
    if (imp->rows == NULL)
        return NULL;
    pgr_sb_init(&imp->lines, a, LINES_CAPACITY);
    return imp;
}

/* The reader's answer, or out of memory when the rows did not fit. */
static int read_outcome(const pgr_import *imp, int rc, pgrest_error *err)
{
    return rc == PGREST_OK && imp->lines.failed ? pgr_error_oom(err) : rc;
}

int pgr_import_read(pgr_import *imp, const char *data, size_t len, pgrest_error *err)
{
    return read_outcome(imp, pgr_import_rows_feed(imp->rows, data, len, &imp->lines, err), err);
}

int pgr_import_read_end(pgr_import *imp, pgrest_error *err)
{
    return read_outcome(imp, pgr_import_rows_finish(imp->rows, &imp->lines, err), err);
}

/* What goes to libpq at once: libpq keeps a connection's output buffer
 * at the largest size ever queued on it, and the pool keeps connections,
 * so the rows read before the COPY opened (the threshold's worth) go in
 * slices, each once the one before has left. */
#define PUT_SLICE (64 * 1024)

pgr_copy_step pgr_import_put(pgr_import *imp)
{
    pgr_copy_step s = pgr_copy_in_flush(&imp->copy);
    while (s == PGR_COPY_READY && imp->sent < imp->lines.len) {
        size_t n = imp->lines.len - imp->sent;
        n = n < PUT_SLICE ? n : PUT_SLICE;
        s = pgr_copy_in_put(&imp->copy, imp->lines.data + imp->sent, n);
        if (s != PGR_COPY_FAILED)
            imp->sent += n;
    }
    if (imp->sent == imp->lines.len)
        imp->lines.len = imp->sent = 0;
    imp->backlog = s == PGR_COPY_WAIT_WRITE;
    return s;
}
