/* Configuration by PostgREST's option names (lib/config/config.c) and the
 * configuration snapshots (lib/config/config_snapshot.c, lib/engine/config_reload.c):
 * unknown keys and invalid values are refused with PostgREST's config
 * error texts (Config.hs parser, parseSecret) and leave the configuration
 * unchanged; a request keeps the snapshot it started with; a reload
 * replaces the options as a whole or, when invalid, changes nothing and
 * reports "Failed reloading config: ..." (Logger.hs ConfigInvalidObs). No
 * database: db-config is off wherever a reload would read it. */
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "config/config_snapshot.h"
#include "engine/context.h"

#define SECRET "reallyreallyreallyreallyverysafe"

static pgrest_ctx *ctx;

typedef struct observed {
    int n;
    pgrest_event kind[8];
    char message[8][256];
} observed;

static observed seen;

static void observer(void *arg, pgrest_event kind, const char *message)
{
    observed *o = arg;
    if (o->n < 8) {
        o->kind[o->n] = kind;
        snprintf(o->message[o->n], sizeof o->message[o->n], "%s", message);
    }
    o->n++;
}

static void setup(void)
{
    ctx = pgrest_ctx_new();
    ck_assert_ptr_nonnull(ctx);
    memset(&seen, 0, sizeof seen);
    pgrest_ctx_set_observer(ctx, observer, &seen);
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-config", "false", &err), PGREST_OK);
}

static void teardown(void)
{
    pgrest_ctx_free(ctx);
}

/* A refused set: PGREST_ERR_CONFIG, no HTTP status or code, the message,
 * and the option keeps its value. */
static void expect_refused(const char *key, const char *value, const char *message)
{
    const char *before = pgrest_ctx_get(ctx, key);
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, key, value, &err), PGREST_ERR_CONFIG);
    ck_assert_int_eq(err.http_status, 0);
    ck_assert_ptr_null(err.code);
    ck_assert_ptr_nonnull(err.message);
    ck_assert_str_eq(err.message, message);
    ck_assert_ptr_eq(pgrest_ctx_get(ctx, key), before);
}

