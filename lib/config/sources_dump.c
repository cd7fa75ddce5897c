/* --dump-config: PostgREST's Config.hs toText. One "key = value" line per
 * option, sorted; strings quoted with " escaped as \", booleans in lower
 * case, numbers bare, an unset db-max-rows / admin-server-port as "". How
 * each option is written comes from the option table (its dump form). */
#include "config/sources_dump.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dump_lines {
    char **items;
    size_t n, cap;
    bool failed;
} dump_lines;

static void add_line(dump_lines *d, char *line)
{
    if (line == NULL || d->failed) {
        d->failed = true;
        free(line);
        return;
    }
    if (d->n == d->cap) {
        size_t ncap = d->cap ? d->cap * 2 : 64;
        char **n = realloc(d->items, ncap * sizeof *n);
        if (n == NULL) {
            d->failed = true;
            free(line);
            return;
        }
        d->items = n;
        d->cap = ncap;
    }
    d->items[d->n++] = line;
}

/* q: quoted, `"` replaced by `\"` (nothing else is escaped). */
static void quoted(dump_lines *d, const char *key, const char *v)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL) {
        add_line(d, NULL);
        return;
    }
    fprintf(f, "%s = \"", key);
    for (const char *p = v ? v : ""; *p; p++) {
        if (*p == '"')
            fputc('\\', f);
        fputc(*p, f);
    }
    fputc('"', f);
    fclose(f);
    add_line(d, buf);
}

/* dumpQi . toQi: the text splits at its first '.' into schema and name;
 * an empty name after the '.' leaves the schema as the name, an empty
 * schema is not shown ("a." and ".a" both dump as "a"). */
static void qualified(dump_lines *d, const char *key, const char *v)
{
    const char *dot = v ? strchr(v, '.') : NULL;
    if (dot == NULL || (dot != v && dot[1] != '\0')) {
        quoted(d, key, v);
        return;
    }
    char *name = dot[1] == '\0' ? strndup(v, (size_t)(dot - v)) : strdup(dot + 1);
    if (name == NULL) {
        add_line(d, NULL);
        return;
    }
    quoted(d, key, name);
    free(name);
}

static void bare(dump_lines *d, const char *key, const char *v)
{
    char *line = NULL;
    add_line(d, asprintf(&line, "%s = %s", key, v) < 0 ? NULL : line);
}

/* One option's line, as the library's option table says it is dumped;
 * v is the value as text (pgr_app_config_to_options), NULL when unset. */
static void option_line(dump_lines *d, const pgrest_option_info *o, const char *v)
{
    switch (o->dump) {
    case PGREST_DUMP_TEXT:
        quoted(d, o->name, v);
        break;
    case PGREST_DUMP_NAME:
        qualified(d, o->name, v);
        break;
    case PGREST_DUMP_VALUE:
        bare(d, o->name, v != NULL && v[0] != '\0' ? v : "\"\"");
        break;
    case PGREST_DUMP_IF_SET:
        if (v != NULL)
            quoted(d, o->name, v);
        break;
    case PGREST_DUMP_NONE:
        break;
    }
}

/* The value a line shows: the option's, but the role claim key and the
 * secret as they read back (dumpJSPath, the base64 secret re-encoded). */
static const char *dumped_value(const pgr_app_config *c, const pgr_src_list *values,
                                const char *name)
{
    if (strcmp(name, "jwt-role-claim-key") == 0)
        return c->jwt_role_claim_key_dump;
    if (strcmp(name, "jwt-secret") == 0)
        return c->jwt_secret_dump;
    return pgr_src_list_get(values, name);
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted lines, each ending in a newline, as one string. */
static char *joined(const dump_lines *d)
{
    size_t len = 1;
    for (size_t i = 0; i < d->n; i++)
        len += strlen(d->items[i]) + 1;
    char *text = malloc(len), *p = text;
    if (text == NULL)
        return NULL;
    for (size_t i = 0; i < d->n; i++) {
        size_t n = strlen(d->items[i]);
        memcpy(p, d->items[i], n);
        p[n] = '\n';
        p += n + 1;
    }
    *p = '\0';
    return text;
}

char *pgr_app_config_dump(const pgr_app_config *cfg)
{
    dump_lines d = {0};
    pgr_src_list none = {0}, values = {0};
    if (!pgr_app_config_to_options(cfg, &none, &values))
        d.failed = true;
    const pgrest_option_info *o;
    for (size_t i = 0; !d.failed && (o = pgrest_option_at(i)) != NULL; i++)
        option_line(&d, o, dumped_value(cfg, &values, o->name));
    pgr_src_list_free(&values);
    for (size_t i = 0; i < cfg->app_settings.n; i++)
        quoted(&d, cfg->app_settings.items[i].key, cfg->app_settings.items[i].value);
    char *text = NULL;
    if (!d.failed) {
        /* toText: `unlines $ sort` of the whole lines */
        qsort(d.items, d.n, sizeof *d.items, by_text);
        text = joined(&d);
    }
    for (size_t i = 0; i < d.n; i++)
        free(d.items[i]);
    free(d.items);
    return text;
}
