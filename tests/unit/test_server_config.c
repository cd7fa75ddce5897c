/* The server's config file and PGRST_* environment reader (PostgREST
 * ref/configuration: file syntax, env names, env over file). */
#include <check.h>

#include "check_run.h"
#include <stdlib.h>
#include <string.h>

#include "config_file.h"

START_TEST(parses_postgrest_config_syntax)
{
    server_options o = {0};
    char err[128];
    const char *text =
        "# comment\n"
        "db-uri = \"postgres://a@b/c\"\n"
        "db-pool = 5\n"
        "jwt-role-claim-key = \".\\\"https://x\\\".role\"\n"
        "app.settings.name = \"x$$y\"\n"
        "server-port=3001 # trailing\n";
    ck_assert(config_text_parse(text, &o, err, sizeof err));
    ck_assert_str_eq(server_options_get(&o, "db-uri"), "postgres://a@b/c");
    ck_assert_str_eq(server_options_get(&o, "db-pool"), "5");
    ck_assert_str_eq(server_options_get(&o, "jwt-role-claim-key"), ".\"https://x\".role");
    ck_assert_str_eq(server_options_get(&o, "app.settings.name"), "x$y");
    ck_assert_str_eq(server_options_get(&o, "server-port"), "3001");
    server_options_free(&o);
}
END_TEST

START_TEST(rejects_malformed_lines)
{
    server_options o = {0};
    char err[128];
    ck_assert(!config_text_parse("db-uri \"x\"\n", &o, err, sizeof err));
    ck_assert(!config_text_parse("db-uri = \"unterminated\n", &o, err, sizeof err));
    server_options_free(&o);
}
END_TEST

START_TEST(environment_overrides_file)
{
    server_options o = {0};
    char err[128];
    ck_assert(config_text_parse("db-schemas = \"a\"\n", &o, err, sizeof err));
    char *env[] = {"PGRST_DB_SCHEMAS=b, c", "PGRST_APP_SETTINGS_JWT_KEY=k",
                   "OTHER=1", "PGRST_APP_SETTINGS_=e", "PGRST_db_anon_role=x", NULL};
    config_read_env(&o, env);
    ck_assert_str_eq(server_options_get(&o, "db-schemas"), "b, c");
    /* Config.hs parseAppSettings keeps the rest of the name as is */
    ck_assert_str_eq(server_options_get(&o, "app.settings.JWT_KEY"), "k");
    ck_assert_ptr_null(server_options_get(&o, "other"));
    /* ... even when empty; other options are looked up by their exact
     * upper-case name (overrideFromDbOrEnvironment envVarName) */
    ck_assert_str_eq(server_options_get(&o, "app.settings."), "e");
    ck_assert_ptr_null(server_options_get(&o, "db-anon-role"));
    server_options_free(&o);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("server_config");
    TCase *tc = tcase_create("config");
    tcase_add_test(tc, parses_postgrest_config_syntax);
    tcase_add_test(tc, rejects_malformed_lines);
    tcase_add_test(tc, environment_overrides_file);
    suite_add_tcase(s, tc);
    return check_run(s);
}
