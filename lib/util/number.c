#include "util/number.h"

#include "util/arena.h"

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

/* Haskell's Generic float format, which formatRealFloat (show Double) and
 * Data.Scientific's formatScientific share: the value 0.d1..dn * 10^e,
 * d1 not zero and dn not zero (n >= 1), fixed with at least one decimal
 * for 0 <= e <= 7 (0.1 <= |x| < 10^7), else d.ddd e<e-1>. out holds
 * n + 32 bytes: the sign, a point, ".0" or seven zeros and an exponent. */
static void format_generic(char *out, size_t cap, bool negative, const char *d, int n,
                           long long e)
{
    const char *sign = negative ? "-" : "";
    if (e < 0 || e > 7)
        snprintf(out, cap, "%s%c.%.*se%lld", sign, d[0], n > 1 ? n - 1 : 1,
                 n > 1 ? d + 1 : "0", e - 1);
    else if (e == 0)
        snprintf(out, cap, "%s0.%.*s", sign, n, d);
    else if (n <= e)
        snprintf(out, cap, "%s%.*s%.*s.0", sign, n, d, (int)e - n, "0000000");
    else
        snprintf(out, cap, "%s%.*s.%.*s", sign, (int)e, d, n - (int)e, d + e);
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
    format_generic(buf, len, x < 0, ds, (int)strlen(ds), e);
}

/* A JSON number literal split as Data.Scientific holds it: sign, the
 * coefficient's digits (integer then fraction) and the exponent that
 * applies to them as written. */
typedef struct json_number {
    bool negative;
    const char *int_digits, *frac_digits;
    size_t int_n, frac_n;
    long long exp10;
} json_number;

/* Beyond this an exponent's remaining digits are not read: no literal
 * has that many digits, so the output is the same for every larger one. */
#define EXPONENT_SATURATION 1000000000000000LL

/* RFC 8259's number grammar, surrounding JSON whitespace allowed. */
static bool split_json_number(const char *text, json_number *num)
{
    const char *p = text + strspn(text, " \t\r\n");
    num->negative = *p == '-';
    p += num->negative;
    num->int_digits = p;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        p += strspn(p, "0123456789");
    else
        return false;
    num->int_n = (size_t)(p - num->int_digits);
    num->frac_digits = p;
    num->frac_n = 0;
    if (*p == '.') {
        num->frac_digits = ++p;
        num->frac_n = strspn(p, "0123456789");
        if (num->frac_n == 0)
            return false;
        p += num->frac_n;
    }
    num->exp10 = 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        bool exp_negative = *p == '-';
        p += *p == '-' || *p == '+';
        if (*p < '0' || *p > '9')
            return false;
        for (; *p >= '0' && *p <= '9'; p++)
            if (num->exp10 < EXPONENT_SATURATION)
                num->exp10 = num->exp10 * 10 + (*p - '0');
        num->exp10 = exp_negative ? -num->exp10 : num->exp10;
    }
    return p[strspn(p, " \t\r\n")] == '\0';
}

const char *pgr_aeson_number(pgrest_arena *a, const char *text)
{
    json_number num;
    if (!split_json_number(text, &num) || num.int_n + num.frac_n > INT_MAX / 2)
        return NULL;
    /* the coefficient's digits without leading zeros */
    char *digits = pgr_alloc(a, num.int_n + num.frac_n + 1);
    if (digits == NULL)
        return NULL;
    memcpy(digits, num.int_digits, num.int_n);
    memcpy(digits + num.int_n, num.frac_digits, num.frac_n);
    digits[num.int_n + num.frac_n] = '\0';
    const char *d = digits + strspn(digits, "0");
    int n = (int)strlen(d);
    long long exponent = num.exp10 - (long long)num.frac_n;   /* value = d * 10^exponent */
    bool integer = exponent >= 0 && exponent <= 1024;
    if (n == 0)                 /* zero: Scientific drops the sign */
        return integer ? "0" : "0.0";
    size_t cap = (size_t)n + (integer ? (size_t)exponent : 0) + 32;
    char *out = pgr_alloc(a, cap);
    if (out == NULL)
        return NULL;
    if (integer) {              /* Data.Aeson.Encoding.Builder.scientific: integerDec */
        char *end = out;
        if (num.negative)
            *end++ = '-';
        memcpy(end, d, (size_t)n);
        end += n;
        memset(end, '0', (size_t)exponent);
        end[exponent] = '\0';
        return out;
    }
    long long e = n + exponent; /* value = 0.d * 10^e */
    while (d[n - 1] == '0')     /* toDecimalDigits normalises */
        n--;
    format_generic(out, cap, num.negative, d, n, e);
    return out;
}
