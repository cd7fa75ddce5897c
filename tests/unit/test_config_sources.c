/* PostgREST's configuration sources read by the library
 * (pgrest_config_sources, lib/config/sources*.c, after Config.hs):
 * defaults, aliases and which one wins, configurator's value kinds and the
 * coerce* functions, the checks with PostgREST's messages, @file values,
 * the options handed to a context and the --dump-config text. Only the
 * public API: what a host (pgrest-server, a binding) sees. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_run.h"
#include "pgrest/pgrest.h"

#define S PGREST_VALUE_STRING
#define N PGREST_VALUE_NUMBER
#define B PGREST_VALUE_BOOL

typedef struct entry {
    const char *key, *value;
    pgrest_value_kind kind;
} entry;

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

/* Adds the entries (ended by a NULL key) and resolves; returns the error
 * text, "" on success. */
static const char *resolve(const entry *e)
{
    for (; e->key != NULL; e++)
        ck_assert_int_eq(pgrest_config_sources_add(src, e->key, e->value, e->kind), PGREST_OK);
    free(message);
    message = NULL;
    int rc = pgrest_config_sources_resolve(src, &message);
    if (rc == PGREST_OK) {
        ck_assert_ptr_null(message);
        return "";
    }
    ck_assert_int_eq(rc, PGREST_ERR_CONFIG);
    ck_assert_ptr_nonnull(message);
    return message;
}

static const char *get(const char *key)
{
    return pgrest_config_sources_get(src, key);
}

START_TEST(defaults_are_postgrest_defaults)
{
    const entry e[] = {{NULL, NULL, S}};
    ck_assert_str_eq(resolve(e), "");
    ck_assert_str_eq(get("db-uri"), "postgresql://");
    ck_assert_str_eq(get("db-schemas"), "public");
    ck_assert_str_eq(get("db-extra-search-path"), "public");
    ck_assert_str_eq(get("db-channel"), "pgrst");
    ck_assert_str_eq(get("db-pool"), "10");
    ck_assert_str_eq(get("db-pool-max-idletime"), "30");
    ck_assert_str_eq(get("db-pool-max-lifetime"), "1800");
    ck_assert_str_eq(get("jwt-cache-max-entries"), "1000");
    ck_assert_str_eq(get("server-port"), "3000");
    ck_assert_str_eq(get("server-host"), "!4");
    ck_assert_str_eq(get("admin-server-host"), "!4");
    ck_assert_str_eq(get("log-level"), "error");
    ck_assert_str_eq(get("log-query"), "false");
    ck_assert_str_eq(get("server-unix-socket-mode"), "660");
    ck_assert_str_eq(get("db-config"), "true");
    /* every option with a default has it; unset ones without are absent */
    const pgrest_option_info *o;
    for (size_t i = 0; (o = pgrest_option_at(i)) != NULL; i++)
        if (o->postgrest && o->dump != PGREST_DUMP_NONE && o->default_value != NULL)
            ck_assert_msg(get(o->name) != NULL, "%s has no value", o->name);
    ck_assert_ptr_null(get("db-max-rows"));
    ck_assert_ptr_null(get("db-anon-role"));
    ck_assert_ptr_null(get("admin-server-port"));
    ck_assert_ptr_null(get("server-unix-socket"));
    ck_assert_ptr_null(get("no-such-option"));
}
END_TEST

