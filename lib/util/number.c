#include "util/number.h"

#include <limits.h>

static const char *skip_space(const char *s)
{
    while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
        s++;
    return s;
}

bool pgr_read_integer(const char *s, bool trim, long long *out)
{
    if (trim)
        s = skip_space(s);
    bool neg = *s == '-';
    if (neg)
        s++;
    if (*s < '0' || *s > '9')
        return false;
    long long v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > (LLONG_MAX - (*s - '0')) / 10)
            return false;
        v = v * 10 + (*s - '0');
    }
    if (trim)
        s = skip_space(s);
    if (*s != '\0')
        return false;
    *out = neg ? -v : v;
    return true;
}

int pgr_hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}
