/* distinct= (pgrest's own, docs/distinct.md) on the Chinook database
 * (../shared/bench/chinook.sql): each answer compared with the same
 * question asked of PostgreSQL directly. Skipped when
 * PGREST_TEST_CHINOOK_URI is not set. A table with a column named
 * "distinct" is created for the test (and dropped) to show that
 * distinct=eq.x keeps PostgREST's filter meaning. */
#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "harness.h"
#include "pgrest/pgrest.h"

static const char *chinook_uri(void)
{
    const char *uri = harness_chinook_uri();
    if (uri == NULL) {
        fprintf(stderr, "PGREST_TEST_CHINOOK_URI not set: skipping distinct tests\n");
        exit(77);
    }
    return uri;
}

static pgrest_ctx *ctx;
static PGconn *direct;

static void sql_exec(const char *sql)
{
    harness_admin_exec(direct, sql);
}

#define WORDS_TABLE                                                                   \
    "DROP TABLE IF EXISTS pgrest_distinct_words;"                                     \
    "CREATE TABLE pgrest_distinct_words (id int PRIMARY KEY, \"distinct\" text, word text);" \
    "INSERT INTO pgrest_distinct_words VALUES (1, 'x', 'a'), (2, 'y', 'a'), (3, 'x', 'b')"

static void setup(void)
{
    direct = harness_chinook_connect();
    sql_exec("SET client_min_messages = warning");
    sql_exec(WORDS_TABLE);
    static const char *const gate_open[] = {"db-aggregates-enabled", "true", NULL};
    ctx = harness_chinook_ctx(gate_open);
}

static void teardown(void)
{
    pgrest_ctx_free(ctx);
    sql_exec("DROP TABLE IF EXISTS pgrest_distinct_words");
    PQfinish(direct);
}

static json_object *parse_body(const test_response *r)
{
    json_object *j = json_tokener_parse(r->body);
    ck_assert_msg(j != NULL, "not JSON: %s", r->body);
    return j;
}

/* The response to GET path?query with optional headers (NULL-ended). */
static void get(const char *path, const char *query, const char *const *headers,
                int want_status, test_response *r)
{
    harness_request(ctx, "GET", path, query, headers, NULL, r);
    ck_assert_msg(r->status == want_status, "%s?%s -> %d %s", path, query, r->status,
                  r->body);
}

static json_object *sql_json(const char *sql)
{
    return harness_sql_json(direct, sql);
}

static int sql_int(const char *sql)
{
    return (int)harness_sql_long(direct, sql);
}

/* Rows compared in order: every question here fixes it. */
static void assert_same(json_object *ours, json_object *theirs)
{
    harness_assert_same_json(ours, theirs, false);
}

static void assert_answer(const char *path, const char *query, const char *sql)
{
    test_response r;
    get(path, query, NULL, 200, &r);
    json_object *ours = parse_body(&r);
    ck_assert_int_gt((int)json_object_array_length(ours), 1);
    assert_same(ours, sql_json(sql));
    harness_free(&r);
}

START_TEST(distinct_countries_of_customers)
{
    assert_answer("/customer", "select=country&distinct=*&order=country",
                  "SELECT json_agg(c) FROM (SELECT DISTINCT country FROM customer"
                  " ORDER BY country) c");
}
END_TEST

START_TEST(latest_invoice_per_customer)
{
    const char *sql = "SELECT json_agg(i) FROM (SELECT DISTINCT ON (customer_id)"
                      " customer_id, invoice_id, invoice_date FROM invoice"
                      " ORDER BY customer_id, invoice_date DESC) i";
    assert_answer("/invoice",
                  "select=customer_id,invoice_id,invoice_date&distinct=customer_id"
                  "&order=customer_id,invoice_date.desc", sql);
    /* the distinct column leads the order without being named in it */
    assert_answer("/invoice",
                  "select=customer_id,invoice_id,invoice_date&distinct=customer_id"
                  "&order=invoice_date.desc", sql);
}
END_TEST

/* DISTINCT ON columns need not be selected; its order= direction is kept */
START_TEST(distinct_on_unselected_column_descending)
{
    assert_answer("/invoice",
                  "select=invoice_id,total&distinct=billing_country"
                  "&order=billing_country.desc,total.desc,invoice_id",
                  "SELECT json_agg(i) FROM (SELECT DISTINCT ON (billing_country)"
                  " invoice_id, total FROM invoice"
                  " ORDER BY billing_country DESC, total DESC, invoice_id) i");
}
END_TEST

START_TEST(distinct_with_limit_offset)
{
    assert_answer("/customer", "select=country,city&distinct=country&order=city&limit=5&offset=3",
                  "SELECT json_agg(c) FROM (SELECT DISTINCT ON (country) country, city"
                  " FROM customer ORDER BY country, city LIMIT 5 OFFSET 3) c");
}
END_TEST

