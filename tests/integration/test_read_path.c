/* The read path end to end against PostgreSQL: expected bodies follow
 * PostgREST's documented response shapes (api/tables_views,
 * api/pagination_count, ref/errors) over the rows of test_schema.sql. */
#include <check.h>

#include "check_run.h"
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static pgrest_ctx *ctx;

static void setup(void)
{
    ctx = harness_ctx(NULL);
}

static void teardown(void)
{
    pgrest_ctx_free(ctx);
}

static void get(const char *path, const char *query, const char *const *headers,
                test_response *r)
{
    harness_request(ctx, "GET", path, query, headers, NULL, r);
}

START_TEST(select_columns_with_filter_and_order)
{
    test_response r;
    get("/albums", "select=id,title&artist_id=eq.1&order=id.desc", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "[{\"id\":2,\"title\":\"Second Wind\"}, \n {\"id\":1,\"title\":\"First Light\"}]");
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "0-1/*");
    ck_assert_str_eq(harness_header(&r, "Content-Type"), "application/json; charset=utf-8");
    harness_free(&r);
}
END_TEST

START_TEST(alias_and_cast)
{
    test_response r;
    get("/artists", "select=name:id,year:formed::text&id=eq.2", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "[{\"name\":2,\"year\":\"1958\"}]");
    harness_free(&r);
}
END_TEST

START_TEST(in_is_like_not)
{
    test_response r;
    get("/tracks", "select=id&id=in.(1,3,5)&order=id", NULL, &r);
    ck_assert_str_eq(r.body, "[{\"id\":1}, \n {\"id\":3}, \n {\"id\":5}]");
    harness_free(&r);
    get("/albums", "select=id&released=is.null", NULL, &r);
    ck_assert_str_eq(r.body, "[{\"id\":4}]");
    harness_free(&r);
    get("/tracks", "select=title&title=like.*oo*", NULL, &r);
    ck_assert_str_eq(r.body, "[{\"title\":\"Noon\"}]");
    harness_free(&r);
    get("/tracks", "select=id&seconds=not.gt.200&order=id.asc", NULL, &r);
    ck_assert_str_eq(r.body, "[{\"id\":3}, \n {\"id\":5}, \n {\"id\":6}]");
    harness_free(&r);
    get("/artists", "select=id&name=ilike.*TRIO", NULL, &r);
    ck_assert_str_eq(r.body, "[{\"id\":2}]");
    harness_free(&r);
}
END_TEST

START_TEST(limit_offset_and_content_range)
{
    test_response r;
    get("/tracks", "select=id&order=id&limit=2&offset=1", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "[{\"id\":2}, \n {\"id\":3}]");
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "1-2/*");
    harness_free(&r);
    const char *h[] = {"Prefer", "count=exact", NULL};
    get("/tracks", "select=id&order=id&limit=2", h, &r);
    ck_assert_int_eq(r.status, 206);
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "0-1/6");
    harness_free(&r);
    get("/tracks", "offset=10", h, &r);
    ck_assert_int_eq(r.status, 416);
    ck_assert_ptr_nonnull(strstr(r.body, "\"PGRST103\""));
    harness_free(&r);
}
END_TEST

START_TEST(range_header)
{
    test_response r;
    const char *h[] = {"Range", "1-2", NULL};
    get("/tracks", "select=id&order=id", h, &r);
    ck_assert_str_eq(r.body, "[{\"id\":2}, \n {\"id\":3}]");
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "1-2/*");
    harness_free(&r);
    /* ApiRequest getRanges: InvalidRange LowerGTUpper */
    const char *inverted[] = {"Range", "2-1", NULL};
    get("/tracks", "select=id", inverted, &r);
    ck_assert_int_eq(r.status, 416);
    ck_assert_ptr_nonnull(strstr(r.body, "\"The lower boundary must be lower than or equal to "
                                         "the upper boundary in the Range header.\""));
    harness_free(&r);
}
END_TEST

START_TEST(unknown_table_and_column)
{
    test_response r;
    get("/albumz", "", NULL, &r);
    ck_assert_int_eq(r.status, 404);
    ck_assert_str_eq(r.body, "{\"code\":\"PGRST205\",\"details\":null,"
                             "\"hint\":\"Perhaps you meant the table 'api.albums'\","
                             "\"message\":\"Could not find the table 'api.albumz' in the schema cache\"}");
    harness_free(&r);
    get("/albums", "select=nope", NULL, &r);
    ck_assert_int_eq(r.status, 400);
    ck_assert_ptr_nonnull(strstr(r.body, "\"code\":\"42703\""));
    harness_free(&r);
    get("/albums", "id=0", NULL, &r);
    ck_assert_int_eq(r.status, 400);
    ck_assert_ptr_nonnull(strstr(r.body, "\"code\":\"PGRST100\""));
    harness_free(&r);
    get("/a/b/c", "", NULL, &r);
    ck_assert_int_eq(r.status, 404);
    ck_assert_ptr_nonnull(strstr(r.body, "\"code\":\"PGRST125\""));
    harness_free(&r);
    /* Plan.hs wrappedReadPlan: findTable before negotiateContent and
     * before the handling=strict check of the preferences */
    const char *text[] = {"Accept", "text/plain", NULL};
    get("/albumz", "", text, &r);
    ck_assert_int_eq(r.status, 404);
    harness_free(&r);
    const char *strict[] = {"Prefer", "handling=strict, bogus", NULL};
    get("/albumz", "", strict, &r);
    ck_assert_int_eq(r.status, 404);
    harness_free(&r);
    get("/albums", "", strict, &r);
    ck_assert_int_eq(r.status, 400);
    ck_assert_ptr_nonnull(strstr(r.body, "\"code\":\"PGRST122\""));
    harness_free(&r);
}
END_TEST

