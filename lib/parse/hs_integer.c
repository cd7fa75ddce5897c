/* Haskell Integer reading and arithmetic for limit/offset/Range (PostgREST
 * RangeQuery.hs, QueryParams.hs `readMaybe v`). */
#include "parse/hs_integer.h"

#include <stdint.h>
#include <string.h>

#include "util/error.h"
#include "util/strbuf.h"
#include "util/number.h"

/* ------------------------------------------------------------ magnitudes */

static const char *strip_zeros(const char *d, size_t n, size_t *len)
{
    while (n > 1 && *d == '0') {
        d++;
        n--;
    }
    *len = n;
    return d;
}

/* A NULL magnitude (an allocation the arena refused) compares equal:
 * the stage fails on the exhausted arena anyway. */
static int mag_cmp(const char *x, const char *y)
{
    if (x == NULL || y == NULL)
        return 0;
    size_t nx = strlen(x), ny = strlen(y);
    if (nx != ny)
        return nx < ny ? -1 : 1;
    int c = strcmp(x, y);
    return c < 0 ? -1 : c > 0;
}

static const char *finish(pgrest_arena *a, char *buf, size_t start, size_t cap)
{
    size_t n;
    const char *d = strip_zeros(buf + start, cap - start, &n);
    return pgr_strndup(a, d, n);
}

static const char *mag_add(pgrest_arena *a, const char *x, const char *y)
{
    size_t nx = strlen(x), ny = strlen(y), cap = (nx > ny ? nx : ny) + 1;
    char *buf = pgr_alloc(a, cap);
    if (buf == NULL)
        return NULL;
    int carry = 0;
    for (size_t i = 0; i < cap; i++) {
        int d = carry + (i < nx ? x[nx - 1 - i] - '0' : 0) +
                (i < ny ? y[ny - 1 - i] - '0' : 0);
        buf[cap - 1 - i] = (char)('0' + d % 10);
        carry = d / 10;
    }
    return finish(a, buf, 0, cap);
}

/* x - y with x >= y */
static const char *mag_sub(pgrest_arena *a, const char *x, const char *y)
{
    size_t nx = strlen(x), ny = strlen(y);
    char *buf = pgr_alloc(a, nx);
    if (buf == NULL)
        return NULL;
    int borrow = 0;
    for (size_t i = 0; i < nx; i++) {
        int d = x[nx - 1 - i] - '0' - borrow - (i < ny ? y[ny - 1 - i] - '0' : 0);
        borrow = d < 0;
        buf[nx - 1 - i] = (char)('0' + (d + 10) % 10);
    }
    return finish(a, buf, 0, nx);
}

/* The value of the base-8 or base-16 digits s[0..k) (k <= 11 octal or 8
 * hex digits: below 2^33). */
static uint64_t chunk_value(const char *s, size_t k, int base)
{
    uint64_t v = 0;
    for (size_t i = 0; i < k; i++)
        v = v * (uint64_t)base + (uint64_t)pgr_hex_value(s[i]);
    return v;
}

/* limb[0..*used) (base 10^9, least significant first) = limb * mul + add;
 * mul <= 2^33 keeps limb * mul + carry below 2^64 (carry < 2^34). */
static void limbs_mul_add(uint32_t *limb, size_t *used, size_t cap,
                          uint64_t mul, uint64_t add)
{
    uint64_t carry = add;
    for (size_t k = 0; k < *used; k++) {
        uint64_t v = (uint64_t)limb[k] * mul + carry;
        limb[k] = (uint32_t)(v % 1000000000u);
        carry = v / 1000000000u;
    }
    while (carry > 0 && *used < cap) {
        limb[(*used)++] = (uint32_t)(carry % 1000000000u);
        carry /= 1000000000u;
    }
}

/* The decimal text of the base-8 or base-16 digits s[0..n) (no leading
 * zeros), through base-10^9 limbs. Still quadratic, as the decimal text
 * has to be written whole (it is what PostgreSQL's 22003 message shows),
 * but it takes 32 or 33 bits per pass over the limbs rather than 4 or 3:
 * 8 hex or 11 octal digits at a time. */
static const char *from_base(pgrest_arena *a, const char *s, size_t n, int base)
{
    size_t cap = n * 2 / 9 + 2; /* 16^n < 10^(1.21 n) */
    uint32_t *limb = PGR_NEW_ARRAY(a, uint32_t, cap);
    if (limb == NULL)
        return NULL;
    size_t used = 1;
    limb[0] = 0;
    size_t per = base == 16 ? 8 : 11;
    /* the first chunk takes the n % per digits so the rest are whole */
    size_t k = n % per == 0 ? per : n % per;
    for (size_t i = 0; i < n; i += k, k = per) {
        uint64_t mul = (uint64_t)1 << (k * (base == 16 ? 4 : 3));
        limbs_mul_add(limb, &used, cap, mul, chunk_value(s + i, k, base));
    }
    pgr_sb sb;
    pgr_sb_init(&sb, a, used * 9 + 1);
    pgr_sb_put_long(&sb, (long long)limb[used - 1]);
    for (size_t j = used - 1; j-- > 0;) {
        char part[10];
        uint32_t v = limb[j];
        for (int d = 8; d >= 0; d--, v /= 10)
            part[d] = (char)('0' + v % 10);
        pgr_sb_putn(&sb, part, 9);
    }
    return pgr_sb_finish(&sb);
}