START_TEST(unknown_keys_fail_as_documented)
{
    expect_refused("db-schmeas", "api", "Unknown configuration option: db-schmeas");
    expect_refused("jwt-secrets", SECRET, "Unknown configuration option: jwt-secrets");
    expect_refused("", "x", "Unknown configuration option: ");
    expect_refused("app.settings.", "x", "Unknown configuration option: app.settings.");
    ck_assert_int_eq(pgrest_config_key_known("db-schmeas"), 0);
    ck_assert_int_eq(pgrest_config_key_known("app.settings."), 0);
    ck_assert_int_eq(pgrest_config_key_known(NULL), 0);
    /* PostgREST's options, aliases, app.settings.*, pgrest's limits */
    static const char *const known[] = {
        "db-schemas", "db-schema", "max-rows", "pre-request", "root-spec",
        "role-claim-key", "secret-is-base64", "db-pool-timeout", "db-channel",
        "db-channel-enabled", "log-level", "log-query", "server-port", "admin-server-port",
        "openapi-server-proxy-uri", "db-hoisted-tx-settings", "app.settings.jwt_exp",
        "request-max-depth", "server-max-body-size", "server-threads",
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        ck_assert_msg(pgrest_config_key_known(known[i]) == 1, "%s unknown", known[i]);
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-schema", "api", &err), PGREST_OK);
    ck_assert_str_eq(pgrest_ctx_get(ctx, "db-schemas"), "api");
    ck_assert_str_eq(pgrest_ctx_get(ctx, "db-schema"), "api");
    ck_assert_int_eq(pgrest_ctx_set(ctx, "app.settings.k", "v", &err), PGREST_OK);
    ck_assert_str_eq(pgrest_ctx_get(ctx, "app.settings.k"), "v");
}
END_TEST

/* The option table: each record is consistent with its name, every name
 * and alias finds its own record, and a default the library reads is the
 * value a fresh configuration holds. */
static void expect_env_and_db_names(const pgrest_option_info *o)
{
    char env[128] = "PGRST_", db[128];
    size_t n = strlen(o->name);
    ck_assert_uint_lt(n + 7, sizeof env);
    for (size_t i = 0; i <= n; i++) {
        env[6 + i] = o->name[i] == '-' ? '_' : (char)toupper((unsigned char)o->name[i]);
        db[i] = o->name[i] == '-' ? '_' : o->name[i];
    }
    ck_assert_str_eq(o->env, env);
    if (o->in_database != NULL)
        ck_assert_str_eq(o->in_database, db);
}

START_TEST(the_option_table_is_consistent)
{
    const pgrest_option_info *o;
    size_t n = 0;
    for (size_t i = 0; (o = pgrest_option_at(i)) != NULL; i++, n++) {
        expect_env_and_db_names(o);
        ck_assert_ptr_eq(pgrest_option_find(o->name), o);
        if (o->alias != NULL)
            ck_assert_ptr_eq(pgrest_option_find(o->alias), o);
        ck_assert_int_eq(pgrest_config_key_known(o->name), 1);
        /* PostgREST's in-database options are PostgREST's */
        ck_assert(o->in_database == NULL || o->postgrest);
        ck_assert(o->dump == PGREST_DUMP_NONE || o->dump == PGREST_DUMP_IF_SET ||
                  o->dump == PGREST_DUMP_VALUE_IF_SET || o->postgrest);
    }
    ck_assert_uint_gt(n, 50);
    ck_assert_ptr_null(pgrest_option_find("db-schmeas"));
    ck_assert_ptr_null(pgrest_option_find(NULL));
    ck_assert_str_eq(pgrest_option_find("db-schema")->name, "db-schemas");
    ck_assert_str_eq(pgrest_option_find("db-pool-timeout")->env, "PGRST_DB_POOL_MAX_IDLETIME");
    /* dbSettingsNames: 24 options, jwt-cache-max-entries not among them */
    size_t in_db = 0;
    for (size_t i = 0; (o = pgrest_option_at(i)) != NULL; i++)
        in_db += o->in_database != NULL;
    ck_assert_uint_eq(in_db, 24);
    ck_assert_ptr_null(pgrest_option_find("jwt-cache-max-entries")->in_database);
}
END_TEST

START_TEST(the_table_defaults_are_the_configuration_defaults)
{
    pgr_config cfg;
    pgr_config_defaults(&cfg);
    static const struct { const char *name; long long value; } ints[] = {
        {"db-pool", 10}, {"db-pool-acquisition-timeout", 10}, {"db-pool-max-lifetime", 1800},
        {"db-pool-max-idletime", 30}, {"db-replica-max-lag", 5},
        {"jwt-cache-max-entries", 1000}, {"request-max-depth", 32},
        {"request-max-filters", 256}, {"request-max-json-depth", 128},
        {"server-max-body-size", 10485760},
    };
    long long held[] = {cfg.db_pool, cfg.db_pool_acquisition_timeout, cfg.db_pool_max_lifetime,
                        cfg.db_pool_max_idletime, cfg.db_replica_max_lag,
                        cfg.jwt_cache_max_entries, cfg.limits.max_depth,
                        cfg.limits.max_filters, cfg.limits.max_json_depth,
                        cfg.limits.max_body_size};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        ck_assert_int_eq(held[i], ints[i].value);
        ck_assert_int_eq(atoll(pgrest_option_find(ints[i].name)->default_value), ints[i].value);
    }
    static const struct { const char *name; bool value; } bools[] = {
        {"db-config", true}, {"db-prepared-statements", true}, {"db-aggregates-enabled", false},
        {"db-plan-enabled", false}, {"db-pool-automatic-recovery", true},
        {"jwt-secret-is-base64", false}, {"server-timing-enabled", false},
        {"url-use-legacy-target-names", true},
    };
    bool held_b[] = {cfg.db_config, cfg.db_prepared_statements, cfg.db_aggregates_enabled,
                     cfg.db_plan_enabled, cfg.db_pool_automatic_recovery,
                     cfg.jwt_secret_is_base64, cfg.server_timing_enabled,
                     cfg.url_use_legacy_target_names};
    for (size_t i = 0; i < sizeof bools / sizeof bools[0]; i++) {
        ck_assert_int_eq(held_b[i], bools[i].value);
        ck_assert_str_eq(pgrest_option_find(bools[i].name)->default_value,
                         bools[i].value ? "true" : "false");
    }
}
END_TEST

/* The helpers for hosts that read PostgREST's sources themselves. */
static void expect_check(const char *key, const char *value, int rc, const char *text)
{
    char *dump = NULL, *message = NULL;
    int legacy = -1;
    ck_assert_int_eq(pgrest_option_check(key, value, &dump, &legacy, &message), rc);
    ck_assert_str_eq(rc == PGREST_OK ? dump : message, text);
    free(dump);
    free(message);
}

