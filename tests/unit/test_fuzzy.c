/* The "Perhaps you meant" hints: Data.FuzzySet as PostgREST's Error.hs
 * uses it. Expected picks are Error.hs's doctests (noRelBetweenHint,
 * noRpcHint) and PostgREST's ErrorSpec (PGRST205 hints at a score of at
 * least 0.75), not pgrest's output. */
#include <check.h>

#include "check_run.h"
#include <string.h>

#include "plan/fuzzyset.h"
#include "util/arena.h"

#define END NULL

typedef struct fuzzy_case {
    const char *query;
    double min_score;
    const char *expected; /* NULL: no suggestion */
    const char *cands[8];
} fuzzy_case;

static const fuzzy_case cases[] = {
    /* noRelBetweenHint: getOne (0.33) over parents / children */
    {"film", 0.33, "films", {"films", END}},
    {"role", 0.33, "roles", {"directors", "roles", "actors", END}},
    {"noclosealternative", 0.33, NULL, {"films", END}},
    {"noclosealternative", 0.33, NULL, {"directors", "roles", "actors", END}},
    /* noRpcHint: function names at 0.75 ... */
    {"testt", 0.75, "test", {"test", "another", END}},
    {"other", 0.75, NULL, {"test", "another", END}},
    {"noclosealternative", 0.75, NULL, {"test", "another", END}},
    /* ... and sorted parameter lists at 0.33 */
    {"(nam, pqaram, vall)", 0.33, "(name, param, val)", {"(name, param, val)", "(attr, id)", END}},
    {"(param, val)", 0.33, "(name, param, val)", {"(name, param, val)", "(attr, id)", END}},
    {"(attrs, id)", 0.33, "(attr, id)", {"(name, param, val)", "(attr, id)", END}},
    {"(id)", 0.33, "(attr, id)", {"(name, param, val)", "(attr, id)", END}},
    {"(noclosealternative)", 0.33, NULL, {"(name, param, val)", "(attr, id)", END}},
    /* tableNotFoundHint: 0.75; equal but for case scores 1 */
    {"projectx", 0.75, "projects", {"items", "projects", "project_invoices", END}},
    {"projecxx", 0.75, "projects", {"items", "projects", "project_invoices", END}},
    {"prxjecxx", 0.75, NULL, {"items", "projects", "project_invoices", END}},
    {"Items", 0.75, "items", {"projects", "items", END}},
    /* 3 edits in 10 characters: 0.7 is below the cut */
    {"abcdefgxyz", 0.75, NULL, {"abcdefghij", END}},
};

START_TEST(picks_as_fuzzyset)
{
    const fuzzy_case *c = &cases[_i];
    size_t n = 0;
    while (c->cands[n] != NULL)
        n++;
    pgrest_arena *a = pgrest_arena_new(0);
    double score;
    const char *best = pgr_fuzzyset_best(a, c->query, c->cands, n, c->min_score, &score);
    if (c->expected == NULL)
        ck_assert_msg(best == NULL, "%s: expected no suggestion, got %s", c->query,
                      best != NULL ? best : "");
    else {
        ck_assert_msg(best != NULL, "%s: expected %s, got none", c->query, c->expected);
        ck_assert_str_eq(best, c->expected);
    }
    pgrest_arena_free(a);
}
END_TEST

/* An exact member, whatever its case, scores 1: noRelBetweenHint drops a
 * child of weight 1.0 instead of going on to the next best. */
START_TEST(pick_gives_nothing_for_an_exact_member)
{
    const char *children[] = {"directors", "roles", "actors"};
    pgrest_arena *a = pgrest_arena_new(0);
    double score = 0;
    ck_assert_str_eq(pgr_fuzzyset_best(a, "actors", children, 3, 0.33, &score), "actors");
    ck_assert(score == 1.0);
    ck_assert_str_eq(pgr_fuzzyset_best(a, "Actors", children, 3, 0.33, &score), "actors");
    ck_assert(score == 1.0);
    ck_assert_str_eq(pgr_fuzzyset_best(a, "actor", children, 3, 0.33, &score), "actors");
    ck_assert(score < 1.0);
    pgrest_arena_free(a);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fuzzy");
    TCase *tc = tcase_create("fuzzy");
    tcase_add_loop_test(tc, picks_as_fuzzyset, 0, (int)(sizeof cases / sizeof cases[0]));
    tcase_add_test(tc, pick_gives_nothing_for_an_exact_member);
    suite_add_tcase(s, tc);
    return check_run(s);
}