START_TEST(aliases_and_coercions)
{
    const entry e[] = {{"db-schema", "a, b", S},          {"max-rows", " 0x10 ", S},
                       {"db-pool-timeout", "5", S},       {"db-pool-max-idletime", "9", S},
                       {"db-plan-enabled", "TRUE", S},    {"db-config", "0", S},
                       {"db-pool", "many", S},            {"server-port", "8080", N},
                       {"log-query", "true", B},          {"server-reuseport", "1", N},
                       {"admin-server-port", "3001", S},  {NULL, NULL, S}};
    ck_assert_str_eq(resolve(e), "");
    ck_assert_str_eq(get("db-schemas"), "a,b");
    ck_assert_str_eq(get("db-schema"), "a,b");
    ck_assert_str_eq(get("db-max-rows"), "16");
    /* the deprecated name wins (optWithAlias order in Config.hs) */
    ck_assert_str_eq(get("db-pool-max-idletime"), "5");
    ck_assert_str_eq(get("db-plan-enabled"), "true");
    ck_assert_str_eq(get("db-config"), "false");
    /* a string that reads as no number: the default */
    ck_assert_str_eq(get("db-pool"), "10");
    ck_assert_str_eq(get("server-port"), "8080");
    ck_assert_str_eq(get("log-query"), "true");
    /* coerceBool: an unquoted number is no bool */
    ck_assert_str_eq(get("server-reuseport"), "false");
    ck_assert_str_eq(get("admin-server-port"), "3001");
}
END_TEST

/* What an option's type does not say: Config.hs's own parse functions. */
START_TEST(parse_functions_beyond_the_type)
{
    const entry e[] = {{"server-host", "10.0.0.1", S},
                       {"server-cors-allowed-origins", " http://a , http://b", S},
                       {"server-unix-socket-mode", "0644x", S},
                       {"db-extra-search-path", "", S},
                       {"db-anon-role", "", S},
                       {"server-port", "3000", N},
                       {NULL, NULL, S}};
    ck_assert_str_eq(resolve(e), "");
    /* admin-server-host falls back to server-host */
    ck_assert_str_eq(get("admin-server-host"), "10.0.0.1");
    ck_assert_str_eq(get("server-cors-allowed-origins"), "http://a,http://b");
    /* readOct: the leading octal digits, shown in octal */
    ck_assert_str_eq(get("server-unix-socket-mode"), "644");
    /* optStringEmptyable keeps "", optString drops it */
    ck_assert_str_eq(get("db-extra-search-path"), "");
    ck_assert_ptr_null(get("db-anon-role"));
    /* a number written unquoted is shown (coerceText) for a text option */
    ck_assert_str_eq(get("server-port"), "3000");
}
END_TEST

START_TEST(later_value_wins)
{
    const entry e[] = {{"db-anon-role", "file", S}, {"db-anon-role", "env", S}, {NULL, NULL, S}};
    ck_assert_str_eq(resolve(e), "");
    ck_assert_str_eq(get("db-anon-role"), "env");
}
END_TEST

