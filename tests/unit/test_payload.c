/* Request bodies as PostgREST's ApiRequest/Payload.hs reads them: aeson's
 * decode takes any JSON value, payloadAttributes turns every scalar into
 * the empty array and refuses arrays whose elements are not objects with
 * one key set, CSV and form bodies become JSON rows, and anything that is
 * not exactly one JSON value (trailing text, a NUL) is "Empty or invalid
 * json". Also which query parameters a call reads as arguments. Run
 * through pgrest_parse_request: no database. */
#include <check.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "parse/api_request.h"
#include "pgrest/pgrest.h"

static pgrest_ctx *ctx;
static pgrest_arena *arena;

static void setup(void)
{
    ctx = pgrest_ctx_new();
    ck_assert_ptr_nonnull(ctx);
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-schemas", "api", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-anon-role", "anon", &err), PGREST_OK);
    arena = pgrest_arena_new(0);
}

static void teardown(void)
{
    pgrest_arena_free(arena);
    pgrest_ctx_free(ctx);
}

static int parse_body(const char *path, const char *ctype, const char *body, size_t len,
                      pgrest_api_request **api, pgrest_error *err)
{
    pgrest_request *req = pgrest_request_new(arena, "POST", path, NULL);
    pgrest_request_add_header(req, "Content-Type", ctype);
    pgrest_request_set_body(req, body, len);
    return pgrest_parse_request(ctx, arena, req, api, err);
}

static void expect_payload(const char *path, const char *ctype, const char *body,
                           const char *payload, size_t n_keys)
{
    pgrest_api_request *api = NULL;
    pgrest_error err = {0};
    int rc = parse_body(path, ctype, body, strlen(body), &api, &err);
    ck_assert_msg(rc == PGREST_OK, "%s: %s", body, err.message ? err.message : "?");
    ck_assert_str_eq(api->payload_json, payload);
    ck_assert_uint_eq(api->n_payload_keys, n_keys);
}

static void expect_invalid(const char *path, const char *ctype, const char *body, size_t len,
                           const char *message)
{
    pgrest_api_request *api = NULL;
    pgrest_error err = {0};
    ck_assert_int_ne(parse_body(path, ctype, body, len, &api, &err), PGREST_OK);
    ck_assert_int_eq(err.http_status, 400);
    ck_assert_str_eq(err.code, "PGRST102");
    ck_assert_str_eq(err.message, message);
}

START_TEST(scalars_become_the_empty_array)
{
    static const char *const scalars[] = {"5", " 5 ", "true", "null", "\"x\"", "-1.5e3"};
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
        expect_payload("/items", "application/json", scalars[i], "[]", 0);
        expect_payload("/rpc/f", "application/json", scalars[i], "[]", 0);
    }
}
END_TEST

START_TEST(objects_and_uniform_arrays_keep_their_keys)
{
    expect_payload("/items", "application/json", "{\"a\":1,\"b\":2}", "{\"a\":1,\"b\":2}", 2);
    expect_payload("/items", "application/json", "[{\"a\":1},{\"a\":2}] ",
                   "[{\"a\":1},{\"a\":2}] ", 1);
    expect_payload("/items", "application/json", "[]", "[]", 0);
}
END_TEST

