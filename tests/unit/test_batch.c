/* Transactional batches without a database (docs/batch.md): which
 * requests are batches, the batch's own errors (table-driven: the body,
 * then the expected status, code and details prefix), and the statements
 * each item gets once the batch owns the transaction. The schema cache is
 * tests/unit/fixtures/schema_snapshot.json. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "engine/batch.h"
#include "engine/stage_view.h"
#include "pgrest/pgrest.h"

static pgrest_ctx *ctx;
static pgrest_arena *arena;

static void setup_with(const char *tx_end, const char *max_items)
{
    ctx = pgrest_ctx_new();
    pgrest_error err = {0};
    pgrest_ctx_set(ctx, "db-schemas", "api", &err);
    pgrest_ctx_set(ctx, "db-anon-role", "web_anon", &err);
    if (tx_end != NULL)
        ck_assert_int_eq(pgrest_ctx_set(ctx, "db-tx-end", tx_end, &err), PGREST_OK);
    if (max_items != NULL)
        ck_assert_int_eq(pgrest_ctx_set(ctx, "server-max-batch-items", max_items, &err),
                         PGREST_OK);
    char path[1024];
    snprintf(path, sizeof path, "%s/schema_snapshot.json", getenv("PGREST_TEST_FIXTURES"));
    ck_assert_msg(pgrest_ctx_load_schema_file(ctx, path, &err) == PGREST_OK, "snapshot: %s",
                  err.message);
    arena = pgrest_arena_new(0);
}

static void setup(void)
{
    setup_with(NULL, "3");
}

static void teardown(void)
{
    pgrest_arena_free(arena);
    pgrest_ctx_free(ctx);
}

static pgrest_request *batch_request(const char *body, const char *prefer)
{
    pgrest_request *req = pgrest_request_new(arena, "POST", "/", NULL);
    pgrest_request_add_header(req, "Content-Type", "application/vnd.pgrest.batch+json");
    if (prefer != NULL)
        pgrest_request_add_header(req, "Prefer", prefer);
    pgrest_request_set_body(req, body, strlen(body));
    return req;
}

static int prepare(const char *body, const char *prefer, pgr_batch **b, pgrest_error *err)
{
    pgrest_request *req = batch_request(body, prefer);
    pgrest_auth *auth = NULL;
    ck_assert_int_eq(pgrest_authenticate(ctx, arena, req, &auth, err), PGREST_OK);
    return pgr_batch_prepare(ctx, arena, req, auth, b, err);
}

START_TEST(which_requests_are_batches)
{
    static const struct {
        const char *method, *path, *content_type;
        bool batch;
    } cases[] = {
        {"POST", "/", "application/vnd.pgrest.batch+json", true},
        {"POST", "", "application/vnd.pgrest.batch+json", true},
        {"POST", "/", "Application/VND.pgrest.Batch+JSON; charset=utf-8", true},
        {"POST", "/", "application/json", false},
        {"POST", "/", "application/vnd.pgrest.batch+jsonx", false},
        {"POST", "/", NULL, false},
        {"GET", "/", "application/vnd.pgrest.batch+json", false},
        {"POST", "/artists", "application/vnd.pgrest.batch+json", false},
        {"POST", "/rpc/f", "application/vnd.pgrest.batch+json", false},
    };
    const pgr_config *cfg = pgr_cfg(ctx, arena);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pgrest_request *req = pgrest_request_new(arena, cases[i].method, cases[i].path, NULL);
        if (cases[i].content_type != NULL)
            pgrest_request_add_header(req, "Content-Type", cases[i].content_type);
        ck_assert_msg(pgr_batch_requested(cfg, req) == cases[i].batch, "case %zu", i);
    }
}
END_TEST

START_TEST(batch_errors)
{
    static const struct {
        const char *body;
        int status;
        const char *code, *details;
    } cases[] = {
        {"{}", 400, "PGRST102", "the body must be a JSON array of items"},
        {"[] []", 400, "PGRST102", "the body must be a JSON array of items"},
        {"[]", 400, "PGRST102", "0 items; server-max-batch-items is 3"},
        {"[{},{},{},{}]", 413, "PGRST102", "4 items; server-max-batch-items is 3"},
        {"[null]", 400, "PGRST102", "batch item 0: an item must be an object"},
        {"[{\"path\":\"/artists\"}]", 400, "PGRST102", "batch item 0: \"method\" and \"path\""},
        {"[{\"method\":\"GET\",\"path\":7}]", 400, "PGRST102", "batch item 0: \"method\" and"},
        {"[{\"method\":\"GET\",\"path\":\"/artists\",\"query\":1}]", 400, "PGRST102",
         "batch item 0: \"method\" and"},
        {"[{\"method\":\"GET\",\"path\":\"/artists\"},{\"method\":\"get\",\"path\":\"/artists\"}]",
         400, "PGRST102", "batch item 1: method must be one of"},
        {"[{\"method\":\"HEAD\",\"path\":\"/artists\"}]", 400, "PGRST102", "batch item 0: method"},
        {"[{\"method\":\"POST\",\"path\":\"/\"}]", 400, "PGRST102", "batch item 0: path"},
        {"[{\"method\":\"GET\",\"path\":\"artists\"}]", 400, "PGRST102", "batch item 0: path"},
        {"[{\"method\":\"GET\",\"path\":\"/artists\",\"headers\":{\"AUTHORIZATION\":\"x\"}}]",
         400, "PGRST102", "batch item 0: an item cannot carry Authorization"},
        {"[{\"method\":\"GET\",\"path\":\"/artists\",\"headers\":{\"Accept\":1}}]", 400,
         "PGRST102", "batch item 0: header values must be strings"},
        /* the single request path's own errors, with the index */
        {"[{\"method\":\"GET\",\"path\":\"/artists\"},{\"method\":\"GET\",\"path\":\"/nope\"}]",
         404, "PGRST205", "batch item 1"},
        {"[{\"method\":\"GET\",\"path\":\"/artists\",\"query\":\"select=nope(*)\"}]", 400,
         "PGRST200", "batch item 0: Searched for a foreign key relationship"},
        {"[{\"method\":\"GET\",\"path\":\"/a/b/c\"}]", 404, "PGRST125", "batch item 0"},
        {"[{\"method\":\"POST\",\"path\":\"/artists\",\"headers\":{\"Content-Type\":\"text/csv\"},"
         "\"body\":\"x\"}]", 400, "PGRST102", "batch item 0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pgr_batch *b = NULL;
        pgrest_error err = {0};
        int rc = prepare(cases[i].body, NULL, &b, &err);
        ck_assert_msg(rc != PGREST_OK, "case %zu passed", i);
        ck_assert_msg(err.http_status == cases[i].status && strcmp(err.code, cases[i].code) == 0,
                      "case %zu: %d %s %s", i, err.http_status, err.code, err.message);
        ck_assert_msg(err.details != NULL &&
                          strncmp(err.details, cases[i].details, strlen(cases[i].details)) == 0,
                      "case %zu: details %s", i, err.details ? err.details : "(none)");
    }
}
END_TEST

