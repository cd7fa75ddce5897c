/* The incremental body encoder of streamed reads (lib/exec/stream.c)
 * without a database: rows are PGresults built with libpq's own
 * constructors. The expected bytes are what PostgreSQL 15 prints for the
 * buffered aggregates over the same rows (json_agg, json_strip_nulls,
 * json_build_object, record_out), checked with psql:
 *   SELECT json_agg(t) FROM t;  -- [{...}, \n {...}]
 *   SELECT row('a'||chr(11)||'b', E'a\tb', '', NULL, 'a"b', 'x\y', 'é',
 *              '{1,2}', 'a;b', ' x')::text;
 *     -- ("a\vb","a\tb","",,"a""b","x\\y",é,"{1,2}",a;b," x") */
#include <check.h>
#include <libpq-fe.h>
#include <string.h>

#include "check_run.h"
#include "exec/stream.h"
#include "pgrest/pgrest.h"

static pgrest_arena *arena;

static void setup(void)
{
    arena = pgrest_arena_new(0);
}

static void teardown(void)
{
    pgrest_arena_free(arena);
}

/* A result of n rows of the given columns, values row-major (NULL = SQL NULL). */
static PGresult *result(int ncols, const char *const *names, int nrows,
                        const char *const *values)
{
    PGresult *r = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
    PGresAttDesc attrs[16];
    memset(attrs, 0, sizeof attrs);
    for (int c = 0; c < ncols; c++) {
        attrs[c].name = (char *)names[c];
        attrs[c].typid = 25;
        attrs[c].typlen = -1;
        attrs[c].atttypmod = -1;
    }
    ck_assert(PQsetResultAttrs(r, ncols, attrs));
    for (int i = 0; i < nrows; i++)
        for (int c = 0; c < ncols; c++) {
            const char *v = values[i * ncols + c];
            ck_assert(PQsetvalue(r, i, c, (char *)v, v ? (int)strlen(v) : -1));
        }
    return r;
}

static pgr_stream *stream_of(pgr_output output, bool stripped, size_t threshold)
{
    pgrest_query_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.output = output;
    plan.nulls_stripped = stripped;
    pgr_stream *s = pgr_stream_new(arena, &plan, threshold);
    ck_assert_ptr_nonnull(s);
    return s;
}

/* Feeds the rows of r and ends the stream; returns the whole body. */
static const char *encode(pgr_stream *s, const PGresult *r)
{
    for (int i = 0; i < PQntuples(r); i++)
        pgr_stream_row(s, r, i);
    pgr_stream_end(s);
    static char out[4096];
    size_t n;
    const char *p = pgr_stream_pending(s, &n);
    ck_assert_uint_lt(n, sizeof out);
    memcpy(out, p, n);
    out[n] = '\0';
    return out;
}

static const char *const json_col[] = {"j"};
static const char *const two_rows[] = {"{\"a\":1}", "{\"a\":2}"};

START_TEST(json_array_as_json_agg)
{
    PGresult *r = result(1, json_col, 2, two_rows);
    ck_assert_str_eq(encode(stream_of(PGR_OUT_JSON, false, 1024), r),
                     "[{\"a\":1}, \n {\"a\":2}]");
    ck_assert_str_eq(encode(stream_of(PGR_OUT_JSON, true, 1024), r),
                     "[{\"a\":1},{\"a\":2}]");
    ck_assert_str_eq(encode(stream_of(PGR_OUT_NDJSON, false, 1024), r),
                     "{\"a\":1}\n{\"a\":2}\n");
    ck_assert_str_eq(encode(stream_of(PGR_OUT_GEOJSON, false, 1024), r),
                     "{\"type\" : \"FeatureCollection\", \"features\" : "
                     "[{\"a\":1}, {\"a\":2}]}");
    PQclear(r);
}
END_TEST

START_TEST(no_rows)
{
    PGresult *r = result(1, json_col, 0, NULL);
    ck_assert_str_eq(encode(stream_of(PGR_OUT_JSON, false, 1024), r), "[]");
    ck_assert_str_eq(encode(stream_of(PGR_OUT_JSON, true, 1024), r), "[]");
    ck_assert_str_eq(encode(stream_of(PGR_OUT_NDJSON, false, 1024), r), "");
    ck_assert_str_eq(encode(stream_of(PGR_OUT_GEOJSON, false, 1024), r),
                     "{\"type\" : \"FeatureCollection\", \"features\" : []}");
    /* asCsvF: an empty header, then the line feed */
    ck_assert_str_eq(encode(stream_of(PGR_OUT_CSV, false, 1024), r), "\n");
    PQclear(r);
}
END_TEST

