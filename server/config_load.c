#include "config_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgrest/pgrest.h"

bool config_load_raw(const char *path, char **environ_, server_options *raw, char *err,
                     size_t errlen)
{
    char reason[512];
    if (path != NULL && !config_file_read(path, raw, reason, sizeof reason)) {
        snprintf(err, errlen, "Error in config %s", reason);
        return false;
    }
    config_read_env(raw, environ_);
    return true;
}

bool config_load_resolve(const server_options *raw, app_config *cfg, server_options *options,
                         char *err, size_t errlen)
{
    if (!app_config_read(raw, cfg, err, errlen)) {
        app_config_free(cfg);
        return false;
    }
    app_config_to_options(cfg, raw, options);
    return true;
}

bool config_load(const char *path, char **environ_, server_options *options, app_config *cfg,
                 char *err, size_t errlen)
{
    server_options raw = {0};
    app_config local;
    app_config *c = cfg ? cfg : &local;
    bool ok = config_load_raw(path, environ_, &raw, err, errlen) &&
              config_load_resolve(&raw, c, options, err, errlen);
    if (ok && cfg == NULL)
        app_config_free(&local);
    server_options_free(&raw);
    return ok;
}

void config_fatal(const char *prog, const char *message)
{
    char *shown = pgrest_config_show(message);
    fprintf(stderr, "%s: FatalError {fatalErrorMessage = %s}\n", prog, shown ? shown : "\"\"");
    free(shown);
    fflush(stderr);
}