static void assert_total(const char *method, const char *query, const char *range,
                         const char *count_sql)
{
    const char *headers[] = {"Prefer", "count=exact", NULL};
    test_response r;
    harness_request(ctx, method, "/customer", query, headers, NULL, &r);
    ck_assert_msg(r.status == 200 || r.status == 206, "%s -> %d %s", query, r.status, r.body);
    char want[64];
    snprintf(want, sizeof want, "%s/%d", range, sql_int(count_sql));
    const char *got = harness_header(&r, "Content-Range");
    ck_assert_msg(got != NULL && strcmp(got, want) == 0, "%s: Content-Range %s, want %s",
                  query, got ? got : "(none)", want);
    harness_free(&r);
}

/* the count counts the distinct rows / the DISTINCT ON groups */
START_TEST(count_exact_counts_distinct_rows)
{
    const char *countries = "SELECT count(DISTINCT country) FROM customer";
    assert_total("GET", "select=country&distinct=*&limit=5&offset=2", "2-6", countries);
    assert_total("HEAD", "select=country&distinct=*&limit=5&offset=2", "2-6", countries);
    assert_total("GET", "select=country,city&distinct=*&limit=3",
                 "0-2", "SELECT count(*) FROM (SELECT DISTINCT country, city FROM customer) c");
    assert_total("GET", "select=customer_id,city&distinct=country&limit=4", "0-3", countries);
    /* grouped: the groups having= keeps */
    assert_total("GET", "select=country,n:count()&distinct=country&having=(n.gt.2)&limit=2", "0-1",
                 "SELECT count(*) FROM (SELECT country FROM customer GROUP BY country"
                 " HAVING count(*) > 2) c");
    /* without a range the page is the whole set */
    int n = sql_int(countries);
    char range[32];
    snprintf(range, sizeof range, "0-%d", n - 1);
    assert_total("GET", "select=country&distinct=*", range, countries);
    assert_total("GET", "select=customer_id&distinct=country", range, countries);
}
END_TEST

/* the Range header pages the distinct rows as limit/offset do */
START_TEST(range_header_pages_distinct_rows)
{
    const char *headers[] = {"Prefer", "count=exact", "Range", "2-6", NULL};
    test_response r;
    get("/customer", "select=country&distinct=*&order=country", headers, 206, &r);
    char want[64];
    snprintf(want, sizeof want, "2-6/%d", sql_int("SELECT count(DISTINCT country) FROM customer"));
    ck_assert_str_eq(harness_header(&r, "Content-Range"), want);
    assert_same(parse_body(&r),
                sql_json("SELECT json_agg(c) FROM (SELECT DISTINCT country FROM customer"
                         " ORDER BY country LIMIT 5 OFFSET 2) c"));
    harness_free(&r);
}
END_TEST

START_TEST(distinct_in_a_to_many_embed)
{
    assert_answer("/customer",
                  "select=customer_id,invoice(invoice_id,invoice_date,total)"
                  "&invoice.distinct=total&invoice.order=total.desc,invoice_date"
                  "&customer_id=lt.6&order=customer_id",
                  "SELECT json_agg(c ORDER BY c.customer_id) FROM (SELECT customer_id,"
                  " (SELECT coalesce(json_agg(i), '[]') FROM (SELECT DISTINCT ON (total)"
                  "   invoice_id, invoice_date, total FROM invoice v"
                  "   WHERE v.customer_id = cu.customer_id ORDER BY total DESC, invoice_date) i)"
                  " AS invoice FROM customer cu WHERE customer_id < 6) c");
    assert_answer("/customer",
                  "select=customer_id,invoice(billing_city)&invoice.distinct=*"
                  "&invoice.order=billing_city&customer_id=lt.6&order=customer_id",
                  "SELECT json_agg(c ORDER BY c.customer_id) FROM (SELECT customer_id,"
                  " (SELECT coalesce(json_agg(i), '[]') FROM (SELECT DISTINCT billing_city"
                  "   FROM invoice v WHERE v.customer_id = cu.customer_id"
                  "   ORDER BY billing_city) i)"
                  " AS invoice FROM customer cu WHERE customer_id < 6) c");
}
END_TEST

/* a to-many spread orders its arrays in the aggregate: the subquery is
 * ordered too, so DISTINCT ON keeps each group's first row */
