/* The streaming row converter (lib/parse/import_rows.c) against its
 * oracle, the buffered body reader (pgr_parse_payload through
 * pgrest_parse_request): for each body, fed whole, byte by byte and in
 * random splits, the COPY lines un-escaped and joined as a JSON array are
 * the buffered payload (byte for byte for CSV and NDJSON, the same JSON
 * value for a JSON array, whose buffered payload is the body's text), and
 * an error is the buffered error (code and message), with details naming
 * the row. */
#include <check.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "parse/api_request.h"
#include "parse/import_rows.h"
#include "pgrest/pgrest.h"
#include "util/arena.h"
#include "util/strbuf.h"

enum { DEPTH = 8 };

static pgrest_ctx *ctx;
static pgrest_arena *arena;

static void setup(void)
{
    ctx = pgrest_ctx_new();
    ck_assert_ptr_nonnull(ctx);
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-schemas", "api", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-anon-role", "anon", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "request-max-json-depth", "8", &err), PGREST_OK);
    arena = pgrest_arena_new((size_t)1 << 30);
}

static void teardown(void)
{
    pgrest_arena_free(arena);
    pgrest_ctx_free(ctx);
}

static const char *const mime[] = {"application/json", "application/x-ndjson", "text/csv"};

/* query: NULL, or "columns=a,b" (?columns=: no key matching) */
static int buffered(pgr_import_format fmt, const char *query, const char *body, size_t len,
                    pgrest_api_request **api, pgrest_error *err)
{
    pgrest_request *req = pgrest_request_new(arena, "POST", "/items", query);
    pgrest_request_add_header(req, "Content-Type", mime[fmt]);
    pgrest_request_set_body(req, body, len);
    return pgrest_parse_request(ctx, arena, req, api, err);
}

typedef struct result {
    int rc;
    pgrest_error err;
    char *json;       /* the COPY lines un-escaped, as "[l1,l2,...]" */
    size_t count;
    const char *first;
    size_t first_len;
} result;

/* COPY text lines back to their text, joined as a JSON array. */
static char *join_lines(const char *s, size_t n, size_t *lines)
{
    char *j = pgr_alloc(arena, n + 3), *o = j;
    *o++ = '[';
    *lines = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n') {
            *o++ = ',';
            (*lines)++;
            continue;
        }
        if (s[i] != '\\') {
            *o++ = s[i];
            continue;
        }
        char c = s[++i];
        *o++ = c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : c;
        ck_assert_msg(c == 'n' || c == 'r' || c == 't' || c == '\\', "bad escape %c", c);
    }
    if (*lines > 0)
        o--;
    *o++ = ']';
    *o = '\0';
    return j;
}

/* split: 0 whole, 1 byte by byte, else random pieces seeded by split */
static result convert(pgr_import_format fmt, const char *body, size_t len, unsigned split,
                      bool match_keys)
{
    pgr_import_rows *r = pgr_import_rows_new(arena, fmt, DEPTH, match_keys);
    ck_assert_ptr_nonnull(r);
    pgr_import_rows_set_target(r, "items", false);
    pgr_sb out;
    pgr_sb_init(&out, arena, 64);
    result res = {0};
    unsigned seed = split;
    size_t i = 0;
    while (i < len && res.rc == PGREST_OK) {
        size_t n = split == 0 ? len : split == 1 ? 1 : 1 + (size_t)rand_r(&seed) % 9;
        if (n > len - i)
            n = len - i;
        /* the piece alone in a buffer of its size: an over-read shows in ASan */
        char *piece = malloc(n);
        memcpy(piece, body + i, n);
        res.rc = pgr_import_rows_feed(r, piece, n, &out, &res.err);
        free(piece);
        i += n;
    }
    if (res.rc == PGREST_OK)
        res.rc = pgr_import_rows_finish(r, &out, &res.err);
    ck_assert(pgr_sb_ok(&out));
    size_t lines;
    res.json = join_lines(out.data, out.len, &lines);
    res.count = pgr_import_rows_count(r);
    ck_assert_uint_eq(lines, res.count);
    res.first = pgr_import_rows_first(r, &res.first_len);
    return res;
}

static bool same_json(const char *x, const char *y)
{
    json_object *a = json_tokener_parse(x), *b = json_tokener_parse(y);
    bool same = a != NULL && b != NULL && json_object_equal(a, b);
    json_object_put(a);
    json_object_put(b);
    return same;
}

/* Checks body in every split against the buffered reader; returns the
 * whole-body result (for the callers' own checks on details). */
