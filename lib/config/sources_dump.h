/* PostgREST's --dump-config text of a resolved configuration
 * (sources_dump.c). */
#ifndef PGR_SOURCES_DUMP_H
#define PGR_SOURCES_DUMP_H

#include "config/sources_read.h"

/* The --dump-config text of cfg, malloc'd; NULL on OOM. */
char *pgr_app_config_dump(const pgr_app_config *cfg);

#endif
