/* /rpc/fn end to end against PostgreSQL: expected bodies and statuses
 * follow PostgREST's api/functions page (scalar, SETOF, OUT params,
 * VARIADIC, void, GET/POST/form arguments, overload errors) over the
 * functions and rows of test_schema.sql. */
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

static const char *const json_ct[] = {"Content-Type", "application/json", NULL};

START_TEST(scalar_with_default_by_get)
{
    test_response r;
    harness_request(ctx, "GET", "/rpc/add", "a=1", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "2");
    ck_assert_str_eq(harness_header(&r, "Content-Type"), "application/json; charset=utf-8");
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "0-0/*");
    harness_free(&r);
}
END_TEST

START_TEST(scalar_by_post_json_and_form)
{
    test_response r;
    harness_request(ctx, "POST", "/rpc/add", NULL, json_ct, "{\"a\": 1, \"b\": 2}", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "3");
    harness_free(&r);
    const char *const form[] = {"Content-Type", "application/x-www-form-urlencoded", NULL};
    harness_request(ctx, "POST", "/rpc/add", NULL, form, "a=40&b=2", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "42");
    harness_free(&r);
    /* an array body: only the first object is used */
    harness_request(ctx, "POST", "/rpc/add", NULL, json_ct, "[{\"a\":1,\"b\":1},{\"a\":5,\"b\":5}]", &r);
    ck_assert_str_eq(r.body, "2");
    harness_free(&r);
}
END_TEST

START_TEST(setof_table_with_read_grammar)
{
    test_response r;
    harness_request(ctx, "GET", "/rpc/album_tracks",
                    "album=1&select=title,seconds&order=position.desc", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "[{\"title\":\"Noon\",\"seconds\":315}, \n {\"title\":\"Dawn\",\"seconds\":201}]");
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "0-1/*");
    harness_free(&r);
    harness_request(ctx, "GET", "/rpc/album_tracks", "album=1&select=title&seconds=gt.300",
                    NULL, NULL, &r);
    ck_assert_str_eq(r.body, "[{\"title\":\"Noon\"}]");
    harness_free(&r);
    harness_request(ctx, "POST", "/rpc/album_tracks", "select=title&limit=1&order=position",
                    json_ct, "{\"album\": 3}", &r);
    ck_assert_str_eq(r.body, "[{\"title\":\"Midnight\"}]");
    harness_free(&r);
}
END_TEST

START_TEST(setof_range_and_count)
{
    test_response r;
    const char *const h[] = {"Range", "0-0", "Prefer", "count=exact", NULL};
    harness_request(ctx, "GET", "/rpc/album_tracks", "album=1&select=position", h, NULL, &r);
    ck_assert_int_eq(r.status, 206);
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "0-0/2");
    harness_free(&r);
    const char *const c[] = {"Prefer", "count=exact", NULL};
    harness_request(ctx, "GET", "/rpc/album_tracks", "album=1&offset=5", c, NULL, &r);
    ck_assert_int_eq(r.status, 416);
    harness_free(&r);
    /* Preferences.hs shouldCount: a call runs no EXPLAIN, count=planned
     * gives no total */
    const char *const planned[] = {"Range", "0-0", "Prefer", "count=planned", NULL};
    harness_request(ctx, "GET", "/rpc/album_tracks", "album=1", planned, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "0-0/*");
    ck_assert_str_eq(harness_header(&r, "Preference-Applied"), "count=planned");
    harness_free(&r);
}
END_TEST

/* Response.hs responsePreferences: a call reports max-affected (with
 * handling=strict) in Preference-Applied, as updates and deletes do. */