static result check_body_n(pgr_import_format fmt, const char *body, size_t len,
                           bool match_keys)
{
    const char *path = match_keys ? NULL : "columns=a,b";
    pgrest_api_request *api = NULL;
    pgrest_error berr = {0};
    int brc = buffered(fmt, path, body, len, &api, &berr);
    result whole = {0};
    for (unsigned split = 0; split < 12; split++) {
        result res = convert(fmt, body, len, split, match_keys);
        if (split == 0)
            whole = res;
        if (brc != PGREST_OK) {
            ck_assert_msg(res.rc != PGREST_OK, "[%.80s] accepted, buffered refused: %s", body,
                          berr.message);
            if (res.rc == PGR_IMPORT_NOT_ROWS) {
                ck_assert_int_eq(fmt, PGR_IMPORT_JSON);
                continue;
            }
            ck_assert_int_eq(res.rc, brc);
            ck_assert_int_eq(res.err.http_status, berr.http_status);
            ck_assert_str_eq(res.err.code, berr.code);
            ck_assert_str_eq(res.err.message, berr.message);
            ck_assert_pstr_eq(res.err.details, whole.err.details);
        } else if (res.rc == PGR_IMPORT_NOT_ROWS) {
            ck_assert_int_eq(fmt, PGR_IMPORT_JSON);
            ck_assert_int_eq(whole.rc, PGR_IMPORT_NOT_ROWS);
        } else {
            ck_assert_msg(res.rc == PGREST_OK, "[%.80s] split %u refused (%s: %s), buffered accepted",
                          body, split, res.err.message, res.err.details ? res.err.details : "");
            if (fmt == PGR_IMPORT_JSON)
                ck_assert_msg(same_json(res.json, api->payload_json), "%.80s vs %.80s", res.json,
                              api->payload_json);
            else
                ck_assert_str_eq(res.json, api->payload_json);
            ck_assert_str_eq(res.json, whole.json);
            if (res.count == 0) {
                ck_assert_ptr_null(res.first);
                continue;
            }
            /* the first row alone reads to the same keys */
            ck_assert_ptr_nonnull(res.first);
            pgrest_api_request *fapi = NULL;
            pgrest_error ferr = {0};
            ck_assert_int_eq(buffered(fmt, path, res.first, res.first_len, &fapi, &ferr),
                             PGREST_OK);
            ck_assert_uint_eq(fapi->n_payload_keys, api->n_payload_keys);
            for (size_t k = 0; k < api->n_payload_keys; k++)
                ck_assert_str_eq(fapi->payload_keys[k], api->payload_keys[k]);
        }
    }
    return whole;
}

static result check_body(pgr_import_format fmt, const char *body)
{
    return check_body_n(fmt, body, strlen(body), true);
}

static void expect_details(pgr_import_format fmt, const char *body, const char *message,
                           const char *details)
{
    result r = check_body(fmt, body);
    ck_assert_msg(r.rc < 0, "%s accepted", body);
    ck_assert_str_eq(r.err.message, message);
    ck_assert_str_eq(r.err.details, details);
}

static const char *const json_bodies[] = {
    "[]", " [ ] ", "[{}]", "[{},{}]", "[{\"a\":1}]",
    "[{\"a\":1,\"b\":\"x\"},{\"b\":null,\"a\":[1,{\"c\":\"]}\"}]}]",
    "\n[\t{\"a\" : 1.50e+3 , \"b\":\"tab\\tnl\\nbs\\\\q\\\"\"}\r\n,{\"a\":-0,\"b\":\"\\u00e9\\ud83d\\ude00\"}]  \n",
    "[{\"a\":\"é😀\",\"b\":{\"x\":[[[]]]}}]",
    "[{\"a\":1},{\"b\":2}]", "[{\"a\":1},{\"a\":1,\"b\":2}]", "[{\"a\":1},2]", "[{\"a\":1},null]",
    "[{\"a\":1},{\"b\":2},{]", "[{\"a\":1},{\"b\":2},x]",
    "[{\"a\":1}", "[{\"a\":1},", "[{\"a\":1},]", "[{\"a\":1}]x", "[{\"a\":1}] ]", "[{\"a\":1}}]",
    "[{\"a\":1} {\"a\":1}]", "[{\"a\":01}]", "[{'a':1}]", "[{\"a\":NaN}]", "[{\"a\":1,}]",
    "[{\"a\":\"\\x\"}]", "[{\"a\":\"\xff\"}]", "[{\"a\":\"raw\ttab\"}]", "[", "[{", "[{\"",
    "[{\"a\":[[[[[[[[1]]]]]]]]}]", "[{\"a\":[[[[[[1]]]]]]}]", "[{\"a\":1},{\"a\":[[[[[[[[1]]]]]]]]}]",
    "[{\"na\\u0000me\":1}]", "[{\"a\":1},{\"a\":{\"x\\u0000\":1}}]",
    "[{\"a\":1},{\"b\\u0000\":1},{\"c\":1}]", "[{\"a\":1},{\"b\":1},{\"c\\u0000\":1}]",
    "[{\"a\":\"\\u0000\"}]",
    "[{\"ab\":1},{\"a\\u0062\":2},{\"\\u0061b\":3,\"ab\":4}]",
    "[{\"a\":1,\"b\":2},{\"a\":1,\"a\":2}]", "[{\"a\":1},{\"a\":1e400},{\"a\":[[[[[[1]]]]]]}]",
    /* not rows: the buffered path keeps them */
    "", "  ", "{\"a\":1}", "5", "null", "[1,2]", "[[{}]]", "[\"x\"]", "[null]", "x", "[1,{]",
};