START_TEST(host_helpers_read_as_postgrest_does)
{
    long long n = 0;
    int b = -1;
    ck_assert(pgrest_config_read_int(" (0x10) ", &n) && n == 16);
    ck_assert(!pgrest_config_read_int("ten", &n));
    ck_assert(pgrest_config_read_bool("T-R-U-E", &b) && b == 1);
    ck_assert(pgrest_config_read_bool("0", &b) && b == 0);
    ck_assert(!pgrest_config_read_bool("maybe", &b));
    char *shown = pgrest_config_show("a\"b\n");
    ck_assert_str_eq(shown, "\"a\\\"b\\n\"");
    free(shown);
    expect_check("jwt-aud", "http://example.com", PGREST_OK, "http://example.com");
    expect_check("jwt-aud", "a:b c", PGREST_ERR_CONFIG, "jwt-aud should be a string or a valid URI");
    expect_check("openapi-server-proxy-uri", "ftp://x", PGREST_ERR_CONFIG,
                 "Malformed proxy uri, a correct example: https://example.com:8443/basePath");
    expect_check("jwt-role-claim-key", "$.a[0]", PGREST_OK, "$$.a[0]");
    expect_check("jwt-role-claim-key", ".role", PGREST_OK, ".\"role\"");
    char *dump = NULL, *message = NULL;
    ck_assert_int_eq(pgrest_jwt_secret_check("short", 0, &dump, &message), PGREST_ERR_CONFIG);
    ck_assert_str_eq(message, "user error (The JWT secret must be at least 32 characters long.)");
    free(message);
    ck_assert_int_eq(pgrest_jwt_secret_check("not base64!", 1, &dump, &message),
                     PGREST_ERR_CONFIG);
    ck_assert_str_eq(message, "user error (invalid base64 encoding of the JWT secret)");
    free(message);
    /* 33 bytes, '.' read as padding, dumped re-encoded */
    ck_assert_int_eq(pgrest_jwt_secret_check("YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXphYmNkZWZn", 1,
                                             &dump, NULL), PGREST_OK);
    ck_assert_str_eq(dump, "YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXphYmNkZWZn");
    free(dump);
}
END_TEST

START_TEST(invalid_values_keep_the_configuration)
{
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "openapi-mode", "disabled", &err), PGREST_OK);
    expect_refused("openapi-mode", "off", "Invalid openapi-mode. Check your configuration.");
    ck_assert_str_eq(pgrest_ctx_get(ctx, "openapi-mode"), "disabled");
    ck_assert_int_eq(pgrest_ctx_set(ctx, "openapi-version", "3.1", &err), PGREST_OK);
    expect_refused("openapi-version", "3.0",
                   "Invalid openapi-version: 2.0 or 3.1. Check your configuration.");
    ck_assert_str_eq(pgrest_ctx_get(ctx, "openapi-version"), "3.1");
    expect_refused("client-error-verbosity", "loud",
                   "Invalid client-error-verbosity. Check your configuration.");
    expect_refused("db-tx-end", "abort",
                   "Invalid transaction termination. Check your configuration.");
    expect_refused("log-level", "verbose", "Invalid logging level. Check your configuration.");
    expect_refused("db-schemas", "api, pg_catalog",
                   "db-schemas does not allow schema: 'pg_catalog'");
    expect_refused("db-schema", "information_schema",
                   "db-schemas does not allow schema: 'information_schema'");
    expect_refused("jwt-aud", "http://bad host", "jwt-aud should be a string or a valid URI");
    ck_assert_int_eq(pgrest_ctx_set(ctx, "jwt-aud", "urn:example:aud", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "jwt-aud", "plain audience", &err), PGREST_OK);
    expect_refused("db-max-rows", "ten", "Invalid db-max-rows: ten");
    expect_refused("db-pool", "0", "Invalid db-pool: 0");
    /* Config.hs parseRoleClaimKey: neither JSONPath nor the deprecated
     * syntax; `fail $ show e` of DeprecatedJSPath's Parsec error */
    expect_refused("jwt-role-claim-key", ".a[",
                   "\"\\\"failed to parse role-claim-key value (.a[)\\\" (line 1, column 4):"
                   "\\nunexpected end of input\\nexpecting \\\"?(\\\" or digit\"");
    expect_refused("jwt-role-claim-key", "test",
                   "\"\\\"failed to parse role-claim-key value (test)\\\" (line 1, column 1):"
                   "\\nunexpected \\\"t\\\"\\nexpecting \\\".\\\", \\\"[?(\\\" or \\\"[\\\"\"");
    expect_refused("openapi-server-proxy-uri", "ftp://example.com",
                   "Malformed proxy uri, a correct example: https://example.com:8443/basePath");
}
END_TEST

