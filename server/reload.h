/* Configuration reloading (PostgREST ref/configuration "Configuration
 * Reloading"): SIGUSR2 or NOTIFY pgrst, 'reload config' re-read the config
 * file and the environment; the library re-reads the in-database settings
 * and swaps the whole configuration in, or keeps the previous one when a
 * value is invalid ("Failed reloading config: ..."). Options only read at
 * start (sockets, pool sizing, db-uri) keep their running value. */
#ifndef PGRS_RELOAD_H
#define PGRS_RELOAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "pgrest/pgrest.h"

typedef struct server_config {
    pgrest_ctx *ctx;
    const char *path;          /* config file, NULL when none */
    char **environ_;
    pgrest_config_sources *sources; /* the configuration currently applied */
    pthread_mutex_t lock;      /* SIGUSR2 and NOTIFY may race */
} server_config;

/* Reads the file (if any) and the environment into cfg->sources, resolved;
 * false with PostgREST's message in errbuf. */
bool server_config_load(server_config *cfg, char *errbuf, size_t errlen);
/* Re-reads and applies the configuration; keeps the old one when the
 * file cannot be read or a value is invalid. Usable as the listener's
 * on_reload_config. */
void server_config_reload(void *cfg);
void server_config_free(server_config *cfg);

#endif
