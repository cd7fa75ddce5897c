/* Unit tests of distinct= (docs/distinct.md): which params are distincts
 * (reserved only where PostgREST's filter grammar rejects the value, and
 * only on relation reads) and the distinct grammar's errors. The SQL is
 * checked by the golden files tests/unit/golden/ *distinct*. No database. */
#include <check.h>

#include "check_run.h"
#include <string.h>

#include "parse/distinct_parser.h"
#include "parse/query_string.h"

static pgrest_arena *arena;

static void setup(void)
{
    arena = pgrest_arena_new(0);
    ck_assert_ptr_nonnull(arena);
}

static void teardown(void)
{
    pgrest_arena_free(arena);
    arena = NULL;
}

/* What a request may hold, as pgrest_parse_request decides by action */
typedef enum params_for { FOR_WRITE, FOR_RPC_READ, FOR_READ } params_for;

static int parse_qs(const char *qs, params_for kind, pgr_query_params *qp,
                    pgrest_error *err)
{
    pgr_params_extensions ext = {.related_leaves = kind != FOR_WRITE,
                                 .distinct = kind == FOR_READ};
    return pgr_query_params_parse_ext(arena, pgr_query_string_decode(arena, qs),
                                      kind == FOR_RPC_READ, &ext, NULL, qp, err);
}

static size_t count_filters(const pgr_query_params *qp)
{
    size_t n = 0;
    for (const pgr_path_filter *f = qp->filters; f != NULL; f = f->next)
        n++;
    return n;
}

START_TEST(read_distincts_by_path)
{
    pgr_query_params qp;
    pgrest_error err = {0};
    int rc = parse_qs("distinct=*&albums.distinct=a,%20%22b%20c%22%20,d", FOR_READ,
                      &qp, &err);
    ck_assert_msg(rc == PGREST_OK, "%s", err.message);
    const pgr_path_distinct *root = qp.distincts, *emb = root ? root->next : NULL;
    ck_assert_ptr_nonnull(emb);
    ck_assert_ptr_null(emb->next);
    ck_assert(root->all);
    ck_assert_uint_eq(root->path.n, 0);
    ck_assert(!emb->all);
    ck_assert_uint_eq(emb->path.n, 1);
    ck_assert_str_eq(emb->path.names[0], "albums");
    ck_assert_uint_eq(emb->n_columns, 3);
    ck_assert_str_eq(emb->columns[0], "a");
    ck_assert_str_eq(emb->columns[1], "b c");
    ck_assert_str_eq(emb->columns[2], "d");
    ck_assert_uint_eq(count_filters(&qp), 0);
}
END_TEST

/* item 4: what the filter grammar accepts keeps PostgREST's meaning */
START_TEST(filter_on_a_distinct_column_stays)
{
    pgr_query_params qp;
    pgrest_error err = {0};
    int rc = parse_qs("distinct=eq.x&albums.distinct=not.is.null&distinct", FOR_READ,
                      &qp, &err);
    ck_assert_msg(rc == PGREST_OK, "%s", err.message);
    ck_assert_ptr_null(qp.distincts);
    ck_assert_uint_eq(count_filters(&qp), 2);
    ck_assert_str_eq(qp.filters->filter.field.name, "distinct");
    ck_assert_str_eq(qp.filters->filter.expr.value, "x");
}
END_TEST

/* mutations and POST /rpc: PostgREST's filter parse error, unchanged */
START_TEST(not_a_read_keeps_filter_error)
{
    pgr_query_params qp;
    pgrest_error err = {0};
    ck_assert_int_ne(parse_qs("distinct=*", FOR_WRITE, &qp, &err), PGREST_OK);
    ck_assert_str_eq(err.code, "PGRST100");
    ck_assert_int_eq(err.http_status, 400);
    ck_assert_ptr_nonnull(strstr(err.message, "failed to parse filter (*)"));
}
END_TEST

/* GET /rpc: a value without operator is the function's argument */
START_TEST(rpc_keeps_argument)
{
    pgr_query_params qp;
    pgrest_error err = {0};
    ck_assert_int_eq(parse_qs("distinct=a,b", FOR_RPC_READ, &qp, &err), PGREST_OK);
    ck_assert_ptr_null(qp.distincts);
    ck_assert_ptr_nonnull(qp.rpc_params);
    ck_assert_str_eq(qp.rpc_params->name, "distinct");
    ck_assert_str_eq(qp.rpc_params->value, "a,b");
}
END_TEST

static void assert_distinct_error(const char *qs, const char *message)
{
    pgr_query_params qp;
    pgrest_error err = {0};
    ck_assert_int_ne(parse_qs(qs, FOR_READ, &qp, &err), PGREST_OK);
    ck_assert_str_eq(err.code, "PGRST100");
    ck_assert_int_eq(err.http_status, 400);
    ck_assert_msg(strcmp(err.message, message) == 0, "%s: got %s", qs, err.message);
}

/* the whole value must be the list (no ignored tail, unlike columns=) */
START_TEST(malformed_lists)
{
    assert_distinct_error("distinct=a,,b", "\"failed to parse distinct (a,,b)\" (line 1, column 3)");
    assert_distinct_error("distinct=a,", "\"failed to parse distinct (a,)\" (line 1, column 3)");
    assert_distinct_error("distinct=a.b", "\"failed to parse distinct (a.b)\" (line 1, column 2)");
    assert_distinct_error("distinct=*,a", "\"failed to parse distinct (*,a)\" (line 1, column 1)");
    assert_distinct_error("distinct=", "\"failed to parse distinct ()\" (line 1, column 1)");
}
END_TEST

/* a NUL is no identifier character; quoted, it would reach PostgreSQL */
START_TEST(nul_in_a_name)
{
    pgr_path_distinct d = {0};
    pgrest_error err = {0};
    ck_assert_int_ne(pgr_parse_distinct_n(arena, "a\0b", 3, &d, &err), PGREST_OK);
    ck_assert_str_eq(err.code, "PGRST100");
    ck_assert_int_ne(pgr_parse_distinct_n(arena, "\"a\0b\"", 5, &d, &err), PGREST_OK);
    ck_assert_str_eq(err.code, "22021");
}
END_TEST

static Suite *distinct_suite(void)
{
    Suite *s = suite_create("distinct");
    TCase *tc = tcase_create("parse");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, read_distincts_by_path);
    tcase_add_test(tc, filter_on_a_distinct_column_stays);
    tcase_add_test(tc, not_a_read_keeps_filter_error);
    tcase_add_test(tc, rpc_keeps_argument);
    tcase_add_test(tc, malformed_lists);
    tcase_add_test(tc, nul_in_a_name);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(distinct_suite());
}