/* Config.hs optString: an empty value is no value, the default holds. */
START_TEST(empty_values_mean_the_default)
{
    pgrest_error err = {0};
    static const char *const keys[] = {"openapi-mode", "client-error-verbosity", "db-tx-end",
                                       "log-level", "db-schemas", "jwt-role-claim-key",
                                       "db-pool", "db-prepared-statements", "db-uri"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        ck_assert_msg(pgrest_ctx_set(ctx, keys[i], "", &err) == PGREST_OK, "%s", keys[i]);
    pgrest_arena *a = pgrest_arena_new(0);
    const pgr_config *cfg = pgr_cfg(ctx, a);
    ck_assert_int_eq(cfg->openapi_mode, PGR_OPENAPI_FOLLOW_PRIVILEGES);
    ck_assert_int_eq(cfg->db_tx_end, PGR_TX_COMMIT);
    ck_assert_str_eq(cfg->db_schemas[0], "public");
    ck_assert_str_eq(cfg->jwt_role_claim_key, ".role");
    ck_assert_int_eq(cfg->db_pool, 10);
    ck_assert(cfg->db_prepared_statements);
    ck_assert_str_eq(cfg->db_uri, "postgresql://");
    pgrest_arena_free(a);
    expect_refused("no-such-option", "", "Unknown configuration option: no-such-option");
}
END_TEST

START_TEST(jwt_secret_checked_as_postgrest_parses_it)
{
    expect_refused("jwt-secret", "tooshort",
                   "The JWT secret must be at least 32 characters long.");
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "jwt-secret", SECRET, &err), PGREST_OK);
    /* a JWK or a JWK Set is not measured */
    ck_assert_int_eq(pgrest_ctx_set(ctx, "jwt-secret",
                                    "{\"kty\":\"oct\",\"k\":\"c2VjcmV0\"}", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "jwt-secret", "{\"keys\":[]}", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "jwt-secret", SECRET, &err), PGREST_OK);
    /* the check is on the configuration as a whole: decoded, 24 bytes */
    expect_refused("jwt-secret-is-base64", "true",
                   "The JWT secret must be at least 32 characters long.");
    ck_assert_str_eq(pgrest_ctx_get(ctx, "jwt-secret"), SECRET);
    ck_assert_ptr_null(pgrest_ctx_get(ctx, "jwt-secret-is-base64"));
}
END_TEST

START_TEST(a_request_keeps_its_snapshot)
{
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-max-rows", "5", &err), PGREST_OK);
    const char *five = pgrest_ctx_get(ctx, "db-max-rows");
    pgrest_arena *request = pgrest_arena_new(0);
    const pgr_config *cfg = pgr_cfg(ctx, request);
    ck_assert_int_eq(cfg->db_max_rows, 5);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-max-rows", "7", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-schemas", "a, b", &err), PGREST_OK);
    /* the request in flight: same snapshot, both fields as they were */
    ck_assert_ptr_eq(pgr_cfg(ctx, request), cfg);
    ck_assert_int_eq(cfg->db_max_rows, 5);
    ck_assert_int_eq((int)cfg->n_db_schemas, 1);
    ck_assert_str_eq(cfg->db_schemas[0], "public");
    /* the next request sees the new one, whole */
    pgrest_arena *next = pgrest_arena_new(0);
    const pgr_config *now = pgr_cfg(ctx, next);
    ck_assert_int_eq(now->db_max_rows, 7);
    ck_assert_int_eq((int)now->n_db_schemas, 2);
    ck_assert_str_eq(now->db_schemas[1], "b");
    pgrest_arena_free(next);
    pgrest_arena_free(request);
    /* strings from pgrest_ctx_get outlive the snapshots they came from */
    ck_assert_str_eq(five, "5");
    ck_assert_str_eq(pgrest_ctx_get(ctx, "db-max-rows"), "7");
}
END_TEST

/* A JWT cache entry remembers the key-set generation of jwt-jwks-uri's
 * fetcher; another URL starts generations anew, so it gets a new cache,
 * while its timings leave the cache (and the keys) alone. */
