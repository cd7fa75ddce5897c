/* The server's configuration sources: the config file and PGRST_*
 * variables, read and resolved by the library as PostgREST's
 * readAppConfig does (pgrest_config_sources). Used at startup, by
 * --dump-config and on reload. */
#ifndef PGRS_CONFIG_LOAD_H
#define PGRS_CONFIG_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "pgrest/pgrest.h"

/* Reads path (NULL: none) and the environment, the environment winning,
 * and resolves them: the caller frees the result with
 * pgrest_config_sources_free. NULL with PostgREST's message in err
 * ("Error in config <reason>", ...). */
pgrest_config_sources *config_load(const char *path, char **environ_, char *err,
                                   size_t errlen);

/* How PostgREST dies on an invalid configuration at startup: Protolude's
 * `panic` reaches GHC's top-level handler, which prints
 *   <prog>: FatalError {fatalErrorMessage = "<message, Haskell-escaped>"}
 * on stderr; the exit status is 1. */
void config_fatal(const char *prog, const char *message);

#endif
