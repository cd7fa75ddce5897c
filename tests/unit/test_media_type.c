/* Media types as PostgREST's MediaType.hs reads and names them:
 * decodeMediaType / tokenizeMediaType (its doctests are the expected values
 * below) and toMime, which names accepted types in PGRST107 and
 * Content-Type in PGRST102 messages. */
#include <check.h>
#include <string.h>

#include "check_run.h"
#include "parse/media_type.h"
#include "util/arena.h"

static pgrest_arena *arena;

static void setup(void) { arena = pgrest_arena_new(0); }
static void teardown(void) { pgrest_arena_free(arena); }

typedef struct mime_case {
    const char *input;
    pgr_media_kind kind;
    const char *mime;   /* toMime of the decoded type */
} mime_case;

static const mime_case mime_cases[] = {
    /* decodeMediaType doctests */
    {"application/json", PGR_MEDIA_JSON, "application/json"},
    {"application/vnd.pgrst.plan;", PGR_MEDIA_PLAN,
     "application/vnd.pgrst.plan+text; for=\"application/json\""},
    {"application/vnd.pgrst.plan;for=\"application/json\"", PGR_MEDIA_PLAN,
     "application/vnd.pgrst.plan+text; for=\"application/json\""},
    {"application/vnd.pgrst.plan ; for=\"text/xml\" ; options=analyze", PGR_MEDIA_PLAN,
     "application/vnd.pgrst.plan+text; for=\"text/xml\"; options=analyze"},
    {"application/vnd.pgrst.plan+json;for=\"text/csv\"", PGR_MEDIA_PLAN,
     "application/vnd.pgrst.plan+json; for=\"text/csv\""},
    {"application/vnd.pgrst.array+json;nulls=stripped", PGR_MEDIA_ARRAY,
     "application/vnd.pgrst.array+json;nulls=stripped"},
    {"application/vnd.pgrst.array+json", PGR_MEDIA_JSON, "application/json"},
    {"application/vnd.pgrst.object+json;nulls=stripped", PGR_MEDIA_OBJECT,
     "application/vnd.pgrst.object+json;nulls=stripped"},
    {"application/vnd.pgrst.object+json", PGR_MEDIA_OBJECT, "application/vnd.pgrst.object+json"},
    {"ApplicatIon/vnd.PgRsT.object+json", PGR_MEDIA_OBJECT, "application/vnd.pgrst.object+json"},
    {"application/vnd.twkb", PGR_MEDIA_OTHER, "application/vnd.twkb"},
    /* options are kept in MediaType.hs's order, unknown ones dropped */
    {"application/vnd.pgrst.plan+json; options=wal|bogus|analyze", PGR_MEDIA_PLAN,
     "application/vnd.pgrst.plan+json; for=\"application/json\"; options=analyze|wal"},
    {"application/vnd.pgrst.plan+json; for=\"application/vnd.pgrst.object\"", PGR_MEDIA_PLAN,
     "application/vnd.pgrst.plan+json; for=\"application/vnd.pgrst.object+json\""},
    /* parameter values are compared as written: Stripped is not stripped */
    {"application/vnd.pgrst.object+json;nulls=Stripped", PGR_MEDIA_OBJECT,
     "application/vnd.pgrst.object+json"},
    /* the type is a prefix (no eof): trailing text after it is ignored */
    {"application/json!!", PGR_MEDIA_JSON, "application/json"},
    {"text/csv; version=1", PGR_MEDIA_CSV, "text/csv"},
    /* MTOther keeps the whole text as written, parameters included */
    {"Text/Special; Foo=Bar", PGR_MEDIA_OTHER, "Text/Special; Foo=Bar"},
    {"text/*", PGR_MEDIA_OTHER, "text/*"},
    {"undefined", PGR_MEDIA_OTHER, "undefined"},
    {"/json", PGR_MEDIA_OTHER, "/json"},
    {"*/*", PGR_MEDIA_ANY, "*/*"},
    {"TEXT/CSV", PGR_MEDIA_CSV, "text/csv"},
    {"application/geo+json", PGR_MEDIA_GEOJSON, "application/geo+json"},
    {"application/openapi+json", PGR_MEDIA_OPENAPI, "application/openapi+json"},
    {"application/octet-stream", PGR_MEDIA_OCTET, "application/octet-stream"},
    /* pgrest's NDJSON output; named as PostgREST's MTOther names it */
    {"application/x-ndjson", PGR_MEDIA_NDJSON, "application/x-ndjson"},
    {"Application/X-NDJSON; v=1", PGR_MEDIA_NDJSON, "Application/X-NDJSON; v=1"},
};

