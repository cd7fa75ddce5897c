/* Fuzz target: the streamed import's body reader (lib/parse/import_rows.c)
 * and its one-pass JSON row reader (lib/parse/json_row.c). Input: one
 * selector byte (format CSV / NDJSON / JSON array; keys matched or
 * ?columns=; typed lines), one byte seeding the chunk sizes, then the
 * body. Findings, besides crashes:
 *  - the one-pass reader takes a text that json-c (the strict reader)
 *    refuses, or reads other members than json-c does;
 *  - the body fed in random chunks gives other lines, rows or error than
 *    the body fed whole;
 *  - the reader accepts a body the buffered reader (pgrest_parse_request)
 *    refuses, or refuses it with another code or message, or (keys
 *    matched) refuses a body the buffered reader accepts. */
#include "fuzz_common.h"

#include "parse/import_rows.h"
#include "parse/json_row.h"
#include "parse/json_value.h"
#include "util/json_strict.h"

enum { DEPTH = 8 };

static const char *const mime[] = {"text/csv", "application/x-ndjson", "application/json"};
static const pgr_import_format formats[] = {PGR_IMPORT_CSV, PGR_IMPORT_NDJSON, PGR_IMPORT_JSON};

/* ---- the one-pass reader against json-c ---- */

static bool add_member(void *ctx, const char *key, size_t key_len, bool key_escaped,
                       const char *value, size_t value_len)
{
    (void)key_escaped;
    json_object *members = ctx;
    char *quoted = malloc(key_len + 2);
    if (quoted == NULL)
        abort();
    quoted[0] = '"';
    memcpy(quoted + 1, key, key_len);
    quoted[key_len + 1] = '"';
    json_object *k = NULL, *v = NULL;
    bool ok = pgr_json_parse_strict(quoted, key_len + 2, &k) &&
              pgr_json_parse_strict(value, value_len, &v) &&
              json_object_is_type(k, json_type_string);
    free(quoted);
    if (!ok) {
        fprintf(stderr, "a member the one-pass reader took is not JSON\n");
        abort();
    }
    /* json-c keeps a repeated key's last value, as the object does */
    json_object_object_add(members, json_object_get_string(k), v);
    json_object_put(k);
    return true;
}

static void check_plain(const char *s, size_t n)
{
    json_object *members = json_object_new_object();
    if (!pgr_json_row_plain(s, n, DEPTH - 1, add_member, members)) {
        json_object_put(members);
        return;
    }
    bool deep = false;
    json_object *doc = pgr_json_parse_body_value(s, n, DEPTH, &deep);
    if (doc == NULL || !json_object_equal(doc, members)) {
        fprintf(stderr, "the one-pass reader took what json-c %s: %.*s\n",
                doc == NULL ? "refuses" : "reads otherwise", (int)(n < 200 ? n : 200), s);
        abort();
    }
    json_object_put(doc);
    json_object_put(members);
}

/* ---- the body reader, whole and in chunks ---- */

typedef struct reading {
    int rc;
    pgrest_error err;
    char *lines;
    size_t len, rows;
} reading;

static pgr_import_rows *reader(pgrest_arena *a, pgr_import_format fmt, bool match_keys,
                               const char *const *names, const bool *json, size_t k)
{
    pgr_import_rows *r = pgr_import_rows_new(a, fmt, DEPTH, match_keys);
    if (r == NULL || (names != NULL && !pgr_import_rows_set_fields(r, names, json, k)))
        abort();
    pgr_import_rows_set_target(r, "items", false);
    return r;
}

/* seed 0: whole; else chunks of 1..16 bytes, each in a block of its size */
static reading read_body(pgr_import_rows *r, pgrest_arena *a, const uint8_t *body, size_t len,
                         unsigned seed)
{
    pgr_sb out;
    pgr_sb_init(&out, a, 64);
    reading res = {0};
    for (size_t i = 0; i < len && res.rc == PGREST_OK;) {
        size_t n = seed == 0 ? len : 1 + (seed = seed * 1103515245u + 12345u) / 65536 % 16;
        if (n > len - i)
            n = len - i;
        char *piece = malloc(n);
        if (piece == NULL)
            abort();
        memcpy(piece, body + i, n);
        res.rc = pgr_import_rows_feed(r, piece, n, &out, &res.err);
        free(piece);
        i += n;
    }
    if (res.rc == PGREST_OK)
        res.rc = pgr_import_rows_finish(r, &out, &res.err);
    if (!pgr_sb_ok(&out))
        abort();
    res.lines = out.data;
    res.len = out.len;
    res.rows = pgr_import_rows_count(r);
    return res;
}