static const char *stmt(const pgrest_statements *st, size_t i)
{
    return pgrest_statements_sql(st, i);
}

static const char *last(const pgrest_statements *st)
{
    return stmt(st, pgrest_statements_count(st) - 1);
}

static bool has_end(const pgrest_statements *st)
{
    for (size_t k = 0; k < st->n; k++)
        if (st->items[k].role == PGR_STMT_END || strcmp(st->items[k].sql, "COMMIT") == 0 ||
            strcmp(st->items[k].sql, "ROLLBACK") == 0)
            return true;
    return false;
}

/* The first item opens the transaction read-write, later ones reset the
 * response GUCs, only the last one ends it, after every item's answer
 * (its END is held back for the post-check); no item runs in an implicit
 * transaction (whose READ ONLY would be set_config'd for the rest). */
START_TEST(statements_handed_to_the_batch)
{
    pgr_batch *b = NULL;
    pgrest_error err = {0};
    ck_assert_int_eq(prepare("[{\"method\":\"GET\",\"path\":\"/artists\"},"
                             " {\"method\":\"GET\",\"path\":\"/artists\",\"query\":\"id=eq.1\"},"
                             " {\"method\":\"GET\",\"path\":\"/albums\"}]",
                             NULL, &b, &err),
                     PGREST_OK);
    ck_assert_uint_eq(pgr_batch_count(b), 3);
    const pgrest_statements *first = pgr_batch_statements(b, 0);
    const pgrest_statements *second = pgr_batch_statements(b, 1);
    const pgrest_statements *third = pgr_batch_statements(b, 2);
    ck_assert_str_eq(stmt(first, 0), "BEGIN ISOLATION LEVEL READ COMMITTED");
    ck_assert_ptr_nonnull(strstr(stmt(second, 0), "set_config('response.headers', '', true)"));
    ck_assert(!has_end(first) && !has_end(second));
    ck_assert(!first->end_after_check && !second->end_after_check);
    ck_assert_str_eq(last(third), "COMMIT");
    ck_assert(third->end_after_check);
    for (size_t k = 0; k < pgrest_statements_count(first); k++)
        ck_assert_ptr_null(strstr(stmt(first, k), "transaction_read_only"));
}
END_TEST

/* db-tx-end decides the batch's end; Prefer: tx only with an override,
 * the batch's and never an item's. */
START_TEST(tx_end_is_the_batch_s)
{
    teardown();
    setup_with("commit-allow-override", NULL);
    pgr_batch *b = NULL;
    pgrest_error err = {0};
    const char *two = "[{\"method\":\"GET\",\"path\":\"/artists\","
                      "  \"headers\":{\"Prefer\":\"tx=rollback\"}},"
                      " {\"method\":\"DELETE\",\"path\":\"/artists\",\"query\":\"id=eq.1\"}]";
    ck_assert_int_eq(prepare(two, NULL, &b, &err), PGREST_OK);
    ck_assert(!has_end(pgr_batch_statements(b, 0)));
    ck_assert_str_eq(last(pgr_batch_statements(b, 1)), "COMMIT");
    ck_assert_int_eq(prepare(two, "tx=rollback", &b, &err), PGREST_OK);
    /* deferred constraints are checked before the rollback, as PostgREST does */
    const pgrest_statements *st = pgr_batch_statements(b, 1);
    ck_assert_str_eq(stmt(st, pgrest_statements_count(st) - 2), "SET CONSTRAINTS ALL IMMEDIATE");
    ck_assert_str_eq(last(st), "ROLLBACK");
    teardown();
    setup_with("rollback", NULL);
    ck_assert_int_eq(prepare(two, "tx=commit", &b, &err), PGREST_OK);
    ck_assert_str_eq(last(pgr_batch_statements(b, 1)), "ROLLBACK");
}
END_TEST

START_TEST(zero_items_allowed_turns_batches_off)
{
    teardown();
    setup_with(NULL, "0");
    ck_assert(!pgr_batch_requested(pgr_cfg(ctx, arena), batch_request("[]", NULL)));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("batch");
    TCase *tc = tcase_create("batch");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, which_requests_are_batches);
    tcase_add_test(tc, batch_errors);
    tcase_add_test(tc, statements_handed_to_the_batch);
    tcase_add_test(tc, tx_end_is_the_batch_s);
    tcase_add_test(tc, zero_items_allowed_turns_batches_off);
    suite_add_tcase(s, tc);
    return check_run(s);
}
