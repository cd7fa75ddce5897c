#include "util/number.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The shortest digits that read back as x, and the exponent e with
 * x = 0.d1d2... * 10^e (Haskell's floatToDigits). x > 0, finite. */
static void shortest_digits(double x, char *digits, size_t len, int *e)
{
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    char *exp = strchr(buf, 'e');
    /* %e wrote the exponent: at most three digits and a sign */
    *e = (int)strtol(exp + 1, NULL, 10) + 1;
    size_t n = 0;
    for (const char *p = buf; p < exp && n + 1 < len; p++)
        if (*p != '.')
            digits[n++] = *p;
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
}

void pgr_show_double(double x, char *buf, size_t len)
{
    if (x == 0 || !isfinite(x)) {
        snprintf(buf, len, "%s", x == 0 ? "0.0" : isnan(x) ? "NaN" : x > 0 ? "Infinity" : "-Infinity");
        return;
    }
    char ds[24];
    int e;
    shortest_digits(fabs(x), ds, sizeof ds, &e);
    const char *sign = x < 0 ? "-" : "";
    int n = (int)strlen(ds);
    if (e < 0 || e > 7)
        snprintf(buf, len, "%s%c.%se%d", sign, ds[0], ds[1] ? ds + 1 : "0", e - 1);
    else if (e == 0)
        snprintf(buf, len, "%s0.%s", sign, ds);
    else if (n <= e)
        snprintf(buf, len, "%s%s%.*s.0", sign, ds, e - n, "0000000");
    else
        snprintf(buf, len, "%s%.*s.%s", sign, e, ds, ds + e);
}
