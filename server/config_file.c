#include "config_file.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void server_options_set_kind(server_options *opts, const char *key, const char *value,
                             pgrest_value_kind kind)
{
    for (size_t i = 0; i < opts->n; i++)
        if (strcmp(opts->items[i].key, key) == 0) {
            char *v = strdup(value);
            if (v == NULL)
                return;
            free(opts->items[i].value);
            opts->items[i].value = v;
            opts->items[i].kind = kind;
            return;
        }
    if (opts->n == opts->cap) {
        size_t ncap = opts->cap ? opts->cap * 2 : 32;
        server_option *n = realloc(opts->items, ncap * sizeof *n);
        if (n == NULL)
            return;
        opts->items = n;
        opts->cap = ncap;
    }
    char *k = strdup(key), *v = strdup(value);
    if (k == NULL || v == NULL) {
        free(k);
        free(v);
        return;
    }
    opts->items[opts->n].key = k;
    opts->items[opts->n].value = v;
    opts->items[opts->n].kind = kind;
    opts->n++;
}

void server_options_set(server_options *opts, const char *key, const char *value)
{
    server_options_set_kind(opts, key, value, PGREST_VALUE_STRING);
}

const server_option *server_options_find(const server_options *opts, const char *key)
{
    for (size_t i = 0; i < opts->n; i++)
        if (strcmp(opts->items[i].key, key) == 0)
            return &opts->items[i];
    return NULL;
}

void server_options_merge(server_options *dst, const server_options *src)
{
    for (size_t i = 0; i < src->n; i++)
        server_options_set_kind(dst, src->items[i].key, src->items[i].value,
                                src->items[i].kind);
}

const char *server_options_get(const server_options *opts, const char *key)
{
    const server_option *o = server_options_find(opts, key);
    return o ? o->value : NULL;
}

void server_options_free(server_options *opts)
{
    for (size_t i = 0; i < opts->n; i++) {
        free(opts->items[i].key);
        free(opts->items[i].value);
    }
    free(opts->items);
    memset(opts, 0, sizeof *opts);
}

static const char *skip_space(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\r')
        p++;
    return p;
}

/* The value of $(name) inside a quoted string: an option read earlier in
 * the file, else the environment variable (configurator's interpolation,
 * which PostgREST's docs use for app.settings, e.g. "$(MYAPP_JWT_SECRET)"). */
static const char *interpolate(const server_options *opts, const char *name)
{
    const char *v = server_options_get(opts, name);
    return v != NULL ? v : getenv(name);
}

typedef struct quoted_reader {
    const char *p;
    char *out;
    size_t n, cap;
} quoted_reader;

static bool put_char(quoted_reader *r, char c)
{
    if (r->n + 1 >= r->cap) {
        size_t ncap = r->cap * 2 + 16;
        char *o = realloc(r->out, ncap);
        if (o == NULL)
            return false;
        r->out = o;
        r->cap = ncap;
    }
    r->out[r->n++] = c;
    return true;
}

/* $(name) at r->p (just after the '$'); false with a message when the
 * name is unknown or the parenthesis is not closed. */
