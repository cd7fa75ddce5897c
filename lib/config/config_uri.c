#include "config/config_uri.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The parts of an RFC 3986 URI reference, as offsets into the text. */
typedef struct uri_parts {
    size_t scheme_len;             /* without ':' */
    bool has_authority;
    const char *userinfo_end;      /* the '@', or NULL */
    const char *host, *host_end;
    const char *port;              /* after ':', or NULL */
    const char *port_end;
    bool has_query, has_fragment;
} uri_parts;

static bool unreserved(unsigned char c)
{
    return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

static bool sub_delim(unsigned char c)
{
    return c != '\0' && strchr("!$&'()*+,;=", c) != NULL;
}

/* pct-encoded or one of the allowed characters; advances *p. */
static bool uri_char(const char **p, const char *extra)
{
    unsigned char c = (unsigned char)**p;
    if (c == '%') {
        if (!isxdigit((unsigned char)(*p)[1]) || !isxdigit((unsigned char)(*p)[2]))
            return false;
        *p += 3;
        return true;
    }
    if (unreserved(c) || sub_delim(c) || (c != '\0' && strchr(extra, c) != NULL)) {
        (*p)++;
        return true;
    }
    return false;
}

static bool scan(const char **p, const char *extra, const char *stop)
{
    while (**p != '\0' && strchr(stop, **p) == NULL)
        if (!uri_char(p, extra))
            return false;
    return true;
}

static bool parse_authority(const char **pp, uri_parts *u)
{
    const char *p = *pp;
    const char *end = p + strcspn(p, "/?#");
    const char *at = memchr(p, '@', (size_t)(end - p));
    if (at != NULL) {
        const char *q = p;
        while (q < at)
            if (!uri_char(&q, ":"))
                return false;
        u->userinfo_end = at;
        p = at + 1;
    }
    u->host = p;
    if (*p == '[') {
        const char *close = memchr(p, ']', (size_t)(end - p));
        if (close == NULL)
            return false;
        for (const char *q = p + 1; q < close; q++)
            if (!isxdigit((unsigned char)*q) && *q != ':' && *q != '.')
                return false;
        p = close + 1;
    } else {
        while (p < end && *p != ':')
            if (!uri_char(&p, ""))
                return false;
    }
    u->host_end = p;
    if (p < end && *p == ':') {
        u->port = ++p;
        while (p < end && isdigit((unsigned char)*p))
            p++;
        u->port_end = p;
    }
    *pp = p;
    return p == end;
}

static bool parse_uri(const char *s, uri_parts *u)
{
    memset(u, 0, sizeof *u);
    const char *p = s;
    if (!isalpha((unsigned char)*p))
        return false;
    while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.')
        p++;
    if (*p != ':')
        return false;
    u->scheme_len = (size_t)(p - s);
    p++;
    if (p[0] == '/' && p[1] == '/') {
        p += 2;
        u->has_authority = true;
        if (!parse_authority(&p, u))
            return false;
    }
    if (!scan(&p, ":@/", "?#"))
        return false;
    if (*p == '?') {
        u->has_query = true;
        p++;
        if (!scan(&p, ":@/?", "#"))
            return false;
    }
    if (*p == '#') {
        u->has_fragment = true;
        p++;
        if (!scan(&p, ":@/?", ""))
            return false;
    }
    return *p == '\0';
}

bool config_uri_is_uri(const char *s)
{
    uri_parts u;
    return parse_uri(s, &u);
}

static bool port_ok(const uri_parts *u)
{
    if (u->port == NULL)
        return true;
    size_t n = (size_t)(u->port_end - u->port);
    if (n == 0 || n > 6)
        return false;
    long port = strtol(u->port, NULL, 10);
    return port > 0 && port < 65536;
}

bool config_uri_is_malformed_proxy(const char *s)
{
    uri_parts u;
    if (!parse_uri(s, &u) || u.has_fragment)
        return true;
    bool http = (u.scheme_len == 4 && strncasecmp(s, "http", 4) == 0) ||
                (u.scheme_len == 5 && strncasecmp(s, "https", 5) == 0);
    return !http || u.has_query || !u.has_authority || u.userinfo_end != NULL ||
           u.host == u.host_end || !port_ok(&u);
}
