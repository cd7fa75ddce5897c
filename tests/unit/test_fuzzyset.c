/* Data.FuzzySet as Error.hs uses it: the doctests of noRpcHint and
 * noRelBetweenHint (PostgREST src/library/PostgREST/Error.hs), as
 * (query, entries, min score, expected) rows. */
#include <check.h>

#include "check_run.h"
#include <string.h>

#include "plan/fuzzyset.h"
#include "util/arena.h"

typedef struct fuzzy_case {
    const char *query;
    const char *entries[4];
    double min_score;
    const char *expected;   /* NULL: no suggestion */
} fuzzy_case;

static const fuzzy_case cases[] = {
    /* noRpcHint: function names in the schema, getOneWithMinScore 0.75 */
    {"testt", {"test", "another"}, 0.75, "test"},
    {"noclosealternative", {"test", "another"}, 0.75, NULL},
    /* noRpcHint: the overloads' sorted parameter lists, getOne */
    {"(nam, pqaram, vall)", {"(name, param, val)", "(attr, id)"}, 0.33, "(name, param, val)"},
    {"(param, val)", {"(name, param, val)", "(attr, id)"}, 0.33, "(name, param, val)"},
    {"(attrs, id)", {"(name, param, val)", "(attr, id)"}, 0.33, "(attr, id)"},
    {"(id)", {"(name, param, val)", "(attr, id)"}, 0.33, "(attr, id)"},
    {"(noclosealternative)", {"(name, param, val)", "(attr, id)"}, 0.33, NULL},
    /* noRelBetweenHint: table names, getOne */
    {"film", {"films", "directors", "roles", "actors"}, 0.33, "films"},
    {"role", {"directors", "roles", "actors"}, 0.33, "roles"},
    /* an entry equal but for case scores 1 */
    {"Films", {"films"}, 0.99, "films"},
    /* no shared gram: "()" has none */
    {"(a)", {"()"}, 0.33, NULL},
};

START_TEST(fuzzyset_matches_error_hs)
{
    const fuzzy_case *c = &cases[_i];
    pgrest_arena *a = pgrest_arena_new(0);
    size_t n = 0;
    while (n < 4 && c->entries[n] != NULL)
        n++;
    const char *got = pgr_fuzzyset_get_one(a, c->query, c->entries, n, c->min_score);
    if (c->expected == NULL)
        ck_assert_msg(got == NULL, "%s: expected no match, got %s", c->query, got);
    else
        ck_assert_msg(got != NULL && strcmp(got, c->expected) == 0, "%s: expected %s, got %s",
                      c->query, c->expected, got ? got : "(none)");
    pgrest_arena_free(a);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuzzyset");
    TCase *tc = tcase_create("fuzzyset");
    tcase_add_loop_test(tc, fuzzyset_matches_error_hs, 0, (int)(sizeof cases / sizeof cases[0]));
    suite_add_tcase(s, tc);
    return check_run(s);
}