START_TEST(distinct_in_a_to_many_spread)
{
    assert_answer("/customer",
                  "select=customer_id,...invoice(total,invoice_date)"
                  "&invoice.distinct=total&invoice.order=total.desc,invoice_date.desc"
                  "&customer_id=lt.6&order=customer_id",
                  "SELECT json_agg(c ORDER BY c.customer_id) FROM (SELECT customer_id,"
                  " (SELECT coalesce(json_agg(total), '[]') FROM (SELECT DISTINCT ON (total)"
                  "   total FROM invoice v WHERE v.customer_id = cu.customer_id"
                  "   ORDER BY total DESC, invoice_date DESC) i) AS total,"
                  " (SELECT coalesce(json_agg(invoice_date), '[]') FROM (SELECT DISTINCT ON (total)"
                  "   invoice_date FROM invoice v WHERE v.customer_id = cu.customer_id"
                  "   ORDER BY total DESC, invoice_date DESC) i) AS invoice_date"
                  " FROM customer cu WHERE customer_id < 6) c");
}
END_TEST

/* SELECT DISTINCT over rows with an embed compares the embeds too */
START_TEST(distinct_rows_with_an_embed)
{
    assert_answer("/invoice",
                  "select=billing_country,customer(country)&distinct=*"
                  "&order=billing_country&billing_country=in.(USA,Canada,France)",
                  "SELECT json_agg(x ORDER BY x.billing_country) FROM (SELECT DISTINCT"
                  " billing_country, (SELECT to_jsonb(c) FROM (SELECT country FROM customer"
                  "  WHERE customer.customer_id = invoice.customer_id) c) AS customer"
                  " FROM invoice WHERE billing_country IN ('USA', 'Canada', 'France')) x");
}
END_TEST

/* item 4: a filter on a column named distinct keeps PostgREST's meaning */
START_TEST(filter_on_a_distinct_column)
{
    assert_answer("/pgrest_distinct_words", "distinct=eq.x&order=id",
                  "SELECT json_agg(w ORDER BY id) FROM pgrest_distinct_words w"
                  " WHERE \"distinct\" = 'x'");
    /* and the column can itself be the distinct one (quoted) */
    assert_answer("/pgrest_distinct_words", "select=id,word&distinct=%22distinct%22&order=distinct.desc",
                  "SELECT json_agg(w) FROM (SELECT DISTINCT ON (\"distinct\") id, word"
                  " FROM pgrest_distinct_words ORDER BY \"distinct\" DESC) w");
}
END_TEST

static void assert_error(const char *method, const char *query, int status, const char *code,
                         const char *message_part)
{
    test_response r;
    harness_request(ctx, method, "/customer", query, NULL, method[0] == 'P' ? "{}" : NULL, &r);
    ck_assert_msg(r.status == status, "%s %s -> %d %s", method, query, r.status, r.body);
    json_object *j = parse_body(&r);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(j, "code")), code);
    const char *msg = json_object_get_string(json_object_object_get(j, "message"));
    ck_assert_msg(strstr(msg, message_part) != NULL, "%s", msg);
    json_object_put(j);
    harness_free(&r);
}

START_TEST(errors)
{
    /* an unknown column is PostgreSQL's, as for order= */
    assert_error("GET", "distinct=nope", 400, "42703", "nope");
    assert_error("GET", "distinct=country,", 400, "PGRST100", "failed to parse distinct");
    /* mutations: PostgREST's filter parse error, unchanged */
    assert_error("PATCH", "distinct=*", 400, "PGRST100", "failed to parse filter (*)");
}
END_TEST

/* the aggregates' gate (docs/distinct.md): closed, PGRST123; a filter on
 * a column named distinct is PostgREST's and needs no gate */
START_TEST(closed_gate)
{
    pgrest_ctx *closed = harness_chinook_ctx(NULL);
    pgrest_ctx *open = ctx;
    ctx = closed;
    assert_error("GET", "select=country&distinct=*", 400, "PGRST123",
                 "Use of aggregate functions is not allowed");
    test_response r;
    get("/pgrest_distinct_words", "distinct=eq.y", NULL, 200, &r);
    assert_same(parse_body(&r), sql_json("SELECT json_agg(w) FROM pgrest_distinct_words w"
                                         " WHERE \"distinct\" = 'y'"));
    harness_free(&r);
    ctx = open;
    pgrest_ctx_free(closed);
}
END_TEST

static Suite *distinct_suite(void)
{
    Suite *s = suite_create("distinct");
    TCase *tc = tcase_create("distinct");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, distinct_countries_of_customers);
    tcase_add_test(tc, latest_invoice_per_customer);
    tcase_add_test(tc, distinct_on_unselected_column_descending);
    tcase_add_test(tc, distinct_with_limit_offset);
    tcase_add_test(tc, count_exact_counts_distinct_rows);
    tcase_add_test(tc, range_header_pages_distinct_rows);
    tcase_add_test(tc, distinct_in_a_to_many_embed);
    tcase_add_test(tc, distinct_in_a_to_many_spread);
    tcase_add_test(tc, distinct_rows_with_an_embed);
    tcase_add_test(tc, filter_on_a_distinct_column);
    tcase_add_test(tc, errors);
    tcase_add_test(tc, closed_gate);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    chinook_uri(); /* skip (77) before any test forks */
    return check_run(distinct_suite());
}
