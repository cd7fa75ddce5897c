/* Two of PostgREST's configuration sources, read into a
 * pgrest_config_sources: its configuration file, in configurator's
 * syntax (`key = value` lines; "quoted strings" with \ escapes, $$ and
 * $(NAME) interpolation; unquoted numbers and booleans; # comments), and
 * its PGRST_* environment variables (Config.hs readPGRSTEnvironment). A
 * value keeps the kind it was written in (pgrest_value_kind): the reader
 * (sources_read.c) coerces by it as configurator's values are. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgrest/pgrest.h"

#include "config/source_list.h"
#include "util/read_stream.h"
#include "util/strbuf.h"

/* A parse: the values read so far (for $(name)), the first error, and
 * an arena for the text of lines and values. */
typedef struct file_parse {
    pgr_src_list values;
    pgrest_arena *arena;
    char err[512];
    int lineno;
    bool oom;
} file_parse;

static bool fail_line(file_parse *fp, const char *what)
{
    snprintf(fp->err, sizeof fp->err, "config line %d: %s", fp->lineno, what);
    return false;
}

static bool out_of_memory(file_parse *fp)
{
    fp->oom = true;
    return false;
}

static const char *skip_space(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\r')
        p++;
    return p;
}

/* $(name) at *pp (just after the '$'): an option read earlier in the
 * file, else the environment variable (configurator's interpolation,
 * which PostgREST's docs use for app.settings: "$(MYAPP_JWT_SECRET)"). */
static bool read_interpolation(file_parse *fp, const char **pp, pgr_sb *out)
{
    const char *p = *pp;
    const char *close = strchr(p + 1, ')');
    const char *quote = strchr(p + 1, '"');
    if (close == NULL || (quote != NULL && quote < close))
        return fail_line(fp, "unterminated $( interpolation");
    char name[256];
    size_t len = (size_t)(close - (p + 1));
    if (len == 0 || len >= sizeof name)
        return fail_line(fp, "invalid $() interpolation");
    memcpy(name, p + 1, len);
    name[len] = '\0';
    const char *v = pgr_src_list_get(&fp->values, name);
    if (v == NULL)
        v = getenv(name);
    if (v == NULL) {
        snprintf(fp->err, sizeof fp->err, "config line %d: no such variable \"%s\"", fp->lineno,
                 name);
        return false;
    }
    pgr_sb_puts(out, v);
    *pp = close + 1;
    return true;
}

static char escape_char(char e)
{
    switch (e) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    default: return e;
    }
}

/* A quoted value at *pp: backslash escapes \" \\ \n \t \r; "$$" is a
 * literal "$" and $(name) interpolates. */
static bool parse_quoted(file_parse *fp, const char **pp, const char **value)
{
    const char *p = *pp + 1;
    pgr_sb out;
    pgr_sb_init(&out, fp->arena, 64);
    while (*p && *p != '"') {
        char c = *p++;
        if (c == '\\' && *p)
            pgr_sb_putc(&out, escape_char(*p++));
        else if (c == '$' && *p == '$')
            pgr_sb_putc(&out, *p++);
        else if (c == '$' && *p == '(') {
            if (!read_interpolation(fp, &p, &out))
                return false;
        } else
            pgr_sb_putc(&out, c);
    }
    if (*p != '"')
        return fail_line(fp, "unterminated string");
    if ((*value = pgr_sb_finish(&out)) == NULL)
        return out_of_memory(fp);
    *pp = p + 1;
    return true;
}

/* configurator's unquoted values: on/off/true/false and numbers. Other
 * bare words are kept as strings (configurator refuses them; accepting
 * them keeps older pgrest config files working). */
static pgrest_value_kind bare_kind(const char *value, const char **normalized)
{
    *normalized = value;
    if (strcmp(value, "true") == 0 || strcmp(value, "on") == 0) {
        *normalized = "true";
        return PGREST_VALUE_BOOL;
    }
    if (strcmp(value, "false") == 0 || strcmp(value, "off") == 0) {
        *normalized = "false";
        return PGREST_VALUE_BOOL;
    }
    char *end = NULL;
    errno = 0;
    (void)strtod(value, &end);
    if (value[0] != '\0' && end != NULL && *end == '\0' && errno == 0 &&
        (isdigit((unsigned char)value[0]) || value[0] == '-' || value[0] == '+' ||
         value[0] == '.'))
        return PGREST_VALUE_NUMBER;
    return PGREST_VALUE_STRING;
}

/* The value after "key =" at p: quoted, or bare up to a comment. */
static bool parse_value(file_parse *fp, const char *p, const char **value,
                        pgrest_value_kind *kind)
{
    *kind = PGREST_VALUE_STRING;
    if (*p == '"') {
        if (!parse_quoted(fp, &p, value))
            return false;
        p = skip_space(p);
        return *p == '\0' || *p == '#' || fail_line(fp, "unexpected text after the value");
    }
    size_t n = strcspn(p, "#\r\n");
    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    const char *bare = pgr_strndup(fp->arena, p, n);
    if (bare == NULL)
        return out_of_memory(fp);
    *kind = bare_kind(bare, value);
    return true;
}

