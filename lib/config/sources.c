/* The public pgrest_config_sources API (pgrest.h): the values a host read
 * from PostgREST's sources (a config file, PGRST_* variables, in-database
 * settings), resolved by sources_read.c, and the options it hands to the
 * context. The reading itself lives in the library so that every host
 * (pgrest-server, a binding) reads a configuration as PostgREST does. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/source_list.h"
#include "config/sources_dump.h"
#include "config/sources_read.h"

/* The values as added, and their resolution (PostgREST's AppConfig and
 * the options it gives the library), current until the next add. */
struct pgrest_config_sources {
    pgr_src_list raw;          /* as added */
    bool resolved;             /* conf and options are current */
    pgr_app_config conf;
    pgr_src_list options;      /* pgr_app_config_to_options(conf, raw) */
};

pgrest_config_sources *pgrest_config_sources_new(void)
{
    return calloc(1, sizeof(pgrest_config_sources));
}

static void forget_resolution(pgrest_config_sources *s)
{
    if (s->resolved)
        pgr_app_config_free(&s->conf);
    pgr_src_list_free(&s->options);
    s->resolved = false;
}

void pgrest_config_sources_free(pgrest_config_sources *s)
{
    if (s == NULL)
        return;
    forget_resolution(s);
    pgr_src_list_free(&s->raw);
    free(s);
}

int pgrest_config_sources_add(pgrest_config_sources *s, const char *key, const char *value,
                              pgrest_value_kind kind)
{
    if (s == NULL || key == NULL || value == NULL)
        return PGREST_ERR_INTERNAL;
    if (kind != PGREST_VALUE_STRING && kind != PGREST_VALUE_NUMBER && kind != PGREST_VALUE_BOOL)
        return PGREST_ERR_INTERNAL;
    /* the resolution read the previous values: it is stale now */
    forget_resolution(s);
    /* a failed add must not poison the next ones: the list's flag is
     * per call here */
    s->raw.failed = false;
    return pgr_src_list_set(&s->raw, key, value, kind) ? PGREST_OK : PGREST_ERR_INTERNAL;
}

static int fail_with(char **message, const char *text, int rc)
{
    if (message != NULL)
        *message = strdup(text);
    return rc;
}

int pgrest_config_sources_resolve(pgrest_config_sources *s, char **message)
{
    if (message != NULL)
        *message = NULL;
    if (s == NULL)
        return PGREST_ERR_INTERNAL;
    forget_resolution(s);
    char err[2048];
    int rc = pgr_app_config_read(&s->raw, &s->conf, err, sizeof err);
    if (rc != PGREST_OK)
        return fail_with(message, err, rc);
    s->resolved = true;
    if (!pgr_app_config_to_options(&s->conf, &s->raw, &s->options)) {
        forget_resolution(s);
        return fail_with(message, "out of memory reading the configuration",
                         PGREST_ERR_INTERNAL);
    }
    return PGREST_OK;
}

const char *pgrest_config_sources_get(const pgrest_config_sources *s, const char *key)
{
    if (s == NULL || key == NULL || !s->resolved)
        return NULL;
    /* an alias names its option: the resolved list has canonical names */
    const pgrest_option_info *o = pgrest_option_find(key);
    const char *v = o != NULL ? pgr_src_list_get(&s->options, o->name) : NULL;
    return v != NULL ? v : pgr_src_list_get(&s->options, key);
}

int pgrest_config_sources_option(const pgrest_config_sources *s, size_t i, const char **key,
                                 const char **value)
{
    if (s == NULL || !s->resolved || i >= s->options.n)
        return 0;
    if (key != NULL)
        *key = s->options.items[i].key;
    if (value != NULL)
        *value = s->options.items[i].value;
    return 1;
}

char *pgrest_config_sources_dump(const pgrest_config_sources *s)
{
    return s != NULL && s->resolved ? pgr_app_config_dump(&s->conf) : NULL;
}

/* Logger.hs DeprecatedJSPathSyntaxObs: the two lines, for the key as
 * --dump-config shows it. */
int pgrest_config_role_claim_deprecation(const char *key, char **line1, char **line2)
{
    *line1 = *line2 = NULL;
    char *dump = NULL;
    int legacy = 0;
    if (key == NULL ||
        pgrest_option_check("jwt-role-claim-key", key, &dump, &legacy, NULL) != PGREST_OK)
        legacy = 0;
    const char *d = dump != NULL ? dump : "";
    int rc = 0;
    if (legacy) {
        rc = 1;
        if (asprintf(line1, "WARNING: The config `jwt-role-claim-key=%s` is using the "
                            "deprecated JSPath syntax.", d) < 0)
            *line1 = NULL;
        if (asprintf(line2, "Update `jwt-role-claim-key=%s` to the new JSONPath syntax as "
                            "support for JSPath will be removed in a future release. See the "
                            "migration guide on how to update: https://github.com/PostgREST/"
                            "postgrest/blob/main/CHANGELOG.md#migration-to-v16", d) < 0)
            *line2 = NULL;
        if (*line1 == NULL || *line2 == NULL) {
            free(*line1);
            free(*line2);
            *line1 = *line2 = NULL;
            rc = PGREST_ERR_INTERNAL;
        }
    }
    free(dump);
    return rc;
}
