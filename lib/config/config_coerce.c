#include "config/config_coerce.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <strings.h>

static const char *skip_ws(const char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

/* One number lexeme: decimal, 0x/0X hexadecimal or 0o/0O octal digits. */
static const char *read_natural(const char *p, long long *out)
{
    int base = 10;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && isxdigit((unsigned char)p[2])) {
        base = 16;
        p += 2;
    } else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O') && p[2] >= '0' && p[2] <= '7') {
        base = 8;
        p += 2;
    } else if (!isdigit((unsigned char)*p)) {
        return NULL;    /* strtoll would also take white space and a sign */
    }
    char *end = NULL;
    errno = 0;
    long long n = strtoll(p, &end, base);
    if (errno != 0 || end == p)
        return NULL;
    *out = n;
    return end;
}

/* GHC.Read readNumber: `parens` (any number of balanced parentheses)
 * around an optional "-" lexeme and the number, white space between
 * lexemes -- so "(5)", "- 5" and " ( -0x10 ) " all read. Counting the
 * parentheses instead of recursing keeps the stack flat on any input. */
bool pgr_coerce_int_text(const char *s, long long *out)
{
    const char *p = skip_ws(s);
    size_t open = 0;
    for (; *p == '('; p = skip_ws(p + 1))
        open++;
    bool neg = *p == '-';
    if (neg)
        p = skip_ws(p + 1);
    long long n;
    p = read_natural(p, &n);
    if (p == NULL)
        return false;
    for (p = skip_ws(p); open > 0 && *p == ')'; p = skip_ws(p + 1))
        open--;
    if (open != 0 || *p != '\0')
        return false;
    *out = neg ? -n : n;
    return true;
}

bool pgr_coerce_bool_text(const char *s, bool *out)
{
    /* T.filter isAlpha, then T.toTitle and `read`: only the letters count,
     * and only "true"/"false" in any case read as a Bool */
    char letters[8];
    size_t n = 0;
    bool too_long = false;
    for (const char *p = s; *p; p++)
        if (isalpha((unsigned char)*p) || (unsigned char)*p >= 0x80) {
            if (n + 1 < sizeof letters)
                letters[n++] = *p;
            else
                too_long = true;
        }
    letters[n] = '\0';
    if (!too_long && (strcasecmp(letters, "true") == 0 || strcasecmp(letters, "false") == 0)) {
        *out = strcasecmp(letters, "true") == 0;
        return true;
    }
    long long i;
    if (pgr_coerce_int_text(s, &i)) {
        *out = i > 0;
        return true;
    }
    return false;
}