START_TEST(csv_as_record_out)
{
    static const char *const names[] = {"v", "tab", "empty", "null", "quote", "backslash",
                                        "utf8", "array", "semi", "lead"};
    static const char *const row[] = {"a\vb", "a\tb", "", NULL, "a\"b", "x\\y",
                                      "\xc3\xa9", "{1,2}", "a;b", " x"};
    PGresult *r = result(10, names, 1, row);
    ck_assert_str_eq(encode(stream_of(PGR_OUT_CSV, false, 1024), r),
                     "v,tab,empty,null,quote,backslash,utf8,array,semi,lead\n"
                     "\"a\vb\",\"a\tb\",\"\",,\"a\"\"b\",\"x\\\\y\",\xc3\xa9,"
                     "\"{1,2}\",a;b,\" x\"");
    PQclear(r);
}
END_TEST

START_TEST(csv_rows_joined_by_line_feeds)
{
    static const char *const names[] = {"id", "t"};
    static const char *const rows[] = {"1", "x", "2", "(y)"};
    PGresult *r = result(2, names, 2, rows);
    ck_assert_str_eq(encode(stream_of(PGR_OUT_CSV, false, 1024), r),
                     "id,t\n1,x\n2,\"(y)\"");
    PQclear(r);
}
END_TEST

/* The buffer counts as full at the threshold and drains in order. */
START_TEST(backpressure_and_take)
{
    PGresult *r = result(1, json_col, 2, two_rows);
    pgr_stream *s = stream_of(PGR_OUT_NDJSON, false, 10);
    pgr_stream_row(s, r, 0);
    ck_assert(!pgr_stream_full(s)); /* 8 bytes */
    pgr_stream_row(s, r, 1);
    ck_assert(pgr_stream_full(s));
    char buf[32];
    ck_assert_uint_eq(pgr_stream_take(s, buf, 5), 5);
    ck_assert(memcmp(buf, "{\"a\":", 5) == 0);
    ck_assert(pgr_stream_full(s)); /* 11 left */
    ck_assert_uint_eq(pgr_stream_take(s, buf, 5), 5);
    ck_assert(memcmp(buf, "1}\n{\"", 5) == 0);
    ck_assert(!pgr_stream_full(s));
    ck_assert_uint_eq(pgr_stream_take(s, buf, sizeof buf), 6);
    ck_assert(memcmp(buf, "a\":2}\n", 6) == 0);
    ck_assert_uint_eq(pgr_stream_take(s, buf, sizeof buf), 0);
    /* a cancelled stream drops rows and is never full */
    s->discard = true;
    for (int i = 0; i < 10; i++)
        pgr_stream_row(s, r, 0);
    ck_assert(!pgr_stream_full(s));
    PQclear(r);
}
END_TEST

/* Rows larger than the buffer grow it; what was read goes first. */
START_TEST(large_rows_grow_the_buffer)
{
    static char big[20000];
    memset(big, 'x', sizeof big - 1);
    const char *const rows[] = {big};
    PGresult *r = result(1, json_col, 1, rows);
    pgr_stream *s = stream_of(PGR_OUT_NDJSON, false, 16);
    for (int i = 0; i < 3; i++)
        pgr_stream_row(s, r, 0);
    size_t n;
    pgr_stream_pending(s, &n);
    ck_assert_uint_eq(n, 3 * sizeof big);
    ck_assert(!s->oom);
    PQclear(r);
}
END_TEST

START_TEST(only_plural_builtin_outputs_stream)
{
    pgrest_query_plan plan;
    memset(&plan, 0, sizeof plan);
    pgr_stream_format f;
    plan.output = PGR_OUT_OBJECT;
    ck_assert(!pgr_stream_format_of(&plan, &f));
    plan.output = PGR_OUT_CUSTOM;
    ck_assert(!pgr_stream_format_of(&plan, &f));
    plan.output = PGR_OUT_PLAN;
    ck_assert(!pgr_stream_format_of(&plan, &f));
    plan.output = PGR_OUT_NONE;
    ck_assert(!pgr_stream_format_of(&plan, &f));
    plan.output = PGR_OUT_JSON;
    plan.explain = true;
    ck_assert(!pgr_stream_format_of(&plan, &f));
    plan.explain = false;
    ck_assert(pgr_stream_format_of(&plan, &f));
    ck_assert_int_eq(f, PGR_STREAM_JSON);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("stream");
    TCase *tc = tcase_create("encode");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, json_array_as_json_agg);
    tcase_add_test(tc, no_rows);
    tcase_add_test(tc, csv_as_record_out);
    tcase_add_test(tc, csv_rows_joined_by_line_feeds);
    tcase_add_test(tc, backpressure_and_take);
    tcase_add_test(tc, large_rows_grow_the_buffer);
    tcase_add_test(tc, only_plural_builtin_outputs_stream);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
