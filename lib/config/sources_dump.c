/* --dump-config: PostgREST's Config.hs toText. One "key = value" line per
 * option, sorted; strings quoted with " escaped as \", booleans in lower
 * case, numbers bare, an unset db-max-rows / admin-server-port as "". How
 * each option is written comes from the option table (its dump form). */
#include "config/sources_dump.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

/* The lines, built in one arena, sorted at the end. */
typedef struct dump_lines {
    pgrest_arena *a;
    const char **items;
    size_t n, cap;
    bool failed;
} dump_lines;

static void start_line(dump_lines *d, pgr_sb *sb, const char *key)
{
    pgr_sb_init(sb, d->a, 64);
    pgr_sb_puts(sb, key);
    pgr_sb_puts(sb, " = ");
}

static void add_line(dump_lines *d, pgr_sb *sb)
{
    const char *line = pgr_sb_finish(sb);
    if (line != NULL && d->n == d->cap) {
        size_t ncap = d->cap ? d->cap * 2 : 64;
        const char **grown = PGR_NEW_ARRAY(d->a, const char *, ncap);
        if (grown != NULL && d->n > 0)
            memcpy(grown, d->items, d->n * sizeof *grown);
        d->items = grown;
        d->cap = grown != NULL ? ncap : 0;
    }
    if (line == NULL || d->items == NULL) {
        d->failed = true;
        return;
    }
    d->items[d->n++] = line;
}

/* q: quoted, `"` replaced by `\"` (nothing else is escaped). */
static void quoted_n(dump_lines *d, const char *key, const char *v, size_t n)
{
    pgr_sb sb;
    start_line(d, &sb, key);
    pgr_sb_putc(&sb, '"');
    for (size_t i = 0; i < n; i++) {
        if (v[i] == '"')
            pgr_sb_putc(&sb, '\\');
        pgr_sb_putc(&sb, v[i]);
    }
    pgr_sb_putc(&sb, '"');
    add_line(d, &sb);
}

static void quoted(dump_lines *d, const char *key, const char *v)
{
    quoted_n(d, key, v ? v : "", v ? strlen(v) : 0);
}

/* dumpQi . toQi: the text splits at its first '.' into schema and name;
 * an empty name after the '.' leaves the schema as the name, an empty
 * schema is not shown ("a." and ".a" both dump as "a"). */
static void qualified(dump_lines *d, const char *key, const char *v)
{
    const char *dot = v ? strchr(v, '.') : NULL;
    if (dot == NULL || (dot != v && dot[1] != '\0'))
        quoted(d, key, v);
    else if (dot[1] == '\0')
        quoted_n(d, key, v, (size_t)(dot - v));
    else
        quoted(d, key, dot + 1);
}

static void bare(dump_lines *d, const char *key, const char *v)
{
    pgr_sb sb;
    start_line(d, &sb, key);
    pgr_sb_puts(&sb, v);
    add_line(d, &sb);
}

/* One option's line, as the library's option table says it is dumped;
 * v is the value as text, NULL when unset. */
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
    case PGREST_DUMP_VALUE_IF_SET:
        if (v != NULL)
            bare(d, o->name, v);
        break;
    case PGREST_DUMP_NONE:
        break;
    }
}

/* The value a line shows: the option's, or the form --dump-config gives
 * it (dumpJSPath, the base64 secret re-encoded). */
static const char *dumped_value(const pgr_app_config *c, const char *name)
{
    const char *dumped = pgr_src_list_get(&c->dumped, name);
    return dumped != NULL ? dumped : pgr_src_list_get(&c->values, name);
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted lines, each ending in a newline, as one malloc'd string. */
static char *joined(const dump_lines *d)
{
    pgr_sb sb;
    pgr_sb_init(&sb, d->a, 4096);
    for (size_t i = 0; i < d->n; i++) {
        pgr_sb_puts(&sb, d->items[i]);
        pgr_sb_putc(&sb, '\n');
    }
    const char *text = pgr_sb_finish(&sb);
    return text != NULL ? strdup(text) : NULL;
}

char *pgr_app_config_dump(const pgr_app_config *cfg)
{
    dump_lines d = {.a = pgrest_arena_new(0)};
    if (d.a == NULL)
        return NULL;
    const pgrest_option_info *o;
    for (size_t i = 0; !d.failed && (o = pgrest_option_at(i)) != NULL; i++)
        option_line(&d, o, dumped_value(cfg, o->name));
    for (size_t i = 0; i < cfg->app_settings.n; i++)
        quoted(&d, cfg->app_settings.items[i].key, cfg->app_settings.items[i].value);
    char *text = NULL;
    if (!d.failed) {
        /* toText: `unlines $ sort` of the whole lines */
        qsort(d.items, d.n, sizeof *d.items, by_text);
        text = joined(&d);
    }
    pgrest_arena_free(d.a);
    return text;
}