START_TEST(json_arrays_match_the_buffered_reader)
{
    for (size_t i = 0; i < sizeof json_bodies / sizeof *json_bodies; i++)
        check_body(PGR_IMPORT_JSON, json_bodies[i]);
    /* ?columns=: nothing to match; elements still one valid object each */
    check_body_n(PGR_IMPORT_JSON, "[{\"a\":1},{\"b\":2}]", 17, false);
}
END_TEST

START_TEST(json_not_rows)
{
    static const char *const bodies[] = {"", " ", "{}", "5", "[1]", "[[{}]]", "[\"x\",{}]"};
    for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
        result r = convert(PGR_IMPORT_JSON, bodies[i], strlen(bodies[i]), 1, true);
        ck_assert_int_eq(r.rc, PGR_IMPORT_NOT_ROWS);
    }
    result r = convert(PGR_IMPORT_JSON, "[]", 2, 0, true);
    ck_assert_int_eq(r.rc, PGREST_OK);
    ck_assert_uint_eq(r.count, 0);
}
END_TEST

static const char *const ndjson_bodies[] = {
    "", "\n", "{}", "{}\n", "{\"a\":1}\n{\"a\":2}", "{\"a\":1}\r\n{\"a\":2}\r\n",
    "\n \t\n{\"a\":1,\"b\":\"x\\\\y\\tz\"}\n\n{\"b\":[1,{\"q\":\"\\\"\"}],\"a\":null}\n  \n",
    "{\"a\":\"é😀\\u00e9\"}\n", "{\"a\":\t1}\n",
    "{\"a\":1}\n{\"b\":1}\n", "{\"a\":1}\n[1]\n", "{\"a\":1}\nx\n", "{\"a\":1}\n{\"a\":[[[[[[[[[1]]]]]]]]]}\n",
    "{\"a\":[[[[[[[1]]]]]]]}\n", "{\"a\":1}\n{\"a\":1} {\"a\":1}\n", "5", "null\n",
    "{\"a\\u0000\":1}\n", "{\"a\":1}\n{\"b\\u0000\":1}\n{\"c\":1}\n",
    "{\"a\":1}\n{\"a\":{\"z\\u0000\":1}}\n{\"a\":2}\n{\"b\":2}\n",
    "{\"a\":1}\r", "{\"a\":1}\r\r\n", "\r\n\r\n{\"a\":1}",
    /* rows after the first read in one pass: escaped and repeated keys */
    "{\"ab\":1}\n{\"a\\u0062\":2}\n{\"\\u0061b\":3,\"ab\":4}\n",
    "{\"a\":1,\"b\":2}\n{\"a\":1,\"a\":2}\n", "{\"a\":1,\"b\":2}\n{\"b\":1,\"a\":2,\"c\":3}\n",
    "{\"a\":1}\n{\"a\":1e400}\n{\"a\":\"\\ud83d\\ude00\"}\n{\"a\":[[[[[[[1]]]]]]]}\n",
};

START_TEST(ndjson_matches_the_buffered_reader)
{
    for (size_t i = 0; i < sizeof ndjson_bodies / sizeof *ndjson_bodies; i++)
        check_body(PGR_IMPORT_NDJSON, ndjson_bodies[i]);
    for (size_t i = 0; i < sizeof ndjson_bodies / sizeof *ndjson_bodies; i++)
        check_body_n(PGR_IMPORT_NDJSON, ndjson_bodies[i], strlen(ndjson_bodies[i]), false);
}
END_TEST

static const char *const csv_bodies[] = {
    "", "a", "a,b", "a\n", "a,b\n", "a,b\r\n", "a,b\r", "a,b\n1,2", "a,b\n1,2\n3,4\n",
    "a,b\r\n1,2\r\n\r\n3,4\r\n", "a,b\r1,2\r3,4\r", "a,b\n\n\n1,2\n\n",
    "a,b\n\"x,y\",\"he said \"\"hi\"\"\"\n\"multi\nline\r\nfield\",\"tab\there\\back\"\n",
    "a,b\nNULL,\"NULL\"\nnull,NULLx\n", "a,a,b\n1,2,3\n4,5,6\n", "a,b,a\n1,2\n3,4\n",
    "a,b,a\n1,2,3\n4,5\n", "a,b\n1\n2\n", "a,b\n1,2,3,4\n5,6,7\n", "a,b\n1,2\n3\n",
    "a,b\n1\n2,3\n", "\"a\nb\",c\n1,2\n", "a,b\n\"unterminated,1\n2\n", "a,b\n\"x\"y,2\n",
    "a,b\n\"\"\n1,2\n", "é,😀\nü,ß\n", "\n", "\r\n1\n", ",\n,\n", "a,b\n,\n",
    "\"a\",\"b\"\n\"1\"\n", "a\n\"q\"\"\"\n\"\"\"\"\n", "a,b\n1,2\n\n\"x\ny\",2\n3\n",
};