static bool same_text(const char *x, const char *y)
{
    return (x == NULL) == (y == NULL) && (x == NULL || strcmp(x, y) == 0);
}

static void check_same(const reading *whole, const reading *chunked)
{
    bool same = whole->rc == chunked->rc && whole->rows == chunked->rows &&
                whole->len == chunked->len &&
                (whole->len == 0 || memcmp(whole->lines, chunked->lines, whole->len) == 0);
    if (same && whole->rc < 0)
        same = same_text(whole->err.code, chunked->err.code) &&
               same_text(whole->err.message, chunked->err.message) &&
               same_text(whole->err.details, chunked->err.details);
    if (!same) {
        fprintf(stderr, "chunks read otherwise than the whole body: rc %d / %d, rows %zu / %zu\n",
                whole->rc, chunked->rc, whole->rows, chunked->rows);
        abort();
    }
}

/* The buffered reader's verdict must be the streamed reader's (the
 * details aside: the streamed reader names the row). */
static void check_buffered(pgrest_ctx *ctx, pgrest_arena *a, unsigned f, bool match_keys,
                           const uint8_t *body, size_t len, const reading *whole)
{
    if (whole->rc == PGR_IMPORT_NOT_ROWS)
        return;   /* kept whole: the buffered reader answers */
    pgrest_request *req = pgrest_request_new(a, "POST", "/items",
                                             match_keys ? "" : "columns=a,b");
    pgrest_request_add_header(req, "Content-Type", mime[f]);
    pgrest_request_set_body(req, (const char *)body, len);
    pgrest_api_request *api = NULL;
    pgrest_error err = {0};
    int rc = pgrest_parse_request(ctx, a, req, &api, &err);
    /* with ?columns= the buffered reader hands PostgreSQL the body
     * unchecked, where the streamed one still reads each row */
    bool same = rc == PGREST_OK ? whole->rc == PGREST_OK || !match_keys
                                : whole->rc != PGREST_OK &&
                                      same_text(err.code, whole->err.code) &&
                                      same_text(err.message, whole->err.message);
    if (!same) {
        fprintf(stderr, "buffered: %s %s; streamed: %s %s\n", rc == PGREST_OK ? "ok" : err.code,
                rc == PGREST_OK ? "" : err.message,
                whole->rc == PGREST_OK ? "ok" : whole->err.code,
                whole->rc == PGREST_OK ? "" : whole->err.message);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static pgrest_ctx *ctx;
    if (ctx == NULL) {
        ctx = pgrest_ctx_new();
        if (ctx == NULL)
            abort();
        fuzz_set(ctx, "db-anon-role", "web_anon");
        fuzz_set(ctx, "request-max-json-depth", "8");
    }
    fuzz_reader in;
    fuzz_reader_init(&in, data, size);
    unsigned sel = fuzz_byte(&in);
    unsigned seed = fuzz_byte(&in) | 1u;
    unsigned f = sel % 3;
    bool match_keys = sel / 3 % 2 == 0, typed = sel / 6 % 2 == 1;
    const uint8_t *body = in.p;
    size_t len = in.left;

    if (f != 0)
        check_plain((const char *)body, len);

    pgrest_arena *a = pgrest_arena_new((size_t)64 << 20);
    if (a == NULL)
        abort();
    pgr_import_rows *first = reader(a, formats[f], match_keys, NULL, NULL, 0);
    reading whole = read_body(first, a, body, len, 0);
    reading chunked = read_body(reader(a, formats[f], match_keys, NULL, NULL, 0), a, body, len,
                                seed);
    check_same(&whole, &chunked);
    check_buffered(ctx, a, f, match_keys, body, len, &whole);

    /* typed lines, under the names the rows stand under (as the engine
     * types them), every other field a json column's */
    const char *const *names;
    size_t k;
    bool have = f == 0 ? pgr_import_rows_csv_names(first, &names, &k)
                       : pgr_import_rows_json_names(first, &names, &k);
    if (typed && have && k > 0) {
        bool *json = PGR_NEW_ARRAY(a, bool, k);
        if (json == NULL)
            abort();
        for (size_t i = 0; i < k; i++)
            json[i] = i % 2 == 1;
        reading t_whole = read_body(reader(a, formats[f], match_keys, names, json, k), a, body,
                                    len, 0);
        reading t_chunked = read_body(reader(a, formats[f], match_keys, names, json, k), a, body,
                                      len, seed);
        check_same(&t_whole, &t_chunked);
    }
    pgrest_arena_free(a);
    return 0;
}
