/* A streamed body's chunks into COPY data (import.h). */
#include "engine/import.h"

#include <string.h>
#include <stdint.h>
#include <strings.h>

#include "engine/context.h"
#include "parse/media_type.h"
#include "parse/query_string.h"
#include "plan/mutate_plan.h"
#include "sql/emit_write.h"
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
    *imp = (pgr_import){.format = fmt, .max_depth = pgr_cfg(ctx, a)->limits.max_json_depth,
                        .match_keys = !names_columns(a, req)};
    imp->rows = pgr_import_rows_new(a, fmt, imp->max_depth, imp->match_keys);
    if (imp->rows == NULL)
        return NULL;
    pgr_sb_init(&imp->lines, a, LINES_CAPACITY);
    return imp;
}

static const pgr_column *written_column(const pgr_mutate_plan *mp, const char *name)
{
    for (size_t i = 0; i < mp->n_columns; i++)
        if (strcmp(mp->columns[i]->name, name) == 0)
            return mp->columns[i];
    return NULL;
}

/* Whether json_to_record's conversion of a JSON row's value for column c
 * is reproduced by a typed line (pgr_import_rows_set_fields): a value
 * given to the input function of a scalar type, an enum, a domain over
 * one, json or jsonb. Not an array or composite column (json_to_record
 * reads a JSON array or object into those itself), nor a domain with a
 * json representation (its function reads the JSON value). */
static bool json_row_typed(const pgr_schema_cache *sc, const pgr_column *c)
{
    return !c->is_array && !c->is_composite && !pgr_record_column_transformed(sc, c);
}

/* The names the first row's fields stand under, when its rows may be
 * typed: CSV's header, or JSON's or NDJSON's first keys (*json: then
 * every written column must pass json_row_typed). */
static bool typed_names(const pgr_import *imp, const char *const **names, size_t *k,
                        bool *json)
{
    *json = imp->format != PGR_IMPORT_CSV;
    return *json ? pgr_import_rows_json_names(imp->rows, names, k)
                 : pgr_import_rows_csv_names(imp->rows, names, k);
}

bool pgr_import_type_rows(pgr_import *imp, pgrest_arena *a, pgrest_query_plan *plan,
                          const char *text, size_t n)
{
    const pgr_mutate_plan *mp = plan->mutate;
    const char *const *names;
    size_t k;
    bool json_rows;
    if (!typed_names(imp, &names, &k, &json_rows) || k == 0 || k != mp->n_columns)
        return true;
    /* missing=default reads JSON rows as jsonb (jsonb_to_record), which
     * normalizes what a typed line keeps as written (a number's text, a
     * json column's spacing) */
    if (json_rows && mp->apply_defaults)
        return true;
    const pgr_column **columns = PGR_NEW_ARRAY(a, const pgr_column *, k);
    bool *json = PGR_NEW_ARRAY(a, bool, k);
    if (columns == NULL || json == NULL)
        return false;
    for (size_t i = 0; i < k; i++) {
        if ((columns[i] = written_column(mp, names[i])) == NULL)
            return true;
        if (json_rows && !json_row_typed(plan->schema, columns[i]))
            return true;
        json[i] = pgr_record_column_is_json(plan->schema, columns[i]);
    }
    pgr_import_rows *rows = pgr_import_rows_new(a, imp->format, imp->max_depth, imp->match_keys);
    if (rows == NULL || !pgr_import_rows_set_fields(rows, names, json, k))
        return false;
    pgrest_error ignored = {0};
    imp->lines.len = 0;
    /* a field a typed line cannot hold, say: the whole body will tell */
    if (pgr_import_rows_feed(rows, text, n, &imp->lines, &ignored) != PGREST_OK ||
        imp->lines.failed)
        return false;
    imp->rows = rows;
    plan->streamed_columns = columns;
    plan->n_streamed_columns = k;
    return true;
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

/* The number in COPY's line of an error's CONTEXT (a trigger's lines come
 * before it): "COPY t, line N, column c: ..." or "COPY t, line N: ...", N
 * counting the COPY's lines from 1, t the table it writes (unqualified,
 * unquoted). */
static const char *copy_context(const char *context, const char *table)
{
    size_t n = strlen(table);
    for (const char *p = context; p != NULL && *p != '\0'; p = strchr(p, '\n')) {
        p += *p == '\n';
        if (strncmp(p, "COPY ", 5) == 0 && strncmp(p + 5, table, n) == 0 &&
            strncmp(p + 5 + n, ", line ", 7) == 0)
            return p + 5 + n + 7;
    }
    return NULL;
}

static bool copy_line(const char *context, const char *table, size_t *line, const char **rest)
{
    const char *p = copy_context(context, table);
    if (p == NULL)
        return false;
    size_t n = 0;
    if (*p < '0' || *p > '9')
        return false;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (n > (SIZE_MAX - 9) / 10)
            return false;
        n = n * 10 + (size_t)(*p - '0');
    }
    *line = n;
    *rest = p;
    return n > 0;
}

/* details with row (from 0) before them in the body's own terms, and
 * the column COPY named; details unchanged when the row is not placed. */
static const char *named(const pgr_import *imp, pgrest_arena *a, size_t row,
                         const char *column, size_t column_len, const char *details)
{
    size_t at;
    if (!pgr_import_rows_where(imp->rows, row, &at))
        return details;
    const char *place = pgr_import_rows_place(imp->rows);
    const char *name = pgr_asprintf(a, "%s %zu%.*s", place, at, (int)column_len, column);
    if (name == NULL || details == NULL)
        return name != NULL ? name : details;
    return pgr_asprintf(a, "%s: %s", name, details);
}

const char *pgr_import_name_row(const pgr_import *imp, pgrest_arena *a, const PGresult *r,
                                const char *details)
{
    size_t line;
    const char *rest;
    if (!copy_line(PQresultErrorField(r, PG_DIAG_CONTEXT), imp->sql.copy_table, &line, &rest))
        return details;
    const char *column = "";
    size_t column_len = 0;
    if (strncmp(rest, ", column ", 9) == 0) {
        const char *end = strstr(rest + 9, ": ");
        column = rest;
        column_len = end != NULL ? (size_t)(end - rest) : strlen(rest);
    }
    return named(imp, a, line - 1, column, column_len, details);
}

const char *pgr_import_name_failed_row(const pgr_import *imp, pgrest_arena *a, size_t row,
                                       const char *details)
{
    return row == 0 ? details : named(imp, a, row - 1, "", 0, details);
}