START_TEST(csv_matches_the_buffered_reader)
{
    for (size_t i = 0; i < sizeof csv_bodies / sizeof *csv_bodies; i++)
        check_body(PGR_IMPORT_CSV, csv_bodies[i]);
    /* binary: NUL bytes in fields and names */
    static const char nul_field[] = "a,b\nx\0y,2\n";
    check_body_n(PGR_IMPORT_CSV, nul_field, sizeof nul_field - 1, true);
    static const char nul_name[] = "a\0b,c\n1,2\n";
    result r = check_body_n(PGR_IMPORT_CSV, nul_name, sizeof nul_name - 1, true);
    ck_assert_str_eq(r.err.code, "PGRST204");
}
END_TEST

START_TEST(details_name_the_row)
{
    expect_details(PGR_IMPORT_JSON, "[{\"a\":1},{\"a\":2},{\"b\":3}]",
                   "All object keys must match",
                   "index 2: the keys differ from those of the first object");
    expect_details(PGR_IMPORT_JSON, "[{\"a\":1},4]", "All object keys must match",
                   "index 1: not a JSON object");
    expect_details(PGR_IMPORT_JSON, "[{\"a\":1},{\"b\":3},{]", "Empty or invalid json",
                   "index 2: invalid JSON");
    expect_details(PGR_IMPORT_JSON, "[{\"a\":1},{\"a\":[[[[[[[[1]]]]]]]]}]",
                   "Empty or invalid json",
                   "index 1: JSON nesting deeper than 8 levels (request-max-json-depth)");
    expect_details(PGR_IMPORT_NDJSON, "{\"a\":1}\n\n{\"b\":1}\n", "All object keys must match",
                   "line 3: the keys differ from those of the first object");
    expect_details(PGR_IMPORT_CSV, "a,b\n1,2\n\n\"x\ny\",2\n3\n",
                   "All lines must have same number of fields",
                   "line 6: the record's fields differ from those of the first record");
    expect_details(PGR_IMPORT_CSV, "a,b\r\n1,2\r\r\n3\r\n",
                   "All lines must have same number of fields",
                   "line 4: the record's fields differ from those of the first record");
    expect_details(PGR_IMPORT_CSV, "a,b", "parse error (not enough input) at \"\"",
                   "line 1: the header has no line end");
    /* NDJSON details are pgr_ndjson_read's own */
    static const char bad[] = "{\"a\":1}\n\n{\"a\":\n";
    pgrest_api_request *api = NULL;
    pgrest_error berr = {0};
    ck_assert_int_ne(buffered(PGR_IMPORT_NDJSON, NULL, bad, sizeof bad - 1, &api, &berr),
                     PGREST_OK);
    result r = check_body(PGR_IMPORT_NDJSON, bad);
    ck_assert_str_eq(r.err.details, berr.details);
    ck_assert_str_eq(r.err.details, "line 3: invalid JSON");
}
END_TEST

START_TEST(errors_stick)
{
    pgr_import_rows *r = pgr_import_rows_new(arena, PGR_IMPORT_NDJSON, DEPTH, true);
    pgr_sb out;
    pgr_sb_init(&out, arena, 64);
    pgrest_error err = {0};
    ck_assert_int_eq(pgr_import_rows_feed(r, "{\"a\":1}\nx\n", 10, &out, &err),
                     PGREST_ERR_REQUEST);
    pgrest_error again = {0};
    ck_assert_int_eq(pgr_import_rows_feed(r, "{\"a\":1}\n", 8, &out, &again),
                     PGREST_ERR_REQUEST);
    ck_assert_str_eq(again.details, "line 2: invalid JSON");
    ck_assert_int_eq(pgr_import_rows_finish(r, &out, &again), PGREST_ERR_REQUEST);
    ck_assert_uint_eq(pgr_import_rows_count(r), 1);
}
END_TEST

START_TEST(copy_lines_are_escaped)
{
    static const char body[] = "a,b\n\"x\\y\tz\r\nw\",2\n";
    result r = convert(PGR_IMPORT_CSV, body, sizeof body - 1, 0, true);
    ck_assert_int_eq(r.rc, PGREST_OK);
    pgr_import_rows *c = pgr_import_rows_new(arena, PGR_IMPORT_NDJSON, DEPTH, true);
    pgr_sb out;
    pgr_sb_init(&out, arena, 64);
    pgrest_error err = {0};
    static const char nd[] = "{\"a\":\t\"x\\\\y\"}\r\n";
    ck_assert_int_eq(pgr_import_rows_feed(c, nd, sizeof nd - 1, &out, &err), PGREST_OK);
    ck_assert_str_eq(out.data, "{\"a\":\\t\"x\\\\\\\\y\"}\n");
    size_t n;
    ck_assert_str_eq(pgr_import_rows_first(c, &n), "{\"a\":\t\"x\\\\y\"}");
}
END_TEST