/* ------------------------------------------------------------ signed */

int pgr_hs_cmp(pgr_hs_int x, pgr_hs_int y)
{
    if (x.neg != y.neg)
        return x.neg ? -1 : 1;
    int c = mag_cmp(x.digits, y.digits);
    return x.neg ? -c : c;
}

static pgr_hs_int make(bool neg, const char *digits)
{
    pgr_hs_int r = {neg && digits != NULL && strcmp(digits, "0") != 0, digits};
    return r;
}

pgr_hs_int pgr_hs_add(pgrest_arena *a, pgr_hs_int x, pgr_hs_int y)
{
    /* an operand the arena could not hold: the result is missing too */
    if (x.digits == NULL || y.digits == NULL)
        return make(false, NULL);
    if (x.neg == y.neg)
        return make(x.neg, mag_add(a, x.digits, y.digits));
    if (mag_cmp(x.digits, y.digits) >= 0)
        return make(x.neg, mag_sub(a, x.digits, y.digits));
    return make(y.neg, mag_sub(a, y.digits, x.digits));
}

pgr_hs_int pgr_hs_sub(pgrest_arena *a, pgr_hs_int x, pgr_hs_int y)
{
    if (x.digits == NULL || y.digits == NULL)
        return make(false, NULL);
    y.neg = !y.neg && strcmp(y.digits, "0") != 0;
    return pgr_hs_add(a, x, y);
}

pgr_hs_int pgr_hs_from_ll(pgrest_arena *a, long long v)
{
    unsigned long long m = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    char buf[24];
    size_t i = sizeof(buf);
    do {
        buf[--i] = (char)('0' + m % 10);
        m /= 10;
    } while (m > 0);
    return make(v < 0, pgr_strndup(a, buf + i, sizeof(buf) - i));
}

bool pgr_hs_to_ll(pgr_hs_int x, long long *out)
{
    /* |LLONG_MIN| = 9223372036854775808 */
    const char *lim = x.neg ? "9223372036854775808" : "9223372036854775807";
    if (x.digits == NULL)
        return false;
    if (mag_cmp(x.digits, lim) > 0)
        return false;
    unsigned long long m = 0;
    for (const char *p = x.digits; *p; p++)
        m = m * 10 + (unsigned long long)(*p - '0');
    *out = x.neg ? (long long)(0ULL - m) : (long long)m;
    return true;
}

long long pgr_hs_to_int64_wrapped(pgr_hs_int x)
{
    /* fromInteger :: Integer -> Int64 keeps the value modulo 2^64 */
    uint64_t m = 0;
    for (const char *p = x.digits; p != NULL && *p; p++)
        m = m * 10u + (uint64_t)(*p - '0');
    if (x.neg)
        m = 0u - m;
    return m <= (uint64_t)INT64_MAX ? (long long)m
                                    : -(long long)(UINT64_MAX - m) - 1;
}

const char *pgr_hs_show(pgrest_arena *a, pgr_hs_int x)
{
    if (x.digits == NULL)
        return "";
    return x.neg ? pgr_asprintf(a, "-%s", x.digits) : x.digits;
}

/* ------------------------------------------------------------ reading */

/* Data.Char.isSpace on UTF-8: the Latin-1 and Unicode space separators;
 * the byte length of the space at s[i], 0 if none */
static size_t space_at(const unsigned char *s, size_t n, size_t i)
{
    unsigned char c = s[i];
    if (c == ' ' || (c >= '\t' && c <= '\r'))
        return 1;
    if (c == 0xC2 && i + 1 < n && s[i + 1] == 0xA0)
        return 2;
    if (i + 2 >= n)
        return 0;
    unsigned cp = ((c & 0x0Fu) << 12) | ((s[i + 1] & 0x3Fu) << 6) | (s[i + 2] & 0x3Fu);
    bool three = (c & 0xF0) == 0xE0 && (s[i + 1] & 0xC0) == 0x80 &&
                 (s[i + 2] & 0xC0) == 0x80;
    if (three && (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
                  cp == 0x202F || cp == 0x205F || cp == 0x3000))
        return 3;
    return 0;
}

static size_t skip_spaces(const char *s, size_t n, size_t i)
{
    size_t k;
    while (i < n && (k = space_at((const unsigned char *)s, n, i)) > 0)
        i += k;
    return i;
}