START_TEST(checks_give_postgrest_messages)
{
    static const struct { const char *key, *value, *message; } cases[] = {
        {"log-level", "loud", "Error in config Invalid logging level. Check your configuration."},
        {"db-tx-end", "x", "Error in config Invalid transaction termination. Check your "
                           "configuration."},
        {"openapi-mode", "x", "Error in config Invalid openapi-mode. Check your configuration."},
        {"jwt-secret", "short", "user error (The JWT secret must be at least 32 characters "
                                "long.)"},
        {"admin-server-port", "3000", "Error in config admin-server-port cannot be the same as "
                                      "server-port"},
        {"db-schemas", "x,information_schema", "Error in config db-schemas does not allow "
                                               "schema: 'information_schema'"},
        {"server-unix-socket-mode", "8", "Error in config Invalid server-unix-socket-mode: not "
                                         "an octal"},
        {"client-error-verbosity", "loud", "Error in config Invalid client-error-verbosity. "
                                           "Check your configuration."},
        {"jwt-aud", "a:b c", "Error in config jwt-aud should be a string or a valid URI"},
        {"admin-server-unix-socket-mode", "577", "Error in config Invalid "
                                                 "admin-server-unix-socket-mode: needs to be "
                                                 "between 600 and 777"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pgrest_config_sources_free(src);
        src = pgrest_config_sources_new();
        ck_assert_ptr_nonnull(src);
        const entry e[] = {{cases[i].key, cases[i].value, S}, {NULL, NULL, S}};
        ck_assert_str_eq(resolve(e), cases[i].message);
        /* a refused configuration resolves to nothing */
        ck_assert_ptr_null(get("db-uri"));
        ck_assert_int_eq(pgrest_config_sources_option(src, 0, NULL, NULL), 0);
        ck_assert_ptr_null(pgrest_config_sources_dump(src));
    }
}
END_TEST

/* Config.hs parser order: the first failing check is the one reported. */
START_TEST(first_check_in_parser_order)
{
    const entry e[] = {{"log-level", "loud", S}, {"db-tx-end", "x", S}, {NULL, NULL, S}};
    ck_assert_str_eq(resolve(e), "Error in config Invalid transaction termination. Check "
                                 "your configuration.");
}
END_TEST

START_TEST(at_file_values)
{
    char path[] = "/tmp/pgrest-sources-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    const char text[] = "  postgres://from-file  \n";
    ck_assert_int_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    char at[64];
    snprintf(at, sizeof at, "@%s", path);
    const entry e[] = {{"db-uri", at, S}, {NULL, NULL, S}};
    ck_assert_str_eq(resolve(e), "");
    /* readDbUriFile strips the spaces */
    ck_assert_str_eq(get("db-uri"), "postgres://from-file");
    unlink(path);
    pgrest_config_sources_free(src);
    src = pgrest_config_sources_new();
    ck_assert_ptr_nonnull(src);
    const entry missing[] = {{"jwt-secret", "@/nonexistent/secret", S}, {NULL, NULL, S}};
    ck_assert_str_eq(resolve(missing), "/nonexistent/secret: openBinaryFile: does not exist "
                                       "(No such file or directory)");
}
END_TEST

START_TEST(options_for_the_context)
{
    const entry e[] = {{"db-schema", "api", S},        {"server-threads", "4", N},
                       {"app.settings.name", "x", S},  {"not-an-option", "y", S},
                       {NULL, NULL, S}};
    ck_assert_str_eq(resolve(e), "");
    bool schemas = false, threads = false, app = false, alias = false, unknown = false;
    size_t n = 0;
    const char *key, *value;
    for (size_t i = 0; pgrest_config_sources_option(src, i, &key, &value); i++, n++) {
        schemas |= strcmp(key, "db-schemas") == 0 && strcmp(value, "api") == 0;
        threads |= strcmp(key, "server-threads") == 0 && strcmp(value, "4") == 0;
        app |= strcmp(key, "app.settings.name") == 0 && strcmp(value, "x") == 0;
        alias |= strcmp(key, "db-schema") == 0;
        unknown |= strcmp(key, "not-an-option") == 0;
    }
    ck_assert(schemas && threads && app && unknown);
    ck_assert(!alias);
    /* 32 PostgREST options with a default, and the 3 keys given */
    ck_assert_uint_eq(n, 35);
    ck_assert_int_eq(pgrest_config_sources_reads_key("db-schema"), 1);
    ck_assert_int_eq(pgrest_config_sources_reads_key("app.settings.x"), 1);
    ck_assert_int_eq(pgrest_config_sources_reads_key("db-channel-uri"), 1);
    ck_assert_int_eq(pgrest_config_sources_reads_key("server-threads"), 0);
    ck_assert_int_eq(pgrest_config_sources_reads_key(NULL), 0);
    /* a context takes every option it knows as resolved */
    pgrest_ctx *ctx = pgrest_ctx_new();
    ck_assert_ptr_nonnull(ctx);
    for (size_t i = 0; pgrest_config_sources_option(src, i, &key, &value); i++) {
        pgrest_error err = {0};
        if (pgrest_config_key_known(key))
            ck_assert_int_eq(pgrest_ctx_set(ctx, key, value, &err), PGREST_OK);
    }
    ck_assert_str_eq(pgrest_ctx_get(ctx, "db-schemas"), "api");
    pgrest_ctx_free(ctx);
    /* an add forgets the resolution */
    ck_assert_int_eq(pgrest_config_sources_add(src, "db-pool", "3", S), PGREST_OK);
    ck_assert_ptr_null(get("db-schemas"));
}
END_TEST

static bool has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; p != NULL && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, line, n) == 0 && p[n] == '\n')
            return true;
    return false;
}

