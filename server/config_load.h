/* The server's configuration sources: the config file and PGRST_*
 * variables (config_file.h) are added to a pgrest_config_sources, which
 * the library resolves as PostgREST's readAppConfig does. Used at
 * startup, by --dump-config and on reload. */
#ifndef PGRS_CONFIG_LOAD_H
#define PGRS_CONFIG_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "config_file.h"
#include "pgrest/pgrest.h"

/* Reads path (NULL: none) and the environment, the environment winning,
 * and resolves them: the caller frees the result with
 * pgrest_config_sources_free. NULL with PostgREST's message in err
 * ("Error in config <reason>", ...). */
pgrest_config_sources *config_load(const char *path, char **environ_, char *err,
                                   size_t errlen);

/* Adds every entry of raw to s, in order; false on OOM. */
bool config_load_add(pgrest_config_sources *s, const server_options *raw);

/* How PostgREST dies on an invalid configuration at startup: Protolude's
 * `panic` reaches GHC's top-level handler, which prints
 *   <prog>: FatalError {fatalErrorMessage = "<message, Haskell-escaped>"}
 * on stderr; the exit status is 1. */
void config_fatal(const char *prog, const char *message);

#endif
