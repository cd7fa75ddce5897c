/* Request bodies (PostgREST ApiRequest/Payload.hs getPayload): the body is
 * validated here and handed to PostgreSQL as one JSON text; the keys of the
 * object(s) become the columns of the write. */
#include "parse/payload.h"

#include <json-c/json.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "parse/query_string.h"
#include "util/error.h"
#include "util/strbuf.h"

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

static int object_keys(pgrest_arena *a, json_object *o, const char ***out,
                       size_t *n)
{
    size_t cap = (size_t)json_object_object_length(o);
    const char **keys = PGR_NEW_ARRAY(a, const char *, cap + 1);
    if (keys == NULL)
        return -1;
    *n = 0;
    json_object_object_foreach(o, k, v) {
        (void)v;
        if ((keys[(*n)++] = pgr_strdup(a, k)) == NULL)
            return -1;
    }
    *out = keys;
    return 0;
}

static bool same_key_set(json_object *o, const char *const *keys, size_t n)
{
    if (!json_object_is_type(o, json_type_object) ||
        (size_t)json_object_object_length(o) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!json_object_object_get_ex(o, keys[i], NULL))
            return false;
    return true;
}

/* Payload.hs payloadAttributes: an object, or an array whose elements are
 * all objects with the same keys; any other JSON value is an empty array. */
