/* PostgREST's Config.hs `parser` and `decodeLoadFiles` over the values a
 * host added to a pgrest_config_sources: configurator's value kinds, the
 * coerce* functions, aliases (and which one wins), defaults, the checks in
 * PostgREST's order with its messages, @file for db-uri and jwt-secret
 * and the secret's check. The result, pgr_app_config, is what
 * --dump-config shows and what the host hands to the context. */
#include "config/sources_read.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pgrest/pgrest.h"

#include "config/config.h"
#include "util/read_stream.h"

/* ------------------------------------------------------------ storage */

static const char *own(pgr_app_config *cfg, char *s)
{
    /* the caller's allocation failed, or ours below: an OOM the reader
     * reports at the end rather than reading the value as unset */
    if (s == NULL) {
        cfg->oom = true;
        return NULL;
    }
    if (cfg->n_owned == cfg->cap_owned) {
        size_t ncap = cfg->cap_owned ? cfg->cap_owned * 2 : 32;
        char **n = realloc(cfg->owned, ncap * sizeof *n);
        if (n == NULL) {
            free(s);
            cfg->oom = true;
            return NULL;
        }
        cfg->owned = n;
        cfg->cap_owned = ncap;
    }
    cfg->owned[cfg->n_owned++] = s;
    return s;
}

void pgr_app_config_free(pgr_app_config *cfg)
{
    for (size_t i = 0; i < cfg->n_owned; i++)
        free(cfg->owned[i]);
    free(cfg->owned);
    pgr_src_list_free(&cfg->values);
    pgr_src_list_free(&cfg->dumped);
    pgr_src_list_free(&cfg->app_settings);
    memset(cfg, 0, sizeof *cfg);
}

/* ----------------------------------------------------------- coercions */

/* Config.hs coerceText: strings as they are, other values `show`n
 * (True/False, a Scientific such as 3000.0). */
static const char *coerce_text(pgr_app_config *cfg, const pgr_src_entry *o)
{
    if (o->kind == PGREST_VALUE_BOOL)
        return strcmp(o->value, "true") == 0 ? "True" : "False";
    if (o->kind == PGREST_VALUE_NUMBER && strpbrk(o->value, ".eE") == NULL) {
        char *s = NULL;
        return own(cfg, asprintf(&s, "%s.0", o->value) < 0 ? NULL : s);
    }
    return o->value;
}

