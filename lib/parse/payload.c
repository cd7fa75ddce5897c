/* Request bodies (PostgREST ApiRequest/Payload.hs getPayload): the body is
 * validated here and handed to PostgreSQL as one JSON text; the keys of the
 * object(s) become the columns of the write. */
#include "parse/payload.h"

#include <json-c/json.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "parse/csv_body.h"
#include "parse/json_value.h"
#include "parse/media_type.h"
#include "parse/ndjson_body.h"
#include "parse/query_string.h"
#include "util/error.h"
#include "util/strbuf.h"
#include "util/utf8.h"

static int invalid_body(pgrest_error *err, const char *message)
{
    return pgr_error(err, 400, "PGRST102", message, NULL, NULL);
}

/* Only these actions read their body (Payload.hs shouldParsePayload). */
static bool parses_payload(const pgrest_api_request *api)
{
    switch (api->action) {
    case PGR_ACTION_CREATE:
    case PGR_ACTION_UPDATE:
    case PGR_ACTION_UPSERT:
        return true;
    case PGR_ACTION_CALL:
        return strcmp(api->method, "POST") == 0;
    default:
        return false;
    }
}

/* Only these actions take ?columns (Payload.hs getPayload `columns`): a
 * PUT writes the body's own keys and a DELETE reads no body. */
static bool takes_columns(const pgrest_api_request *api)
{
    return api->qp.has_columns && (api->action == PGR_ACTION_CREATE ||
                                   api->action == PGR_ACTION_UPDATE ||
                                   api->action == PGR_ACTION_CALL);
}

/* A payload key holding a NUL: no column or argument can be named so.
 * PostgREST's planner answers PGRST204 for a table; a function call is
 * refused like other NULs (22021). `shown` has the NUL as \u0000. */
int pgr_payload_key_nul_error(pgrest_arena *a, bool is_call, const char *name,
                              const char *shown, pgrest_error *err)
{
    if (!is_call)
        return pgr_errorf(err, a, 400, "PGRST204", NULL, NULL,
                          "Could not find the '%s' column of '%s' in the schema cache",
                          shown, name);
    return pgr_errorf(err, a, 400, "22021",
                      pgr_asprintf(a, "The payload key \"%s\" contains a NUL byte",
                                   shown),
                      NULL, "invalid byte sequence for encoding \"UTF8\": 0x00");
}

static int key_nul_error(pgrest_arena *a, const pgrest_api_request *api,
                         const char *shown, pgrest_error *err)
{
    return pgr_payload_key_nul_error(a, api->action == PGR_ACTION_CALL, api->name, shown,
                                     err);
}

/* key[0..n) with each NUL written as the six characters \u0000 */
const char *pgr_payload_show_key(pgrest_arena *a, const char *key, size_t n)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, n + 8);
    for (size_t i = 0; i < n; i++) {
        if (key[i] == '\0')
            pgr_sb_puts(&sb, "\\u0000");
        else
            pgr_sb_putc(&sb, key[i]);
    }
    return pgr_sb_finish(&sb);
}

/* json-c keeps object keys as C strings, so "na\u0000me" would become
 * "na": find, in the (valid) JSON text, a key whose escapes include
 * \u0000. Returns its raw text (between the quotes) or NULL. */
const char *pgr_json_key_with_nul(pgrest_arena *a, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '"')
            continue;
        size_t start = ++i;
        bool nul = false;
        for (; i < n && s[i] != '"'; i++) {
            if (s[i] != '\\')
                continue;
            nul = nul || (i + 5 < n && memcmp(s + i + 1, "u0000", 5) == 0);
            i++;
        }
        size_t end = i, j = i + 1;
        while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r'))
            j++;
        if (nul && j < n && s[j] == ':')
            return pgr_strndup(a, s + start, end - start);
    }
    return NULL;
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Keys as a sorted set: PostgREST keeps them in a Data.Set, so the column
 * list of the INSERT/UPDATE is in name order. */
static int set_keys(pgrest_arena *a, pgrest_api_request *api,
                    const char *const *keys, size_t n, pgrest_error *err)
{
    const char **sorted = PGR_NEW_ARRAY(a, const char *, n + 1);
    if (sorted == NULL)
        return pgr_error_oom(err);
    if (n > 0)
        memcpy(sorted, keys, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_str);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || strcmp(sorted[u - 1], sorted[i]) != 0)
            sorted[u++] = sorted[i];
    api->payload_keys = sorted;
    api->n_payload_keys = u;
    return PGREST_OK;
}