static int json_attributes(pgrest_arena *a, pgrest_api_request *api,
                           json_object *doc, pgrest_error *err)
{
    const char **keys = NULL;
    size_t n = 0;
    if (json_object_is_type(doc, json_type_object)) {
        if (object_keys(a, doc, &keys, &n) != 0)
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
    if (object_keys(a, first, &keys, &n) != 0)
        return pgr_error_oom(err);
    size_t len = json_object_array_length(doc);
    for (size_t i = 1; i < len; i++)
        if (!same_key_set(json_object_array_get_idx(doc, i), keys, n))
            return invalid_body(err, "All object keys must match");
    return set_keys(a, api, keys, n, err);
}

static void put_json(void *o)
{
    json_object_put(o);
}

/* Strict parse: the whole body must be one JSON value (whitespace around
 * it allowed). NULL when empty or invalid; *too_deep when it nests deeper
 * than max_depth (json-c keeps one parser frame per level). */
static json_object *parse_json(pgrest_arena *a, const char *body, size_t len,
                               int max_depth, bool *too_deep)
{
    *too_deep = false;
    if (len > INT_MAX)
        return NULL;
    /* json-c counts the innermost scalar as a level too: max_depth
     * containers (objects/arrays) need one more */
    json_tokener *tok = json_tokener_new_ex(max_depth + 1);
    if (tok == NULL)
        return NULL;
    json_object *doc = json_tokener_parse_ex(tok, body, (int)len);
    *too_deep = json_tokener_get_error(tok) == json_tokener_error_depth;
    bool ok = doc != NULL && json_tokener_get_error(tok) == json_tokener_success;
    size_t used = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    for (size_t i = used; ok && i < len; i++)
        if (strchr(" \t\r\n", body[i]) == NULL)
            ok = false;
    if (!ok || !pgr_arena_on_free(a, put_json, doc)) {
        json_object_put(doc);
        return NULL;
    }
    return doc;
}

static int json_payload(pgrest_arena *a, pgrest_api_request *api,
                        const pgr_parse_limits *lim, pgrest_error *err)
{
    bool is_call = api->action == PGR_ACTION_CALL;
    /* ?columns=: the body goes to PostgreSQL unparsed (Payload.hs RawJSON) */
    if (api->qp.has_columns) {
        api->payload_json = pgr_strndup(a, api->body ? api->body : "", api->body_len);
        return set_keys(a, api, api->qp.columns, api->qp.n_columns, err);
    }
    if (api->body_len == 0 && is_call) {
        api->payload_json = "{}";
        return set_keys(a, api, NULL, 0, err);
    }
    bool too_deep = false;
    json_object *doc = api->body_len ? parse_json(a, api->body, api->body_len,
                                                  lim->max_json_depth, &too_deep)
                                     : NULL;
    if (doc == NULL && too_deep)
        return pgr_errorf(err, a, 400, "PGRST102",
                          pgr_asprintf(a, "JSON nesting deeper than %d levels "
                                       "(request-max-json-depth)", lim->max_json_depth),
                          NULL, "Empty or invalid json");
    if (doc == NULL)
        return invalid_body(err, "Empty or invalid json");
    api->payload_json = pgr_strndup(a, api->body, api->body_len);
    return json_attributes(a, api, doc, err);
}

/* ------------------------------------------------------------ CSV */

typedef struct csv_reader {
    pgrest_arena *a;
    const char *p, *end;
} csv_reader;

/* One field (RFC 4180 quoting, "" inside quotes); *eol set at line end. */
static const char *csv_field(csv_reader *r, bool *eol)
{
    pgr_sb sb;
    pgr_sb_init(&sb, r->a, 32);
    if (r->p < r->end && *r->p == '"') {
        r->p++;
        while (r->p < r->end) {
            if (*r->p == '"') {
                if (r->p + 1 < r->end && r->p[1] == '"') {
                    pgr_sb_putc(&sb, '"');
                    r->p += 2;
                    continue;
                }
                r->p++;
                break;
            }
            pgr_sb_putc(&sb, *r->p++);
        }
    }
    while (r->p < r->end && *r->p != ',' && *r->p != '\n' && *r->p != '\r')
        pgr_sb_putc(&sb, *r->p++);
    *eol = r->p >= r->end || *r->p != ',';
    if (r->p < r->end && *r->p == '\r')
        r->p++;
    if (r->p < r->end)
        r->p++;
    return pgr_sb_finish(&sb);
}

/* Fields of the next non-empty line; returns the count, 0 at the end. */
static size_t csv_line(csv_reader *r, const char ***out)
{
    while (r->p < r->end && (*r->p == '\n' || *r->p == '\r'))
        r->p++;
    if (r->p >= r->end)
        return 0;
    size_t n = 0, cap = 8;
    const char **f = PGR_NEW_ARRAY(r->a, const char *, cap);
    bool eol = false;
    while (f != NULL && !eol) {
        if (n == cap) {
            f = pgr_realloc(r->a, f, cap * sizeof *f, cap * 2 * sizeof *f);
            cap *= 2;
            if (f == NULL)
                return 0;
        }
        /* a field the arena could not hold ends the body (exhausted) */
        if ((f[n++] = csv_field(r, &eol)) == NULL)
            return 0;
    }
    *out = f;
    return f ? n : 0;
}

/* text/csv: header row = keys; the literal NULL is SQL null (PostgREST
 * Payload.hs csvToJson). Rows are turned into a JSON array of objects. */
static int csv_payload(pgrest_arena *a, pgrest_api_request *api,
                       pgrest_error *err)
{
    csv_reader r = {a, api->body ? api->body : "", (api->body ? api->body : "") + api->body_len};
    const char **header = NULL, **row;
    size_t nh = csv_line(&r, &header), nr;
    if (pgr_arena_exhausted(a))
        return pgr_error_oom(err);
    pgr_sb sb;
    pgr_sb_init(&sb, a, api->body_len * 2 + 16);
    pgr_sb_putc(&sb, '[');
    bool first = true;
    while ((nr = csv_line(&r, &row)) > 0) {
        if (nr != nh)
            return invalid_body(err, "All lines must have same number of fields");
        pgr_sb_puts(&sb, first ? "{" : ",{");
        first = false;
        for (size_t i = 0; i < nr; i++) {
            if (i > 0)
                pgr_sb_putc(&sb, ',');
            pgr_sb_put_json_string(&sb, header[i]);
            pgr_sb_putc(&sb, ':');
            if (strcmp(row[i], "NULL") == 0)
                pgr_sb_puts(&sb, "null");
            else
                pgr_sb_put_json_string(&sb, row[i]);
        }
        pgr_sb_putc(&sb, '}');
    }
    pgr_sb_putc(&sb, ']');
    api->payload_json = pgr_sb_finish(&sb);
    api->payload_is_array = true;
    if (api->payload_json == NULL || pgr_arena_exhausted(a))
        return pgr_error_oom(err);
    return set_keys(a, api, header, nh, err);
}

typedef struct form_key {
    const char *name;
    size_t pos;
} form_key;

static int cmp_form_key(const void *x, const void *y)
{
    const form_key *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c != 0 ? c : (a->pos > b->pos) - (a->pos < b->pos);
}

/* first[i]: param i is the first with its name. Sorting keeps this
 * O(n log n): a body of many keys must not cost quadratic time. */
static bool *first_occurrences(pgrest_arena *a, const pgr_kv *params, size_t n)
{
    form_key *sorted = PGR_NEW_ARRAY(a, form_key, n + 1);
    bool *first = PGR_NEW_ARRAY(a, bool, n + 1);
    if (sorted == NULL || first == NULL)
        return NULL;
    size_t i = 0;
    for (const pgr_kv *p = params; p; p = p->next, i++)
        sorted[i] = (form_key){p->name, i};
    qsort(sorted, n, sizeof *sorted, cmp_form_key);
    for (i = 0; i < n; i++)
        first[sorted[i].pos] = i == 0 || strcmp(sorted[i - 1].name, sorted[i].name) != 0;
    return first;
}

/* x-www-form-urlencoded: one object of text values (the first of repeated
 * names wins). */
static int urlencoded_payload(pgrest_arena *a, pgrest_api_request *api,
                              pgrest_error *err)
{
    char *text = pgr_strndup(a, api->body ? api->body : "", api->body_len);
    pgr_kv *params = text ? pgr_query_string_decode(a, text) : NULL;
    size_t n = 0;
    for (pgr_kv *p = params; p; p = p->next)
        n++;
    const char **keys = PGR_NEW_ARRAY(a, const char *, n + 1);
    bool *first = first_occurrences(a, params, n);
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
        pgr_sb_put_json_string(&sb, p->value ? p->value : "");
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
    default:
        /* functions decide about other bodies (single unnamed param) */
        if (api->action == PGR_ACTION_CALL)
            return PGREST_OK;
        break;
    }
    return pgr_errorf(err, a, 400, "PGRST102", NULL, NULL,
                      "Content-Type not acceptable: %s",
                      api->content_type && api->content_type->text
                          ? api->content_type->text : "");
}
