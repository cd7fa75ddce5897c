/* --dump-config: PostgREST's Config.hs toText. One "key = value" line per
 * option, sorted; strings quoted with " escaped as \", booleans in lower
 * case, numbers bare, an unset db-max-rows / admin-server-port as "". */
#ifndef PGRS_CONFIG_DUMP_H
#define PGRS_CONFIG_DUMP_H

#include <stdio.h>

#include "app_config.h"

/* Writes the dump of cfg to out. Returns 0, or -1 on OOM. */
int config_dump(FILE *out, const app_config *cfg);

#endif