START_TEST(max_affected_is_applied_to_calls)
{
    test_response r;
    const char *const h[] = {"Prefer", "handling=strict, max-affected=5", NULL};
    harness_request(ctx, "GET", "/rpc/album_tracks", "album=1", h, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(harness_header(&r, "Preference-Applied"), "handling=strict, max-affected=5");
    harness_free(&r);
    const char *const lenient[] = {"Prefer", "max-affected=5", NULL};
    harness_request(ctx, "GET", "/rpc/album_tracks", "album=1", lenient, NULL, &r);
    ck_assert_ptr_null(harness_header(&r, "Preference-Applied"));
    harness_free(&r);
}
END_TEST

START_TEST(out_params_give_one_object)
{
    test_response r;
    harness_request(ctx, "GET", "/rpc/artist_summary", "id=1", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "{\"name\":\"The Quiet Ones\",\"albums\":2}");
    harness_free(&r);
}
END_TEST

/* SqlFragment.hs pageCountSelectF / countF: a function returning a single
 * row counts as one row even when filters remove it (asJsonF gives null),
 * so vnd.pgrst.object does not fail and the exact total is 1. */
START_TEST(single_row_function_counts_one)
{
    test_response r;
    harness_request(ctx, "GET", "/rpc/artist_summary", "id=1&name=eq.nobody", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "null");
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "0-0/*");
    harness_free(&r);
    const char *obj[] = {"Accept", "application/vnd.pgrst.object+json", NULL};
    harness_request(ctx, "GET", "/rpc/artist_summary", "id=1&name=eq.nobody", obj, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "null");
    harness_free(&r);
    const char *exact[] = {"Prefer", "count=exact", NULL};
    harness_request(ctx, "GET", "/rpc/artist_summary", "id=1&name=eq.nobody", exact, NULL, &r);
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "0-0/1");
    harness_free(&r);
}
END_TEST

/* QueryBuilder.hs callPlanToQuery fmtArgs: GET and form arguments are
 * text values cast to the parameter types ("doc" := $1::json), so a json
 * parameter receives the JSON the text spells, not a JSON string. */
START_TEST(get_and_form_args_cast_to_param_type)
{
    test_response r;
    harness_request(ctx, "GET", "/rpc/echo_json", "doc=%7B%22a%22%3A1%7D", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "{\"a\":1}");
    harness_free(&r);
    harness_request(ctx, "GET", "/rpc/echo_json", "doc=abc", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 400);
    ck_assert_ptr_nonnull(strstr(r.body, "\"22P02\""));
    harness_free(&r);
    const char *const form[] = {"Content-Type", "application/x-www-form-urlencoded", NULL};
    harness_request(ctx, "POST", "/rpc/echo_json", NULL, form, "doc=%5B1%2C2%5D", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "[1,2]");
    harness_free(&r);
}
END_TEST

/* SqlFragment.hs handlerF: CSV aggregates a scalar function's row as a
 * table's (header pgrst_scalar, the record's text). */
START_TEST(scalar_results_through_row_handlers)
{
    test_response r;
    const char *csv[] = {"Accept", "text/csv", NULL};
    harness_request(ctx, "GET", "/rpc/add", "a=1&b=2", csv, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "pgrst_scalar\n3");
    harness_free(&r);
}
END_TEST

/* Payload.hs getPayload: with ?columns a JSON body's arguments are the
 * columns named, the other keys are not passed (b keeps its default). */
START_TEST(columns_select_the_arguments)
{
    test_response r;
    harness_request(ctx, "POST", "/rpc/add", "columns=a", json_ct, "{\"a\": 1, \"b\": 5}", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "2");
    harness_free(&r);
    harness_request(ctx, "POST", "/rpc/add", "columns=b", json_ct, "{\"a\": 1, \"b\": 5}", &r);
    ck_assert_int_eq(r.status, 404);
    ck_assert_ptr_nonnull(strstr(r.body, "\"PGRST202\""));
    harness_free(&r);
    /* payloadAttributes: a JSON scalar body gives no arguments */
    harness_request(ctx, "POST", "/rpc/add", NULL, json_ct, "\"x\"", &r);
    ck_assert_int_eq(r.status, 404);
    ck_assert_ptr_nonnull(strstr(r.body, "Could not find the function api.add without parameters"));
    harness_free(&r);
}
END_TEST