/* Payload.hs payloadAttributes: an object, or an array whose elements are
 * all objects with the same keys; any other JSON value is an empty array. */
static int json_attributes(pgrest_arena *a, pgrest_api_request *api,
                           json_object *doc, pgrest_error *err)
{
    const char **keys = NULL;
    size_t n = 0;
    if (json_object_is_type(doc, json_type_object)) {
        if (!pgr_json_object_keys(a, doc, &keys, &n))
            return pgr_error_oom(err);
        return set_keys(a, api, keys, n, err);
    }
    if (!json_object_is_type(doc, json_type_array) ||
        json_object_array_length(doc) == 0) {
        api->payload_json = "[]";
        api->payload_is_array = true;
        return set_keys(a, api, NULL, 0, err);
    }
    api->payload_is_array = true;
    json_object *first = json_object_array_get_idx(doc, 0);
    if (!json_object_is_type(first, json_type_object))
        return invalid_body(err, "All object keys must match");
    if (!pgr_json_object_keys(a, first, &keys, &n))
        return pgr_error_oom(err);
    size_t len = json_object_array_length(doc);
    for (size_t i = 1; i < len; i++)
        if (!pgr_json_same_key_set(json_object_array_get_idx(doc, i), keys, n))
            return invalid_body(err, "All object keys must match");
    return set_keys(a, api, keys, n, err);
}

static void put_json(void *o)
{
    json_object_put(o);
}

/* pgr_json_parse_body_value with the document released with the arena. */
static json_object *parse_json(pgrest_arena *a, const char *body, size_t len,
                               int max_depth, bool *too_deep)
{
    json_object *doc = pgr_json_parse_body_value(body, len, max_depth, too_deep);
    if (doc != NULL && !pgr_arena_on_free(a, put_json, doc)) {
        json_object_put(doc);
        return NULL;
    }
    return doc;
}

static bool json_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static size_t skip_json_ws(const char *s, size_t n, size_t i)
{
    while (i < n && json_ws(s[i]))
        i++;
    return i;
}

/* Where the element of an array that starts at s[i] ends, if the text is
 * valid: a container or string at its matching close (brackets counted
 * outside strings), a scalar before ',', ']', '}' or whitespace. Only
 * splits the text; json-c then validates each piece strictly, and the
 * pieces with the separators between them make up the array exactly. */
