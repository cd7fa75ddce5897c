/* Incremental body encoding for streamed reads (exec/stream.h). Each
 * format writes exactly what its buffered aggregate writes: json_agg puts
 * ", \n " between composite elements (PostgreSQL json.c
 * json_agg_transfn: ", " then "\n " for arrays and composites), ", "
 * between json values (the GeoJSON features); json_strip_nulls rewrites
 * the whole array compactly, so its elements are joined by ","; CSV is
 * PostgREST's asCsvF: the header, a line feed, the rows' record texts
 * without their parentheses joined by line feeds. */
#include "exec/stream.h"

#include <stdlib.h>
#include <string.h>

#include "exec/response.h"
#include "util/arena.h"

#define GEOJSON_OPEN "{\"type\" : \"FeatureCollection\", \"features\" : ["

bool pgr_stream_format_of(const pgrest_query_plan *plan, pgr_stream_format *out)
{
    if (plan->handler != NULL || plan->body_bytes || plan->explain)
        return false;
    switch (plan->output) {
    case PGR_OUT_JSON:
        *out = plan->nulls_stripped ? PGR_STREAM_JSON_STRIPPED : PGR_STREAM_JSON;
        return true;
    case PGR_OUT_GEOJSON:
        *out = PGR_STREAM_GEOJSON;
        return true;
    case PGR_OUT_NDJSON:
        *out = PGR_STREAM_NDJSON;
        return true;
    case PGR_OUT_CSV:
        *out = PGR_STREAM_CSV;
        return true;
    default:
        return false;
    }
}

/* The arena's cleanup runs before its memory goes: the stream is still
 * readable then, whatever block its buffer has become. */
static void free_buffer(void *stream)
{
    free(((pgr_stream *)stream)->buf);
}

pgr_stream *pgr_stream_new(pgrest_arena *a, const pgrest_query_plan *plan,
                           size_t threshold)
{
    pgr_stream_format format;
    if (!pgr_stream_format_of(plan, &format))
        return NULL;
    pgr_stream *s = PGR_NEW(a, pgr_stream);
    if (s == NULL)
        return NULL;
    *s = (pgr_stream){.format = format, .threshold = threshold};
    s->cap = threshold + 4096;
    s->buf = malloc(s->cap);
    if (s->buf == NULL)
        return NULL;
    if (!pgr_arena_on_free(a, free_buffer, s)) {
        free(s->buf);
        return NULL;
    }
    return s;
}

/* Room for n more bytes: the read part goes first, then the buffer grows
 * (a row larger than what is left). */
static bool reserve(pgr_stream *s, size_t n)
{
    if (s->len + n <= s->cap)
        return true;
    if (s->start > 0) {
        memmove(s->buf, s->buf + s->start, s->len - s->start);
        s->len -= s->start;
        s->start = 0;
        if (s->len + n <= s->cap)
            return true;
    }
    size_t ncap = s->cap;
    while (ncap < s->len + n)
        ncap *= 2;
    char *grown = realloc(s->buf, ncap);
    if (grown == NULL) {
        s->oom = true;
        return false;
    }
    s->buf = grown;
    s->cap = ncap;
    return true;
}

static void put(pgr_stream *s, const char *p, size_t n)
{
    if (s->oom || !reserve(s, n))
        return;
    memcpy(s->buf + s->len, p, n);
    s->len += n;
}

static void puts_(pgr_stream *s, const char *p)
{
    put(s, p, strlen(p));
}

/* record_out's rule for quoting a column (PostgreSQL rowtypes.c): empty,
 * or holding a quote, backslash, parenthesis, comma or white space. */
static bool needs_quotes(const char *v, size_t n)
{
    if (n == 0)
        return true;
    for (size_t i = 0; i < n; i++)
        if (strchr("\"\\(),", v[i]) != NULL || v[i] == ' ' ||
            (v[i] >= '\t' && v[i] <= '\r'))
            return true;
    return false;
}

void pgr_stream_put_record_field(pgr_stream *s, const char *v, size_t n)
{
    bool quote = needs_quotes(v, n);
    if (quote)
        put(s, "\"", 1);
    size_t from = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] == '"' || v[i] == '\\') {
            put(s, v + from, i + 1 - from); /* up to and including it ... */
            from = i;                       /* ... and it once more */
        }
    put(s, v + from, n - from);
    if (quote)
        put(s, "\"", 1);
}

static void csv_header(pgr_stream *s, const PGresult *r)
{
    for (int c = 0; c < PQnfields(r); c++) {
        if (c > 0)
            put(s, ",", 1);
        puts_(s, PQfname(r, c));
    }
    put(s, "\n", 1);
}

static void csv_row(pgr_stream *s, const PGresult *r, int row)
{
    if (s->rows == 0)
        csv_header(s, r);
    else
        put(s, "\n", 1);
    for (int c = 0; c < PQnfields(r); c++) {
        if (c > 0)
            put(s, ",", 1);
        if (!PQgetisnull(r, row, c))
            pgr_stream_put_record_field(s, PQgetvalue(r, row, c),
                                        (size_t)PQgetlength(r, row, c));
    }
}

/* What goes before a JSON element: the opening, or the separator. */
static void json_lead(pgr_stream *s)
{
    bool first = s->rows == 0;
    switch (s->format) {
    case PGR_STREAM_JSON:
        puts_(s, first ? "[" : ", \n ");
        break;
    case PGR_STREAM_JSON_STRIPPED:
        puts_(s, first ? "[" : ",");
        break;
    case PGR_STREAM_GEOJSON:
        puts_(s, first ? GEOJSON_OPEN : ", ");
        break;
    default:
        break;
    }
}

void pgr_stream_row(pgr_stream *s, const PGresult *r, int row)
{
    if (s->discard)
        return;
    if (s->format == PGR_STREAM_CSV) {
        csv_row(s, r, row);
    } else {
        json_lead(s);
        put(s, PQgetvalue(r, row, 0), (size_t)PQgetlength(r, row, 0));
        if (s->format == PGR_STREAM_NDJSON)
            put(s, "\n", 1);
    }
    s->rows++;
}

void pgr_stream_end(pgr_stream *s)
{
    s->ended = true;
    if (s->discard)
        return;
    bool none = s->rows == 0;
    switch (s->format) {
    case PGR_STREAM_JSON:
    case PGR_STREAM_JSON_STRIPPED:
        puts_(s, none ? "[]" : "]");
        break;
    case PGR_STREAM_GEOJSON:
        puts_(s, none ? GEOJSON_OPEN "]}" : "]}");
        break;
    case PGR_STREAM_CSV:
        /* asCsvF with no rows: an empty header, then the line feed */
        if (none)
            put(s, "\n", 1);
        break;
    case PGR_STREAM_NDJSON:
        break;
    }
}

bool pgr_stream_full(const pgr_stream *s)
{
    return !s->discard && s->len - s->start >= s->threshold;
}

const char *pgr_stream_pending(const pgr_stream *s, size_t *len)
{
    *len = s->len - s->start;
    return s->buf + s->start;
}

size_t pgr_stream_take(pgr_stream *s, char *out, size_t max)
{
    size_t n = s->len - s->start;
    if (n > max)
        n = max;
    memcpy(out, s->buf + s->start, n);
    s->start += n;
    if (s->start == s->len)
        s->start = s->len = 0;
    return n;
}

int pgrest_response_streamed(const pgrest_response *resp)
{
    return resp != NULL && resp->streamed;
}