START_TEST(not_one_json_value_is_invalid)
{
    static const char *const bad[] = {"", "{} x", "5 x", "[1,]", "{\"a\":1,}", "['a']",
                                      "tru", "01", "{", "\"\\x\""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_invalid("/items", "application/json", bad[i], strlen(bad[i]),
                       "Empty or invalid json");
    /* a NUL after the value is not whitespace: the body is not one value */
    expect_invalid("/items", "application/json", "{}\0x", 4, "Empty or invalid json");
    expect_invalid("/items", "application/json", "5\0", 2, "Empty or invalid json");
    /* aeson decodes strings to Text: invalid UTF-8 is no JSON */
    expect_invalid("/items", "application/json", "{\"a\":\"\xff\"}", 9,
                   "Empty or invalid json");
    expect_invalid("/items", "application/json", "[\"\xc3\"]", 5, "Empty or invalid json");
    /* a surrogate (CESU-8), an overlong form, beyond U+10FFFF */
    expect_invalid("/items", "application/json", "[\"\xed\xa0\x80\"]", 7, "Empty or invalid json");
    expect_invalid("/items", "application/json", "[\"\xc0\xaf\"]", 6, "Empty or invalid json");
    expect_invalid("/items", "application/json", "[\"\xf4\x90\x80\x80\"]", 8, "Empty or invalid json");
    expect_payload("/items", "application/json", "{\"a\":\"\xf0\x9f\x98\x80 \xe6\xa3\x8b\"}",
                   "{\"a\":\"\xf0\x9f\x98\x80 \xe6\xa3\x8b\"}", 1);
}
END_TEST

/* aeson's decode is RFC 8259: none of what json-c's strict mode still
 * takes (single-quoted keys, NaN/Infinity, "1.", raw control characters
 * in strings: aeson's jstring_ fails "unescaped control character"),
 * neither as the body nor as an element of an array body */
START_TEST(json_leniencies_are_invalid)
{
    static const char *const bodies[] = {
        "{'a':1}", "[{'a':1}]", "{\"a\":NaN}", "[{\"a\":Infinity}]", "{\"a\":-Infinity}",
        "{\"a\":1.}", "[{\"a\":1.}]", "{\"a\":\"x\ny\"}", "[{\"a\":\"\t\"}]",
        "{\"a\":1,}", "[{\"a\":1},]", "{\"a\":1}/*c*/", "[{\"a\":1} // c\n]",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        expect_invalid("/items", "application/json", bodies[i], strlen(bodies[i]),
                       "Empty or invalid json");
        expect_invalid("/rpc/f", "application/json", bodies[i], strlen(bodies[i]),
                       "Empty or invalid json");
    }
    /* escaped, they are fine; letters inside strings too */
    expect_payload("/items", "application/json", "{\"a\":\"x\\ny 'NaN' 1.\"}",
                   "{\"a\":\"x\\ny 'NaN' 1.\"}", 1);
    expect_payload("/items", "application/json", "[{\"a\":1.5e-3,\"b\":true,\"c\":null}]",
                   "[{\"a\":1.5e-3,\"b\":true,\"c\":null}]", 3);
}
END_TEST

START_TEST(arrays_need_objects_with_one_key_set)
{
    expect_invalid("/items", "application/json", "[1,2]", 5, "All object keys must match");
    const char *mixed = "[{\"a\":1},{\"b\":1}]";
    expect_invalid("/items", "application/json", mixed, strlen(mixed),
                   "All object keys must match");
}
END_TEST

/* Payload.hs: CSV is read for functions too; other types are refused with
 * toMime of the Content-Type. */
/* Arrays are read one element at a time (json_array_scan): the split
 * must give aeson's verdict on the whole text -- brackets and commas in
 * strings, separators and whitespace, trailing text -- and a key mismatch
 * only counts once the whole text is valid JSON. */
START_TEST(arrays_read_element_by_element)
{
    static const char *const valid[] = {
        " [ {\"a\":\"]\"} ,\n{\"a\":\"}\\\"[\"}\t]\r\n", "[{\"a\":[1,{\"b\":[]}]},{\"a\":null}]",
        "[{}]", "[{},{}]",
    };
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++)
        expect_payload("/items", "application/json", valid[i], valid[i], i < 2 ? 1 : 0);
    static const char *const invalid[] = {
        "[", "[1,]", "[,1]", "[1 2]", "[{\"a\":1}]x", "[{\"a\":1}}", "[1}", "[{\"a\":1},]",
        "[{\"a\":1},{\"b\":2},{]", "[\"a]", "[tru]", "[01]", "[{\"a\":1}][]", "[[]]]",
        "[{\"a\":1,}]", "[\"\\x\"]",
    };
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++)
        expect_invalid("/items", "application/json", invalid[i], strlen(invalid[i]),
                       "Empty or invalid json");
    static const char *const mismatch[] = {
        "[\"]\",1]", "[null]", "[{\"a\":1},{\"b\":\"]\"}]", "[{\"a\":1},[]]", "[1,{\"a\":1}]",
    };
    for (size_t i = 0; i < sizeof mismatch / sizeof mismatch[0]; i++)
        expect_invalid("/items", "application/json", mismatch[i], strlen(mismatch[i]),
                       "All object keys must match");
}
END_TEST

