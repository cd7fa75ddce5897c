/* The options (PostgREST Config.hs): defaults, names and aliases, and
 * parsing one value into a pgr_config (engine/stage_view.h). */
#ifndef PGR_CONFIG_H
#define PGR_CONFIG_H

#include <stdbool.h>

#include "config/config_types.h"
#include "pgrest/pgrest.h"

/* Applies defaults to cfg. */
void pgr_config_defaults(pgr_config *cfg);
/* Sets one option; strings copied into arena. PGREST_ERR_CONFIG for an
 * unknown key or an invalid value, with PostgREST's message. */
int pgr_config_set(pgr_config *cfg, pgrest_arena *arena, const char *key,
                   const char *value, pgrest_error *err);
/* The option's own name for an alias ("db-schema" -> "db-schemas"). */
const char *pgr_config_canonical_key(const char *key);
bool pgr_config_key_known(const char *key);
/* Where the listener connects: db-channel-uri, else db-uri. */
const char *pgr_config_channel_uri(const pgr_config *cfg);

#endif
