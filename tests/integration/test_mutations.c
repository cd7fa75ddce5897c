/* Writes end to end against PostgreSQL (PostgREST api/tables_views Insert /
 * Update / Upsert / Delete, api/preferences). Expected bodies and headers
 * follow PostgREST's documented responses over the rows of
 * test_schema.sql. Writes run as web_user (the anonymous role web_anon can
 * only read). The `rb` context rolls every transaction back
 * (db-tx-end=rollback-allow-override), so most tests leave no trace; the
 * `cm` context commits, for persistence and atomicity checks, and cleans
 * up after itself. */
#include <check.h>

#include "check_run.h"
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static pgrest_ctx *rb, *cm;

static void setup(void)
{
    const char *rollback[] = {"db-anon-role", "web_user",
                              "db-tx-end", "rollback-allow-override", NULL};
    const char *commit[] = {"db-anon-role", "web_user", "db-tx-end", "commit", NULL};
    rb = harness_ctx(rollback);
    cm = harness_ctx(commit);
}

static void teardown(void)
{
    pgrest_ctx_free(rb);
    pgrest_ctx_free(cm);
}

static const char *const rep[] = {"Prefer", "return=representation", NULL};

static void expect_error(const test_response *r, int status, const char *code)
{
    ck_assert_int_eq(r->status, status);
    ck_assert_ptr_nonnull(strstr(r->body, code));
}

START_TEST(insert_minimal)
{
    test_response r;
    harness_request(rb, "POST", "/artists", "", NULL, "{\"name\":\"New Band\"}", &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_str_eq(r.body, "");
    ck_assert_ptr_null(harness_header(&r, "Content-Type"));
    ck_assert_ptr_null(harness_header(&r, "Location"));
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "*/*");
    ck_assert_ptr_null(harness_header(&r, "Preference-Applied"));
    harness_free(&r);
}
END_TEST

/* Response.hs contentTypeHeaders: with several schemas the profile goes
 * out with the Content-Type only, so a write without a representation
 * has neither */
