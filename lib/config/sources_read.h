/* PostgREST's Config.hs parser over the values of its sources
 * (sources_read.c): the resolved AppConfig, and the options it gives the
 * library. */
#ifndef PGR_SOURCES_READ_H
#define PGR_SOURCES_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "config/source_list.h"

/* PostgREST's AppConfig: every option resolved, with PostgREST's aliases,
 * defaults, coercions and checks, as text under its own name (booleans
 * "true"/"false", numbers in decimal, socket modes in octal, lists
 * joined with ","); an option unset and without a default is absent. */
typedef struct pgr_app_config {
    pgr_src_list values;              /* PostgREST's options and db-channel-uri */
    pgr_src_list dumped;              /* --dump-config's form where it differs:
                                       * the role claim key, the secret */
    pgr_src_list app_settings;        /* app.settings.*, in source order */
    bool oom;                         /* an allocation failed while reading */
    char **owned;                     /* strings to free */
    size_t n_owned, cap_owned;
} pgr_app_config;

/* Resolves raw into cfg (Config.hs parser, then decodeLoadFiles):
 * PGREST_OK; PGREST_ERR_CONFIG with PostgREST's message in err ("Error in
 * config <reason>", "user error (<reason>)" for the JWT secret, the file
 * error for @file values); PGREST_ERR_INTERNAL on OOM. On failure cfg is
 * left empty. */
int pgr_app_config_read(const pgr_src_list *raw, pgr_app_config *cfg, char *err,
                         size_t errlen);
void pgr_app_config_free(pgr_app_config *cfg);

/* The keys the reader does not resolve itself, as given, app.settings.*,
 * and cfg->values. False on OOM. */
bool pgr_app_config_to_options(const pgr_app_config *cfg, const pgr_src_list *raw,
                               pgr_src_list *out);

#endif
