#include "config_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool config_load_add(pgrest_config_sources *s, const server_options *raw)
{
    for (size_t i = 0; i < raw->n; i++)
        if (pgrest_config_sources_add(s, raw->items[i].key, raw->items[i].value,
                                      raw->items[i].kind) != PGREST_OK)
            return false;
    return true;
}

/* The file and the environment into s (config_read_env replaces the
 * file's value of a key it sets). */
static bool read_raw(const char *path, char **environ_, pgrest_config_sources *s, char *err,
                     size_t errlen)
{
    server_options raw = {0};
    char reason[512];
    if (path != NULL && !config_file_read(path, &raw, reason, sizeof reason)) {
        snprintf(err, errlen, "Error in config %s", reason);
        server_options_free(&raw);
        return false;
    }
    config_read_env(&raw, environ_);
    bool ok = config_load_add(s, &raw);
    if (!ok)
        snprintf(err, errlen, "out of memory reading the configuration");
    server_options_free(&raw);
    return ok;
}

pgrest_config_sources *config_load(const char *path, char **environ_, char *err,
                                   size_t errlen)
{
    pgrest_config_sources *s = pgrest_config_sources_new();
    if (s == NULL) {
        snprintf(err, errlen, "out of memory reading the configuration");
        return NULL;
    }
    if (!read_raw(path, environ_, s, err, errlen)) {
        pgrest_config_sources_free(s);
        return NULL;
    }
    char *message = NULL;
    if (pgrest_config_sources_resolve(s, &message) != PGREST_OK) {
        snprintf(err, errlen, "%s", message ? message : "out of memory reading the configuration");
        free(message);
        pgrest_config_sources_free(s);
        return NULL;
    }
    return s;
}

void config_fatal(const char *prog, const char *message)
{
    char *shown = pgrest_config_show(message);
    fprintf(stderr, "%s: FatalError {fatalErrorMessage = %s}\n", prog, shown ? shown : "\"\"");
    free(shown);
    fflush(stderr);
}