/* json-c spends some 800 bytes on an empty object: holding the document
 * of a body of 200000 of them for the rest of the request took ~160 MB
 * for 600 kB sent. Only the first element outlives its parse now. */
START_TEST(array_bodies_are_not_held_in_memory)
{
    size_t n = 200000;
    char *body = malloc(n * 3 + 2), *p = body;
    *p++ = '[';
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            *p++ = ',';
        *p++ = '{';
        *p++ = '}';
    }
    *p++ = ']';
    size_t before = mallinfo2().uordblks;
    pgrest_api_request *api = NULL;
    pgrest_error err = {0};
    ck_assert_int_eq(parse_body("/items", "application/json", body, (size_t)(p - body), &api,
                                &err), PGREST_OK);
    size_t after = mallinfo2().uordblks;
    ck_assert_msg(after < before + ((size_t)32 << 20), "%zu bytes held", after - before);
    free(body);
}
END_TEST

START_TEST(csv_for_tables_and_functions)
{
    pgrest_api_request *api = NULL;
    pgrest_error err = {0};
    const char *csv = "a,b\n1,NULL\n";
    ck_assert_int_eq(parse_body("/rpc/f", "text/csv", csv, strlen(csv), &api, &err), PGREST_OK);
    ck_assert_str_eq(api->payload_json, "[{\"a\":\"1\",\"b\":null}]");
    expect_invalid("/items", "image/png", "x", 1, "Content-Type not acceptable: image/png");
    expect_invalid("/items", "text/plain", "x", 1, "Content-Type not acceptable: text/plain");
}
END_TEST

/* cassava's decodeByName as Payload.hs uses it: each record is the zip of
 * the header and its fields (extra fields dropped, the last of repeated
 * names kept), blank lines are skipped, every line end (\n, \r\n, \r)
 * counts, and payloadAttributes wants one key set for all records. */
START_TEST(csv_records_are_zipped_with_the_header)
{
    expect_payload("/items", "text/csv", "a,b\nfoo,bar,extra\n", "[{\"a\":\"foo\",\"b\":\"bar\"}]", 2);
    expect_payload("/items", "text/csv", "a,b\nfoo\nbar", "[{\"a\":\"foo\"},{\"a\":\"bar\"}]", 1);
    expect_payload("/items", "text/csv", "a,b\n\nfoo,bar\n\n\n", "[{\"a\":\"foo\",\"b\":\"bar\"}]", 2);
    expect_payload("/items", "text/csv", "a,a\n1,2", "[{\"a\":\"2\"}]", 1);
    expect_payload("/items", "text/csv", "a,b\r1,2\r\n3,4\r", "[{\"a\":\"1\",\"b\":\"2\"},{\"a\":\"3\",\"b\":\"4\"}]", 2);
    expect_payload("/items", "text/csv", "a,b\n\"x,\"\"y\"\"\nz\",NULL\n",
                   "[{\"a\":\"x,\\\"y\\\"\\nz\",\"b\":null}]", 2);
    /* no record: the empty array, which has no keys */
    expect_payload("/items", "text/csv", "x,y\n", "[]", 0);
    const char *short_row = "a,b\nfoo,bar\nbaz";
    expect_invalid("/items", "text/csv", short_row, strlen(short_row),
                   "All lines must have same number of fields");
    /* the header must end with a line end */
    expect_invalid("/items", "text/csv", "a,b", 3, "parse error (not enough input) at \"\"");
    expect_invalid("/items", "text/csv", "", 0, "parse error (not enough input) at \"\"");
}
END_TEST

/* Payload.hs: a table's form body is HM.fromList of its pairs, the last
 * of repeated names wins */
START_TEST(form_body_keeps_the_last_repeated_name)
{
    expect_payload("/items", "application/x-www-form-urlencoded", "a=1&b=x&a=2",
                   "{\"b\":\"x\",\"a\":\"2\"}", 2);
}
END_TEST

/* ApiRequest.hs actIsInvokeSafe: a POST call reads no arguments from the
 * query string; a parameter there is a filter, and one without an
 * operator fails to parse (GET reads it as an argument). */
