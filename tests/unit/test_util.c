/* Arena, string builder, SQL builder and error mapping. Expected statuses
 * come from PostgREST's docs (ref/errors, SQLSTATE table). */
#include <check.h>

#include "check_run.h"
#include <stdlib.h>
#include <string.h>

#include <limits.h>

#include "exec/pool.h"
#include "exec/response.h"
#include "exec/stmt_cache.h"
#include "sql/sql_builder.h"
#include "util/arena.h"
#include "util/base64.h"
#include "util/error.h"
#include "util/json_strict.h"
#include "util/monotonic.h"
#include "util/number.h"
#include "util/strbuf.h"
#include "util/utf8.h"

START_TEST(arena_cap_is_enforced)
{
    pgrest_arena *a = pgrest_arena_new(64 * 1024);
    void *p = NULL;
    for (int i = 0; i < 100; i++)
        p = pgr_alloc(a, 4096);
    ck_assert_ptr_null(p);
    ck_assert(pgr_arena_exhausted(a));
    pgrest_arena_free(a);
}
END_TEST

START_TEST(strbuf_sticky_error)
{
    pgrest_arena *a = pgrest_arena_new(16 * 1024);
    pgr_sb sb;
    pgr_sb_init(&sb, a, 16);
    for (int i = 0; i < 10000; i++)
        pgr_sb_puts(&sb, "0123456789");
    ck_assert_ptr_null(pgr_sb_finish(&sb));
    pgrest_arena_free(a);
}
END_TEST

START_TEST(identifiers_are_quoted)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgr_sql q;
    pgr_sql_init(&q, a);
    pgr_sql_qualified(&q, "te\"st", "my table");
    pgr_sql_put(&q, " = ");
    pgr_sql_param(&q, "x'; drop table t; --");
    ck_assert_str_eq(pgr_sb_finish(&q.sb), "\"te\"\"st\".\"my table\" = $1");
    ck_assert_uint_eq(q.n_params, 1);
    ck_assert_str_eq(q.params[0], "x'; drop table t; --");
    pgrest_arena_free(a);
}
END_TEST

START_TEST(array_literal_escapes)
{
    pgrest_arena *a = pgrest_arena_new(0);
    const char *items[] = {"a", "b,c", "d\"e", "f\\g"};
    ck_assert_str_eq(pgr_pg_array_literal(a, items, 4),
                     "{\"a\",\"b,c\",\"d\\\"e\",\"f\\\\g\"}");
    ck_assert_str_eq(pgr_pg_array_literal(a, items, 0), "{}");
    pgrest_arena_free(a);
}
END_TEST

START_TEST(sqlstate_to_http)
{
    static const struct { const char *code, *msg; bool auth; int status; } cases[] = {
        {"23505", "", false, 409}, {"23503", "", false, 409},
        {"42P01", "", false, 404}, {"42883", "", false, 404},
        {"42501", "", false, 401}, {"42501", "", true, 403},
        {"25006", "", false, 405}, {"08006", "", false, 503},
        {"53400", "", false, 500}, {"53100", "", false, 503},
        {"P0001", "", false, 400}, {"P0002", "", false, 500},
        {"PT402", "", false, 402}, {"22P02", "", false, 400},
        {"21000", "UPDATE requires a WHERE clause", false, 400},
        {"21000", "more than one row returned by a subquery", false, 500},
        {"57P01", "", false, 503}, {"57014", "", false, 500},
        {"42P17", "", false, 500}, {"XX000", "", false, 500},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg(pgr_sqlstate_http_status(cases[i].code, cases[i].msg, cases[i].auth) ==
                          cases[i].status,
                      "%s", cases[i].code);
}
END_TEST

START_TEST(error_body_shape)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_error e;
    pgr_error(&e, 404, "PGRST205", "Could not find the table 'a.b' in the schema cache", NULL, NULL);
    ck_assert_str_eq(pgr_error_json(a, &e, false),
                     "{\"code\":\"PGRST205\",\"details\":null,\"hint\":null,"
                     "\"message\":\"Could not find the table 'a.b' in the schema cache\"}");
    ck_assert_str_eq(pgr_error_json(a, &e, true),
                     "{\"code\":\"PGRST205\",\"message\":\"Could not find the table 'a.b' in the schema cache\"}");
    pgrest_arena_free(a);
}
END_TEST