/* Rows longer than the converter's 64 KiB slice, split anyhow. */
START_TEST(rows_longer_than_a_slice)
{
    size_t big = 150000, cap = 3 * big + 256;
    char *body = malloc(cap);
    for (int fmt = 0; fmt < 3; fmt++) {
        size_t len = 0;
        if (fmt == PGR_IMPORT_CSV)
            len += (size_t)snprintf(body, cap, "a,b\n");
        if (fmt == PGR_IMPORT_JSON)
            body[len++] = '[';
        for (int row = 0; row < 2; row++) {
            const char *open = fmt == PGR_IMPORT_CSV ? "1,\"" : "{\"a\":1,\"b\":\"";
            const char *close = fmt == PGR_IMPORT_CSV ? "\"\r\n" : fmt == PGR_IMPORT_NDJSON ? "\"}\n" : "\"}";
            if (fmt == PGR_IMPORT_JSON && row > 0)
                body[len++] = ',';
            memcpy(body + len, open, strlen(open));
            len += strlen(open);
            for (size_t i = 0; i < big; i++)
                body[len++] = fmt == PGR_IMPORT_CSV && i % 1000 == 7 ? '\n' : (char)('a' + i % 26);
            memcpy(body + len, close, strlen(close));
            len += strlen(close);
        }
        if (fmt == PGR_IMPORT_JSON)
            body[len++] = ']';
        result r = check_body_n((pgr_import_format)fmt, body, len, true);
        ck_assert_int_eq(r.rc, PGREST_OK);
        ck_assert_uint_eq(r.count, 2);
    }
    free(body);
}
END_TEST

/* 200,000 rows in 64 KiB chunks: the arena grows by the longest row and a
 * constant, not by the body. */
static void check_bounded(pgr_import_format fmt)
{
    size_t cap = 24u << 20;
    char *body = malloc(cap);
    size_t len = 0;
    if (fmt == PGR_IMPORT_CSV)
        len += (size_t)snprintf(body, cap, "id,name,note\n");
    else if (fmt == PGR_IMPORT_JSON)
        body[len++] = '[';
    for (int i = 0; i < 200000; i++) {
        if (fmt == PGR_IMPORT_CSV)
            len += (size_t)snprintf(body + len, cap - len, "%d,\"n %d\",x\r\n", i, i);
        else
            len += (size_t)snprintf(body + len, cap - len, "%s{\"id\":%d,\"name\":\"n %d\"}%s",
                                    fmt == PGR_IMPORT_JSON && i > 0 ? "," : "", i, i,
                                    fmt == PGR_IMPORT_NDJSON ? "\n" : "");
    }
    if (fmt == PGR_IMPORT_JSON)
        body[len++] = ']';
    pgrest_arena *a = pgrest_arena_new(0);
    pgr_import_rows *r = pgr_import_rows_new(a, fmt, DEPTH, true);
    pgr_sb out;
    pgr_sb_init(&out, a, 64);
    pgrest_error err = {0};
    size_t lines = 0;
    for (size_t i = 0; i < len; i += 65536) {
        size_t n = len - i < 65536 ? len - i : 65536;
        ck_assert_int_eq(pgr_import_rows_feed(r, body + i, n, &out, &err), PGREST_OK);
        for (size_t k = 0; k < out.len; k++)
            lines += out.data[k] == '\n';
        out.len = 0;   /* the caller sends the lines and reuses the buffer */
    }
    ck_assert_int_eq(pgr_import_rows_finish(r, &out, &err), PGREST_OK);
    ck_assert_uint_eq(pgr_import_rows_count(r), 200000);
    ck_assert_uint_eq(lines + (out.len > 0), 200000);
    size_t used = pgr_arena_used(a);
    ck_assert_msg(used < 2u << 20, "format %d: %zu bytes for a %zu-byte body", fmt, used, len);
    pgrest_arena_free(a);
    free(body);
}

START_TEST(memory_is_bounded)
{
    check_bounded(PGR_IMPORT_CSV);
    check_bounded(PGR_IMPORT_NDJSON);
    check_bounded(PGR_IMPORT_JSON);
}
END_TEST

