/* Responses of writes for Prefer combinations and tables the main fixture
 * lacks (PostgREST Response.hs actionResponse per Mutation, MainTx.hs
 * post-checks, QueryBuilder.hs mutatePlanToQuery). Every transaction
 * rolls back (db-tx-end=rollback-allow-override) and the tables are made
 * and dropped around each test by the superuser connection. */
#include <check.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "harness.h"

static PGconn *admin;
static pgrest_ctx *ctx;

static void exec_admin(const char *sql)
{
    harness_admin_exec(admin, sql);
}

static void setup(void)
{
    admin = harness_admin_connect();
    exec_admin("CREATE TABLE api.wr_nopk (a text, b text)");
    exec_admin("GRANT ALL ON api.wr_nopk TO web_user");
    const char *opts[] = {"db-anon-role", "web_user", "db-tx-end", "rollback-allow-override",
                          NULL};
    ctx = harness_ctx(opts);
}

static void teardown(void)
{
    pgrest_ctx_free(ctx);
    exec_admin("DROP TABLE api.wr_nopk");
    PQfinish(admin);
}

static void expect_header(const test_response *r, const char *name, const char *want)
{
    const char *got = harness_header(r, name);
    if (want == NULL)
        ck_assert_msg(got == NULL, "%s: want none, got %s", name, got);
    else
        ck_assert_msg(got != NULL && strcmp(got, want) == 0, "%s: want %s, got %s", name, want,
                      got ? got : "(none)");
}

/* Without a primary key or on_conflict there is no ON CONFLICT, and
 * Response.hs responsePreferences leaves resolution out of
 * Preference-Applied; merge-duplicates still counts the inserted rows
 * (QueryBuilder.hs mergeDups adds the pgrst.inserted WHERE), so no row
 * reaching it (an empty array) answers 200, as on a table with a key. */
START_TEST(merge_duplicates_without_conflict_target)
{
    test_response r;
    const char *merge[] = {"Prefer", "resolution=merge-duplicates", NULL};
    harness_request(ctx, "POST", "/wr_nopk", NULL, merge, "[]", &r);
    ck_assert_int_eq(r.status, 200);
    expect_header(&r, "Preference-Applied", NULL);
    expect_header(&r, "Content-Range", "*/*");
    harness_free(&r);
    const char *merge_rep[] = {"Prefer", "resolution=merge-duplicates, return=representation",
                               NULL};
    harness_request(ctx, "POST", "/wr_nopk", NULL, merge_rep, "[{\"a\":\"1\",\"b\":\"2\"}]", &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_str_eq(r.body, "[{\"a\":\"1\",\"b\":\"2\"}]");
    expect_header(&r, "Preference-Applied", "return=representation");
    harness_free(&r);
    /* ignore-duplicates reads '' for the counter: 201 even when empty */
    const char *ignore[] = {"Prefer", "resolution=ignore-duplicates", NULL};
    harness_request(ctx, "POST", "/wr_nopk", NULL, ignore, "[]", &r);
    ck_assert_int_eq(r.status, 201);
    expect_header(&r, "Preference-Applied", NULL);
    harness_free(&r);
}
END_TEST

/* MainTx.hs failMutation runs failPut alone for PUT: a body whose key
 * differs from the URL's is PGRST115 even when a single object is
 * asked for (no PGRST116 first); a matching one answers the object. */
START_TEST(put_mismatch_is_pgrst115_with_singular_accept)
{
    test_response r;
    const char *obj[] = {"Accept", "application/vnd.pgrst.object+json", NULL};
    harness_request(ctx, "PUT", "/artists", "id=eq.1", obj, "{\"id\":2,\"name\":\"x\"}", &r);
    ck_assert_msg(r.status == 400 && strstr(r.body, "\"PGRST115\"") != NULL, "%d %s", r.status,
                  r.body);
    harness_free(&r);
    const char *obj_rep[] = {"Accept", "application/vnd.pgrst.object+json",
                             "Prefer", "return=representation", NULL};
    harness_request(ctx, "PUT", "/artists", "id=eq.1&select=id,name", obj_rep,
                    "{\"id\":1,\"name\":\"x\"}", &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, "{\"id\":1,\"name\":\"x\"}");
    expect_header(&r, "Content-Type", "application/vnd.pgrst.object+json; charset=utf-8");
    harness_free(&r);
}
END_TEST

int main(void)
{
    harness_db_uri();
    Suite *s = suite_create("write_responses");
    TCase *tc = tcase_create("write_responses");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, merge_duplicates_without_conflict_target);
    tcase_add_test(tc, put_mismatch_is_pgrst115_with_singular_accept);
    suite_add_tcase(s, tc);
    return check_run(s);
}
