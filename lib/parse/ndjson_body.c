/* NDJSON bodies as JSON arrays (see ndjson_body.h). Each line is parsed
 * on its own and released at once, so memory is the array text (one copy
 * of the body) plus one line's document, as for a JSON array body. */
#include "parse/ndjson_body.h"

#include <json-c/json.h>
#include <string.h>

#include "parse/json_value.h"
#include "util/error.h"
#include "util/strbuf.h"

typedef struct line_reader {
    const char *p, *end;
    size_t number;        /* of the line last returned, from 1 */
} line_reader;

/* The next line without its LF, nor the CR of a CRLF; false at the end
 * of the body (a final LF starts no further line). */
static bool next_line(line_reader *r, const char **line, size_t *n)
{
    if (r->p >= r->end)
        return false;
    const char *lf = memchr(r->p, '\n', (size_t)(r->end - r->p));
    const char *stop = lf != NULL ? lf : r->end;
    *line = r->p;
    *n = (size_t)(stop - r->p);
    if (*n > 0 && (*line)[*n - 1] == '\r')
        (*n)--;
    r->p = lf != NULL ? lf + 1 : r->end;
    r->number++;
    return true;
}

bool pgr_ndjson_blank(const char *line, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (line[i] != ' ' && line[i] != '\t')
            return false;
    return true;
}

static int line_error(pgrest_error *err, const char *message, const char *details)
{
    return pgr_error(err, 400, "PGRST102", message, details, NULL);
}

int pgr_ndjson_check_line(pgrest_arena *a, size_t number, const char *line, size_t n,
                          int max_depth, bool match_keys, pgr_ndjson_array *out,
                          pgrest_error *err)
{
    bool too_deep = false;
    json_object *o = pgr_json_parse_body_value(line, n, max_depth, &too_deep);
    if (o == NULL && too_deep)
        return line_error(err, "Empty or invalid json",
                          pgr_asprintf(a, "line %zu: JSON nesting deeper than %d levels "
                                       "(request-max-json-depth)", number, max_depth));
    if (o == NULL)
        return line_error(err, "Empty or invalid json",
                          pgr_asprintf(a, "line %zu: invalid JSON", number));
    int rc = PGREST_OK;
    if (!json_object_is_type(o, json_type_object))
        rc = line_error(err, "Empty or invalid json",
                        pgr_asprintf(a, "line %zu: not a JSON object", number));
    else if (match_keys && out->n_rows == 0 &&
             !pgr_json_object_keys(a, o, &out->keys, &out->n_keys))
        rc = pgr_error_oom(err);
    else if (match_keys && out->n_rows > 0 &&
             !pgr_json_same_key_set(o, out->keys, out->n_keys))
        rc = line_error(err, "All object keys must match",
                        pgr_asprintf(a, "line %zu: the keys differ from those of the "
                                     "first object", number));
    json_object_put(o);
    return rc;
}

int pgr_ndjson_read(pgrest_arena *a, const char *body, size_t len, int max_depth,
                    bool match_keys, pgr_ndjson_array *out, pgrest_error *err)
{
    *out = (pgr_ndjson_array){.json = "[]"};
    if (body == NULL)
        body = "";   /* no body: the empty array */
    line_reader r = {body, body + len, 0};
    pgr_sb sb;
    pgr_sb_init(&sb, a, len + 2);
    const char *line;
    size_t n;
    while (next_line(&r, &line, &n)) {
        if (pgr_ndjson_blank(line, n))
            continue;
        int rc = pgr_ndjson_check_line(a, r.number, line, n, max_depth, match_keys, out,
                                       err);
        if (rc != PGREST_OK)
            return rc;
        pgr_sb_putc(&sb, out->n_rows++ == 0 ? '[' : ',');
        pgr_sb_putn(&sb, line, n);
    }
    if (out->n_rows == 0)
        return PGREST_OK;
    pgr_sb_putc(&sb, ']');
    out->json = pgr_sb_finish(&sb);
    return out->json != NULL && !pgr_arena_exhausted(a) ? PGREST_OK : pgr_error_oom(err);
}