START_TEST(dump_config_text)
{
    const entry e[] = {{"db-anon-role", "we\"b", S},     {"db-pool", "7", N},
                       {"db-pre-request", "a.", S},      {"app.settings.k", "v", S},
                       {"jwt-role-claim-key", ".role", S}, {NULL, NULL, S}};
    ck_assert_str_eq(resolve(e), "");
    char *text = pgrest_config_sources_dump(src);
    ck_assert_ptr_nonnull(text);
    ck_assert(has_line(text, "db-anon-role = \"we\\\"b\""));
    ck_assert(has_line(text, "db-pool = 7"));
    ck_assert(has_line(text, "db-pre-request = \"a\""));
    ck_assert(has_line(text, "db-max-rows = \"\""));
    ck_assert(has_line(text, "app.settings.k = \"v\""));
    ck_assert(has_line(text, "jwt-role-claim-key = \".\\\"role\\\"\""));
    ck_assert(has_line(text, "log-query = false"));
    ck_assert(has_line(text, "admin-server-port = \"\""));
    ck_assert(strstr(text, "server-threads") == NULL);
    /* sorted, whole lines */
    ck_assert(strstr(text, "admin-server-host") < strstr(text, "db-anon-role"));
    ck_assert(text[strlen(text) - 1] == '\n');
    free(text);
}
END_TEST

START_TEST(role_claim_deprecation)
{
    char *l1, *l2;
    ck_assert_int_eq(pgrest_config_role_claim_deprecation("$.role", &l1, &l2), 0);
    ck_assert_ptr_null(l1);
    ck_assert_ptr_null(l2);
    ck_assert_int_eq(pgrest_config_role_claim_deprecation(NULL, &l1, &l2), 0);
    ck_assert_int_eq(pgrest_config_role_claim_deprecation(".role", &l1, &l2), 1);
    ck_assert_str_eq(l1, "WARNING: The config `jwt-role-claim-key=.\"role\"` is using the "
                         "deprecated JSPath syntax.");
    ck_assert_ptr_nonnull(strstr(l2, "Update `jwt-role-claim-key=.\"role\"` to the new "
                                     "JSONPath syntax"));
    free(l1);
    free(l2);
}
END_TEST

START_TEST(misuse_is_refused)
{
    ck_assert_int_eq(pgrest_config_sources_add(NULL, "a", "b", S), PGREST_ERR_INTERNAL);
    ck_assert_int_eq(pgrest_config_sources_add(src, NULL, "b", S), PGREST_ERR_INTERNAL);
    ck_assert_int_eq(pgrest_config_sources_add(src, "a", NULL, S), PGREST_ERR_INTERNAL);
    ck_assert_int_eq(pgrest_config_sources_add(src, "a", "b", (pgrest_value_kind)7),
                     PGREST_ERR_INTERNAL);
    /* nothing resolved yet */
    ck_assert_ptr_null(get("db-uri"));
    ck_assert_ptr_null(pgrest_config_sources_dump(src));
    ck_assert_ptr_null(pgrest_config_sources_dump(NULL));
    ck_assert_int_eq(pgrest_config_sources_resolve(NULL, NULL), PGREST_ERR_INTERNAL);
    pgrest_config_sources_free(NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("config_sources");
    TCase *tc = tcase_create("sources");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, defaults_are_postgrest_defaults);
    tcase_add_test(tc, aliases_and_coercions);
    tcase_add_test(tc, parse_functions_beyond_the_type);
    tcase_add_test(tc, later_value_wins);
    tcase_add_test(tc, checks_give_postgrest_messages);
    tcase_add_test(tc, first_check_in_parser_order);
    tcase_add_test(tc, at_file_values);
    tcase_add_test(tc, options_for_the_context);
    tcase_add_test(tc, dump_config_text);
    tcase_add_test(tc, role_claim_deprecation);
    tcase_add_test(tc, misuse_is_refused);
    suite_add_tcase(s, tc);
    return check_run(s);
}
