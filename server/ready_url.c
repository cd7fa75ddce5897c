#include "ready_url.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* network-uri: isUnreserved, isSubDelims, isGenDelims (ASCII only) */
static bool is_alnum(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool is_unreserved(unsigned char c)
{
    return is_alnum(c) || (c != '\0' && strchr("-._~", c) != NULL);
}

static bool is_sub_delim(unsigned char c)
{
    return c != '\0' && strchr("!$&'()*+,;=", c) != NULL;
}

static bool is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* isAllowedInURI: reserved, unreserved or '%'; the rest is %XX-encoded
 * byte by byte (escapeURIString over UTF-8). */
static bool escape(const char *raw, char *out)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)raw; *p != '\0'; p++) {
        bool keep = is_unreserved(*p) || is_sub_delim(*p) || *p == '%' ||
                    strchr(":/?#[]@", *p) != NULL;
        if (n + 4 > READY_URL_MAX)
            return false;
        if (keep)
            out[n++] = (char)*p;
        else
            n += (size_t)snprintf(out + n, 4, "%%%02X", *p);
    }
    out[n] = '\0';
    return true;
}

/* Length of the run starting at s of characters `ok` accepts, with
 * pct-encoded triplets; a '%' not followed by two hex digits ends it. */
static size_t span(const char *s, bool (*ok)(unsigned char))
{
    size_t i = 0;
    for (;;) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%' && is_hex((unsigned char)s[i + 1]) && is_hex((unsigned char)s[i + 2]))
            i += 3;
        else if (c != '%' && c != '\0' && ok(c))
            i++;
        else
            return i;
    }
}

static bool userinfo_char(unsigned char c) { return is_unreserved(c) || is_sub_delim(c) || c == ':'; }
static bool reg_name_char(unsigned char c) { return is_unreserved(c) || is_sub_delim(c); }
static bool pchar(unsigned char c) { return userinfo_char(c) || c == '@'; }
static bool query_char(unsigned char c) { return pchar(c) || c == '/' || c == '?'; }

/* IP-literal's inside: IPv6address, or IPvFuture "v" 1*HEXDIG "." 1*(...) */
static bool ip_literal(const char *s, size_t len)
{
    char buf[64];
    if (len > 1 && (s[0] == 'v' || s[0] == 'V')) {
        size_t i = 1;
        while (i < len && is_hex((unsigned char)s[i]))
            i++;
        if (i == 1 || i >= len || s[i] != '.' || i + 1 == len)
            return false;
        for (i++; i < len; i++)
            if (!userinfo_char((unsigned char)s[i]))
                return false;
        return true;
    }
    unsigned char addr[16];
    if (len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return inet_pton(AF_INET6, buf, addr) == 1;
}

static void copy(char *dst, const char *src, size_t len)
{
    if (len >= READY_URL_MAX)
        len = READY_URL_MAX - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* authority = [ userinfo "@" ] host [ ":" port ]; returns where it ends,
 * or NULL; *port_text points at the digits after ':' (NULL when none). */
static const char *authority(const char *s, ready_url *out, const char **port_text,
                             size_t *port_len)
{
    size_t ui = span(s, userinfo_char);
    if (s[ui] == '@')
        s += ui + 1;
    size_t hl;
    if (*s == '[') {
        const char *close = strchr(s, ']');
        if (close == NULL || !ip_literal(s + 1, (size_t)(close - s - 1)))
            return NULL;
        hl = (size_t)(close - s) + 1;
    } else {
        hl = span(s, reg_name_char);
    }
    copy(out->host, s, hl);
    s += hl;
    *port_text = NULL;
    if (*s == ':') {
        s++;
        *port_text = s;
        *port_len = 0;
        while (s[*port_len] >= '0' && s[*port_len] <= '9')
            (*port_len)++;
        s += *port_len;
    }
    return s;
}

/* path-abempty [ "?" query ] [ "#" fragment ], then the end */
static bool rest(const char *s, ready_url *out)
{
    const char *path = s;
    while (*s == '/')
        s += 1 + span(s + 1, pchar);
    if (s == path)
        copy(out->path, "/", 1);
    else
        copy(out->path, path, (size_t)(s - path));
    const char *query = s;
    if (*s == '?')
        s += 1 + span(s + 1, query_char);
    copy(out->query, query, (size_t)(s - query));
    if (*s == '#')
        s += 1 + span(s + 1, query_char);
    return *s == '\0';
}

/* http-client's readDec over the port digits: at least one */
static bool read_port(const char *digits, size_t len, long long *port)
{
    if (len == 0 || len > 18)
        return false;
    long long v = 0;
    for (size_t i = 0; i < len; i++)
        v = v * 10 + (digits[i] - '0');
    *port = v;
    return true;
}

ready_url_status ready_url_parse(const char *raw, char *escaped, ready_url *out)
{
    static const char scheme[] = "http://";
    if (!escape(raw, escaped) || strncmp(escaped, scheme, sizeof scheme - 1) != 0)
        return READY_URL_UNPARSABLE;
    const char *port_text;
    size_t port_len = 0;
    const char *s = authority(escaped + sizeof scheme - 1, out, &port_text, &port_len);
    if (s == NULL || !rest(s, out))
        return READY_URL_UNPARSABLE;
    out->port = 80;
    if (port_text != NULL && !read_port(port_text, port_len, &out->port))
        return READY_URL_BAD_PORT;
    return READY_URL_OK;
}

void ready_url_show(const ready_url *u, char *buf, size_t cap)
{
    if (u->port == 80)
        snprintf(buf, cap, "http://%s%s%s", u->host, u->path, u->query);
    else
        snprintf(buf, cap, "http://%s:%lld%s%s", u->host, u->port, u->path, u->query);
}