/* Random bodies built from the pieces that matter, checked like the rest. */
START_TEST(random_bodies)
{
    static const char *const csv_pieces[] = {"a", ",", "\n", "\r\n", "\r", "\"", "\"\"", "NULL",
                                             "b", "x y", "\\", "\t"};
    static const char *const nd_pieces[] = {"{\"a\":1}", "{\"b\":2}", "\n", "\r\n", " ",
                                            "{\"a\":\"\\\\\"}", "{", "}", "[1]", "\t"};
    static const char *const js_pieces[] = {"[", "]", "{\"a\":1}", "{\"b\":\"]\"}", ",", " ",
                                            "{}", "\n", "\"", "{\"a\":[{}]}"};
    char body[128];
    unsigned seed = 7;
    for (int t = 0; t < 1200; t++) {
        pgr_import_format fmt = (pgr_import_format)(t % 3);
        const char *const *pieces = fmt == PGR_IMPORT_CSV ? csv_pieces
                                    : fmt == PGR_IMPORT_NDJSON ? nd_pieces : js_pieces;
        size_t np = fmt == PGR_IMPORT_CSV ? 12 : 10;
        size_t len = 0;
        if (fmt == PGR_IMPORT_JSON)
            body[len++] = '[';
        int count = rand_r(&seed) % 12;
        for (int k = 0; k < count; k++) {
            const char *p = pieces[(size_t)rand_r(&seed) % np];
            if (len + strlen(p) + 2 >= sizeof body)
                break;
            memcpy(body + len, p, strlen(p));
            len += strlen(p);
        }
        if (fmt == PGR_IMPORT_JSON && rand_r(&seed) % 2)
            body[len++] = ']';
        body[len] = '\0';
        check_body_n(fmt, body, len, true);
    }
}
END_TEST

/* Typed lines: the fields in COPY text format, NULL (quoted or not) as
 * \N, a json field as the JSON string payload.c makes of it; the same in
 * any split. A NUL byte in a field fails as json_to_record does. */
static char *typed_as(pgr_import_format fmt, const char *const *names, const char *body,
                      size_t len, unsigned split, const bool *json, size_t n, int *rc,
                      pgrest_error *err)
{
    pgr_import_rows *r = pgr_import_rows_new(arena, fmt, DEPTH, true);
    ck_assert_ptr_nonnull(r);
    ck_assert(pgr_import_rows_set_fields(r, names, json, n));
    pgr_sb out;
    pgr_sb_init(&out, arena, 64);
    unsigned seed = split;
    *rc = PGREST_OK;
    for (size_t i = 0; i < len && *rc == PGREST_OK;) {
        size_t k = split == 0 ? len : 1 + (size_t)rand_r(&seed) % 9;
        k = k < len - i ? k : len - i;
        *rc = pgr_import_rows_feed(r, body + i, k, &out, err);
        i += k;
    }
    if (*rc == PGREST_OK)
        *rc = pgr_import_rows_finish(r, &out, err);
    ck_assert(pgr_sb_ok(&out));
    return pgr_strndup(arena, out.len > 0 ? out.data : "", out.len);
}

static char *typed(const char *body, size_t len, unsigned split, const bool *json, size_t n,
                   int *rc, pgrest_error *err)
{
    return typed_as(PGR_IMPORT_CSV, NULL, body, len, split, json, n, rc, err);
}

START_TEST(typed_lines)
{
    static const char body[] = "t,j,n\r\n"
                               "\"a\tb\\c\",\"{\"\"k\"\":\"\"\\u00e9\"\"}\",1.5\r\n"
                               "\"NULL\",NULL,\n"
                               "\n"
                               "\"two\nlines\",\"\",NULL\n";
    static const bool json[] = {false, true, false};
    static const char want[] = "a\\tb\\\\c\t\"{\\\\\"k\\\\\":\\\\\"\\\\\\\\u00e9\\\\\"}\"\t1.5\n"
                               "\\N\t\\N\t\n"
                               "two\\nlines\t\"\"\t\\N\n";
    for (unsigned split = 0; split < 40; split++) {
        int rc;
        pgrest_error err = {0};
        char *lines = typed(body, sizeof body - 1, split, json, 3, &rc, &err);
        ck_assert_int_eq(rc, PGREST_OK);
        ck_assert_str_eq(lines, want);
    }
    static const char nul[] = "t,j\nok,1\nbad\0,2\n";
    int rc;
    pgrest_error err = {0};
    typed(nul, sizeof nul - 1, 0, json, 2, &rc, &err);
    ck_assert_int_eq(err.http_status, 400);
    ck_assert_str_eq(err.code, "22P05");
    ck_assert_str_eq(err.details, "line 3: \\u0000 cannot be converted to text.");
}
END_TEST

/* Typed lines of JSON rows: each column's value as json_to_record gives
 * it to the column's input function -- a string decoded (surrogate pairs
 * too), for a json column quoted again as PostgreSQL's escape_json does;
 * numbers, true, objects and arrays as written; null as \N; a repeated
 * key's last value; keys escaped or in another order -- the same for
 * NDJSON lines and a JSON array's elements, in any split. An escape
 * PostgreSQL's JSON lexer refuses, anywhere in the row, fails the row
 * with PostgreSQL's error. */
