/* PostgREST's configuration file and PGRST_* environment read into
 * pgrest_config_sources (lib/config/sources_file.c; PostgREST
 * ref/configuration: file syntax, env names, env over file). */
#include <check.h>

#include "check_run.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pgrest/pgrest.h"

static pgrest_config_sources *src;
static char *message;

static void setup(void)
{
    src = pgrest_config_sources_new();
    ck_assert_ptr_nonnull(src);
    message = NULL;
}

static void teardown(void)
{
    pgrest_config_sources_free(src);
    free(message);
}

/* Creates a file from the template path (its XXXXXX replaced) holding
 * the len bytes of text. */
static void write_temp(char *path, const char *text, size_t len)
{
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
}

static const char *get(const char *key)
{
    return pgrest_config_sources_get(src, key);
}

static void resolve(void)
{
    ck_assert_int_eq(pgrest_config_sources_resolve(src, &message), PGREST_OK);
}

START_TEST(parses_postgrest_config_syntax)
{
    const char *text =
        "# comment\n"
        "db-uri = \"postgres://a@b/c\"\n"
        "db-pool = 5\n"
        "jwt-role-claim-key = \".\\\"https://x\\\".role\"\n"
        "app.settings.name = \"x$$y\"\n"
        "app.settings.copy = \"<$(db-uri)>\"\n"
        "server-port=3001 # trailing\n";
    ck_assert_int_eq(pgrest_config_sources_add_text(src, text, &message), PGREST_OK);
    ck_assert_ptr_null(message);
    resolve();
    ck_assert_str_eq(get("db-uri"), "postgres://a@b/c");
    ck_assert_str_eq(get("db-pool"), "5");
    ck_assert_str_eq(get("jwt-role-claim-key"), ".\"https://x\".role");
    ck_assert_str_eq(get("app.settings.name"), "x$y");
    ck_assert_str_eq(get("app.settings.copy"), "<postgres://a@b/c>");
    ck_assert_str_eq(get("server-port"), "3001");
}
END_TEST

/* configurator's value kinds reach the reader: an unquoted number is no
 * boolean (coerceBool), a quoted "0" reads as false. */
START_TEST(values_keep_their_kind)
{
    ck_assert_int_eq(pgrest_config_sources_add_text(src, "db-config = 0\n"
                                                         "db-plan-enabled = \"0\"\n"
                                                         "db-prepared-statements = off\n",
                                                    &message),
                     PGREST_OK);
    resolve();
    ck_assert_str_eq(get("db-config"), "true");
    ck_assert_str_eq(get("db-plan-enabled"), "false");
    ck_assert_str_eq(get("db-prepared-statements"), "false");
}
END_TEST

START_TEST(rejects_malformed_lines)
{
    static const struct { const char *text, *message; } cases[] = {
        {"db-uri \"x\"\n", "Error in config config line 1: expected key = value"},
        {"# c\ndb-uri = \"unterminated\n", "Error in config config line 2: unterminated string"},
        {"a = \"$(NO_SUCH_VARIABLE_HERE)\"\n",
         "Error in config config line 1: no such variable \"NO_SUCH_VARIABLE_HERE\""},
        {"a = \"x\" y\n", "Error in config config line 1: unexpected text after the value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_int_eq(pgrest_config_sources_add_text(src, cases[i].text, &message),
                         PGREST_ERR_CONFIG);
        ck_assert_str_eq(message, cases[i].message);
        free(message);
        message = NULL;
    }
    /* a refused text adds nothing */
    ck_assert_int_eq(pgrest_config_sources_add_text(src, "db-pool = 3\nbad\n", &message),
                     PGREST_ERR_CONFIG);
    free(message);
    message = NULL;
    resolve();
    ck_assert_str_eq(get("db-pool"), "10");
}
END_TEST

START_TEST(reads_a_file)
{
    char path[] = "/tmp/pgrest-config-file-XXXXXX";
    const char text[] = "db-anon-role = \"web\"\n";
    write_temp(path, text, sizeof text - 1);
    ck_assert_int_eq(pgrest_config_sources_add_file(src, path, &message), PGREST_OK);
    unlink(path);
    ck_assert_int_eq(pgrest_config_sources_add_file(src, path, &message), PGREST_ERR_CONFIG);
    char expected[256];
    snprintf(expected, sizeof expected,
             "Error in config %s: openFile: does not exist (No such file or directory)", path);
    ck_assert_str_eq(message, expected);
    free(message);
    message = NULL;
    resolve();
    ck_assert_str_eq(get("db-anon-role"), "web");
}
END_TEST

/* A NUL byte would end the text early: the file is refused, not cut. */
START_TEST(refuses_a_file_with_a_nul_byte)
{
    char path[] = "/tmp/pgrest-config-file-XXXXXX";
    const char text[] = "db-anon-role = \"web\"\n\0db-pool = 3\n";
    write_temp(path, text, sizeof text - 1);
    ck_assert_int_eq(pgrest_config_sources_add_file(src, path, &message), PGREST_ERR_CONFIG);
    unlink(path);
    char expected[256];
    snprintf(expected, sizeof expected, "Error in config %s: the file holds a NUL byte", path);
    ck_assert_str_eq(message, expected);
    free(message);
    message = NULL;
    resolve();
    ck_assert_ptr_null(get("db-anon-role"));
}
END_TEST

START_TEST(environment_overrides_file)
{
    ck_assert_int_eq(pgrest_config_sources_add_text(src, "db-schemas = \"a\"\n", &message),
                     PGREST_OK);
    char *env[] = {"PGRST_DB_SCHEMAS=b, c", "PGRST_APP_SETTINGS_JWT_KEY=k",
                   "OTHER=1", "PGRST_APP_SETTINGS_=e", "PGRST_db_anon_role=x", NULL};
    ck_assert_int_eq(pgrest_config_sources_add_environment(src, env), PGREST_OK);
    resolve();
    ck_assert_str_eq(get("db-schemas"), "b,c");
    /* Config.hs parseAppSettings keeps the rest of the name as is */
    ck_assert_str_eq(get("app.settings.JWT_KEY"), "k");
    ck_assert_ptr_null(get("other"));
    /* ... even when empty; other options are looked up by their exact
     * upper-case name (overrideFromDbOrEnvironment envVarName) */
    ck_assert_str_eq(get("app.settings."), "e");
    ck_assert_ptr_null(get("db-anon-role"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("config_file");
    TCase *tc = tcase_create("config_file");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, parses_postgrest_config_syntax);
    tcase_add_test(tc, values_keep_their_kind);
    tcase_add_test(tc, rejects_malformed_lines);
    tcase_add_test(tc, reads_a_file);
    tcase_add_test(tc, refuses_a_file_with_a_nul_byte);
    tcase_add_test(tc, environment_overrides_file);
    suite_add_tcase(s, tc);
    return check_run(s);
}