START_TEST(content_profile_only_with_a_representation)
{
    const char *opts[] = {"db-anon-role", "web_user", "db-tx-end", "rollback",
                          "db-schemas", "api,private", NULL};
    pgrest_ctx *two = harness_ctx(opts);
    test_response r;
    harness_request(two, "PATCH", "/artists", "id=eq.1", NULL, "{\"name\":\"X\"}", &r);
    ck_assert_int_eq(r.status, 204);
    ck_assert_ptr_null(harness_header(&r, "Content-Profile"));
    harness_free(&r);
    harness_request(two, "DELETE", "/playlist_track", "playlist_id=eq.1", rep, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(harness_header(&r, "Content-Profile"), "api");
    harness_free(&r);
    pgrest_ctx_free(two);
}
END_TEST

START_TEST(insert_representation)
{
    test_response r;
    harness_request(rb, "POST", "/artists", "select=name,country", rep,
                    "{\"name\":\"X\",\"country\":\"FR\"}", &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_str_eq(r.body, "[{\"name\":\"X\",\"country\":\"FR\"}]");
    ck_assert_str_eq(harness_header(&r, "Content-Type"), "application/json; charset=utf-8");
    ck_assert_str_eq(harness_header(&r, "Preference-Applied"), "return=representation");
    harness_free(&r);
}
END_TEST

START_TEST(bulk_insert_and_count)
{
    test_response r;
    const char *h[] = {"Prefer", "return=representation", "Prefer", "count=exact", NULL};
    harness_request(rb, "POST", "/artists", "select=name", h,
                    "[{\"name\":\"A\",\"formed\":1},{\"name\":\"B\",\"formed\":2}]", &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_str_eq(r.body, "[{\"name\":\"A\"}, \n {\"name\":\"B\"}]");
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "*/2");
    ck_assert_str_eq(harness_header(&r, "Preference-Applied"),
                     "return=representation, count=exact");
    harness_free(&r);
}
END_TEST

START_TEST(invalid_bodies)
{
    test_response r;
    harness_request(rb, "POST", "/artists", "", NULL,
                    "[{\"name\":\"A\"},{\"name\":\"B\",\"formed\":2}]", &r);
    expect_error(&r, 400, "PGRST102");
    ck_assert_ptr_nonnull(strstr(r.body, "All object keys must match"));
    harness_free(&r);
    harness_request(rb, "POST", "/artists", "", NULL, "", &r);
    expect_error(&r, 400, "PGRST102");
    ck_assert_ptr_nonnull(strstr(r.body, "Empty or invalid json"));
    harness_free(&r);
    harness_request(rb, "PATCH", "/artists", "", NULL, "}{ x = 2", &r);
    expect_error(&r, 400, "PGRST102");
    harness_free(&r);
    harness_request(rb, "POST", "/artists", "", NULL, "{\"nope\":1}", &r);
    expect_error(&r, 400, "PGRST204");
    ck_assert_ptr_nonnull(strstr(r.body, "Could not find the 'nope' column of 'artists' in the schema cache"));
    harness_free(&r);
    harness_request(rb, "POST", "/nosuch", "", NULL, "{}", &r);
    expect_error(&r, 404, "PGRST205");
    harness_free(&r);
}
END_TEST

START_TEST(csv_and_form_bodies)
{
    test_response r;
    const char *csv[] = {"Content-Type", "text/csv", "Prefer", "return=representation", NULL};
    harness_request(rb, "POST", "/artists", "select=name,country", csv,
                    "name,country\nCSV Band,NULL\n\"Quoted, \"\"Band\"\"\",NO\n", &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_str_eq(r.body, "[{\"name\":\"CSV Band\",\"country\":null}, \n"
                             " {\"name\":\"Quoted, \\\"Band\\\"\",\"country\":\"NO\"}]");
    harness_free(&r);
    /* cassava zips a record with the header: an extra field is dropped,
     * a missing one leaves its name out, which payloadAttributes refuses */
    harness_request(rb, "POST", "/artists", "select=name,country", csv,
                    "name,country\nA,B,C\n", &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_str_eq(r.body, "[{\"name\":\"A\",\"country\":\"B \"}]"); /* char(2) */
    harness_free(&r);
    harness_request(rb, "POST", "/artists", "", csv, "name,country\nA,B\nC\n", &r);
    expect_error(&r, 400, "PGRST102");
    harness_free(&r);
    const char *form[] = {"Content-Type", "application/x-www-form-urlencoded",
                          "Prefer", "return=representation", NULL};
    harness_request(rb, "POST", "/artists", "select=name,formed", form,
                    "name=Form+Band&formed=1999", &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_str_eq(r.body, "[{\"name\":\"Form Band\",\"formed\":1999}]");
    harness_free(&r);
}
END_TEST

START_TEST(headers_only_location)
{
    test_response r;
    const char *h[] = {"Prefer", "return=headers-only", NULL};
    harness_request(rb, "POST", "/artists", "", h, "{\"id\":100,\"name\":\"Loc\"}", &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_str_eq(r.body, "");
    ck_assert_str_eq(harness_header(&r, "Location"), "/artists?id=eq.100");
    ck_assert_str_eq(harness_header(&r, "Preference-Applied"), "return=headers-only");
    ck_assert_ptr_null(harness_header(&r, "Content-Type"));
    harness_free(&r);
    /* composite key, row order, a value needing escapes */
    harness_request(rb, "POST", "/playlist_track", "", h,
                    "{\"track_id\":2,\"playlist_id\":1}", &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_str_eq(harness_header(&r, "Location"),
                     "/playlist_track?playlist_id=eq.1&track_id=eq.2");
    harness_free(&r);
    /* no primary key: the location query matches no column (locationF
     * with no PK columns), the empty text[] gives no header */
    harness_request(rb, "POST", "/tickets", "", h, "{\"number\":1,\"holder\":\"a, \\\"b\\\"\"}", &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_ptr_null(harness_header(&r, "Location"));
    harness_free(&r);
}
END_TEST

START_TEST(upsert_post)
{
    test_response r;
    const char *merge[] = {"Prefer", "return=representation",
                           "Prefer", "resolution=merge-duplicates", NULL};
    harness_request(rb, "POST", "/artists", "select=id,name", merge,
                    "[{\"id\":1,\"name\":\"Renamed\"}]", &r);
    ck_assert_int_eq(r.status, 200);   /* only updated rows */
    ck_assert_str_eq(r.body, "[{\"id\":1,\"name\":\"Renamed\"}]");
    ck_assert_str_eq(harness_header(&r, "Preference-Applied"),
                     "resolution=merge-duplicates, return=representation");
    harness_free(&r);
    harness_request(rb, "POST", "/artists", "select=id,name", merge,
                    "[{\"id\":1,\"name\":\"Renamed\"},{\"id\":60,\"name\":\"New\"}]", &r);
    ck_assert_int_eq(r.status, 201);
    harness_free(&r);
    const char *ignore[] = {"Prefer", "return=representation",
                            "Prefer", "resolution=ignore-duplicates", NULL};
    harness_request(rb, "POST", "/artists", "select=id,name", ignore,
                    "[{\"id\":1,\"name\":\"X\"},{\"id\":50,\"name\":\"Y\"}]", &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_str_eq(r.body, "[{\"id\":50,\"name\":\"Y\"}]");
    harness_free(&r);
    /* an empty array: no row reaches pgrst.inserted (NULL), which
     * Response.hs answers with 200 under merge-duplicates; ignore reads ''
     * there (0): 201 */
    harness_request(rb, "POST", "/artists", "", merge, "[]", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "[]");
    harness_free(&r);
    harness_request(rb, "POST", "/artists", "", ignore, "[]", &r);
    ck_assert_int_eq(r.status, 201);
    harness_free(&r);
    /* on_conflict on a unique key */
    harness_request(rb, "POST", "/tracks", "on_conflict=album_id,position&select=title", merge,
                    "{\"album_id\":1,\"position\":1,\"title\":\"Changed\"}", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "[{\"title\":\"Changed\"}]");
    harness_free(&r);
}
END_TEST

START_TEST(missing_default)
{
    test_response r;
    const char *h[] = {"Prefer", "return=representation", "Prefer", "missing=default", NULL};
    harness_request(rb, "POST", "/playlists", "columns=name,owner&select=name,owner", h,
                    "[{\"name\":\"P1\"},{\"name\":\"P2\",\"owner\":\"someone\"}]", &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_str_eq(r.body, "[{\"name\":\"P1\",\"owner\":\"web_user\"}, \n"
                             " {\"name\":\"P2\",\"owner\":\"someone\"}]");
    ck_assert_str_eq(harness_header(&r, "Preference-Applied"),
                     "missing=default, return=representation");
    harness_free(&r);
}
END_TEST

/* PostgREST SchemaCache allColumns (column_default): a domain's default
 * applies under missing=default unless the column has a default of its own. */
START_TEST(missing_default_domain)
{
    test_response r;
    const char *h[] = {"Prefer", "return=representation", "Prefer", "missing=default", NULL};
    harness_request(rb, "POST", "/tickets", "columns=number,holder", h,
                    "{\"holder\":\"Ann\"}", &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_str_eq(r.body, "[{\"number\":7,\"holder\":\"Ann\"}]");
    harness_free(&r);
    harness_request(rb, "POST", "/tickets_own_default", "columns=number,holder", h,
                    "{\"holder\":\"Ann\"}", &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_str_eq(r.body, "[{\"number\":13,\"holder\":\"Ann\"}]");
    harness_free(&r);
}
END_TEST

START_TEST(patch)
{
    test_response r;
    harness_request(rb, "PATCH", "/artists", "id=eq.2&select=id,formed", rep,
                    "{\"formed\":1960}", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "[{\"id\":2,\"formed\":1960}]");
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "0-0/*");
    harness_free(&r);
    harness_request(rb, "PATCH", "/artists", "id=gt.1", NULL, "{\"formed\":1}", &r);
    ck_assert_int_eq(r.status, 204);
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "0-1/*");
    ck_assert_ptr_null(harness_header(&r, "Content-Type"));
    harness_free(&r);
    /* an empty body updates nothing */
    harness_request(rb, "PATCH", "/artists", "select=id", rep, "{}", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "[]");
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "*/*");
    harness_free(&r);
}
END_TEST

START_TEST(put)
{
    test_response r;
    const char *body2 = "{\"id\":2,\"name\":\"BNT\",\"country\":\"US\",\"formed\":1958,\"genre\":\"jazz\"}";
    harness_request(rb, "PUT", "/artists", "id=eq.2&select=id,name", rep, body2, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "[{\"id\":2,\"name\":\"BNT\"}]");
    harness_free(&r);
    harness_request(rb, "PUT", "/artists", "id=eq.77&select=id,name", rep,
                    "{\"id\":77,\"name\":\"Put\",\"country\":null,\"formed\":null,\"genre\":null}", &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_str_eq(r.body, "[{\"id\":77,\"name\":\"Put\"}]");
    harness_free(&r);
    harness_request(rb, "PUT", "/artists", "id=eq.3", NULL, body2, &r);
    expect_error(&r, 400, "PGRST115");
    harness_free(&r);
    harness_request(rb, "PUT", "/artists", "name=eq.BNT", NULL, body2, &r);
    expect_error(&r, 405, "PGRST105");
    harness_free(&r);
    harness_request(rb, "PUT", "/artists", "id=eq.2&limit=1", NULL, body2, &r);
    expect_error(&r, 400, "PGRST114");
    harness_free(&r);
    harness_request(rb, "PUT", "/artists", "id=eq.2", NULL, body2, &r);
    ck_assert_int_eq(r.status, 204);
    harness_free(&r);
    /* Payload.hs getPayload reads ?columns for POST and PATCH only: PUT
     * writes its body's keys, so the row keeps its owner (not NULL) */
    const char *missing[] = {"Prefer", "missing=default", "Prefer", "return=representation", NULL};
    harness_request(rb, "PUT", "/playlists", "id=eq.1&columns=id,name,owner&select=name,owner", missing,
                    "{\"id\":1,\"name\":\"P\"}", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_null(strstr(r.body, "\"owner\":null"));
    ck_assert_ptr_nonnull(strstr(r.body, "\"name\":\"P\""));
    harness_free(&r);
}
END_TEST

START_TEST(delete_rows)
{
    test_response r;
    const char *h[] = {"Prefer", "return=representation", "Prefer", "count=exact", NULL};
    harness_request(rb, "DELETE", "/tracks", "id=eq.6&select=id,title", h, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "[{\"id\":6,\"title\":\"Prelude in C\"}]");
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "*/1");
    harness_free(&r);
    harness_request(rb, "DELETE", "/tracks", "id=eq.6", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 204);
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "*/*");
    harness_free(&r);
    /* Preferences.hs shouldCount: count=planned counts no write */
    const char *planned[] = {"Prefer", "count=planned", NULL};
    harness_request(rb, "DELETE", "/tracks", "id=eq.6", planned, NULL, &r);
    ck_assert_int_eq(r.status, 204);
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "*/*");
    harness_free(&r);
}
END_TEST

START_TEST(unique_violation_is_409)
{
    test_response r;
    harness_request(rb, "POST", "/artists", "", NULL, "{\"id\":1,\"name\":\"dup\"}", &r);
    expect_error(&r, 409, "23505");
    harness_free(&r);
}
END_TEST

/* One statement in one transaction: a failing row leaves no rows behind,
 * even with db-tx-end=commit. */
START_TEST(failed_bulk_insert_leaves_nothing)
{
    test_response r;
    harness_request(cm, "POST", "/artists", "", NULL,
                    "[{\"id\":200,\"name\":\"first\"},{\"id\":1,\"name\":\"dup\"}]", &r);
    expect_error(&r, 409, "23505");
    harness_free(&r);
    harness_request(cm, "GET", "/artists", "id=eq.200", NULL, NULL, &r);
    ck_assert_msg(r.status == 200, "%d %s", r.status, r.body);
    ck_assert_str_eq(r.body, "[]");
    harness_free(&r);
}
END_TEST

START_TEST(commit_persists)
{
    test_response r;
    harness_request(cm, "POST", "/artists", "", NULL, "{\"id\":300,\"name\":\"Kept\"}", &r);
    ck_assert_int_eq(r.status, 201);
    harness_free(&r);
    harness_request(cm, "GET", "/artists", "id=eq.300&select=name", NULL, NULL, &r);
    ck_assert_str_eq(r.body, "[{\"name\":\"Kept\"}]");
    harness_free(&r);
    harness_request(cm, "DELETE", "/artists", "id=eq.300", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 204);
    harness_free(&r);
    /* the rollback context really rolls back */
    harness_request(rb, "DELETE", "/tracks", "id=eq.2", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 204);
    harness_free(&r);
    harness_request(cm, "GET", "/tracks", "id=eq.2&select=id", NULL, NULL, &r);
    ck_assert_str_eq(r.body, "[{\"id\":2}]");
    harness_free(&r);
}
END_TEST

/* Post-checks roll the write back (PostgREST MainTx failNotSingular,
 * failExceedsMaxAffectedPref). */
START_TEST(post_checks_roll_back)
{
    test_response r;
    const char *obj[] = {"Accept", "application/vnd.pgrst.object+json", NULL};
    harness_request(cm, "PATCH", "/artists", "", obj, "{\"formed\":0}", &r);
    expect_error(&r, 406, "PGRST116");
    ck_assert_ptr_nonnull(strstr(r.body, "The result contains 3 rows"));
    harness_free(&r);
    harness_request(cm, "GET", "/artists", "formed=eq.0", NULL, NULL, &r);
    ck_assert_str_eq(r.body, "[]");
    harness_free(&r);
    const char *strict[] = {"Prefer", "handling=strict, max-affected=1", NULL};
    harness_request(cm, "DELETE", "/playlist_track", "", strict, NULL, &r);
    expect_error(&r, 400, "PGRST124");
    harness_free(&r);
    harness_request(cm, "GET", "/playlist_track", "select=playlist_id&limit=1", NULL, NULL, &r);
    ck_assert_str_ne(r.body, "[]");
    harness_free(&r);
    /* max-affected is read as any Int64: a negative one exceeds even
     * zero affected rows (MainTx.hs failExceedsMaxAffectedPref) */
    const char *negative[] = {"Prefer", "handling=strict, max-affected=-1", NULL};
    harness_request(rb, "DELETE", "/tracks", "id=eq.-5", negative, NULL, &r);
    expect_error(&r, 400, "PGRST124");
    ck_assert_ptr_nonnull(strstr(r.body, "The query affects 0 rows"));
    harness_free(&r);
    const char *bad[] = {"Prefer", "handling=strict, bogus", NULL};
    harness_request(rb, "DELETE", "/tracks", "id=eq.1", bad, NULL, &r);
    expect_error(&r, 400, "PGRST122");
    ck_assert_ptr_nonnull(strstr(r.body, "Invalid preferences: bogus"));
    harness_free(&r);
}
END_TEST

/* MainTx.hs actionResult for CallReadPlan: failNotSingular and
 * failExceedsMaxAffectedPref on a function's rows condemn its writes;
 * Response.hs responsePreferences reports max-affected for calls. */
START_TEST(call_post_checks_roll_back)
{
    test_response r;
    const char *strict[] = {"Prefer", "handling=strict, max-affected=1", NULL};
    harness_request(cm, "POST", "/rpc/clear_playlists", "", strict, NULL, &r);
    expect_error(&r, 400, "PGRST124");
    ck_assert_ptr_nonnull(strstr(r.body, "The query affects 4 rows"));
    harness_free(&r);
    const char *obj[] = {"Accept", "application/vnd.pgrst.object+json", NULL};
    harness_request(cm, "POST", "/rpc/clear_playlists", "", obj, NULL, &r);
    expect_error(&r, 406, "PGRST116");
    ck_assert_ptr_nonnull(strstr(r.body, "The result contains 4 rows"));
    harness_free(&r);
    harness_request(cm, "GET", "/playlist_track", "select=playlist_id&order=playlist_id", NULL,
                    NULL, &r);
    ck_assert_str_eq(r.body, "[{\"playlist_id\":1}, \n {\"playlist_id\":1}, \n"
                             " {\"playlist_id\":2}, \n {\"playlist_id\":2}]");
    harness_free(&r);
    const char *enough[] = {"Prefer", "handling=strict, max-affected=4", NULL};
    harness_request(rb, "POST", "/rpc/clear_playlists", "select=track_id", enough, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(harness_header(&r, "Preference-Applied"),
                     "handling=strict, max-affected=4");
    harness_free(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mutations");
    TCase *tc = tcase_create("writes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, insert_minimal);
    tcase_add_test(tc, insert_representation);
    tcase_add_test(tc, bulk_insert_and_count);
    tcase_add_test(tc, invalid_bodies);
    tcase_add_test(tc, csv_and_form_bodies);
    tcase_add_test(tc, content_profile_only_with_a_representation);
    tcase_add_test(tc, headers_only_location);
    tcase_add_test(tc, upsert_post);
    tcase_add_test(tc, missing_default);
    tcase_add_test(tc, missing_default_domain);
    tcase_add_test(tc, patch);
    tcase_add_test(tc, put);
    tcase_add_test(tc, delete_rows);
    tcase_add_test(tc, unique_violation_is_409);
    tcase_add_test(tc, failed_bulk_insert_leaves_nothing);
    tcase_add_test(tc, commit_persists);
    tcase_add_test(tc, post_checks_roll_back);
    tcase_add_test(tc, call_post_checks_roll_back);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