START_TEST(typed_json_lines)
{
    static const char *const rows[] = {
        "{\"t\":\"a\\tb\\\\c\\u00e9\\ud83d\\ude00\",\"j\":\"x\\/\\u0041\\b\",\"n\":1.50e3}",
        "{\"n\":null, \"j\" : {\"k\": [1, \"\\\\\"]} ,\t\"t\":true}",
        "{\"t\":\"first\",\"j\":[ 1 ],\"n\":\"7\",\"t\":{\"o\" :1}}",
        "{\"\\u0074\":\"\",\"j\":\"\\u001f\\\"\",\"n\":-0.000000000000000000000001}",
    };
    static const char *const names[] = {"t", "j", "n"};
    static const bool json[] = {false, true, false};
    static const char want[] = "a\\tb\\\\c\xc3\xa9\xf0\x9f\x98\x80\t\"x/A\\\\b\"\t1.50e3\n"
                               "true\t{\"k\": [1, \"\\\\\\\\\"]}\t\\N\n"
                               "{\"o\" :1}\t[ 1 ]\t7\n"
                               "\t\"\\\\u001f\\\\\"\"\t-0.000000000000000000000001\n";
    char nd[512], arr[512];
    size_t nl = 0, al = 0;
    arr[al++] = '[';
    for (size_t i = 0; i < 4; i++) {
        nl += (size_t)snprintf(nd + nl, sizeof nd - nl, "%s\n%s", rows[i], i == 1 ? "\n" : "");
        al += (size_t)snprintf(arr + al, sizeof arr - al, "%s%s", i > 0 ? ", " : "", rows[i]);
    }
    arr[al++] = ']';
    for (unsigned split = 0; split < 40; split++) {
        int rc;
        pgrest_error err = {0};
        char *lines = typed_as(PGR_IMPORT_NDJSON, names, nd, nl, split, json, 3, &rc, &err);
        ck_assert_int_eq(rc, PGREST_OK);
        ck_assert_str_eq(lines, want);
        lines = typed_as(PGR_IMPORT_JSON, names, arr, al, split, json, 3, &rc, &err);
        ck_assert_int_eq(rc, PGREST_OK);
        ck_assert_str_eq(lines, want);
    }
    /* a long string, decoded and quoted again past the buffers' first size */
    char longrow[2200], longwant[2200];
    size_t ll = (size_t)snprintf(longrow, sizeof longrow, "{\"t\":\"\\u0041\",\"n\":1,\"j\":\"\\n");
    size_t wl = (size_t)snprintf(longwant, sizeof longwant, "A\t\"\\\\n");
    for (int i = 0; i < 1000; i++) {
        longrow[ll++] = (char)('a' + i % 26);
        longwant[wl++] = (char)('a' + i % 26);
    }
    ll += (size_t)snprintf(longrow + ll, sizeof longrow - ll, "\"}\n");
    snprintf(longwant + wl, sizeof longwant - wl, "\"\t1\n");
    for (unsigned split = 0; split < 3; split++) {
        int rc;
        pgrest_error err = {0};
        char *lines = typed_as(PGR_IMPORT_NDJSON, names, longrow, ll, split, json, 3, &rc, &err);
        ck_assert_int_eq(rc, PGREST_OK);
        ck_assert_str_eq(lines, longwant);
    }
    static const struct {
        pgr_import_format fmt;
        const char *body, *code, *details;
    } bad[] = {
        {PGR_IMPORT_NDJSON,
         "{\"t\":\"ok\",\"j\":1,\"n\":1}\n{\"t\":\"x\",\"j\":{\"a\":\"\\u0000\"},\"n\":2}\n",
         "22P05", "line 2: \\u0000 cannot be converted to text."},
        {PGR_IMPORT_JSON, "[{\"t\":\"ok\",\"j\":1,\"n\":1},{\"t\":\"\\ud800\",\"j\":1,\"n\":2}]",
         "22P02", "index 1: Unicode low surrogate must follow a high surrogate."},
        {PGR_IMPORT_JSON,
         "[{\"t\":\"ok\",\"j\":1,\"n\":1},{\"t\":\"\\ud800\\ud800\",\"j\":1,\"n\":2}]",
         "22P02", "index 1: Unicode high surrogate must not follow a high surrogate."},
        {PGR_IMPORT_NDJSON, "{\"t\":\"\\udc00x\",\"j\":1,\"n\":2}", "22P02",
         "line 1: Unicode low surrogate must follow a high surrogate."},
    };
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
        for (unsigned split = 0; split < 10; split++) {
            int rc;
            pgrest_error err = {0};
            typed_as(bad[c].fmt, names, bad[c].body, strlen(bad[c].body), split, json, 3, &rc,
                     &err);
            ck_assert_int_ne(rc, PGREST_OK);
            ck_assert_str_eq(err.code, bad[c].code);
            ck_assert_str_eq(err.details, bad[c].details);
        }
    }
}
END_TEST

/* Many rows over several slices, plain ones (read in one pass, a JSON
 * array's elements found on the way) among rows the pass declines (read
 * by json-c): the same lines as the NDJSON of the same rows and as the
 * body fed in small pieces (where every element goes json-c's way), as
 * JSON objects and as typed lines; the buffered reader agrees. */
