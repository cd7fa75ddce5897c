/* What PostgREST's configuration resolution (pgrest_config_sources,
 * tested in test_config_sources.c) builds on: its URI checks
 * (Config/Proxy.hs, network-uri isURI), the deprecated JSPath parser (Config/DeprecatedJSPath.hs) and Haskell's
 * string `show`, which PostgREST's messages and dumps go through. */
#include <check.h>

#include "check_run.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_uri.h"
#include "conn_string.h"
#include "util/hs_show.h"
#include "auth/jspath_legacy.h"

#include <json-c/json.h>

START_TEST(legacy_jspath)
{
    char *dump = NULL, *err = NULL;
    ck_assert(jspath_legacy_parse(".a.\"b c\"[2][?(@ *== \"x\")]", &dump, &err));
    ck_assert_str_eq(dump, ".\"a\".\"b c\"[2][?(@ *== \"x\")]");
    free(dump);
    ck_assert(!jspath_legacy_parse(".a.", &dump, &err));
    ck_assert_ptr_nonnull(strstr(err, "\"failed to parse role-claim-key value (.a.)\" "
                                      "(line 1, column 4):\nunexpected end of input"));
    free(err);
    ck_assert(!jspath_legacy_parse(".a[?(@ == \"x\")].b", &dump, &err));
    free(err);
    ck_assert(!jspath_legacy_parse("", &dump, &err));
    free(err);
}
END_TEST

START_TEST(uris)
{
    ck_assert(config_uri_is_uri("urn:example:aud"));
    ck_assert(config_uri_is_uri("https://x.com:8443/p?q=1#f"));
    ck_assert(!config_uri_is_uri("a b:c"));
    ck_assert(!config_uri_is_uri("http://x.com/%zz"));
    ck_assert(!config_uri_is_malformed_proxy("https://example.com:8443/basePath"));
    ck_assert(!config_uri_is_malformed_proxy("HTTP://[::1]/"));
    ck_assert(config_uri_is_malformed_proxy("https://example.com:0/"));
    ck_assert(config_uri_is_malformed_proxy("https://example.com:/"));
    ck_assert(config_uri_is_malformed_proxy("https://u:p@example.com/"));
    ck_assert(config_uri_is_malformed_proxy("https:///path"));
    ck_assert(config_uri_is_malformed_proxy("//example.com/"));
}
END_TEST

START_TEST(haskell_show)
{
    char *s = hs_show_string("a\"b\\c\nd\x01\xc3\xa9" "1");
    /* GHC: "a\"b\\c\nd\SOH\233\&1" */
    ck_assert_str_eq(s, "\"a\\\"b\\\\c\\nd\\SOH\\233\\&1\"");
    free(s);
    /* Data.ByteString.Char8's show: the bytes of é, then \& before a digit */
    pgrest_arena *a = pgrest_arena_new(0);
    pgr_sb sb;
    pgr_sb_init(&sb, a, 16);
    pgr_hs_show_bytes(&sb, "\"\xc3\xa9" "1");
    ck_assert_str_eq(pgr_sb_finish(&sb), "\"\\\"\\195\\169\\&1\"");
    pgrest_arena_free(a);
}
END_TEST

/* Config.hs addFallbackAppName's doctests, version "11.1.0 (5a04ec7)" */
static void expect_added(const char *uri, const char *value, const char *want)
{
    char *got = conn_string_add_option(uri, "fallback_application_name", value);
    ck_assert_str_eq(got, want);
    free(got);
}

START_TEST(fallback_application_name)
{
    const char *v = "PostgREST 11.1.0 (5a04ec7)";
    const char *enc = "fallback_application_name=PostgREST%2011.1.0%20%285a04ec7%29";
    char want[512];
    snprintf(want, sizeof want, "postgres://user:pass@host:5432/postgres?%s", enc);
    expect_added("postgres://user:pass@host:5432/postgres", v, want);
    expect_added("postgres://user:pass@host:5432/postgres?", v, want);
    snprintf(want, sizeof want, "postgres:///postgres?host=server&port=5432&%s", enc);
    expect_added("postgres:///postgres?host=server&port=5432", v, want);
    snprintf(want, sizeof want, "postgresql://?%s", enc);
    expect_added("postgresql://", v, want);
    expect_added("postgres:///postgres?host=server&port=5432",
                 "PostgREST 11'1&0@#$%,.:\"[]{}?+^()=asdfqwer",
                 "postgres:///postgres?host=server&port=5432&fallback_application_name="
                 "PostgREST%2011%271%260%40%23%24%25%2C.%3A%22%5B%5D%7B%7D%3F%2B%5E%28%29%3Dasdfqwer");
    snprintf(want, sizeof want, "postgres://user:invalid_chars[]#@host:5432/postgres?%s", enc);
    expect_added("postgres://user:invalid_chars[]#@host:5432/postgres", v, want);
    snprintf(want, sizeof want, "postgres://admin2:?pass?special?@localhost:5432/postgres?%s", enc);
    expect_added("postgres://admin2:?pass?special?@localhost:5432/postgres", v, want);
    expect_added("host=localhost port=5432 dbname=postgres", v,
                 "host=localhost port=5432 dbname=postgres "
                 "fallback_application_name='PostgREST 11.1.0 (5a04ec7)'");
    expect_added("host=localhost port=5432 dbname=postgres",
                 "PostgREST 11'1&0@#$%,.:\"[]{}?+^()=asdfqwer",
                 "host=localhost port=5432 dbname=postgres "
                 "fallback_application_name='PostgREST 11\\'1&0@#$%,.:\"[]{}?+^()=asdfqwer'");
    /* neither a URI nor key/value pairs: left alone */
    expect_added("mydb", v, "mydb");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("server_app_config");
    TCase *tc = tcase_create("app_config");
    tcase_add_test(tc, legacy_jspath);
    tcase_add_test(tc, uris);
    tcase_add_test(tc, haskell_show);
    tcase_add_test(tc, fallback_application_name);
    suite_add_tcase(s, tc);
    return check_run(s);
}