static bool read_interpolation(quoted_reader *r, const server_options *opts,
                               char *errbuf, size_t errlen, int lineno)
{
    const char *close = strchr(r->p + 1, ')');
    const char *quote = strchr(r->p + 1, '"');
    if (close == NULL || (quote != NULL && quote < close)) {
        snprintf(errbuf, errlen, "config line %d: unterminated $( interpolation", lineno);
        return false;
    }
    char name[256];
    size_t len = (size_t)(close - (r->p + 1));
    if (len == 0 || len >= sizeof name) {
        snprintf(errbuf, errlen, "config line %d: invalid $() interpolation", lineno);
        return false;
    }
    memcpy(name, r->p + 1, len);
    name[len] = '\0';
    const char *v = interpolate(opts, name);
    if (v == NULL) {
        snprintf(errbuf, errlen, "config line %d: no such variable \"%s\"", lineno, name);
        return false;
    }
    for (; *v; v++)
        if (!put_char(r, *v))
            return false;
    r->p = close + 1;
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

/* A quoted value: backslash escapes \" \\ \n \t \r; "$$" is a literal
 * "$" and $(name) interpolates (configurator's string syntax). */
static bool parse_quoted(const char **pp, const server_options *opts, char **value,
                         char *errbuf, size_t errlen, int lineno)
{
    quoted_reader r = {*pp + 1, NULL, 0, 0};
    bool ok = put_char(&r, '\0');
    r.n = 0;
    while (ok && *r.p && *r.p != '"') {
        char c = *r.p++;
        if (c == '\\' && *r.p)
            ok = put_char(&r, escape_char(*r.p++));
        else if (c == '$' && *r.p == '$')
            ok = put_char(&r, *r.p++);
        else if (c == '$' && *r.p == '(')
            ok = read_interpolation(&r, opts, errbuf, errlen, lineno);
        else
            ok = put_char(&r, c);
    }
    if (ok && *r.p != '"') {
        snprintf(errbuf, errlen, "config line %d: unterminated string", lineno);
        ok = false;
    }
    if (!ok) {
        free(r.out);
        return false;
    }
    r.out[r.n] = '\0';
    *value = r.out;
    *pp = r.p + 1;
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

static bool parse_line(const char *line, server_options *opts, char *errbuf,
                       size_t errlen, int lineno)
{
    const char *p = skip_space(line);
    if (*p == '\0' || *p == '#' || *p == '\n')
        return true;
    const char *k = p;
    while (*p && (isalnum((unsigned char)*p) || *p == '-' || *p == '_' || *p == '.'))
        p++;
    size_t klen = (size_t)(p - k);
    p = skip_space(p);
    if (klen == 0 || *p != '=') {
        snprintf(errbuf, errlen, "config line %d: expected key = value", lineno);
        return false;
    }
    char key[256];
    if (klen >= sizeof key) {
        snprintf(errbuf, errlen, "config line %d: key too long", lineno);
        return false;
    }
    memcpy(key, k, klen);
    key[klen] = '\0';
    p = skip_space(p + 1);
    char *value = NULL;
    const char *stored = NULL;
    pgrest_value_kind kind = PGREST_VALUE_STRING;
    if (*p == '"') {
        if (!parse_quoted(&p, opts, &value, errbuf, errlen, lineno))
            return false;
        p = skip_space(p);
        if (*p != '\0' && *p != '#') {
            snprintf(errbuf, errlen, "config line %d: unexpected text after the value", lineno);
            free(value);
            return false;
        }
        stored = value;
    } else {
        size_t n = strcspn(p, "#\r\n");
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        value = strndup(p, n);
        if (value == NULL)
            return false;
        kind = bare_kind(value, &stored);
    }
    server_options_set_kind(opts, key, stored, kind);
    free(value);
    return true;
}

bool config_text_parse(const char *text, server_options *opts, char *errbuf,
                       size_t errlen)
{
    int lineno = 0;
    const char *p = text;
    while (*p) {
        const char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char *line = strndup(p, n);
        if (line == NULL)
            return false;
        bool ok = parse_line(line, opts, errbuf, errlen, ++lineno);
        free(line);
        if (!ok)
            return false;
        p = end ? end + 1 : p + n;
    }
    return true;
}

bool config_file_read(const char *path, server_options *opts, char *errbuf,
                      size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        /* how Haskell shows the IOException configurator's load throws */
        int e = errno;
        snprintf(errbuf, errlen, "%s: openFile: %s (%s)", path,
                 e == ENOENT ? "does not exist" : e == EACCES ? "permission denied" : "failed",
                 strerror(e));
        return false;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL)
                break;
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf == NULL)
        return false;
    buf[n] = '\0';
    bool ok = config_text_parse(buf, opts, errbuf, errlen);
    free(buf);
    return ok;
}

/* The option a PGRST_ variable sets, or NULL (free it). Config.hs
 * parseAppSettings keeps what follows PGRST_APP_SETTINGS_ as it is, even
 * nothing ("app.settings."); every other option looks up exactly
 * "PGRST_" <> toUpper (dashToUnderscore key) (overrideFromDbOrEnvironment),
 * so a name with a lower-case letter names no option. */
static char *env_to_key(const char *name, size_t len)
{
    static const char app[] = "APP_SETTINGS_";
    const char *p = name + 6;
    size_t n = len - 6;
    char *key = malloc(n + sizeof "app.settings.");
    if (key == NULL)
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

void config_read_env(server_options *opts, char **environ_)
{
    for (char **e = environ_; e && *e; e++) {
        if (strncmp(*e, "PGRST_", 6) != 0)
            continue;
        const char *eq = strchr(*e, '=');
        if (eq == NULL)
            continue;
        char *key = env_to_key(*e, (size_t)(eq - *e));
        if (key != NULL)
            server_options_set(opts, key, eq + 1);
        free(key);
    }
}