/* Plan.hs callReadPlan: findProc, then the handling=strict check of
 * the preferences, then failMaxAffectedRpcReturnsSingle (PGRST128). */
START_TEST(strict_preference_errors_order)
{
    test_response r;
    const char *bogus[] = {"Prefer", "handling=strict, bogus, max-affected=1", NULL};
    harness_request(ctx, "GET", "/rpc/nope", "", bogus, NULL, &r);
    ck_assert_int_eq(r.status, 404);
    harness_free(&r);
    harness_request(ctx, "GET", "/rpc/add", "a=1", bogus, NULL, &r);
    ck_assert_int_eq(r.status, 400);
    ck_assert_ptr_nonnull(strstr(r.body, "\"PGRST122\""));
    harness_free(&r);
    const char *strict[] = {"Prefer", "handling=strict, max-affected=1", NULL};
    harness_request(ctx, "GET", "/rpc/add", "a=1", strict, NULL, &r);
    ck_assert_int_eq(r.status, 400);
    ck_assert_ptr_nonnull(strstr(r.body, "\"PGRST128\""));
    harness_free(&r);
}
END_TEST

START_TEST(variadic_by_repeated_params_and_array)
{
    test_response r;
    harness_request(ctx, "GET", "/rpc/sum_all", "v=1&v=2&v=3", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "6");
    harness_free(&r);
    harness_request(ctx, "POST", "/rpc/sum_all", NULL, json_ct, "{\"v\": [10, 20]}", &r);
    ck_assert_str_eq(r.body, "30");
    harness_free(&r);
}
END_TEST

START_TEST(void_is_204_without_content_type)
{
    test_response r;
    harness_request(ctx, "POST", "/rpc/touch", NULL, NULL, NULL, &r);
    ck_assert_int_eq(r.status, 204);
    ck_assert_str_eq(r.body, "");
    ck_assert_ptr_null(harness_header(&r, "Content-Type"));
    /* Response.hs: a void call keeps the Content-Range of its one row */
    ck_assert_str_eq(harness_header(&r, "Content-Range"), "0-0/*");
    harness_free(&r);
}
END_TEST

START_TEST(unknown_function_and_arguments)
{
    test_response r;
    /* Error.hs getFuzzyHint HintProcedure: a function name is suggested
     * from a similarity of 0.75 (addd ~ add: 0.75; ad ~ add: 0.67 is not) */
    harness_request(ctx, "GET", "/rpc/addd", NULL, NULL, NULL, &r);
    ck_assert_int_eq(r.status, 404);
    ck_assert_str_eq(r.body,
        "{\"code\":\"PGRST202\",\"details\":\"Searched for the function api.addd without parameters, but no matches were found in the schema cache.\","
        "\"hint\":\"Perhaps you meant to call the function api.add\","
        "\"message\":\"Could not find the function api.addd without parameters in the schema cache\"}");
    harness_free(&r);
    harness_request(ctx, "GET", "/rpc/ad", NULL, NULL, NULL, &r);
    ck_assert_int_eq(r.status, 404);
    ck_assert_str_eq(r.body,
        "{\"code\":\"PGRST202\",\"details\":\"Searched for the function api.ad without parameters, but no matches were found in the schema cache.\","
        "\"hint\":null,"
        "\"message\":\"Could not find the function api.ad without parameters in the schema cache\"}");
    harness_free(&r);
    harness_request(ctx, "GET", "/rpc/add", "b=1&c=2", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 404);
    ck_assert_str_eq(r.body,
        "{\"code\":\"PGRST202\",\"details\":\"Searched for the function api.add with parameters b, c, but no matches were found in the schema cache.\","
        "\"hint\":\"Perhaps you meant to call the function api.add(a, b)\","
        "\"message\":\"Could not find the function api.add(b, c) in the schema cache\"}");
    harness_free(&r);
}
END_TEST