START_TEST(jwt_cache_follows_the_jwks_uri)
{
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "jwt-jwks-uri", "http://127.0.0.1:1/a", &err), PGREST_OK);
    pgr_conf *a = pgr_ctx_conf(ctx);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "jwt-jwks-timeout", "5", &err), PGREST_OK);
    pgr_conf *b = pgr_ctx_conf(ctx);
    ck_assert_ptr_eq(a->cfg.jwt_cache, b->cfg.jwt_cache);
    ck_assert_int_eq(b->cfg.jwt_jwks_timeout, 5);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "jwt-jwks-uri", "http://127.0.0.1:1/b", &err), PGREST_OK);
    pgr_conf *c = pgr_ctx_conf(ctx);
    ck_assert_ptr_ne(c->cfg.jwt_cache, b->cfg.jwt_cache);
    ck_assert_int_ne(pgrest_ctx_set(ctx, "jwt-jwks-uri", "http://idp.example/jwks", &err), PGREST_OK);
    ck_assert_str_eq(err.message, "jwt-jwks-uri must be https (http only to localhost)");
    pgr_conf_release(a);
    pgr_conf_release(b);
    pgr_conf_release(c);
}
END_TEST

START_TEST(jwt_cache_follows_the_jwt_settings)
{
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "jwt-secret", SECRET, &err), PGREST_OK);
    pgr_conf *a = pgr_ctx_conf(ctx);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-max-rows", "3", &err), PGREST_OK);
    pgr_conf *b = pgr_ctx_conf(ctx);
    ck_assert_ptr_nonnull(a->cfg.jwt_cache);
    ck_assert_ptr_eq(a->cfg.jwt_cache, b->cfg.jwt_cache);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-anon-role", "anon", &err), PGREST_OK);
    pgr_conf *c = pgr_ctx_conf(ctx);
    ck_assert_ptr_ne(c->cfg.jwt_cache, b->cfg.jwt_cache);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "jwt-cache-max-entries", "0", &err), PGREST_OK);
    pgr_conf *d = pgr_ctx_conf(ctx);
    ck_assert_ptr_null(d->cfg.jwt_cache);
    pgr_conf_release(a);
    pgr_conf_release(b);
    pgr_conf_release(c);
    pgr_conf_release(d);
}
END_TEST

START_TEST(reload_replaces_the_options_as_a_whole)
{
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-uri", "postgresql://first/db", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-max-rows", "5", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "server-timing-enabled", "true", &err), PGREST_OK);
    const char *keys[] = {"db-config", "db-uri", "db-schema", "max-rows", "log-level"};
    const char *values[] = {"false", "postgresql://second/db", "api", "9", "info"};
    ck_assert_int_eq(pgrest_ctx_reload_config(ctx, keys, values, 5, &err), PGREST_OK);
    ck_assert_int_eq(seen.n, 1);
    ck_assert_int_eq(seen.kind[0], PGREST_EVENT_CONFIG_RELOADED);
    ck_assert_str_eq(seen.message[0], "Config reloaded");
    ck_assert_str_eq(pgrest_ctx_get(ctx, "db-max-rows"), "9");
    ck_assert_str_eq(pgrest_ctx_get(ctx, "db-schemas"), "api");
    ck_assert_str_eq(pgrest_ctx_get(ctx, "log-level"), "info");
    /* no longer given: back to the default */
    ck_assert_ptr_null(pgrest_ctx_get(ctx, "server-timing-enabled"));
    /* a running context keeps its database */
    ck_assert_str_eq(pgrest_ctx_get(ctx, "db-uri"), "postgresql://first/db");
    /* keys == NULL: the options set before stay */
    ck_assert_int_eq(pgrest_ctx_reload_config(ctx, NULL, NULL, 0, &err), PGREST_OK);
    ck_assert_str_eq(pgrest_ctx_get(ctx, "db-max-rows"), "9");
    ck_assert_int_eq(seen.n, 2);
}
END_TEST

/* db-channel-uri (pgrest's own): the listener's connection, db-uri when
 * unset or empty (optString); a reload keeps it, as it keeps db-uri. */