START_TEST(plain_rows_across_slices)
{
    static const char *const forms[] = {
        "{\"a\":%d,\"b\":\"x\\u00e9\\n%d\"}", "{ \"b\" : [%d, {\"c\":\"]}\"}] , \"a\":-%d.5 }",
        "{\"a\":%de3,\"b\":null}", "{\"\\u0061\":%d,\"b\":\"\\ud83d\\ude00%d\"}",
        "{\"a\":%d,\"b\":{\"d\":[[[[1]]]]},\"a\":%d}",
    };
    size_t cap = 1 << 20;
    char *nd = malloc(cap), *arr = malloc(cap);
    size_t nl = 0, al = 0;
    arr[al++] = '[';
    for (int i = 0; i < 6000; i++) {
        char row[128];
        int n = snprintf(row, sizeof row, forms[i % 5], i, i);
        nl += (size_t)snprintf(nd + nl, cap - nl, "%s\n", row);
        al += (size_t)snprintf(arr + al, cap - al, "%s%s", i > 0 ? (i % 7 ? "," : " ,\n") : "", row);
        ck_assert_int_lt(n, (int)sizeof row);
    }
    arr[al++] = ']';
    ck_assert_uint_gt(al, 3 * 64 * 1024);
    result rn = convert(PGR_IMPORT_NDJSON, nd, nl, 0, true);
    for (unsigned split = 0; split < 3; split += 2) {
        result ra = convert(PGR_IMPORT_JSON, arr, al, split, true);
        ck_assert_int_eq(ra.rc, PGREST_OK);
        ck_assert_uint_eq(ra.count, 6000);
        ck_assert_str_eq(ra.json, rn.json);
    }
    check_body_n(PGR_IMPORT_JSON, arr, al, true);
    static const char *const names[] = {"a", "b"};
    static const bool json[] = {false, true};
    int rc;
    pgrest_error err = {0};
    char *typed_nd = typed_as(PGR_IMPORT_NDJSON, names, nd, nl, 0, json, 2, &rc, &err);
    ck_assert_int_eq(rc, PGREST_OK);
    for (unsigned split = 0; split < 3; split += 2) {
        char *typed_arr = typed_as(PGR_IMPORT_JSON, names, arr, al, split, json, 2, &rc, &err);
        ck_assert_int_eq(rc, PGREST_OK);
        ck_assert_str_eq(typed_arr, typed_nd);
    }
    free(nd);
    free(arr);
}
END_TEST

/* A row's place: CSV and NDJSON lines past blank lines and records over
 * several lines, a JSON array's index; none for a row not written. */
START_TEST(rows_know_their_place)
{
    static const struct {
        pgr_import_format fmt;
        const char *body;
        size_t places[4];
    } cases[] = {
        {PGR_IMPORT_CSV, "a\n1\n\n\"x\ny\"\n2\r\n3\n", {2, 4, 6, 7}},
        {PGR_IMPORT_NDJSON, "{\"a\":1}\n\n\n{\"a\":2}\r\n{\"a\":3}\n \n{\"a\":4}", {1, 4, 5, 7}},
        {PGR_IMPORT_JSON, "[{\"a\":1},\n{\"a\":2}, {\"a\":3},{\"a\":4}]", {0, 1, 2, 3}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        pgr_import_rows *r = pgr_import_rows_new(arena, cases[c].fmt, DEPTH, true);
        pgr_sb out;
        pgr_sb_init(&out, arena, 64);
        pgrest_error err = {0};
        const char *body = cases[c].body;
        ck_assert_int_eq(pgr_import_rows_feed(r, body, strlen(body), &out, &err), PGREST_OK);
        ck_assert_int_eq(pgr_import_rows_finish(r, &out, &err), PGREST_OK);
        ck_assert_uint_eq(pgr_import_rows_count(r), 4);
        for (size_t i = 0; i < 4; i++) {
            size_t at = 0;
            ck_assert(pgr_import_rows_where(r, i, &at));
            ck_assert_uint_eq(at, cases[c].places[i]);
        }
        size_t at;
        ck_assert(!pgr_import_rows_where(r, 4, &at));
        ck_assert_str_eq(pgr_import_rows_place(r),
                         cases[c].fmt == PGR_IMPORT_JSON ? "index" : "line");
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("import_rows");
    TCase *tc = tcase_create("import_rows");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, json_arrays_match_the_buffered_reader);
    tcase_add_test(tc, json_not_rows);
    tcase_add_test(tc, ndjson_matches_the_buffered_reader);
    tcase_add_test(tc, csv_matches_the_buffered_reader);
    tcase_add_test(tc, details_name_the_row);
    tcase_add_test(tc, errors_stick);
    tcase_add_test(tc, copy_lines_are_escaped);
    tcase_add_test(tc, rows_longer_than_a_slice);
    tcase_add_test(tc, memory_is_bounded);
    tcase_add_test(tc, random_bodies);
    tcase_add_test(tc, typed_lines);
    tcase_add_test(tc, typed_json_lines);
    tcase_add_test(tc, rows_know_their_place);
    tcase_add_test(tc, plain_rows_across_slices);
    suite_add_tcase(s, tc);
    return check_run(s);
}
