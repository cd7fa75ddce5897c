#include "config_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The file and the environment into s (a variable replaces the file's
 * value of the option it sets). */
static bool read_raw(const char *path, char **environ_, pgrest_config_sources *s, char *err,
                     size_t errlen)
{
    char *message = NULL;
    int rc = path != NULL ? pgrest_config_sources_add_file(s, path, &message) : PGREST_OK;
    if (rc == PGREST_OK)
        rc = pgrest_config_sources_add_environment(s, environ_);
    snprintf(err, errlen, "%s",
             message != NULL ? message : "out of memory reading the configuration");
    free(message);
    return rc == PGREST_OK;
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
