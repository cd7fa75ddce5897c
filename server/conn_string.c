#include "conn_string.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "version.h"

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* libpq's recognized_connection_string, as Config.hs pgConnString */
static bool is_uri(const char *s)
{
    return starts(s, "postgresql://") || starts(s, "postgres://");
}

/* Network.URI isUnescapedInURIComponent: the unreserved characters */
static bool unescaped(unsigned char c)
{
    return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

/* What follows "key=" in a URI: value percent-encoded, byte by byte. */
static void put_uri_value(char *out, const char *value)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
        if (unescaped(*p)) {
            *out++ = (char)*p;
        } else {
            *out++ = '%';
            *out++ = hex[*p >> 4];
            *out++ = hex[*p & 15];
        }
    }
    *out = '\0';
}

/* What follows "key=" in a key/value string: quoted, ' escaped. */
static void put_keyval_value(char *out, const char *value)
{
    *out++ = '\'';
    for (const char *p = value; *p; p++) {
        if (*p == '\'')
            *out++ = '\\';
        *out++ = *p;
    }
    *out++ = '\'';
    *out = '\0';
}

/* The separator before a URI's new option: the query starts after the
 * last '@' (a password may contain '?'). */
static const char *uri_separator(const char *uri)
{
    const char *at = strrchr(uri, '@');
    const char *q = strchr(at ? at + 1 : uri, '?');
    if (q == NULL)
        return "?";
    return q[1] == '\0' ? "" : "&";
}

char *conn_string_add_option(const char *db_uri, const char *key, const char *value)
{
    bool uri = is_uri(db_uri);
    if (!uri && strchr(db_uri, '=') == NULL)
        return strdup(db_uri);
    /* 3 bytes per value byte covers both encodings */
    char *encoded = malloc(3 * strlen(value) + 3);
    if (encoded == NULL)
        return NULL;
    if (uri)
        put_uri_value(encoded, value);
    else
        put_keyval_value(encoded, value);
    const char *sep = uri ? uri_separator(db_uri) : " ";
    size_t n = strlen(db_uri) + strlen(sep) + strlen(key) + strlen(encoded) + 2;
    char *out = malloc(n);
    if (out != NULL)
        snprintf(out, n, "%s%s%s=%s", db_uri, sep, key, encoded);
    free(encoded);
    return out;
}

char *conn_string_with_app_name(const char *db_uri)
{
    return conn_string_add_option(db_uri, "fallback_application_name",
                                  "PostgREST " PGRS_PRETTY_VERSION);
}