START_TEST(db_channel_uri_defaults_to_db_uri_and_survives_reloads)
{
    pgrest_error err = {0};
    ck_assert(pgr_config_key_known("db-channel-uri"));
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-uri", "postgresql://pooler/db", &err), PGREST_OK);
    pgr_conf *c = pgr_ctx_conf(ctx);
    ck_assert_ptr_null(c->cfg.db_channel_uri);
    ck_assert_str_eq(pgr_config_channel_uri(&c->cfg), "postgresql://pooler/db");
    pgr_conf_release(c);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-channel-uri", "", &err), PGREST_OK);
    c = pgr_ctx_conf(ctx);
    ck_assert_str_eq(pgr_config_channel_uri(&c->cfg), "postgresql://pooler/db");
    pgr_conf_release(c);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-channel-uri", "postgresql://direct/db", &err),
                     PGREST_OK);
    ck_assert_str_eq(pgrest_ctx_get(ctx, "db-channel-uri"), "postgresql://direct/db");
    c = pgr_ctx_conf(ctx);
    ck_assert_str_eq(pgr_config_channel_uri(&c->cfg), "postgresql://direct/db");
    ck_assert_str_eq(c->cfg.db_uri, "postgresql://pooler/db");
    pgr_conf_release(c);
    const char *keys[] = {"db-config", "db-channel-uri"};
    const char *values[] = {"false", "postgresql://elsewhere/db"};
    ck_assert_int_eq(pgrest_ctx_reload_config(ctx, keys, values, 2, &err), PGREST_OK);
    c = pgr_ctx_conf(ctx);
    ck_assert_str_eq(pgr_config_channel_uri(&c->cfg), "postgresql://direct/db");
    pgr_conf_release(c);
}
END_TEST

START_TEST(invalid_reload_keeps_the_previous_configuration)
{
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "jwt-secret", SECRET, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-max-rows", "5", &err), PGREST_OK);
    pgr_conf *before = pgr_ctx_conf(ctx);
    const char *keys[] = {"db-config", "db-max-rows", "jwt-secret"};
    const char *values[] = {"false", "6", "short"};
    ck_assert_int_eq(pgrest_ctx_reload_config(ctx, keys, values, 3, &err), PGREST_ERR_CONFIG);
    ck_assert_str_eq(err.message, "The JWT secret must be at least 32 characters long.");
    ck_assert_int_eq(seen.n, 1);
    ck_assert_int_eq(seen.kind[0], PGREST_EVENT_CONFIG_INVALID);
    ck_assert_str_eq(seen.message[0], "Failed reloading config: user error "
                                      "(The JWT secret must be at least 32 characters long.)");
    pgr_conf *after = pgr_ctx_conf(ctx);
    ck_assert_ptr_eq(before, after);
    ck_assert_str_eq(pgrest_ctx_get(ctx, "db-max-rows"), "5");
    ck_assert_str_eq(pgrest_ctx_get(ctx, "jwt-secret"), SECRET);
    pgr_conf_release(before);
    pgr_conf_release(after);
    /* an unknown key in the reloaded set is invalid too */
    const char *bad_keys[] = {"db-config", "db-schmeas"};
    const char *bad_values[] = {"false", "api"};
    ck_assert_int_eq(pgrest_ctx_reload_config(ctx, bad_keys, bad_values, 2, &err),
                     PGREST_ERR_CONFIG);
    ck_assert_str_eq(seen.message[1],
                     "Failed reloading config: Error in config "
                     "Unknown configuration option: db-schmeas");
    ck_assert_str_eq(pgrest_ctx_get(ctx, "db-max-rows"), "5");
    /* bad arguments are no reload at all */
    ck_assert_int_ne(pgrest_ctx_reload_config(ctx, NULL, NULL, 2, &err), PGREST_OK);
    ck_assert_int_eq(seen.n, 2);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("config");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, unknown_keys_fail_as_documented);
    tcase_add_test(tc, the_option_table_is_consistent);
    tcase_add_test(tc, host_helpers_read_as_postgrest_does);
    tcase_add_test(tc, the_table_defaults_are_the_configuration_defaults);
    tcase_add_test(tc, invalid_values_keep_the_configuration);
    tcase_add_test(tc, empty_values_mean_the_default);
    tcase_add_test(tc, jwt_secret_checked_as_postgrest_parses_it);
    tcase_add_test(tc, a_request_keeps_its_snapshot);
    tcase_add_test(tc, jwt_cache_follows_the_jwt_settings);
    tcase_add_test(tc, jwt_cache_follows_the_jwks_uri);
    tcase_add_test(tc, reload_replaces_the_options_as_a_whole);
    tcase_add_test(tc, invalid_reload_keeps_the_previous_configuration);
    tcase_add_test(tc, db_channel_uri_defaults_to_db_uri_and_survives_reloads);
    suite_add_tcase(s, tc);
    return check_run(s);
}
