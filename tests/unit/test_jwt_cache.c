/* The JWT cache: hits until the token's exp, bounded by its size (oldest
 * out first), cleared on demand (PostgREST Auth/JwtCache.hs semantics:
 * jwt-cache-max-entries bounds it, 0 disables it). */
#include <check.h>
#include <stdio.h>
#include <time.h>

#include "auth/jwt_cache.h"
#include "check_run.h"

static const pgr_jwt_auth alice = {"web_user", "{\"role\":\"web_user\",\"sub\":\"alice\"}", true};

START_TEST(hit_until_expiry)
{
    pgr_jwt_cache *c = pgr_jwt_cache_new(4);
    pgrest_arena *a = pgrest_arena_new(0);
    pgr_jwt_auth out;
    ck_assert(!pgr_jwt_cache_get(c, "t1", 100, 0, a, &out));
    pgr_jwt_cache_put(c, "t1", &alice, 200, 0);
    ck_assert(pgr_jwt_cache_get(c, "t1", 199, 0, a, &out));
    ck_assert_str_eq(out.role, "web_user");
    ck_assert_str_eq(out.claims, alice.claims);
    ck_assert(out.authenticated);
    ck_assert(!pgr_jwt_cache_get(c, "t1", 200, 0, a, &out));
    pgr_jwt_cache_put(c, "t2", &alice, 0, 0);
    ck_assert(pgr_jwt_cache_get(c, "t2", time(NULL) + 1000000, 0, a, &out));
    pgrest_arena_free(a);
    pgr_jwt_cache_free(c);
}
END_TEST

START_TEST(bounded_oldest_out)
{
    pgr_jwt_cache *c = pgr_jwt_cache_new(3);
    pgrest_arena *a = pgrest_arena_new(0);
    pgr_jwt_auth out;
    char tok[16];
    for (int i = 0; i < 10; i++) {
        snprintf(tok, sizeof tok, "tok%d", i);
        /* the fourth token onwards pushes the oldest out (evictions metric) */
        ck_assert_int_eq(pgr_jwt_cache_put(c, tok, &alice, 0, 0), i >= 3);
    }
    for (int i = 0; i < 10; i++) {
        snprintf(tok, sizeof tok, "tok%d", i);
        ck_assert_int_eq(pgr_jwt_cache_get(c, tok, 1, 0, a, &out), i >= 7);
    }
    pgr_jwt_cache_clear(c);
    ck_assert(!pgr_jwt_cache_get(c, "tok9", 1, 0, a, &out));
    pgrest_arena_free(a);
    pgr_jwt_cache_free(c);
}
END_TEST

/* A key that left the jwt-jwks-uri set bumps its generation: a token
 * verified before misses and is verified again, then hits again. */
START_TEST(other_key_generation_misses)
{
    pgr_jwt_cache *c = pgr_jwt_cache_new(4);
    pgrest_arena *a = pgrest_arena_new(0);
    pgr_jwt_auth out;
    pgr_jwt_cache_put(c, "t", &alice, 0, 1);
    ck_assert(pgr_jwt_cache_get(c, "t", 1, 1, a, &out));
    ck_assert(!pgr_jwt_cache_get(c, "t", 1, 2, a, &out));
    pgr_jwt_cache_put(c, "t", &alice, 0, 2);
    ck_assert(pgr_jwt_cache_get(c, "t", 1, 2, a, &out));
    ck_assert(!pgr_jwt_cache_get(c, "t", 1, 1, a, &out));
    pgrest_arena_free(a);
    pgr_jwt_cache_free(c);
}
END_TEST

START_TEST(zero_entries_disables)
{
    pgr_jwt_cache *c = pgr_jwt_cache_new(0);
    ck_assert_ptr_null(c);
    pgrest_arena *a = pgrest_arena_new(0);
    pgr_jwt_auth out;
    pgr_jwt_cache_put(c, "t", &alice, 0, 0);
    ck_assert(!pgr_jwt_cache_get(c, "t", 1, 0, a, &out));
    pgrest_arena_free(a);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("jwt_cache");
    TCase *tc = tcase_create("cache");
    tcase_add_test(tc, hit_until_expiry);
    tcase_add_test(tc, bounded_oldest_out);
    tcase_add_test(tc, zero_entries_disables);
    tcase_add_test(tc, other_key_generation_misses);
    suite_add_tcase(s, tc);
    return check_run(s);
}
