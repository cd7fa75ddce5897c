#include "util/utf8.h"

#include "util/strbuf.h"

/* The table of well-formed byte sequences (Unicode 15, table 3-7): the
 * second byte's range depends on the first byte. */
size_t pgr_utf8_seq_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return len;
}

bool pgr_utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = pgr_utf8_seq_len(p + i, n - i);
        if (k == 0)
            return false;
        i += k;
    }
    return true;
}

const char *pgr_utf8_lenient(pgrest_arena *a, const char *s, size_t n,
                             size_t *out_len)
{
    if (out_len != NULL)
        *out_len = n;
    if (pgr_utf8_valid(s, n))
        return s;
    pgr_sb sb;
    pgr_sb_init(&sb, a, n + 16);
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = pgr_utf8_seq_len(p + i, n - i);
        if (k == 0) {
            pgr_sb_puts(&sb, "\xEF\xBF\xBD"); /* U+FFFD */
            i++;
        } else {
            pgr_sb_putn(&sb, s + i, k);
            i += k;
        }
    }
    if (out_len != NULL)
        *out_len = sb.len;
    return pgr_sb_finish(&sb);
}
