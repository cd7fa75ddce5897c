#include "config_file.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void server_options_set(server_options *opts, const char *key, const char *value)
{
    for (size_t i = 0; i < opts->n; i++)
        if (strcmp(opts->items[i].key, key) == 0) {
            free(opts->items[i].value);
            opts->items[i].value = strdup(value);
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
    opts->items[opts->n].key = strdup(key);
    opts->items[opts->n].value = strdup(value);
    opts->n++;
}

const char *server_options_get(const server_options *opts, const char *key)
{
    for (size_t i = 0; i < opts->n; i++)
        if (strcmp(opts->items[i].key, key) == 0)
            return opts->items[i].value;
    return NULL;
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

/* A quoted value: backslash escapes \" \\ \n \t; "$$" is a literal "$"
 * (configurator's interpolation escape). */
static bool parse_quoted(const char **pp, char *out, size_t outlen)
{
    const char *p = *pp + 1;
    size_t n = 0;
    while (*p && *p != '"') {
        char c = *p++;
        if (c == '\\' && *p) {
            char e = *p++;
            c = e == 'n' ? '\n' : e == 't' ? '\t' : e;
        } else if (c == '$' && *p == '$')
            p++;
        if (n + 1 >= outlen)
            return false;
        out[n++] = c;
    }
    if (*p != '"')
        return false;
    out[n] = '\0';
    *pp = p + 1;
    return true;
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
    p = skip_space(p + 1);
    size_t cap = strlen(p) + 1;
    char *value = malloc(cap);
    char key[256];
    if (value == NULL || klen >= sizeof key) {
        free(value);
        snprintf(errbuf, errlen, "config line %d: key too long", lineno);
        return false;
    }
    memcpy(key, k, klen);
    key[klen] = '\0';
    bool ok = true;
    if (*p == '"')
        ok = parse_quoted(&p, value, cap);
    else {
        size_t n = 0;
        while (*p && *p != '#' && *p != '\n' && *p != '\r')
            value[n++] = *p++;
        while (n > 0 && (value[n - 1] == ' ' || value[n - 1] == '\t'))
            n--;
        value[n] = '\0';
    }
    if (ok)
        server_options_set(opts, key, value);
    else
        snprintf(errbuf, errlen, "config line %d: unterminated string", lineno);
    free(value);
    return ok;
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
        snprintf(errbuf, errlen, "cannot open config file %s", path);
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

/* PGRST_DB_URI -> db-uri; PGRST_APP_SETTINGS_FOO -> app.settings.foo */
static void env_to_key(const char *name, char *key, size_t keylen)
{
    const char *p = name + 6;
    size_t n = 0;
    if (strncmp(p, "APP_SETTINGS_", 13) == 0) {
        n = (size_t)snprintf(key, keylen, "app.settings.");
        p += 13;
        for (; *p && n + 1 < keylen; p++)
            key[n++] = (char)tolower((unsigned char)*p);
        key[n] = '\0';
        return;
    }
    for (; *p && n + 1 < keylen; p++)
        key[n++] = *p == '_' ? '-' : (char)tolower((unsigned char)*p);
    key[n] = '\0';
}

void config_read_env(server_options *opts, char **environ_)
{
    for (char **e = environ_; e && *e; e++) {
        if (strncmp(*e, "PGRST_", 6) != 0)
            continue;
        const char *eq = strchr(*e, '=');
        if (eq == NULL)
            continue;
        char name[256], key[256];
        size_t n = (size_t)(eq - *e);
        if (n >= sizeof name)
            continue;
        memcpy(name, *e, n);
        name[n] = '\0';
        env_to_key(name, key, sizeof key);
        server_options_set(opts, key, eq + 1);
    }
}