/* Haskell's show on Doubles (prometheus-client sample values) */
START_TEST(doubles_shown_as_haskell)
{
    static const struct { double x; const char *want; } cases[] = {
        {0, "0.0"}, {1, "1.0"}, {10, "10.0"}, {4, "4.0"}, {0.1, "0.1"},
        {0.223109, "0.223109"}, {0.05, "5.0e-2"}, {0.0123, "1.23e-2"},
        {1234567, "1234567.0"}, {9999999.5, "9999999.5"}, {10000000, "1.0e7"},
        {12345678, "1.2345678e7"}, {1.5, "1.5"}, {-2, "-2.0"}, {100, "100.0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[PGR_SHOW_DOUBLE_LEN];
        pgr_show_double(cases[i].x, buf, sizeof buf);
        ck_assert_str_eq(buf, cases[i].want);
    }
}
END_TEST

/* JSON numbers as aeson re-encodes them: the one printer behind OpenAPI
 * defaults and request.jwt.claims, and the Generic format shared with
 * show Double (a literal of a Double's shortest digits prints as show). */
START_TEST(json_numbers_as_aeson_prints_them)
{
    pgrest_arena *a = pgrest_arena_new(0);
    static const struct { const char *in; const char *want; } cases[] = {
        {"1e2", "100"}, {"1.50", "1.5"}, {"1e-7", "1.0e-7"}, {"1.0", "1.0"},
        {"0.1", "0.1"}, {"100.0", "100.0"}, {"12345678.9", "1.23456789e7"},
        {"1234567.8", "1234567.8"}, {"0.001", "1.0e-3"}, {"123.456e-2", "1.23456"},
        {"1e1025", "1.0e1025"}, {"-2.5E+1", "-25"}, {"0.0", "0.0"}, {"-0.0", "0.0"},
        {"0e5", "0"}, {"-0", "0"}, {"42", "42"}, {"-42", "-42"}, {"42.20", "42.2"},
        {"0.050", "5.0e-2"}, {"1.5e3", "1500"}, {" 7 \n", "7"}, {"0.5", "0.5"},
        {"99999999999999999999", "99999999999999999999"}, {"1e-1024", "1.0e-1024"},
        {"10000000.0", "1.0e7"}, {"9999999.5", "9999999.5"}, {"1e1024e", NULL},
        {"12e99999999999", "1.2e100000000000"}, {"5e-99999999999", "5.0e-99999999999"},
        {"", NULL}, {"01", NULL}, {"1.", NULL}, {".5", NULL}, {"+1", NULL},
        {"1e", NULL}, {"NaN", NULL}, {"-", NULL}, {"1 2", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = pgr_aeson_number(a, cases[i].in);
        if (cases[i].want == NULL)
            ck_assert_msg(got == NULL, "%s: got %s", cases[i].in, got);
        else
            ck_assert_msg(got != NULL && strcmp(got, cases[i].want) == 0, "%s: got %s, want %s",
                          cases[i].in, got ? got : "NULL", cases[i].want);
    }
    const char *e1024 = pgr_aeson_number(a, "-3e1024");
    ck_assert_uint_eq(strlen(e1024), 1026);
    ck_assert_int_eq(e1024[0], '-');
    ck_assert_int_eq(e1024[1], '3');
    ck_assert_uint_eq(strspn(e1024 + 2, "0"), 1024);
    /* a Double's show has a point, and below 10^7 or as d.ddde-n its
     * exponent is negative, so aeson takes the Generic path: the same text */
    static const double doubles[] = {0.223109, 0.05, 0.0123, 1234567, -2, 1.5, 5e-324, -1e-300};
    for (size_t i = 0; i < sizeof doubles / sizeof doubles[0]; i++) {
        char shown[PGR_SHOW_DOUBLE_LEN];
        pgr_show_double(doubles[i], shown, sizeof shown);
        ck_assert_str_eq(pgr_aeson_number(a, shown), shown);
    }
    pgrest_arena_free(a);
}
END_TEST

/* One decoder, two paddings: JWS segments and JWK members take base64url
 * with or without '=', jwt-secret-is-base64 takes base64-bytestring's
 * strict padded form; both alphabets either way. */
START_TEST(base64_decoded_both_ways)
{
    static const struct { const char *in; const char *optional, *required; } cases[] = {
        {"", "", ""}, {"QQ", "A", NULL}, {"QQ==", "A", "A"}, {"QQ=", "A", NULL},
        {"QQ===", "A", NULL}, {"QUI=", "AB", "AB"}, {"QUI", "AB", NULL},
        {"QUJD", "ABC", "ABC"}, {"QR==", "A", "A"}, {"Q", NULL, NULL}, {"Q===", NULL, NULL},
        {"Pz8_", "??\?", "??\?"}, {"Pz8/", "??\?", "??\?"}, {"+-_/", "\xfb\xef\xff", "\xfb\xef\xff"},
        {"QQ=A", NULL, NULL}, {"Q Q=", NULL, NULL}, {"QQ.=", NULL, NULL}, {"QUJD\n", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *in = cases[i].in;
        for (int mode = 0; mode < 2; mode++) {
            const char *want = mode == 0 ? cases[i].optional : cases[i].required;
            unsigned char out[16];
            size_t len = 99;
            bool ok = pgr_base64_decode(in, strlen(in),
                                        mode == 0 ? PGR_BASE64_PADDING_OPTIONAL
                                                  : PGR_BASE64_PADDING_REQUIRED,
                                        out, &len);
            ck_assert_msg(ok == (want != NULL), "%s mode %d: %d", in, mode, ok);
            if (ok) {
                ck_assert_uint_eq(len, strlen(want));
                ck_assert_msg(memcmp(out, want, len + 1) == 0, "%s mode %d", in, mode);
            }
        }
    }
}
END_TEST

/* PGRST002 and PGRST003 have one text each, PostgREST Error.hs's. */
START_TEST(schema_cache_and_pool_timeout_errors)
{
    pgrest_error e;
    ck_assert_int_eq(pgr_error_no_schema_cache(&e, "why"), PGREST_ERR_SCHEMA);
    ck_assert_int_eq(e.http_status, 503);
    ck_assert_str_eq(e.code, "PGRST002");
    ck_assert_str_eq(e.message, "Could not query the database for the schema cache. Retrying.");
    ck_assert_str_eq(e.details, "why");
    ck_assert_ptr_null(e.hint);
    ck_assert_int_eq(pgr_error_pool_timeout(&e), PGREST_ERR_CONNECTION);
    ck_assert_int_eq(e.http_status, 504);
    ck_assert_str_eq(e.code, "PGRST003");
    ck_assert_str_eq(e.message, "Timed out acquiring connection from connection pool.");
    ck_assert_ptr_null(e.details);
    ck_assert_ptr_null(e.hint);
}
END_TEST

/* The one blocking wait on the pool's queue: a wake-up that came first
 * ends the next sleep at once (a release may beat the sleeper), a sleep
 * with a limit ends by itself. */
START_TEST(pool_sleeper_wakes_or_times_out)
{
    pgr_pool_sleeper s;
    pgr_pool_sleeper_init(&s);
    pgr_pool_sleeper_wake(&s);
    double t0 = pgr_monotonic_seconds();
    pgr_pool_sleep(&s, -1);
    ck_assert(pgr_monotonic_seconds() - t0 < 1);
    t0 = pgr_monotonic_seconds();
    pgr_pool_sleep(&s, 50);     /* the earlier wake-up was consumed */
    double slept = pgr_monotonic_seconds() - t0;
    ck_assert_msg(slept >= 0.045 && slept < 5, "%f", slept);
    pgr_pool_sleeper_destroy(&s);
}
END_TEST

/* Client bytes that are not UTF-8 (a path or header echoed in the
 * message) still give a valid JSON body: each stray byte is U+FFFD, as
 * PostgREST's lenient decoding of the path has it. */
START_TEST(error_body_invalid_utf8)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_error e;
    pgr_error(&e, 404, "PGRST205", "table 'test.proj\xff\xc3(\xed\xa0\x80s\xc3\xa9'", NULL, NULL);
    const char *body = pgr_error_json(a, &e, true);
    ck_assert_str_eq(body, "{\"code\":\"PGRST205\",\"message\":\"table 'test.proj"
                           "\xef\xbf\xbd\xef\xbf\xbd(\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                           "s\xc3\xa9'\"}");
    ck_assert(pgr_utf8_valid(body, strlen(body)));
    pgrest_arena_free(a);
}
END_TEST

START_TEST(utf8_well_formedness)
{
    static const struct { const char *s; bool ok; } cases[] = {
        {"plain", true}, {"\xc3\xa9", true}, {"\xe2\x82\xac", true},
        {"\xf0\x9f\x98\x80", true}, {"\xf4\x8f\xbf\xbf", true},
        {"\xff", false}, {"\xc0\xaf", false}, {"\xc3", false},
        {"\xe0\x80\xaf", false}, {"\xed\xa0\x80", false},
        {"\xf4\x90\x80\x80", false}, {"\xf8\x88\x80\x80\x80", false},
        {"\xe2\x82", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg(pgr_utf8_valid(cases[i].s, strlen(cases[i].s)) == cases[i].ok, "case %zu", i);
}
END_TEST

/* RFC 8259 as aeson decodes it; the bad ones are what json-c accepts even
 * in its strict mode, or without it. */
START_TEST(json_strict_is_rfc8259)
{
    static const struct { const char *s; bool ok; } cases[] = {
        {"[{\"a\":\"b\"}]", true}, {" \n{\"a\":[1,-2.5e-3,true,false,null]}\t", true},
        {"null", true}, {"5", true}, {"\"it's\"", true}, {"[\"a\\\"b\\\\\"]", true},
        {"[\"\\u00e9\xc3\xa9\"]", true},
        {"", false}, {" ", false}, {"{'a':1}", false}, {"['a']", false}, {"[1,]", false},
        {"{\"a\":1,}", false}, {"[1] x", false}, {"[1]/*c*/", false}, {"[/*c*/1]", false},
        {"[1.]", false}, {"[.5]", false}, {"[01]", false}, {"[NaN]", false},
        {"[Infinity]", false}, {"[-Infinity]", false}, {"[\"a\tb\"]", false},
        {"{a:1}", false}, {"[True]", false}, {"[\"\xff\"]", false}, {"[1]]", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_object *o = NULL;
        bool ok = pgr_json_parse_strict(cases[i].s, strlen(cases[i].s), &o);
        ck_assert_msg(ok == cases[i].ok, "case %zu: %s", i, cases[i].s);
        json_object_put(o);
    }
}
END_TEST


START_TEST(strbuf_put_long_extremes)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgr_sb sb;
    pgr_sb_init(&sb, a, 16);
    const long long v[] = {0, 7, -1, 10, -10, 1234567890123LL, LLONG_MAX, LLONG_MIN};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        pgr_sb_put_long(&sb, v[i]);
        pgr_sb_putc(&sb, ' ');
    }
    ck_assert_str_eq(pgr_sb_finish(&sb), "0 7 -1 10 -10 1234567890123 "
                                         "9223372036854775807 -9223372036854775808 ");
    pgrest_arena_free(a);
}
END_TEST

/* aeson's escapeAscii (Data.Aeson.Encoding.Builder): short escapes for
 * '"', '\\', '\n', '\r', '\t' only, so '\b' and '\f' become \u0008 and
 * \u000c; the plain JSON appender keeps its "\b" and "\f". */
START_TEST(strbuf_aeson_string_escapes)
{
    pgrest_arena *a = pgrest_arena_new(0);
    static const char in[] = "q\"b\\s\n\r\t\b\f\x01\x1f\x7f/\xc3\xa9";
    pgr_sb sb;
    pgr_sb_init(&sb, a, 16);
    pgr_sb_put_aeson_stringn(&sb, in, sizeof in - 1);
    ck_assert_str_eq(pgr_sb_finish(&sb),
                     "\"q\\\"b\\\\s\\n\\r\\t\\u0008\\u000c\\u0001\\u001f\x7f/\xc3\xa9\"");
    pgr_sb_init(&sb, a, 16);
    pgr_sb_put_json_stringn(&sb, "\b\f", 2);
    ck_assert_str_eq(pgr_sb_finish(&sb), "\"\\b\\f\"");
    pgrest_arena_free(a);
}
END_TEST

/* The inline appends: a piece that exactly fills the buffer, one byte
 * more, NULL pieces (puts fails the buffer, an empty putn does not). */
START_TEST(strbuf_appends_at_the_boundary)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgr_sb sb;
    pgr_sb_init(&sb, a, 16);
    pgr_sb_puts(&sb, "0123456789abcde"); /* 15 + NUL = 16 */
    ck_assert_uint_eq(sb.len, 15);
    pgr_sb_putc(&sb, 'f');               /* grows */
    pgr_sb_putn(&sb, NULL, 0);
    pgr_sb_putn(&sb, "ghij", 2);
    ck_assert_str_eq(pgr_sb_finish(&sb), "0123456789abcdefgh");
    ck_assert_uint_eq(sb.len, 18);
    pgr_sb_puts(&sb, NULL);
    ck_assert_ptr_null(pgr_sb_finish(&sb));
    pgr_sb_putc(&sb, 'x');
    ck_assert_ptr_null(pgr_sb_finish(&sb));
    pgr_sb sb2;
    pgr_sb_init(&sb2, a, 16);
    pgr_sb_putn(&sb2, NULL, 3);
    ck_assert_ptr_null(pgr_sb_finish(&sb2));
    pgr_sb sb3;
    pgr_sb_init(&sb3, a, 16);
    pgr_sb_put_ident(&sb3, "plain");
    pgr_sb_put_literal(&sb3, "it's");
    pgr_sb_put_ident(&sb3, "");
    ck_assert_str_eq(pgr_sb_finish(&sb3), "\"plain\"'it''s'\"\"");
    /* pgFmtLit: a backslash makes it E'...' with backslashes doubled, so
     * standard_conforming_strings = off reads the same text */
    pgr_sb sb4;
    pgr_sb_init(&sb4, a, 16);
    pgr_sb_put_literal(&sb4, "a\\b'c");
    pgr_sb_putc(&sb4, ' ');
    pgr_sb_put_literal(&sb4, "\\");
    pgr_sb_putc(&sb4, ' ');
    pgr_sb_put_literal(&sb4, "");
    ck_assert_str_eq(pgr_sb_finish(&sb4), "E'a\\\\b''c' E'\\\\' ''");
    pgrest_arena_free(a);
}
END_TEST

/* PostgREST RangeQuery contentRangeH. */
START_TEST(content_range_forms)
{
    pgrest_arena *a = pgrest_arena_new(0);
    ck_assert_str_eq(pgr_content_range(a, 0, 24, true, 100), "0-24/100");
    ck_assert_str_eq(pgr_content_range(a, 0, 0, false, 0), "0-0/*");
    ck_assert_str_eq(pgr_content_range(a, 0, -1, false, 0), "*/*");
    ck_assert_str_eq(pgr_content_range(a, 0, -1, true, 0), "*/0");
    ck_assert_str_eq(pgr_content_range(a, 5, 9, true, 0), "*/0");
    ck_assert_str_eq(pgr_content_range(a, 10, 9, true, 10), "*/10");
    pgrest_arena_free(a);
}
END_TEST

/* Lookups by whole text: texts of one length that differ in one byte (in
 * the eight-byte words and in the tail), prefixes, forget, clear, growth. */
START_TEST(stmt_cache_keys_by_whole_text)
{
    pgr_stmt_cache *c = pgr_stmt_cache_new();
    ck_assert_ptr_nonnull(c);
    const char *base = "SELECT set_config('search_path', $1, true), 0123456789";
    ck_assert_ptr_null(pgr_stmt_cache_lookup(c, base));
    const char *n1 = pgr_stmt_cache_add(c, base);
    ck_assert_ptr_nonnull(n1);
    ck_assert_str_eq(pgr_stmt_cache_lookup(c, base), n1);
    char other[128];
    strcpy(other, base);
    other[3] ^= 1; /* in the first word */
    ck_assert_ptr_null(pgr_stmt_cache_lookup(c, other));
    strcpy(other, base);
    other[strlen(base) - 1] = 'X'; /* in the tail */
    ck_assert_ptr_null(pgr_stmt_cache_lookup(c, other));
    const char *n2 = pgr_stmt_cache_add(c, other);
    ck_assert_str_ne(n1, n2);
    ck_assert_str_eq(pgr_stmt_cache_lookup(c, other), n2);
    ck_assert_str_eq(pgr_stmt_cache_lookup(c, base), n1);
    strcpy(other, base);
    other[16] = '\0'; /* a prefix, exactly two words */
    ck_assert_ptr_null(pgr_stmt_cache_lookup(c, other));
    ck_assert_ptr_null(pgr_stmt_cache_lookup(c, ""));
    pgr_stmt_cache_forget(c, base);
    ck_assert_ptr_null(pgr_stmt_cache_lookup(c, base));
    ck_assert_uint_eq(pgr_stmt_cache_count(c), 1);
    char sql[64];
    for (int i = 0; i < 500; i++) {
        snprintf(sql, sizeof sql, "SELECT %d", i);
        ck_assert_ptr_nonnull(pgr_stmt_cache_add(c, sql));
    }
    for (int i = 0; i < 500; i++) {
        snprintf(sql, sizeof sql, "SELECT %d", i);
        ck_assert_ptr_nonnull(pgr_stmt_cache_lookup(c, sql));
    }
    ck_assert_uint_eq(pgr_stmt_cache_count(c), 501);
    pgr_stmt_cache_clear(c);
    ck_assert_ptr_null(pgr_stmt_cache_lookup(c, "SELECT 1"));
    ck_assert_uint_eq(pgr_stmt_cache_count(c), 0);
    pgr_stmt_cache_free(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("util");
    TCase *tc = tcase_create("util");
    tcase_add_test(tc, arena_cap_is_enforced);
    tcase_add_test(tc, strbuf_sticky_error);
    tcase_add_test(tc, identifiers_are_quoted);
    tcase_add_test(tc, array_literal_escapes);
    tcase_add_test(tc, sqlstate_to_http);
    tcase_add_test(tc, error_body_shape);
    tcase_add_test(tc, doubles_shown_as_haskell);
    tcase_add_test(tc, json_numbers_as_aeson_prints_them);
    tcase_add_test(tc, base64_decoded_both_ways);
    tcase_add_test(tc, schema_cache_and_pool_timeout_errors);
    tcase_add_test(tc, pool_sleeper_wakes_or_times_out);
    tcase_add_test(tc, error_body_invalid_utf8);
    tcase_add_test(tc, utf8_well_formedness);
    tcase_add_test(tc, json_strict_is_rfc8259);
    tcase_add_test(tc, strbuf_put_long_extremes);
    tcase_add_test(tc, strbuf_appends_at_the_boundary);
    tcase_add_test(tc, strbuf_aeson_string_escapes);
    tcase_add_test(tc, content_range_forms);
    tcase_add_test(tc, stmt_cache_keys_by_whole_text);
    suite_add_tcase(s, tc);
    return check_run(s);
}