START_TEST(decodes_and_names_as_postgrest)
{
    const mime_case *c = &mime_cases[_i];
    pgr_media_type *mt = pgr_parse_media_type(arena, c->input);
    ck_assert_ptr_nonnull(mt);
    ck_assert_msg(mt->kind == c->kind, "%s: kind %d, want %d", c->input, mt->kind, c->kind);
    ck_assert_str_eq(pgr_media_type_mime(arena, mt), c->mime);
}
END_TEST

/* wai's parseHttpAccept orders by q, then specificity; a q of 0 stays in
 * the list (last) because negotiateContent does not drop it. */
START_TEST(accept_keeps_q_zero_last)
{
    pgr_media_type *m = pgr_parse_accept(arena, "text/csv;q=0, application/json;q=0.5");
    ck_assert_ptr_nonnull(m);
    ck_assert_str_eq(pgr_media_type_mime(arena, m), "application/json");
    ck_assert_ptr_nonnull(m->next);
    ck_assert_str_eq(pgr_media_type_mime(arena, m->next), "text/csv");
    ck_assert(m->next->q == 0.0);
}
END_TEST

/* parseHttpAccept removes every space before the type is decoded */
START_TEST(accept_removes_spaces)
{
    pgr_media_type *m = pgr_parse_accept(arena, "application/vnd.pgrst.plan+json; for = \"text/csv\"");
    ck_assert_ptr_nonnull(m);
    ck_assert_str_eq(pgr_media_type_mime(arena, m),
                     "application/vnd.pgrst.plan+json; for=\"text/csv\"");
}
END_TEST

/* q is read as Haskell's reads :: Double reads it: a minus sign and an
 * exponent are part of the number */
START_TEST(accept_q_reads_sign_and_exponent)
{
    pgr_media_type *m = pgr_parse_accept(arena, "text/csv;q=1e-1, application/json;q=-1, text/plain;q=0.5");
    ck_assert_ptr_nonnull(m);
    ck_assert_str_eq(pgr_media_type_mime(arena, m), "text/plain");
    ck_assert_str_eq(pgr_media_type_mime(arena, m->next), "text/csv");
    ck_assert(m->next->q > 0.09 && m->next->q < 0.11);
    ck_assert_str_eq(pgr_media_type_mime(arena, m->next->next), "application/json");
    ck_assert(m->next->next->q == -1.0);
}
END_TEST

/* pgrest's OpenAPI version parameter (docs/openapi.md): read only on
 * application/openapi+json, with its '.'; other types keep PostgREST's
 * parameter list, which a '.' ends. */
START_TEST(openapi_version_parameter)
{
    pgr_media_type *m = pgr_parse_accept(arena, "application/openapi+json;version=3.1");
    ck_assert_ptr_nonnull(m);
    ck_assert_str_eq(m->openapi_version, "3.1");
    ck_assert_str_eq(pgr_media_type_mime(arena, m), "application/openapi+json");
    m = pgr_parse_media_type(arena, "application/openapi+json; Version=3.1.0; x=y");
    ck_assert_str_eq(m->openapi_version, "3.1.0");
    m = pgr_parse_media_type(arena, "application/openapi+json");
    ck_assert_ptr_null(m->openapi_version);
    m = pgr_parse_media_type(arena, "application/openapi+json;version=");
    ck_assert_ptr_null(m->openapi_version);
    m = pgr_parse_media_type(arena, "application/json;version=3.1");
    ck_assert_ptr_null(m->openapi_version);
    /* the '.' still ends a plan type's list before its for= */
    m = pgr_parse_media_type(arena, "application/vnd.pgrst.plan;version=3.1;for=\"text/csv\"");
    ck_assert_ptr_null(m->plan_for);
}
END_TEST

/* an empty Accept is no type at all (parseHttpAccept "" == []), unlike a
 * missing one (which accepts anything) */
START_TEST(accept_empty_accepts_nothing)
{
    pgr_media_type *m = pgr_parse_accept(arena, "");
    ck_assert_ptr_nonnull(m);
    ck_assert_str_eq(pgr_media_type_mime(arena, m), "");
    ck_assert_ptr_null(m->next);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("media_type");
    TCase *tc = tcase_create("media_type");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, decodes_and_names_as_postgrest, 0,
                        (int)(sizeof mime_cases / sizeof mime_cases[0]));
    tcase_add_test(tc, accept_keeps_q_zero_last);
    tcase_add_test(tc, accept_removes_spaces);
    tcase_add_test(tc, openapi_version_parameter);
    tcase_add_test(tc, accept_q_reads_sign_and_exponent);
    tcase_add_test(tc, accept_empty_accepts_nothing);
    suite_add_tcase(s, tc);
    return check_run(s);
}
