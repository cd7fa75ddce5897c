/* The one-shot commands of PostgREST's CLI.hs runAppCommand:
 * --dump-config and --dump-schema. Both start like a normal run (the
 * configuration is already checked) and exit after printing. */
#ifndef PGRS_COMMANDS_H
#define PGRS_COMMANDS_H

#include "reload.h"

/* Prints Config.toText of the configuration; with db-config, after
 * reading the in-database settings (an unreachable database leaves the
 * file and environment values, as PostgREST's readInDbConfig does). */
int command_dump_config(server_config *cfg, const char *prog);

/* Loads the schema cache and prints it as JSON in PostgREST's shape
 * (pgrest_ctx_schema_cache_json, as admin /schema_cache); with db-config,
 * after reading the in-database settings (an invalid one is fatal, as in
 * command_dump_config); exit 1 when it cannot be loaded. */
int command_dump_schema(server_config *cfg, const char *prog);

#endif