static bool parse_line(file_parse *fp, const char *line)
{
    const char *p = skip_space(line);
    if (*p == '\0' || *p == '#' || *p == '\n')
        return true;
    const char *k = p;
    while (*p && (isalnum((unsigned char)*p) || *p == '-' || *p == '_' || *p == '.'))
        p++;
    size_t klen = (size_t)(p - k);
    p = skip_space(p);
    if (klen == 0 || *p != '=')
        return fail_line(fp, "expected key = value");
    char key[256];
    if (klen >= sizeof key)
        return fail_line(fp, "key too long");
    memcpy(key, k, klen);
    key[klen] = '\0';
    const char *value;
    pgrest_value_kind kind;
    return parse_value(fp, skip_space(p + 1), &value, &kind) &&
           (pgr_src_list_set(&fp->values, key, value, kind) || out_of_memory(fp));
}

static bool parse_text(file_parse *fp, const char *text)
{
    for (const char *p = text; *p;) {
        const char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *line = pgr_strndup(fp->arena, p, n);
        if (line == NULL)
            return out_of_memory(fp);
        fp->lineno++;
        if (!parse_line(fp, line))
            return false;
        p = end ? end + 1 : p + n;
    }
    return true;
}

static int report(char **message, int rc, const char *reason)
{
    if (message != NULL && rc == PGREST_ERR_CONFIG &&
        asprintf(message, "Error in config %s", reason) < 0) {
        *message = NULL;
        rc = PGREST_ERR_INTERNAL;
    }
    return rc;
}

/* The values parsed, added in the file's order; nothing on a failure. */
static int add_parsed(pgrest_config_sources *s, file_parse *fp, bool parsed, char **message)
{
    int rc = parsed ? PGREST_OK : fp->oom ? PGREST_ERR_INTERNAL : PGREST_ERR_CONFIG;
    for (size_t i = 0; rc == PGREST_OK && i < fp->values.n; i++)
        rc = pgrest_config_sources_add(s, fp->values.items[i].key, fp->values.items[i].value,
                                       fp->values.items[i].kind);
    pgr_src_list_free(&fp->values);
    pgrest_arena_free(fp->arena);
    return report(message, rc, fp->err);
}

int pgrest_config_sources_add_text(pgrest_config_sources *s, const char *text, char **message)
{
    if (message != NULL)
        *message = NULL;
    if (s == NULL || text == NULL)
        return PGREST_ERR_INTERNAL;
    file_parse fp = {.arena = pgrest_arena_new(0)};
    bool parsed = fp.arena != NULL ? parse_text(&fp, text) : out_of_memory(&fp);
    return add_parsed(s, &fp, parsed, message);
}

int pgrest_config_sources_add_file(pgrest_config_sources *s, const char *path, char **message)
{
    if (message != NULL)
        *message = NULL;
    if (s == NULL || path == NULL)
        return PGREST_ERR_INTERNAL;
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        /* how Haskell shows the IOException configurator's load throws */
        int e = errno;
        char reason[512];
        snprintf(reason, sizeof reason, "%s: openFile: %s (%s)", path,
                 e == ENOENT ? "does not exist" : e == EACCES ? "permission denied" : "failed",
                 strerror(e));
        return report(message, PGREST_ERR_CONFIG, reason);
    }
    size_t len;
    char *text = pgr_read_stream(f, &len);
    fclose(f);
    if (text == NULL)
        return PGREST_ERR_INTERNAL;
    /* read as text, a NUL byte would end the file early and unnoticed */
    char reason[512];
    snprintf(reason, sizeof reason, "%s: the file holds a NUL byte", path);
    int rc = memchr(text, '\0', len) != NULL ? report(message, PGREST_ERR_CONFIG, reason)
                                             : pgrest_config_sources_add_text(s, text, message);
    free(text);
    return rc;
}

/* The option a PGRST_ variable sets, malloc'd, or NULL (no option, or
 * OOM: *oom). Config.hs parseAppSettings keeps what follows
 * PGRST_APP_SETTINGS_ as it is, even nothing ("app.settings."); every
 * other option looks up exactly "PGRST_" <> toUpper (dashToUnderscore
 * key) (overrideFromDbOrEnvironment), so a name with a lower-case letter
 * names no option. */
static char *env_to_key(const char *name, size_t len, bool *oom)
{
    static const char app[] = "APP_SETTINGS_";
    const char *p = name + 6;
    size_t n = len - 6;
    char *key = malloc(n + sizeof "app.settings.");
    if ((*oom = key == NULL))
        return NULL;
    if (n >= sizeof app - 1 && memcmp(p, app, sizeof app - 1) == 0) {
        memcpy(key, "app.settings.", 13);
        memcpy(key + 13, p + 13, n - 13);
        key[n] = '\0';
        return key;
    }
    for (size_t i = 0; i < n; i++) {
        if (p[i] >= 'a' && p[i] <= 'z') {
            free(key);
            return NULL;
        }
        key[i] = p[i] == '_' ? '-' : (char)tolower((unsigned char)p[i]);
    }
    key[n] = '\0';
    return key;
}

int pgrest_config_sources_add_environment(pgrest_config_sources *s, char *const *envp)
{
    if (s == NULL)
        return PGREST_ERR_INTERNAL;
    for (char *const *e = envp; e != NULL && *e != NULL; e++) {
        const char *eq = strchr(*e, '=');
        if (strncmp(*e, "PGRST_", 6) != 0 || eq == NULL)
            continue;
        bool oom;
        char *key = env_to_key(*e, (size_t)(eq - *e), &oom);
        int rc = oom ? PGREST_ERR_INTERNAL
                 : key != NULL ? pgrest_config_sources_add(s, key, eq + 1, PGREST_VALUE_STRING)
                               : PGREST_OK;
        free(key);
        if (rc != PGREST_OK)
            return rc;
    }
    return PGREST_OK;
}
