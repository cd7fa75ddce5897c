/* Pieces of the write responses (PostgREST Response.hs) that need no
 * database: the Location of an insert, rendered from the "key=value"
 * pairs the statement returns as http-types renderSimpleQuery True does. */
#include <check.h>

#include "check_run.h"
#include <string.h>

#include "exec/response.h"
#include "pgrest/pgrest.h"

static pgrest_arena *arena;

static void setup(void)
{
    arena = pgrest_arena_new(0);
}

static void teardown(void)
{
    pgrest_arena_free(arena);
}

typedef struct location_case {
    const char *pairs;     /* the statement's text[], as array_out prints it */
    const char *expected;  /* NULL: no Location */
} location_case;

/* urlEncode True keeps alphanumerics and -_.~ only: a space is %20, not
 * '+' (InsertSpec "builds response location header appropriately":
 * "Rock & R+ll" -> k2=eq.Rock%20%26%20R%2Bll), UTF-8 bytes in upper hex.
 * array_out quotes elements with spaces, commas, braces, quotes or
 * backslashes (the latter two escaped) and the word NULL. */
static const location_case locations[] = {
    {"{k1=eq.12,\"k2=eq.Rock & R+ll\"}", "/t?k1=eq.12&k2=eq.Rock%20%26%20R%2Bll"},
    {"{id=eq.1,sponsor_id=is.null}", "/t?id=eq.1&sponsor_id=is.null"},
    {"{k=eq.\xe6\xa3\x8b-_.~/?}", "/t?k=eq.%E6%A3%8B-_.~%2F%3F"},
    {"{\"a b=eq.x=y\"}", "/t?a%20b=eq.x%3Dy"},
    {"{\"k=eq.a,\\\"b\\\\{}\"}", "/t?k=eq.a%2C%22b%5C%7B%7D"},
    {"{}", NULL},
    {"", NULL},
    {"{\"k=eq.open}", NULL},
};

START_TEST(location_is_url_encoded)
{
    for (size_t i = 0; i < sizeof locations / sizeof locations[0]; i++) {
        const char *got = pgr_location_header(arena, "t", locations[i].pairs);
        if (locations[i].expected == NULL)
            ck_assert_ptr_null(got);
        else
            ck_assert_str_eq(got, locations[i].expected);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("write_response");
    TCase *tc = tcase_create("location");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, location_is_url_encoded);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
