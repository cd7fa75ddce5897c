/* PostgREST configuration sources: the config file (`key = "value"`
 * lines) and PGRST_* environment variables, environment winning
 * (PostgREST ref/configuration). */
#ifndef PGRS_CONFIG_FILE_H
#define PGRS_CONFIG_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "pgrest/pgrest.h"

/* Values keep how they were written (pgrest_value_kind, pgrest.h):
 * configurator's value types; PGRST_* variables give strings. */
typedef struct server_option {
    char *key;
    char *value;
    pgrest_value_kind kind;
} server_option;

typedef struct server_options {
    server_option *items;
    size_t n;
    size_t cap;
} server_options;

/* Reads path into opts; returns false with a message in errbuf. */
bool config_file_read(const char *path, server_options *opts, char *errbuf,
                      size_t errlen);
/* Parses config text (exposed for tests). */
bool config_text_parse(const char *text, server_options *opts, char *errbuf,
                       size_t errlen);
/* Adds PGRST_* variables from environ: PGRST_DB_URI -> db-uri,
 * PGRST_APP_SETTINGS_Name -> app.settings.Name (the rest kept as is, as
 * Config.hs parseAppSettings does). */
void config_read_env(server_options *opts, char **environ_);
void server_options_set(server_options *opts, const char *key, const char *value);
void server_options_set_kind(server_options *opts, const char *key, const char *value,
                             pgrest_value_kind kind);
const server_option *server_options_find(const server_options *opts, const char *key);
/* Deep copy of src appended to dst (existing keys replaced). */
void server_options_merge(server_options *dst, const server_options *src);
const char *server_options_get(const server_options *opts, const char *key);
void server_options_free(server_options *opts);

#endif