START_TEST(post_call_reads_no_arguments_from_query)
{
    pgrest_api_request *api = NULL;
    pgrest_error err = {0};
    pgrest_request *req = pgrest_request_new(arena, "POST", "/rpc/f", "a=1");
    pgrest_request_add_header(req, "Content-Type", "application/json");
    pgrest_request_set_body(req, "{}", 2);
    ck_assert_int_eq(pgrest_parse_request(ctx, arena, req, &api, &err), PGREST_ERR_REQUEST);
    ck_assert_str_eq(err.code, "PGRST100");
    ck_assert_str_eq(err.message, "\"failed to parse filter (1)\" (line 1, column 1)");
    req = pgrest_request_new(arena, "GET", "/rpc/f", "a=1");
    ck_assert_int_eq(pgrest_parse_request(ctx, arena, req, &api, &err), PGREST_OK);
    req = pgrest_request_new(arena, "POST", "/rpc/f", "id=eq.3");
    pgrest_request_set_body(req, "{}", 2);
    ck_assert_int_eq(pgrest_parse_request(ctx, arena, req, &api, &err), PGREST_OK);
}
END_TEST

/* Payload.hs getPayload: ?columns names the keys of a POST or PATCH
 * (the body goes unparsed); a PUT writes its body's own keys */
START_TEST(columns_are_read_by_post_and_patch_not_put)
{
    static const char *const methods[] = {"POST", "PATCH", "PUT"};
    for (size_t i = 0; i < 3; i++) {
        pgrest_api_request *api = NULL;
        pgrest_error err = {0};
        pgrest_request *req = pgrest_request_new(arena, methods[i], "/items",
                                                 "id=eq.1&columns=id");
        pgrest_request_add_header(req, "Content-Type", "application/json");
        pgrest_request_set_body(req, "{\"id\":1,\"v\":2}", 14);
        ck_assert_int_eq(pgrest_parse_request(ctx, arena, req, &api, &err), PGREST_OK);
        bool put = strcmp(methods[i], "PUT") == 0;
        ck_assert_uint_eq(api->n_payload_keys, put ? 2 : 1);
    }
    /* so a PUT body is checked as JSON even with ?columns */
    pgrest_api_request *api = NULL;
    pgrest_error err = {0};
    pgrest_request *req = pgrest_request_new(arena, "PUT", "/items", "id=eq.1&columns=id");
    pgrest_request_add_header(req, "Content-Type", "application/json");
    pgrest_request_set_body(req, "xx", 2);
    ck_assert_int_ne(pgrest_parse_request(ctx, arena, req, &api, &err), PGREST_OK);
    ck_assert_str_eq(err.message, "Empty or invalid json");
}
END_TEST

/* application/x-ndjson (docs/bulk-import.md): the non-blank lines are
 * the elements of a JSON array, joined as written */
#define ND "application/x-ndjson"

static void expect_invalid_line(const char *ctype, const char *body, const char *message,
                                const char *details)
{
    pgrest_api_request *api = NULL;
    pgrest_error err = {0};
    ck_assert_int_ne(parse_body("/items", ctype, body, strlen(body), &api, &err), PGREST_OK);
    ck_assert_int_eq(err.http_status, 400);
    ck_assert_str_eq(err.code, "PGRST102");
    ck_assert_str_eq(err.message, message);
    ck_assert_ptr_nonnull(err.details);
    ck_assert_str_eq(err.details, details);
}

START_TEST(ndjson_lines_are_array_elements)
{
    const char *want = "[{\"a\":1,\"b\":2},{\"b\":3,\"a\":4}]";
    expect_payload("/items", ND, "{\"a\":1,\"b\":2}\n{\"b\":3,\"a\":4}\n", want, 2);
    expect_payload("/items", ND, "{\"a\":1,\"b\":2}\n{\"b\":3,\"a\":4}", want, 2);
    expect_payload("/items", ND, "{\"a\":1,\"b\":2}\r\n{\"b\":3,\"a\":4}\r\n", want, 2);
    expect_payload("/items", ND, "{\"a\":1,\"b\":2}\r\n{\"b\":3,\"a\":4}", want, 2);
    /* parameters as for the other types */
    expect_payload("/items", "application/x-ndjson; charset=utf-8", "{\"a\":1}", "[{\"a\":1}]",
                   1);
    /* one line is an array of one, not an object */
    pgrest_api_request *api = NULL;
    pgrest_error err = {0};
    ck_assert_int_eq(parse_body("/items", ND, "{\"a\":1}\n", 8, &api, &err), PGREST_OK);
    ck_assert(api->payload_is_array);
}
END_TEST

