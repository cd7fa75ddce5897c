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
/* What the reader of PostgREST's sources (sources_read.c) needs beyond
 * an option's public entry: whether its alias wins over its name when
 * both are set (Config.hs optWithAlias order), whether "" is a value
 * rather than "unset", and PostgREST's refusal of a choice that is none
 * of the option's (its own reader, run on a scratch configuration). */
bool pgr_option_alias_first(const pgrest_option_info *o);
bool pgr_option_takes_empty(const pgrest_option_info *o);
int pgr_option_check_choice(const pgrest_option_info *o, const char *value, pgrest_arena *a,
                            pgrest_error *err);
/* Where the listener connects: db-channel-uri, else db-uri. */
const char *pgr_config_channel_uri(const pgr_config *cfg);

#endif