START_TEST(head_has_no_body)
{
    test_response r;
    harness_request(ctx, "HEAD", "/artists", "", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "");
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "0-2/*");
    harness_free(&r);
}
END_TEST

START_TEST(singular_and_csv)
{
    test_response r;
    const char *obj[] = {"Accept", "application/vnd.pgrst.object+json", NULL};
    get("/artists", "select=id,name&id=eq.3", obj, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "{\"id\":3,\"name\":\"Solo Pianist\"}");
    harness_free(&r);
    get("/artists", "select=id", obj, &r);
    ck_assert_int_eq(r.status, 406);
    ck_assert_ptr_nonnull(strstr(r.body, "\"PGRST116\""));
    harness_free(&r);
    const char *csv[] = {"Accept", "text/csv", NULL};
    get("/artists", "select=id,name&order=id&limit=2", csv, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "id,name\n1,\"The Quiet Ones\"\n2,\"Blue Note Trio\"");
    harness_free(&r);
    const char *bad[] = {"Accept", "text/unknowntype", NULL};
    get("/artists", "", bad, &r);
    ck_assert_int_eq(r.status, 406);
    ck_assert_ptr_nonnull(strstr(r.body, "\"PGRST107\""));
    harness_free(&r);
}
END_TEST

/* MainTx.hs failNotSingular runs for HEAD too: PostgREST's statement
 * for HEAD is GET's (Statements.hs mainRead knows no headers-only), only
 * the response drops the body. */
START_TEST(head_is_singular_like_get)
{
    test_response r;
    const char *obj[] = {"Accept", "application/vnd.pgrst.object+json", NULL};
    harness_request(ctx, "HEAD", "/artists", "select=id", obj, NULL, &r);
    ck_assert_int_eq(r.status, 406);
    harness_free(&r);
    harness_request(ctx, "HEAD", "/artists", "id=eq.3", obj, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "");
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "0-0/*");
    harness_free(&r);
}
END_TEST

/* MainTx.hs: count=estimated keeps the exact count unless it exceeds
 * db-max-rows; without db-max-rows the comparison is with Nothing, which
 * every count exceeds, so the planner's larger guess is the total. */
START_TEST(estimated_count_without_max_rows)
{
    test_response r;
    const char *est[] = {"Prefer", "count=estimated", NULL};
    get("/guessed_numbers", "", est, &r);
    ck_assert_int_eq(r.status, 206);
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "0-2/500");
    harness_free(&r);
}
END_TEST

START_TEST(user_values_are_parameters)
{
    /* An injection attempt is just a value that matches nothing. */
    test_response r;
    get("/artists", "select=id&name=eq.x'%3B%20DROP%20TABLE%20api.artists%3B--", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "[]");
    harness_free(&r);
    get("/artists", "select=id&id=eq.1", NULL, &r);
    ck_assert_str_eq(r.body, "[{\"id\":1}]");
    harness_free(&r);
}
END_TEST

/* api.colour has CREATE CAST (api.colour AS json) WITH FUNCTION
 * api.colour_to_json: selecting it (by name or through *) renders the
 * function's json (PostgREST api/domain_representations); a cast applies
 * on top of that json (SqlFragment.pgFmtSelectItem: CAST(fn(col) AS t)). */
START_TEST(domain_representation_in_output)
{
    test_response r;
    get("/albums", "select=cover&id=eq.1", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "[{\"cover\":{\"hex\" : \"#ff0000\"}}]");
    harness_free(&r);
    get("/albums", "id=eq.3", NULL, &r);
    ck_assert_ptr_nonnull(strstr(r.body, "\"cover\":{\"hex\" : \"#0000ff\"}"));
    harness_free(&r);
    get("/albums", "select=cover::text&id=eq.3", NULL, &r);
    ck_assert_str_eq(r.body, "[{\"cover\":\"{\\\"hex\\\" : \\\"#0000ff\\\"}\"}]");
    harness_free(&r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("read_path");
    TCase *tc = tcase_create("read");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, select_columns_with_filter_and_order);
    tcase_add_test(tc, alias_and_cast);
    tcase_add_test(tc, in_is_like_not);
    tcase_add_test(tc, limit_offset_and_content_range);
    tcase_add_test(tc, range_header);
    tcase_add_test(tc, unknown_table_and_column);
    tcase_add_test(tc, head_has_no_body);
    tcase_add_test(tc, singular_and_csv);
    tcase_add_test(tc, head_is_singular_like_get);
    tcase_add_test(tc, estimated_count_without_max_rows);
    tcase_add_test(tc, user_values_are_parameters);
    tcase_add_test(tc, domain_representation_in_output);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    harness_db_uri();
    return check_run(suite());
}