START_TEST(ndjson_blank_lines_are_skipped)
{
    expect_payload("/items", ND, "\n{\"a\":1}\n\n \t\n{\"a\":2}\n\n", "[{\"a\":1},{\"a\":2}]", 1);
    expect_payload("/items", ND, "\r\n{\"a\":1}\r\n\t\r\n", "[{\"a\":1}]", 1);
    /* no line at all: the empty array, which has no keys */
    expect_payload("/items", ND, "", "[]", 0);
    expect_payload("/items", ND, "\n \n\r\n", "[]", 0);
}
END_TEST

START_TEST(ndjson_bad_line_is_named)
{
    expect_invalid_line(ND, "{\"a\":1}\n\n{\"a\":}\n{\"a\":2}", "Empty or invalid json",
                        "line 3: invalid JSON");
    /* two values on one line; a line split in two */
    expect_invalid_line(ND, "{\"a\":1} {\"a\":2}", "Empty or invalid json",
                        "line 1: invalid JSON");
    expect_invalid_line(ND, "{\"a\":1}\n{\"a\":\n2}\n", "Empty or invalid json",
                        "line 2: invalid JSON");
    /* aeson's strictness holds per line as for a JSON body */
    expect_invalid_line(ND, "{\"a\":1}\r\n{'a':1}\r\n", "Empty or invalid json",
                        "line 2: invalid JSON");
    expect_invalid_line(ND, "{\"a\":\"\xff\"}\n", "Empty or invalid json", "line 1: invalid JSON");
    /* a CR alone does not end a line, and is no blank */
    expect_invalid_line(ND, "{\"a\":1}\r{\"a\":2}\n", "Empty or invalid json",
                        "line 1: invalid JSON");
    static const char *const not_objects[] = {"[{\"a\":1}]", "1", "null", "\"x\"", "[]"};
    for (size_t i = 0; i < sizeof not_objects / sizeof not_objects[0]; i++) {
        char body[64];
        snprintf(body, sizeof body, "{\"a\":1}\n%s\n", not_objects[i]);
        expect_invalid_line(ND, body, "Empty or invalid json", "line 2: not a JSON object");
    }
}
END_TEST

START_TEST(ndjson_keys_must_match)
{
    expect_invalid_line(ND, "{\"a\":1}\n{\"a\":2}\n\n{\"b\":3}\n", "All object keys must match",
                        "line 4: the keys differ from those of the first object");
    expect_invalid_line(ND, "{\"a\":1}\n{\"a\":2,\"b\":3}\n", "All object keys must match",
                        "line 2: the keys differ from those of the first object");
    /* ?columns= names the keys: the lines go on as written (RawJSON) */
    pgrest_api_request *api = NULL;
    pgrest_error err = {0};
    pgrest_request *req = pgrest_request_new(arena, "POST", "/items", "columns=a");
    pgrest_request_add_header(req, "Content-Type", ND);
    pgrest_request_set_body(req, "{\"a\":1}\n{\"b\":2}\n", 16);
    ck_assert_int_eq(pgrest_parse_request(ctx, arena, req, &api, &err), PGREST_OK);
    ck_assert_str_eq(api->payload_json, "[{\"a\":1},{\"b\":2}]");
    ck_assert_uint_eq(api->n_payload_keys, 1);
    ck_assert_str_eq(api->payload_keys[0], "a");
    /* but each line is still one JSON object */
    req = pgrest_request_new(arena, "PATCH", "/items", "columns=a");
    pgrest_request_add_header(req, "Content-Type", ND);
    pgrest_request_set_body(req, "{\"a\":1}\n5\n", 10);
    ck_assert_int_ne(pgrest_parse_request(ctx, arena, req, &api, &err), PGREST_OK);
    ck_assert_str_eq(err.details, "line 2: not a JSON object");
}
END_TEST

/* request-max-json-depth counts within each line: the line's object is
 * level 1 */