static const char *skip_ws(const char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

/* Config.hs coerceInt: a whole number, or a string `read` as one. */
static bool coerce_int(const pgr_src_entry *o, long long *out)
{
    if (o->kind == PGREST_VALUE_BOOL)
        return false;
    if (o->kind == PGREST_VALUE_NUMBER) {
        char *end = NULL;
        double d = strtod(o->value, &end);
        /* floatingOrInteger: only whole numbers (and in range here) */
        if (!(d > -9.2e18 && d < 9.2e18) || d != (double)(long long)d)
            return false;
        *out = (long long)d;
        return true;
    }
    return pgrest_config_read_int(o->value, out);
}

/* Config.hs coerceBool: a configurator bool; for a string, its letters
 * read as True/False in any case ("TRUE", "t-r-u-e"), else an integer
 * (> 0 is true). Unquoted numbers and other text give nothing. */
static bool coerce_bool(const pgr_src_entry *o, bool *out)
{
    if (o->kind == PGREST_VALUE_BOOL) {
        *out = strcmp(o->value, "true") == 0;
        return true;
    }
    int b;
    if (o->kind == PGREST_VALUE_NUMBER || !pgrest_config_read_bool(o->value, &b))
        return false;
    *out = b;
    return true;
}

/* ------------------------------------------------------------- reader */

typedef struct reader {
    const pgr_src_list *raw;
    pgr_app_config *cfg;
    char *err;
    size_t errlen;
} reader;

static bool parse_fail(reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A parser failure: configurator's `fail`, which readAppConfig prefixes
 * with "Error in config ". */
static bool parse_fail(reader *r, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(r->err, r->errlen, "Error in config %s", msg);
    return false;
}

static const char *own_printf(pgr_app_config *cfg, const char *fmt, long long n)
{
    char *s = NULL;
    return own(cfg, asprintf(&s, fmt, n) < 0 ? NULL : s);
}

/* Config.hs optInt / optBool / optString (optStringEmptyable where ""
 * is a value) of one key, as the option's type reads it: NULL is Nothing. */
static const char *opt_typed(reader *r, const pgrest_option_info *o, const char *key)
{
    const pgr_src_entry *e = pgr_src_list_find(r->raw, key);
    long long n;
    bool b;
    if (e == NULL)
        return NULL;
    switch (o->type) {
    case PGREST_OPTION_INT:
        return coerce_int(e, &n) ? own_printf(r->cfg, "%lld", n) : NULL;
    case PGREST_OPTION_BOOL:
        return coerce_bool(e, &b) ? (b ? "true" : "false") : NULL;
    default: {
        const char *v = coerce_text(r->cfg, e);
        return v != NULL && (v[0] != '\0' || pgr_option_takes_empty(o)) ? v : NULL;
    }
    }
}

/* optWithAlias: the name's value, else the alias's -- or the other way
 * round where Config.hs reads the deprecated name first. */
static const char *opt_with_alias(reader *r, const pgrest_option_info *o)
{
    bool alias_first = o->alias != NULL && pgr_option_alias_first(o);
    const char *first = alias_first ? o->alias : o->name;
    const char *second = alias_first ? o->name : o->alias;
    const char *v = opt_typed(r, o, first);
    return v != NULL || second == NULL ? v : opt_typed(r, o, second);
}

/* splitOnCommas + intercalate ",": items stripped of spaces. */
static const char *comma_list(pgr_app_config *cfg, const char *v)
{
    size_t n = strlen(v);
    char *out = malloc(n + 1), *o = out;
    if (out == NULL)
        return own(cfg, NULL);
    const char *p = v;
    for (;;) {
        const char *end = strchr(p, ',');
        const char *stop = end ? end : p + strlen(p);
        const char *b = p, *e = stop;
        while (b < e && isspace((unsigned char)*b))
            b++;
        while (e > b && isspace((unsigned char)e[-1]))
            e--;
        memcpy(o, b, (size_t)(e - b));
        o += e - b;
        if (end == NULL)
            break;
        *o++ = ',';
        p = end + 1;
    }
    *o = '\0';
    return own(cfg, out);
}

static bool list_has(const char *list, const char *item)
{
    size_t n = strlen(item);
    for (const char *p = list; p != NULL; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, item, n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return true;
    return false;
}

/* ------------------------------------ Config.hs's own parse functions */

/* What an option's type does not say: a parse function of Config.hs,
 * given the value read (NULL: Nothing) before the default applies. */
typedef bool (*parse_fn)(reader *r, const pgrest_option_info *o, const char **v);

/* parseDbSchemas: no catalog schema */
static bool parse_db_schemas(reader *r, const pgrest_option_info *o, const char **v)
{
    static const char *const forbidden[] = {"pg_catalog", "information_schema"};
    (void)o;
    for (size_t i = 0; *v != NULL && i < 2; i++)
        if (list_has(*v, forbidden[i]))
            return parse_fail(r, "db-schemas does not allow schema: '%s'", forbidden[i]);
    return true;
}

/* parseSocketFileMode: Numeric.readOct takes the leading octal digits;
 * the mode is shown in octal. */
static bool parse_socket_mode(reader *r, const pgrest_option_info *o, const char **v)
{
    const char *text = *v;
    if (text == NULL)
        return true;
    if (*text < '0' || *text > '7')
        return parse_fail(r, "Invalid %s: not an octal", o->name);
    unsigned long mode = 0;
    for (const char *p = text; *p >= '0' && *p <= '7' && mode <= 07777; p++)
        mode = mode * 8 + (unsigned long)(*p - '0');
    if (mode < 0600 || mode > 0777)
        return parse_fail(r, "Invalid %s: needs to be between 600 and 777", o->name);
    *v = own_printf(r->cfg, "%llo", (long long)mode);
    return *v != NULL;
}

/* optWithAlias (optString "admin-server-host") (optString "server-host") */
static bool parse_admin_host(reader *r, const pgrest_option_info *o, const char **v)
{
    if (*v == NULL)
        *v = opt_typed(r, o, "server-host");
    return true;
}

/* parseAdminServerPort: not server-port (both resolved in decimal) */
static bool parse_admin_port(reader *r, const pgrest_option_info *o, const char **v)
{
    (void)o;
    const char *server_port = pgr_src_list_get(&r->cfg->values, "server-port");
    if (*v != NULL && server_port != NULL && strcmp(*v, server_port) == 0)
        return parse_fail(r, "admin-server-port cannot be the same as server-port");
    return true;
}

static const struct {
    const char *name;
    parse_fn parse;
} parse_functions[] = {
    {"db-schemas", parse_db_schemas},
    {"server-unix-socket-mode", parse_socket_mode},
    {"admin-server-host", parse_admin_host},
    {"admin-server-port", parse_admin_port},
    {"admin-server-unix-socket-mode", parse_socket_mode},
};

static parse_fn parse_function(const char *name)
{
    for (size_t i = 0; i < sizeof parse_functions / sizeof parse_functions[0]; i++)
        if (strcmp(parse_functions[i].name, name) == 0)
            return parse_functions[i].parse;
    return NULL;
}

/* ------------------------------------------------------ the parser */

/* The library's check of a text value PostgREST parses further (a
 * choice, jwt-aud, the role claim key, ...); where --dump-config shows it
 * otherwise, that form goes to cfg->dumped. */
static bool checked(reader *r, const pgrest_option_info *o, const char *v)
{
    char *shown = NULL, *message = NULL;
    int rc = pgrest_option_check(o->name, v, &shown, NULL, &message);
    if (rc == PGREST_ERR_CONFIG)
        parse_fail(r, "%s", message ? message : "");
    free(message);
    if (rc == PGREST_OK && strcmp(shown, v) != 0)
        pgr_src_list_set(&r->cfg->dumped, o->name, shown, PGREST_VALUE_STRING);
    free(shown);
    return rc == PGREST_OK;
}

/* One option as Config.hs's parser reads it: its type's opt* under its
 * name or alias, its parse function, its default, its check. */
static bool read_option(reader *r, const pgrest_option_info *o)
{
    const char *v = opt_with_alias(r, o);
    if (v != NULL && o->type == PGREST_OPTION_LIST)
        v = comma_list(r->cfg, v);
    parse_fn parse = parse_function(o->name);
    if (parse != NULL && !parse(r, o, &v))
        return false;
    /* pgrest's own are dumped only when set: the library has the default */
    bool if_set = o->dump == PGREST_DUMP_IF_SET || o->dump == PGREST_DUMP_VALUE_IF_SET;
    if (v == NULL && !if_set)
        v = o->default_value;
    if (v == NULL)
        return true;
    if ((o->type == PGREST_OPTION_TEXT || o->type == PGREST_OPTION_CHOICE) && !checked(r, o, v))
        return false;
    pgr_src_list_set(&r->cfg->values, o->name, v, PGREST_VALUE_STRING);
    return true;
}

static void read_app_settings(reader *r)
{
    for (size_t i = 0; i < r->raw->n; i++) {
        const pgr_src_entry *o = &r->raw->items[i];
        if (strncmp(o->key, "app.settings.", 13) == 0) {
            const char *v = coerce_text(r->cfg, o);
            if (v != NULL)
                pgr_src_list_set(&r->cfg->app_settings, o->key, v, PGREST_VALUE_STRING);
        }
    }
}

/* Config.hs `parser`: app.settings, then the options in the table's
 * order, which is the parser's, so the first failing check is the one
 * reported. PostgREST's test hooks (not dumped) are taken as written. */
static bool run_parser(reader *r)
{
    read_app_settings(r);
    const pgrest_option_info *o;
    for (size_t i = 0; (o = pgrest_option_at(i)) != NULL; i++) {
        if (!pgrest_config_sources_reads_key(o->name))
            continue;
        if (o->dump == PGREST_DUMP_NONE) {
            const pgr_src_entry *e = pgr_src_list_find(r->raw, o->name);
            if (e != NULL)
                pgr_src_list_set(&r->cfg->values, o->name, e->value, PGREST_VALUE_STRING);
        } else if (!read_option(r, o)) {
            return false;
        }
    }
    return true;
}

/* ------------------------------------------------------ decodeLoadFiles */

static bool file_error(reader *r, const char *path, const char *function)
{
    int e = errno;
    const char *what = e == ENOENT ? "does not exist" : e == EACCES ? "permission denied"
                       : e == EISDIR ? "inappropriate type" : "failed";
    snprintf(r->err, r->errlen, "%s: %s: %s (%s)", path, function, what, strerror(e));
    return false;
}

static char *read_at_file(reader *r, const char *path, const char *function, size_t *len)
{
    FILE *f = strcmp(path, "/dev/stdin") == 0 ? stdin : fopen(path, "rb");
    if (f == NULL) {
        file_error(r, path, function);
        return NULL;
    }
    char *text = pgr_read_stream(f, len);
    if (f != stdin)
        fclose(f);
    if (text == NULL)
        snprintf(r->err, r->errlen, "%s: %s: out of memory", path, function);
    return text;
}

/* The resolved value of option name, or NULL */
static const char *value_of(const reader *r, const char *name)
{
    return pgr_src_list_get(&r->cfg->values, name);
}

/* readDbUriFile: db-uri = "@file" reads the file, stripped of spaces. */
static bool read_db_uri_file(reader *r)
{
    const char *uri = value_of(r, "db-uri");
    if (uri == NULL || uri[0] != '@')
        return true;
    size_t len;
    char *text = read_at_file(r, uri + 1, "openFile", &len);
    if (text == NULL)
        return false;
    const char *b = skip_ws(text);
    size_t n = strlen(b);
    while (n > 0 && isspace((unsigned char)b[n - 1]))
        n--;
    const char *read = own(r->cfg, strndup(b, n));
    free(text);
    return read != NULL && pgr_src_list_set(&r->cfg->values, "db-uri", read, PGREST_VALUE_STRING);
}

/* readSecretFile: jwt-secret = "@file" reads the file, one trailing
 * newline removed. */
static bool read_secret_file(reader *r)
{
    const char *s = value_of(r, "jwt-secret");
    if (s == NULL || s[0] != '@')
        return true;
    size_t len;
    char *text = read_at_file(r, s + 1, "openBinaryFile", &len);
    if (text == NULL)
        return false;
    if (len > 0 && text[len - 1] == '\n')
        text[len - 1] = '\0';
    const char *read = own(r->cfg, text);
    return read != NULL &&
           pgr_src_list_set(&r->cfg->values, "jwt-secret", read, PGREST_VALUE_STRING);
}

/* decodeSecret and parseSecret, by the library's rules (it refuses per
 * request what the server would have started with); --dump-config shows
 * the secret as decoded and encoded again. */
static bool decode_secret(reader *r)
{
    const char *secret = value_of(r, "jwt-secret");
    const char *is_base64 = value_of(r, "jwt-secret-is-base64");
    if (secret == NULL)
        return true;
    char *dump = NULL, *message = NULL;
    int rc = pgrest_jwt_secret_check(secret, is_base64 != NULL && strcmp(is_base64, "true") == 0,
                                     &dump, &message);
    if (rc == PGREST_ERR_CONFIG)
        snprintf(r->err, r->errlen, "%s", message ? message : "");
    free(message);
    if (rc == PGREST_OK)
        pgr_src_list_set(&r->cfg->dumped, "jwt-secret", dump, PGREST_VALUE_STRING);
    free(dump);
    return rc == PGREST_OK;
}

int pgr_app_config_read(const pgr_src_list *raw, pgr_app_config *cfg, char *err, size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);
    reader r = {raw, cfg, err, errlen};
    err[0] = '\0';
    bool ok = run_parser(&r) && read_db_uri_file(&r) && read_secret_file(&r) &&
              decode_secret(&r) && !cfg->oom && !cfg->values.failed && !cfg->dumped.failed &&
              !cfg->app_settings.failed;
    if (ok)
        return PGREST_OK;
    /* a refused configuration leaves nothing for the caller to free */
    pgr_app_config_free(cfg);
    /* every refusal words itself; silence is an allocation that failed */
    if (err[0] != '\0')
        return PGREST_ERR_CONFIG;
    snprintf(err, errlen, "out of memory reading the configuration");
    return PGREST_ERR_INTERNAL;
}

/* ------------------------------------------------ as the library's options */

/* The options the reader resolves itself: PostgREST's (Config.hs,
 * aliases included, from the option table) and pgrest's own that
 * --dump-config shows; every other key goes to the library as it is. */
int pgrest_config_sources_reads_key(const char *key)
{
    if (key == NULL)
        return 0;
    if (strncmp(key, "app.settings.", 13) == 0)
        return 1;
    const pgrest_option_info *o = pgrest_option_find(key);
    /* pgrest's own options --dump-config shows (db-channel-uri, jwt-jwks-*)
     * are read and checked here too, so a bad one stops the start as
     * PostgREST's config errors do */
    return o != NULL && (o->postgrest || o->dump == PGREST_DUMP_IF_SET ||
                         o->dump == PGREST_DUMP_VALUE_IF_SET);
}

bool pgr_app_config_to_options(const pgr_app_config *c, const pgr_src_list *raw,
                               pgr_src_list *out)
{
    for (size_t i = 0; i < raw->n; i++)
        if (!pgrest_config_sources_reads_key(raw->items[i].key))
            pgr_src_list_set(out, raw->items[i].key, raw->items[i].value,
                             PGREST_VALUE_STRING);
    for (size_t i = 0; i < c->app_settings.n; i++)
        pgr_src_list_set(out, c->app_settings.items[i].key, c->app_settings.items[i].value,
                         PGREST_VALUE_STRING);
    for (size_t i = 0; i < c->values.n; i++)
        pgr_src_list_set(out, c->values.items[i].key, c->values.items[i].value,
                         PGREST_VALUE_STRING);
    return !out->failed;
}

/* ------------------------------------------------------- public API */