static size_t element_end(const char *s, size_t n, size_t i)
{
    if (s[i] != '{' && s[i] != '[' && s[i] != '"') {
        while (i < n && s[i] != ',' && s[i] != ']' && s[i] != '}' && !json_ws(s[i]))
            i++;
        return i;
    }
    size_t depth = 0;
    bool in_string = false;
    for (; i < n; i++) {
        char c = s[i];
        if (in_string) {
            if (c == '\\') {
                i++;
            } else if (c == '"') {
                in_string = false;
                if (depth == 0)
                    return i + 1;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if ((c == '}' || c == ']') && --depth == 0) {
            return i + 1;
        }
    }
    return n;
}

typedef enum array_verdict { ARRAY_OK, ARRAY_INVALID, ARRAY_TOO_DEEP, ARRAY_MISMATCH,
                             ARRAY_OOM } array_verdict;

/* The first element's keys, and whether element el carries the same. */
static array_verdict array_element_keys(pgrest_arena *a, json_object *el, size_t index,
                                        json_object **first, const char ***keys,
                                        size_t *n)
{
    if (index > 0)
        return *first != NULL && pgr_json_same_key_set(el, *keys, *n) ? ARRAY_OK
                                                                       : ARRAY_MISMATCH;
    if (!json_object_is_type(el, json_type_object))
        return ARRAY_MISMATCH;
    *first = json_object_get(el);
    return pgr_json_object_keys(a, el, keys, n) ? ARRAY_OK : ARRAY_OOM;
}

/* payloadAttributes of a top-level array, one element at a time: json-c
 * would hold the whole document (some 800 bytes per empty object), so a
 * few MB of [{},{},...] cost GBs; now only the first element is kept.
 * The array's own level counts toward max_depth. A key mismatch is only
 * reported once the whole text proved valid JSON. */
static array_verdict json_array_scan(pgrest_arena *a, const char *s, size_t n,
                                     int max_depth, const char ***keys,
                                     size_t *nkeys, size_t *count)
{
    json_object *first = NULL;
    array_verdict verdict = ARRAY_OK;
    *count = 0;
    size_t i = skip_json_ws(s, n, skip_json_ws(s, n, 0) + 1);
    bool open = !(i < n && s[i] == ']');
    if (!open)
        i++;
    while (open) {
        size_t end = i < n ? element_end(s, n, i) : n;
        bool deep = false;
        json_object *el = end > i ? pgr_json_parse_body_value(s + i, end - i,
                                                              max_depth - 1, &deep)
                                  : NULL;
        if (el == NULL) {
            json_object_put(first);
            return deep ? ARRAY_TOO_DEEP : ARRAY_INVALID;
        }
        if (verdict == ARRAY_OK)
            verdict = array_element_keys(a, el, *count, &first, keys, nkeys);
        json_object_put(el);
        (*count)++;
        i = skip_json_ws(s, n, end);
        if (i < n && s[i] == ',') {
            i = skip_json_ws(s, n, i + 1);
        } else if (i < n && s[i] == ']') {
            i++;
            open = false;
        } else {
            json_object_put(first);
            return ARRAY_INVALID;
        }
    }
    json_object_put(first);
    return skip_json_ws(s, n, i) == n ? verdict : ARRAY_INVALID;
}

static int too_deep_error(pgrest_arena *a, const pgr_parse_limits *lim,
                          pgrest_error *err)
{
    return pgr_errorf(err, a, 400, "PGRST102",
                      pgr_asprintf(a, "JSON nesting deeper than %d levels "
                                   "(request-max-json-depth)", lim->max_json_depth),
                      NULL, "Empty or invalid json");
}

static int json_array_payload(pgrest_arena *a, pgrest_api_request *api,
                              const pgr_parse_limits *lim, pgrest_error *err)
{
    const char **keys = NULL;
    size_t nkeys = 0, count = 0;
    array_verdict v = api->body_len > INT_MAX || !pgr_utf8_valid(api->body, api->body_len)
                          ? ARRAY_INVALID
                          : json_array_scan(a, api->body, api->body_len,
                                            lim->max_json_depth, &keys, &nkeys, &count);
    switch (v) {
    case ARRAY_INVALID: return invalid_body(err, "Empty or invalid json");
    case ARRAY_TOO_DEEP: return too_deep_error(a, lim, err);
    case ARRAY_OOM: return pgr_error_oom(err);
    case ARRAY_MISMATCH: return invalid_body(err, "All object keys must match");
    case ARRAY_OK: break;
    }
    api->payload_is_array = true;
    /* the body itself, not a copy: NUL-terminated and as long-lived as
     * the request (request.h), and a copy doubled a big body's cost */
    api->payload_json = count == 0 ? "[]" : api->body;
    int rc = set_keys(a, api, keys, nkeys, err);
    const char *bad = rc == PGREST_OK ? pgr_json_key_with_nul(a, api->body, api->body_len) : NULL;
    return bad != NULL ? key_nul_error(a, api, bad, err) : rc;
}

static int json_payload(pgrest_arena *a, pgrest_api_request *api,
                        const pgr_parse_limits *lim, pgrest_error *err)
{
    bool is_call = api->action == PGR_ACTION_CALL;
    /* ?columns=: the body goes to PostgreSQL unparsed (Payload.hs RawJSON) */
    if (takes_columns(api)) {
        api->payload_raw = true;
        api->payload_json = api->body ? api->body : ""; /* see json_array_payload */
        return set_keys(a, api, api->qp.columns, api->qp.n_columns, err);
    }
    if (api->body_len == 0 && is_call) {
        api->payload_json = "{}";
        return set_keys(a, api, NULL, 0, err);
    }
    bool too_deep = false;
    json_object *doc = NULL;
    size_t start = skip_json_ws(api->body, api->body_len, 0);
    if (start < api->body_len && api->body[start] == '[')
        return json_array_payload(a, api, lim, err);
    if (api->body_len)
        doc = parse_json(a, api->body, api->body_len, lim->max_json_depth, &too_deep);
    if (doc == NULL && too_deep)
        return too_deep_error(a, lim, err);
    if (doc == NULL)
        return invalid_body(err, "Empty or invalid json");
    api->payload_json = api->body; /* not a copy: see json_array_payload */
    int rc = json_attributes(a, api, doc, err);
    const char *bad = rc == PGREST_OK
                          ? pgr_json_key_with_nul(a, api->body, api->body_len)
                          : NULL;
    return bad != NULL ? key_nul_error(a, api, bad, err) : rc;
}

/* application/x-ndjson (pgrest's own, docs/bulk-import.md): the lines
 * are the elements of a JSON array body, and the request is then that of
 * the array. With ?columns= the array goes to PostgreSQL as the JSON
 * body would, unparsed (RawJSON: no key matching), but its lines are
 * still read to build it. */
static int ndjson_payload(pgrest_arena *a, pgrest_api_request *api,
                          const pgr_parse_limits *lim, pgrest_error *err)
{
    bool raw = takes_columns(api);
    pgr_ndjson_array rows;
    int rc = pgr_ndjson_read(a, api->body, api->body_len, lim->max_json_depth, !raw, &rows,
                             err);
    if (rc != PGREST_OK)
        return rc;
    api->payload_json = rows.json;
    if (raw) {
        api->payload_raw = true;
        return set_keys(a, api, api->qp.columns, api->qp.n_columns, err);
    }
    api->payload_is_array = true;
    rc = set_keys(a, api, rows.keys, rows.n_keys, err);
    const char *bad = rc == PGREST_OK ? pgr_json_key_with_nul(a, rows.json, strlen(rows.json))
                                      : NULL;
    return bad != NULL ? key_nul_error(a, api, bad, err) : rc;
}

/* NDJSON is read for the bulk writes only: POST and PATCH to a relation.
 * A PUT (one row) and a call keep the answer PostgREST gives the type. */
static bool reads_ndjson(const pgrest_api_request *api)
{
    return api->action == PGR_ACTION_CREATE || api->action == PGR_ACTION_UPDATE;
}

/* ------------------------------------------------------------ CSV */

/* text/csv (PostgREST Payload.hs csvToJson over cassava's decodeByName):
 * the header record names the fields and must end with a line end; each
 * record maps the names to its fields, zipped (extra fields are dropped,
 * missing ones leave their names out); blank lines are skipped; the
 * literal NULL is SQL null. The records must all carry the same names
 * (payloadAttributes). A NUL byte in a field stays in it (\u0000, which
 * PostgreSQL refuses). Records are read and written by csv_body.c, which
 * the streaming import (import_rows.c) shares. */
static int csv_payload(pgrest_arena *a, pgrest_api_request *api,
                       pgrest_error *err)
{
    const char *p = api->body ? api->body : "", *end = p + api->body_len;
    pgr_csv_rows c;
    pgr_csv_rows_init(&c, a);
    bool ended_line;
    if (!pgr_csv_read_record(&c.rec, &p, end, &ended_line) || pgr_arena_exhausted(a))
        return pgr_error_oom(err);
    if (!ended_line)
        /* cassava's header parser ends with endOfLine; its error text */
        return invalid_body(err, PGR_CSV_HEADER_ERROR);
    if (!pgr_csv_rows_set_header(&c))
        return pgr_error_oom(err);
    size_t bad = pgr_csv_header_nul(&c);
    if (bad < c.nh)
        return key_nul_error(a, api, pgr_payload_show_key(a, c.header[bad], c.hlen[bad]),
                             err);
    pgr_sb sb;
    pgr_sb_init(&sb, a, api->body_len * 2 + 16);
    pgr_sb_putc(&sb, '[');
    while (p < end) {
        if (!pgr_csv_read_record(&c.rec, &p, end, &ended_line))
            return pgr_error_oom(err);
        if (pgr_csv_rows_write(&c, &sb, true) == PGR_CSV_MISMATCH)
            return invalid_body(err, PGR_CSV_FIELDS_ERROR);
    }
    pgr_sb_putc(&sb, ']');
    api->payload_json = pgr_sb_finish(&sb);
    api->payload_is_array = true;
    if (api->payload_json == NULL || pgr_arena_exhausted(a))
        return pgr_error_oom(err);
    /* no records: the empty array, which has no keys */
    return set_keys(a, api, c.header, c.first_k, err);
}

/* kept[i]: param i is the first (or, with `last`, the last) with its
 * name. Sorting keeps this O(n log n): a body of many keys must not cost
 * quadratic time. */
static bool *kept_occurrences(pgrest_arena *a, const pgr_kv *params, size_t n,
                              bool last)
{
    pgr_name_at *sorted = PGR_NEW_ARRAY(a, pgr_name_at, n + 1);
    bool *first = PGR_NEW_ARRAY(a, bool, n + 1);
    if (sorted == NULL || first == NULL)
        return NULL;
    size_t i = 0;
    for (const pgr_kv *p = params; p; p = p->next, i++)
        sorted[i] = (pgr_name_at){p->name, i};
    qsort(sorted, n, sizeof *sorted, pgr_cmp_name_at);
    for (i = 0; i < n; i++) {
        size_t other = last ? i + 1 : i - 1;
        first[sorted[i].pos] = (last ? i + 1 == n : i == 0) ||
                               strcmp(sorted[other].name, sorted[i].name) != 0;
    }
    return first;
}

/* x-www-form-urlencoded: one object of text values. For a table the last
 * of repeated names wins (Payload.hs HM.fromList); a call keeps the first
 * here, its planner reads the arguments from the body itself. */
static int urlencoded_payload(pgrest_arena *a, pgrest_api_request *api,
                              pgrest_error *err)
{
    /* the body's bytes, NUL included (parseSimpleQuery on a ByteString) */
    pgr_kv *params = pgr_query_string_decode_n(a, api->body ? api->body : "",
                                               api->body_len);
    size_t n = 0;
    for (pgr_kv *p = params; p; p = p->next) {
        n++;
        if (memchr(p->name, '\0', p->name_len) != NULL)
            return key_nul_error(a, api, pgr_payload_show_key(a, p->name, p->name_len), err);
        /* a function's form arguments are read again from the body by the
         * call planner, which refuses a NUL in an argument it passes */
    }
    const char **keys = PGR_NEW_ARRAY(a, const char *, n + 1);
    bool *first = kept_occurrences(a, params, n, api->action != PGR_ACTION_CALL);
    if (keys == NULL || first == NULL)
        return pgr_error_oom(err);
    pgr_sb sb;
    pgr_sb_init(&sb, a, api->body_len * 2 + 16);
    pgr_sb_putc(&sb, '{');
    size_t i = 0;
    n = 0;
    for (pgr_kv *p = params; p; p = p->next, i++) {
        if (!first[i])
            continue;
        if (n > 0)
            pgr_sb_putc(&sb, ',');
        keys[n++] = p->name;
        pgr_sb_put_json_string(&sb, p->name);
        pgr_sb_putc(&sb, ':');
        /* a %00 stays in the value (\u0000): PostgreSQL refuses it */
        pgr_sb_put_json_stringn(&sb, p->value ? p->value : "",
                                p->value ? p->value_len : 0);
    }
    pgr_sb_putc(&sb, '}');
    api->payload_json = pgr_sb_finish(&sb);
    if (api->payload_json == NULL)
        return pgr_error_oom(err);
    return set_keys(a, api, keys, n, err);
}

int pgr_parse_payload(pgrest_arena *a, pgrest_api_request *api,
                      const pgr_parse_limits *lim, pgrest_error *err)
{
    if (lim == NULL)
        lim = pgr_parse_limits_default();
    api->has_body = api->body_len > 0;
    if (!parses_payload(api))
        return PGREST_OK;
    pgr_media_kind kind = api->content_type ? api->content_type->kind
                                            : PGR_MEDIA_JSON;
    switch (kind) {
    case PGR_MEDIA_JSON:
        return json_payload(a, api, lim, err);
    case PGR_MEDIA_CSV:
        return csv_payload(a, api, err);
    case PGR_MEDIA_URLENCODED:
        return urlencoded_payload(a, api, err);
    case PGR_MEDIA_NDJSON:
        if (reads_ndjson(api))
            return ndjson_payload(a, api, lim, err);
        if (api->action == PGR_ACTION_CALL)
            return PGREST_OK;
        break;
    default:
        /* functions decide about other bodies (single unnamed param) */
        if (api->action == PGR_ACTION_CALL)
            return PGREST_OK;
        break;
    }
    return pgr_errorf(err, a, 400, "PGRST102", NULL, NULL,
                      "Content-Type not acceptable: %s",
                      api->content_type ? pgr_media_type_mime(a, api->content_type) : "");
}
