/* Read replicas without a database: WAL positions as pg_lsn reads them
 * (pg_lsn_in: two groups of 1 to 8 hex digits around '/'), their order,
 * and db-replica-uris / db-replica-max-lag as options. */
#include <check.h>

#include "check_run.h"
#include <stdint.h>
#include <string.h>

#include "engine/context.h"
#include "config/replica_uris.h"
#include "util/arena.h"
#include "util/lsn.h"

static bool parse(const char *s, uint64_t *v)
{
    return pgr_lsn_parse(s, strlen(s), v);
}

START_TEST(lsn_parses_pg_lsn_text)
{
    uint64_t v;
    ck_assert(parse("0/0", &v) && v == 0);
    ck_assert(parse("0/3000148", &v) && v == 0x3000148ULL);
    ck_assert(parse("16/B374D848", &v) && v == ((0x16ULL << 32) | 0xB374D848ULL));
    ck_assert(parse("ffffffff/ffffffff", &v) && v == UINT64_MAX);
    ck_assert(parse("00000001/0000000A", &v) && v == ((1ULL << 32) | 10));
}
END_TEST

START_TEST(lsn_refuses_what_pg_lsn_refuses)
{
    static const char *const bad[] = {"", "/", "0/", "/0", "0", "1/2/3", "g/0", "0/x",
                                      " 0/1", "0/1 ", "123456789/0", "0/123456789",
                                      "-1/0", "0x1/0", "0//1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t v = 7;
        ck_assert_msg(!parse(bad[i], &v), "accepted '%s'", bad[i]);
    }
    uint64_t v;
    /* the length is the input's: what follows it is no part of it */
    ck_assert(pgr_lsn_parse("0/1XYZ", 3, &v) && v == 1);
    ck_assert(!pgr_lsn_parse(NULL, 0, &v));
}
END_TEST

START_TEST(lsn_order_is_numeric_not_textual)
{
    uint64_t a, b, c;
    /* textually "0/A" > "0/10" and "9/0" > "10/0" */
    ck_assert(parse("0/A", &a) && parse("0/10", &b) && a < b);
    ck_assert(parse("9/FFFFFFFF", &a) && parse("10/0", &b) && a < b);
    ck_assert(parse("0/3000148", &a) && parse("0/3000148", &c) && a == c);
}
END_TEST

START_TEST(lsn_format_round_trips)
{
    char buf[PGR_LSN_LEN];
    pgr_lsn_format((0x16ULL << 32) | 0xB374D848ULL, buf);
    ck_assert_str_eq(buf, "16/B374D848");
    pgr_lsn_format(UINT64_MAX, buf);
    ck_assert_str_eq(buf, "FFFFFFFF/FFFFFFFF");
    uint64_t v;
    ck_assert(parse(buf, &v) && v == UINT64_MAX);
    pgr_lsn_format(0, buf);
    ck_assert_str_eq(buf, "0/0");
}
END_TEST

static size_t split(pgrest_arena *a, const char *value, const char ***items, int *rc)
{
    size_t n = 0;
    pgrest_error err = {0};
    *rc = pgr_replica_uris_split(a, value, items, &n, &err);
    return n;
}

START_TEST(replica_uris_split_on_blanks_and_commas)
{
    pgrest_arena *a = pgrest_arena_new(0);
    const char **l;
    int rc;
    ck_assert_uint_eq(split(a, "postgresql://a/db postgres://b:5433/db", &l, &rc), 2);
    ck_assert_int_eq(rc, PGREST_OK);
    ck_assert_str_eq(l[0], "postgresql://a/db");
    ck_assert_str_eq(l[1], "postgres://b:5433/db");
    ck_assert_ptr_null(l[2]);
    ck_assert_uint_eq(split(a, " postgresql://a/db,postgresql://b/db ,\tpostgresql://c/db, ", &l,
                            &rc), 3);
    ck_assert_str_eq(l[1], "postgresql://b/db");
    ck_assert_str_eq(l[2], "postgresql://c/db");
    /* a multi-host URI keeps its commas */
    ck_assert_uint_eq(split(a, "postgresql://h1:5432,h2:5433/db?target_session_attrs=any,"
                               "postgresql://c/db", &l, &rc), 2);
    ck_assert_str_eq(l[0], "postgresql://h1:5432,h2:5433/db?target_session_attrs=any");
    ck_assert_uint_eq(split(a, "  ", &l, &rc), 0);
    ck_assert_int_eq(rc, PGREST_OK);
    ck_assert_ptr_null(l[0]);
    pgrest_arena_free(a);
}
END_TEST