START_TEST(ambiguous_overloads_in_routine_order)
{
    test_response r;
    harness_request(ctx, "GET", "/rpc/pick", "x=1", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 300);
    ck_assert_str_eq(r.body,
        "{\"code\":\"PGRST203\",\"details\":null,"
        "\"hint\":\"Try renaming the parameters or the function itself in the database so function overloading can be resolved\","
        "\"message\":\"Could not choose the best candidate function between: api.pick(x => integer), api.pick(x => text), api.pick(x => date, y => integer)\"}");
    harness_free(&r);
}
END_TEST

/* Plan.hs callReadPlan reads the select over any result: a scalar's one
 * column is pgrst_scalar, other names fail in PostgreSQL; an embed needs a
 * relationship of what findRel calls the result (the function here) */
START_TEST(select_over_scalar_result)
{
    test_response r;
    harness_request(ctx, "GET", "/rpc/add", "a=1&select=pgrst_scalar", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "2");
    harness_free(&r);
    harness_request(ctx, "GET", "/rpc/add", "a=1&select=x", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 400);
    ck_assert_ptr_nonnull(strstr(r.body, "\"42703\""));
    harness_free(&r);
    harness_request(ctx, "GET", "/rpc/add", "a=1&select=*,artists(*)", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 400);
    ck_assert_ptr_nonnull(strstr(r.body,
        "\"message\":\"Could not find a relationship between 'add' and 'artists' in the schema cache\""));
    harness_free(&r);
}
END_TEST

START_TEST(unsupported_method_and_raw_text)
{
    test_response r;
    harness_request(ctx, "DELETE", "/rpc/add", NULL, NULL, NULL, &r);
    ck_assert_int_eq(r.status, 405);
    harness_free(&r);
    /* Plan/Negotiate.hs: text/plain needs a media type handler (a
     * "text/plain" domain), for a scalar as for a set: PGRST107 */
    const char *const h[] = {"Accept", "text/plain", NULL};
    harness_request(ctx, "GET", "/rpc/add", "a=5&b=5", h, NULL, &r);
    ck_assert_int_eq(r.status, 406);
    ck_assert_ptr_nonnull(strstr(r.body, "\"PGRST107\""));
    harness_free(&r);
    harness_request(ctx, "GET", "/rpc/album_tracks", "album=1", h, NULL, &r);
    ck_assert_int_eq(r.status, 406);
    harness_free(&r);
}
END_TEST

/* RETURNS TABLE(id, size api.dims): size->w reads the composite through
 * to_jsonb (PostgREST api/tables_views "Composite / Array Columns"). */
START_TEST(json_path_on_composite_column_of_table_function)
{
    test_response r;
    harness_request(ctx, "GET", "/rpc/boxes", "select=id,size->w&size->h=gt.3&order=size->>w.desc",
                    NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "[{\"id\":3,\"w\":5}, \n {\"id\":2,\"w\":3}]");
    harness_free(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rpc");
    TCase *tc = tcase_create("rpc");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, scalar_with_default_by_get);
    tcase_add_test(tc, json_path_on_composite_column_of_table_function);
    tcase_add_test(tc, scalar_by_post_json_and_form);
    tcase_add_test(tc, setof_table_with_read_grammar);
    tcase_add_test(tc, setof_range_and_count);
    tcase_add_test(tc, out_params_give_one_object);
    tcase_add_test(tc, max_affected_is_applied_to_calls);
    tcase_add_test(tc, single_row_function_counts_one);
    tcase_add_test(tc, get_and_form_args_cast_to_param_type);
    tcase_add_test(tc, scalar_results_through_row_handlers);
    tcase_add_test(tc, columns_select_the_arguments);
    tcase_add_test(tc, strict_preference_errors_order);
    tcase_add_test(tc, variadic_by_repeated_params_and_array);
    tcase_add_test(tc, void_is_204_without_content_type);
    tcase_add_test(tc, unknown_function_and_arguments);
    tcase_add_test(tc, ambiguous_overloads_in_routine_order);
    tcase_add_test(tc, select_over_scalar_result);
    tcase_add_test(tc, unsupported_method_and_raw_text);
    suite_add_tcase(s, tc);
    return check_run(s);
}
