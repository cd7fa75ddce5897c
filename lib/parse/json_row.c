/* One plain JSON object in one pass (see json_row.h): a loop over the
 * text with the open containers kept as bits (1: an object), so no
 * recursion and no allocation. Anything the grammar below does not take
 * declines the object, and its reader of last resort decides. */
#include "parse/json_row.h"

#include <limits.h>
#include <stdint.h>

#include "util/number.h"
#include "util/utf8.h"

enum { MAX_CONTAINERS = 64 };

/* What the scanners of one token answer when the text ends inside it
 * (0: declined). */
#define RAN_OUT SIZE_MAX

/* Bytes a string holds as they are: printable ASCII but '"' and '\\'. */
static const unsigned char string_plain[256] = {
    [' '] = 1, ['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1, ['('] = 1,
    [')'] = 1, ['*'] = 1, ['+'] = 1, [','] = 1, ['-'] = 1, ['.'] = 1, ['/'] = 1, ['0'] = 1,
    ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1,
    ['9'] = 1, [':'] = 1, [';'] = 1, ['<'] = 1, ['='] = 1, ['>'] = 1, ['?'] = 1, ['@'] = 1,
    ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1,
    ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1,
    ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1,
    ['Y'] = 1, ['Z'] = 1, ['['] = 1, [']'] = 1, ['^'] = 1, ['_'] = 1, ['`'] = 1, ['a'] = 1,
    ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1,
    ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1,
    ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1,
    ['z'] = 1, ['{'] = 1, ['|'] = 1, ['}'] = 1, ['~'] = 1, [0x7F] = 1,
};

static size_t skip_space(const char *s, size_t n, size_t i)
{
    while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r'))
        i++;
    return i;
}

/* The length of the UTF-8 sequence a lead byte starts (1 for any other). */
static size_t utf8_lead_len(unsigned char c)
{
    return c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
}

/* The code unit of the \u escape whose 'u' is at s[i], or -1. */
static long unicode_escape(const char *s, size_t n, size_t i)
{
    if (n - i < 5)
        return -1;
    long v = 0;
    for (size_t k = 1; k <= 4; k++) {
        int d = pgr_hex_value(s[i + k]);
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* After the string whose opening quote is at s[i], or 0 (declined), or
 * RAN_OUT; *escaped tells whether it holds an escape. */
static size_t string_end(const char *s, size_t n, size_t i, bool *escaped)
{
    for (i++;;) {
        while (i < n && string_plain[(unsigned char)s[i]])
            i++;
        if (i >= n)
            return RAN_OUT;
        char c = s[i];
        if (c == '"')
            return i + 1;
        if (c == '\\') {
            *escaped = true;
            if (n - i < 6 && (i + 1 == n || s[i + 1] == 'u'))
                return RAN_OUT;
            char e = s[i + 1];
            if (e == 'u') {
                long v = unicode_escape(s, n, i + 1);
                if (v <= 0 || (v >= 0xD800 && v <= 0xDFFF))
                    return 0;
                i += 6;
            } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' ||
                       e == 'n' || e == 'r' || e == 't') {
                i += 2;
            } else {
                return 0;
            }
            continue;
        }
        if ((unsigned char)c < 0x80)   /* a control character */
            return 0;
        size_t k = pgr_utf8_seq_len((const unsigned char *)s + i, n - i);
        if (k == 0)
            return n - i < utf8_lead_len((unsigned char)c) ? RAN_OUT : 0;
        i += k;
    }
}

static bool digit(const char *s, size_t n, size_t i)
{
    return i < n && s[i] >= '0' && s[i] <= '9';
}

/* After the number starting at s[i], or 0 (declined), or RAN_OUT (after
 * its digits the caller finds the text ended). */
static size_t number_end(const char *s, size_t n, size_t i)
{
    i += i < n && s[i] == '-';
    if (!digit(s, n, i))
        return i >= n ? RAN_OUT : 0;
    size_t from = i;
    if (s[i] == '0')
        i++;
    else
        while (digit(s, n, i))
            i++;
    if (i - from > 18)
        return 0;
    if (i < n && s[i] == '.') {
        if (!digit(s, n, ++i))
            return i >= n ? RAN_OUT : 0;
        while (digit(s, n, i))
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E'))
        return 0;
    return i;
}

static size_t word_end(const char *s, size_t n, size_t i, const char *word, size_t len)
{
    for (size_t k = 0; k < len; k++) {
        if (i + k >= n)
            return RAN_OUT;
        if (s[i + k] != word[k])
            return 0;
    }
    return i + len;
}

/* After the scalar (string, number, true, false, null) at s[i], or 0, or
 * RAN_OUT. */
static size_t scalar_end(const char *s, size_t n, size_t i)
{
    bool escaped = false;
    switch (s[i]) {
    case '"': return string_end(s, n, i, &escaped);
    case 't': return word_end(s, n, i, "true", 4);
    case 'f': return word_end(s, n, i, "false", 5);
    case 'n': return word_end(s, n, i, "null", 4);
    default: return number_end(s, n, i);
    }
}

typedef enum expect {
    KEY_OR_CLOSE,   /* after '{' */
    KEY,            /* after ',' in an object */
    COLON,          /* after a key */
    VALUE,          /* after ':', or ',' in an array */
    VALUE_OR_CLOSE, /* after '[' */
    AFTER_VALUE     /* ',' or the container's close */
} expect;

/* After the plain object whose '{' is at s[i], or 0 (declined; *short_text:
 * the text ended first, all of it plain so far). */
static size_t object_end(const char *s, size_t n, size_t i, int max_containers,
                         pgr_json_member_fn member, void *ctx, bool *short_text)
{
    *short_text = false;
    if (max_containers > MAX_CONTAINERS)
        max_containers = MAX_CONTAINERS;
    if (max_containers < 1 || i >= n || s[i] != '{')
        return 0;
    uint64_t objects = 1;   /* bit d-1: the container at depth d is an object */
    int depth = 1;
    expect want = KEY_OR_CLOSE;
    const char *key = NULL;
    size_t key_len = 0, value_at = 0;
    bool key_escaped = false;
    for (i++;;) {
        i = skip_space(s, n, i);
        if (i >= n) {
            *short_text = true;
            return 0;
        }
        char c = s[i];
        bool in_object = objects >> (depth - 1) & 1;
        switch (want) {
        case KEY_OR_CLOSE:
        case VALUE_OR_CLOSE:
            if (c == (want == KEY_OR_CLOSE ? '}' : ']'))
                goto close;
            want = want == KEY_OR_CLOSE ? KEY : VALUE;
            continue;
        case KEY: {
            if (c != '"')
                return 0;
            bool escaped = false;
            size_t end = string_end(s, n, i, &escaped);
            if (end == 0 || end == RAN_OUT) {
                *short_text = end == RAN_OUT;
                return 0;
            }
            if (depth == 1) {
                key = s + i + 1;
                key_len = end - i - 2;
                key_escaped = escaped;
            }
            i = end;
            want = COLON;
            continue;
        }
        case COLON:
            if (c != ':')
                return 0;
            i++;
            want = VALUE;
            continue;
        case VALUE:
            if (depth == 1)
                value_at = i;
            if (c == '{' || c == '[') {
                if (depth == max_containers)
                    return 0;
                objects = c == '{' ? objects | (uint64_t)1 << depth
                                   : objects & ~((uint64_t)1 << depth);
                depth++;
                i++;
                want = c == '{' ? KEY_OR_CLOSE : VALUE_OR_CLOSE;
                continue;
            }
            {
                size_t end = scalar_end(s, n, i);
                if (end == 0 || end == RAN_OUT) {
                    *short_text = end == RAN_OUT;
                    return 0;
                }
                i = end;
            }
            break;
        case AFTER_VALUE:
            if (c == ',') {
                i++;
                want = in_object ? KEY : VALUE;
                continue;
            }
            if (c == (in_object ? '}' : ']'))
                goto close;
            return 0;
        }
        /* a value ended at i */
        if (depth == 1 &&
            !member(ctx, key, key_len, key_escaped, s + value_at, i - value_at))
            return 0;
        want = AFTER_VALUE;
        continue;
    close:
        i++;
        if (--depth == 0)
            return i;
        if (depth == 1 &&
            !member(ctx, key, key_len, key_escaped, s + value_at, i - value_at))
            return 0;
        want = AFTER_VALUE;
    }
}

/* json-c reads at most INT_MAX bytes */
bool pgr_json_row_plain(const char *s, size_t n, int max_containers,
                        pgr_json_member_fn member, void *ctx)
{
    bool short_text;
    size_t end = n <= INT_MAX ? object_end(s, n, skip_space(s, n, 0), max_containers, member,
                                           ctx, &short_text)
                              : 0;
    return end != 0 && skip_space(s, n, end) == n;
}

pgr_json_row_verdict pgr_json_row_plain_prefix(const char *s, size_t n, int max_containers,
                                               pgr_json_member_fn member, void *ctx,
                                               size_t *end)
{
    bool short_text;
    *end = object_end(s, n, 0, max_containers, member, ctx, &short_text);
    if (*end != 0 && *end <= INT_MAX)
        return PGR_JSON_ROW_TAKEN;
    return short_text && n <= INT_MAX ? PGR_JSON_ROW_SHORT : PGR_JSON_ROW_DECLINED;
}