START_TEST(replica_uris_refuse_non_uris)
{
    pgrest_arena *a = pgrest_arena_new(0);
    const char **l;
    pgrest_error err = {0};
    size_t n;
    ck_assert_int_eq(pgr_replica_uris_split(a, "postgresql://a/db host=b port=5", &l, &n, &err),
                     PGREST_ERR_CONFIG);
    ck_assert_str_eq(err.message, "Invalid db-replica-uris: 'host=b' is not a postgresql:// URI");
    pgrest_arena_free(a);
}
END_TEST

START_TEST(replica_options_through_ctx_set)
{
    pgrest_ctx *ctx = pgrest_ctx_new();
    pgrest_error err = {0};
    ck_assert(pgrest_config_key_known("db-replica-uris"));
    ck_assert(pgrest_config_key_known("db-replica-max-lag"));
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-replica-uris",
                                    "postgresql://a/db, postgresql://b/db", &err), PGREST_OK);
    ck_assert_str_eq(pgrest_ctx_get(ctx, "db-replica-uris"),
                     "postgresql://a/db, postgresql://b/db");
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-replica-max-lag", "2", &err), PGREST_OK);
    pgrest_arena *a = pgrest_arena_new(0);
    const pgr_config *cfg = pgr_cfg(ctx, a);
    ck_assert_uint_eq(cfg->n_db_replica_uris, 2);
    ck_assert_str_eq(cfg->db_replica_uris[1], "postgresql://b/db");
    ck_assert_int_eq(cfg->db_replica_max_lag, 2);
    pgrest_arena_free(a);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-replica-max-lag", "-1", &err), PGREST_ERR_CONFIG);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-replica-max-lag", "soon", &err), PGREST_ERR_CONFIG);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-replica-uris", "dbname=x", &err), PGREST_ERR_CONFIG);
    pgrest_ctx_free(ctx);
}
END_TEST

START_TEST(replica_defaults)
{
    pgrest_ctx *ctx = pgrest_ctx_new();
    pgrest_arena *a = pgrest_arena_new(0);
    const pgr_config *cfg = pgr_cfg(ctx, a);
    ck_assert_uint_eq(cfg->n_db_replica_uris, 0);
    ck_assert_int_eq(cfg->db_replica_max_lag, 5);
    pgrest_arena_free(a);
    pgrest_ctx_free(ctx);
}
END_TEST

START_TEST(min_lsn_setter_adds_the_header)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = pgrest_request_new(a, "GET", "/items", "");
    pgrest_request_set_min_lsn(req, "0/3000148");
    ck_assert_str_eq(pgr_request_header(req, "pgrest-min-lsn"), "0/3000148");
    ck_assert_str_eq(PGREST_MIN_LSN_HEADER, "Pgrest-Min-Lsn");
    ck_assert_str_eq(PGREST_COMMIT_LSN_HEADER, "Pgrest-Commit-Lsn");
    ck_assert_ptr_null(pgrest_response_commit_lsn(NULL));
    pgrest_arena_free(a);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("replicas");
    TCase *tc = tcase_create("replicas");
    tcase_add_test(tc, lsn_parses_pg_lsn_text);
    tcase_add_test(tc, lsn_refuses_what_pg_lsn_refuses);
    tcase_add_test(tc, lsn_order_is_numeric_not_textual);
    tcase_add_test(tc, lsn_format_round_trips);
    tcase_add_test(tc, replica_uris_split_on_blanks_and_commas);
    tcase_add_test(tc, replica_uris_refuse_non_uris);
    tcase_add_test(tc, replica_options_through_ctx_set);
    tcase_add_test(tc, replica_defaults);
    tcase_add_test(tc, min_lsn_setter_adds_the_header);
    suite_add_tcase(s, tc);
    return check_run(s);
}
