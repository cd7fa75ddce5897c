/* The configuration pipeline of PostgREST's readAppConfig: the config file
 * and PGRST_* variables (plus in-database settings, given as strings) are
 * resolved into an app_config and the normalized options the library and
 * the server apply. Used at startup, by --dump-config and on reload. */
#ifndef PGRS_CONFIG_LOAD_H
#define PGRS_CONFIG_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "app_config.h"
#include "config_file.h"

/* Reads path (NULL: none) and the environment into raw. false with
 * "Error in config <reason>" in err. */
bool config_load_raw(const char *path, char **environ_, server_options *raw, char *err,
                     size_t errlen);

/* raw -> cfg (caller frees with app_config_free) and options (added to). */
bool config_load_resolve(const server_options *raw, app_config *cfg, server_options *options,
                         char *err, size_t errlen);

/* Both steps; cfg may be NULL when only the options are wanted. */
bool config_load(const char *path, char **environ_, server_options *options, app_config *cfg,
                 char *err, size_t errlen);

/* How PostgREST dies on an invalid configuration at startup: Protolude's
 * `panic` reaches GHC's top-level handler, which prints
 *   <prog>: FatalError {fatalErrorMessage = "<message, Haskell-escaped>"}
 * on stderr; the exit status is 1. */
void config_fatal(const char *prog, const char *message);

#endif