/* The decimal text of the digits s[0..n) in base, modulo 2^64: all
 * fromInteger :: Integer -> Int64 keeps, in one pass. */
static const char *mod64_digits(pgrest_arena *a, const char *s, size_t n, int base)
{
    uint64_t m = 0;
    for (size_t i = 0; i < n; i++)
        m = m * (uint64_t)base + (uint64_t)pgr_hex_value(s[i]);
    char buf[24];
    size_t k = sizeof buf;
    do {
        buf[--k] = (char)('0' + m % 10);
        m /= 10;
    } while (m > 0);
    return pgr_strndup(a, buf + k, sizeof buf - k);
}

/* a numeric lexeme: decimal, 0x.. or 0o..; anything glued to it that
 * would make another lexeme (letters, '.', '_', digits of the wrong base)
 * makes the read fail as Haskell's lexer does. mod64: the digits only
 * modulo 2^64 (an Int64 reader needs no more) */
static bool read_number(pgrest_arena *a, const char *s, size_t n, size_t *i,
                        bool mod64, const char **digits, bool *oom)
{
    size_t p = *i;
    int base = 10;
    if (s[p] == '0' && p + 2 < n) {
        int r = s[p + 1] | 0x20, d = pgr_hex_value(s[p + 2]);
        if (r == 'x' && d >= 0)
            base = 16;
        else if (r == 'o' && d >= 0 && d < 8)
            base = 8;
        if (base != 10)
            p += 2;
    }
    size_t start = p;
    while (p < n && pgr_hex_value(s[p]) >= 0 && pgr_hex_value(s[p]) < base)
        p++;
    if (p == start)
        return false;
    /* "1.5", "1e3", "12abc": not an Integer lexeme */
    if (p < n && (s[p] == '.' || s[p] == '_' || s[p] == '\'' ||
                  (s[p] | 0x20) == 'e' || (unsigned char)s[p] >= 0x80 ||
                  ((s[p] | 0x20) >= 'a' && (s[p] | 0x20) <= 'z') ||
                  (s[p] >= '0' && s[p] <= '9')))
        return false;
    size_t len;
    const char *d = strip_zeros(s + start, p - start, &len);
    *digits = mod64 ? mod64_digits(a, d, len, base)
              : base == 10 ? pgr_strndup(a, d, len)
                           : from_base(a, d, len, base);
    if (*digits == NULL) {
        *oom = true;
        return false;
    }
    *i = p;
    return true;
}

/* readNumber: parens (optional '-' then a number), spaces between lexemes */
static bool read_parens(pgrest_arena *a, const char *s, size_t n, size_t *i,
                        bool mod64, pgr_hs_int *out, bool *oom, int depth)
{
    size_t p = skip_spaces(s, n, *i);
    if (p < n && s[p] == '(' && depth < 64) {
        p++;
        if (!read_parens(a, s, n, &p, mod64, out, oom, depth + 1))
            return false;
        p = skip_spaces(s, n, p);
        if (p >= n || s[p] != ')')
            return false;
        *i = p + 1;
        return true;
    }
    bool neg = false;
    if (p < n && s[p] == '-') {
        /* a lone '-' symbol: "--" or "-+" lex as other symbols */
        if (p + 1 < n && strchr("!#$%&*+./<=>?@\\^|-~:", s[p + 1]) != NULL &&
            s[p + 1] != '\0')
            return false;
        neg = true;
        p = skip_spaces(s, n, p + 1);
    }
    const char *digits;
    if (!read_number(a, s, n, &p, mod64, &digits, oom))
        return false;
    *out = make(neg, digits);
    *i = p;
    return true;
}

static bool read_whole(pgrest_arena *a, const char *s, size_t n, bool mod64,
                       pgr_hs_int *out, bool *oom)
{
    size_t i = 0;
    *oom = false;
    if (!read_parens(a, s, n, &i, mod64, out, oom, 0))
        return false;
    return skip_spaces(s, n, i) == n;
}

bool pgr_hs_read_integer(pgrest_arena *a, const char *s, size_t n,
                         pgr_hs_int *out, bool *oom)
{
    return read_whole(a, s, n, false, out, oom);
}

bool pgr_hs_read_int64_wrapped(pgrest_arena *a, const char *s, size_t n,
                               long long *out, bool *oom)
{
    pgr_hs_int v;
    if (!read_whole(a, s, n, true, &v, oom))
        return false;
    *out = pgr_hs_to_int64_wrapped(v);
    return true;
}

bool pgr_hs_digits(pgrest_arena *a, const char *s, size_t n, pgr_hs_int *out)
{
    size_t len;
    const char *d = strip_zeros(s, n, &len);
    out->neg = false;
    out->digits = pgr_strndup(a, d, len);
    return out->digits != NULL;
}