START_TEST(ndjson_depth_limit_is_per_line)
{
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "request-max-json-depth", "3", &err), PGREST_OK);
    expect_payload("/items", ND, "{\"a\":[{\"b\":1}]}\n{\"a\":[]}",
                   "[{\"a\":[{\"b\":1}]},{\"a\":[]}]", 1);
    expect_invalid_line(ND, "{\"a\":[]}\n{\"a\":[{\"b\":[1]}]}", "Empty or invalid json",
                        "line 2: JSON nesting deeper than 3 levels (request-max-json-depth)");
}
END_TEST

/* Only POST and PATCH to a relation read NDJSON: a PUT and a call keep
 * PostgREST's answer to a type it does not know */
START_TEST(ndjson_elsewhere_keeps_postgrest_answer)
{
    pgrest_api_request *api = NULL;
    pgrest_error err = {0};
    pgrest_request *req = pgrest_request_new(arena, "PUT", "/items", "id=eq.1");
    pgrest_request_add_header(req, "Content-Type", "application/x-ndjson; charset=utf-8");
    pgrest_request_set_body(req, "{\"id\":1}", 8);
    ck_assert_int_ne(pgrest_parse_request(ctx, arena, req, &api, &err), PGREST_OK);
    ck_assert_int_eq(err.http_status, 400);
    ck_assert_str_eq(err.code, "PGRST102");
    ck_assert_str_eq(err.message,
                     "Content-Type not acceptable: application/x-ndjson; charset=utf-8");
    /* a call's body is the function's to refuse, at planning */
    req = pgrest_request_new(arena, "POST", "/rpc/f", NULL);
    pgrest_request_add_header(req, "Content-Type", ND);
    pgrest_request_set_body(req, "{\"a\":1}\n", 8);
    ck_assert_int_eq(pgrest_parse_request(ctx, arena, req, &api, &err), PGREST_OK);
    ck_assert_ptr_null(api->payload_json);
}
END_TEST

/* Each line's document is released once checked: 200000 lines of {}
 * cost the array text, not json-c's ~800 bytes per object */
START_TEST(ndjson_bodies_are_not_held_in_memory)
{
    size_t n = 200000;
    char *body = malloc(n * 3), *p = body;
    for (size_t i = 0; i < n; i++) {
        *p++ = '{';
        *p++ = '}';
        *p++ = '\n';
    }
    size_t before = mallinfo2().uordblks;
    pgrest_api_request *api = NULL;
    pgrest_error err = {0};
    ck_assert_int_eq(parse_body("/items", ND, body, (size_t)(p - body), &api, &err), PGREST_OK);
    size_t after = mallinfo2().uordblks;
    ck_assert_msg(after < before + ((size_t)32 << 20), "%zu bytes held", after - before);
    ck_assert_uint_eq(strlen(api->payload_json), n * 3 + 1);
    free(body);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("payload");
    TCase *tc = tcase_create("payload");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, scalars_become_the_empty_array);
    tcase_add_test(tc, objects_and_uniform_arrays_keep_their_keys);
    tcase_add_test(tc, not_one_json_value_is_invalid);
    tcase_add_test(tc, json_leniencies_are_invalid);
    tcase_add_test(tc, arrays_need_objects_with_one_key_set);
    tcase_add_test(tc, arrays_read_element_by_element);
    tcase_add_test(tc, array_bodies_are_not_held_in_memory);
    tcase_add_test(tc, csv_for_tables_and_functions);
    tcase_add_test(tc, csv_records_are_zipped_with_the_header);
    tcase_add_test(tc, form_body_keeps_the_last_repeated_name);
    tcase_add_test(tc, post_call_reads_no_arguments_from_query);
    tcase_add_test(tc, columns_are_read_by_post_and_patch_not_put);
    tcase_add_test(tc, ndjson_lines_are_array_elements);
    tcase_add_test(tc, ndjson_blank_lines_are_skipped);
    tcase_add_test(tc, ndjson_bad_line_is_named);
    tcase_add_test(tc, ndjson_keys_must_match);
    tcase_add_test(tc, ndjson_depth_limit_is_per_line);
    tcase_add_test(tc, ndjson_elsewhere_keeps_postgrest_answer);
    tcase_add_test(tc, ndjson_bodies_are_not_held_in_memory);
    suite_add_tcase(s, tc);
    return check_run(s);
}
