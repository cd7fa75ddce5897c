/* PostgREST configuration sources: the config file (`key = "value"`
 * lines) and PGRST_* environment variables, environment winning
 * (PostgREST ref/configuration). */
#ifndef PGRS_CONFIG_FILE_H
#define PGRS_CONFIG_FILE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct server_option {
    char *key;
    char *value;
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
/* Adds PGRST_* variables from environ. */
void config_read_env(server_options *opts, char **environ_);
void server_options_set(server_options *opts, const char *key, const char *value);
const char *server_options_get(const server_options *opts, const char *key);
void server_options_free(server_options *opts);

#endif
