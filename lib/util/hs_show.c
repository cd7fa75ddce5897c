#include "util/hs_show.h"

#include <stdlib.h>
#include <string.h>

#include "pgrest/pgrest.h"

/* GHC.Show asciiTab: the names of the control characters below ' '. */
static const char *const ascii_names[32] = {
    "NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "a",  "b",  "t",  "n",
    "v",   "f",   "r",   "SO",  "SI",  "DLE", "DC1", "DC2", "DC3", "DC4", "NAK",
    "SYN", "ETB", "CAN", "EM",  "SUB", "ESC", "FS",  "GS",  "RS",  "US",
};

void pgr_hs_show_lit_char(pgr_sb *sb, unsigned long cp, char quote, bool *numeric_prev,
                          bool *so_prev)
{
    /* a numeric escape followed by a digit, and \SO followed by 'H', need
     * the empty escape \& to stay unambiguous */
    if ((*numeric_prev && cp >= '0' && cp <= '9') || (*so_prev && cp == 'H'))
        pgr_sb_puts(sb, "\\&");
    *numeric_prev = *so_prev = false;
    if (cp == (unsigned long)(unsigned char)quote) {
        pgr_sb_putc(sb, '\\');
        pgr_sb_putc(sb, quote);
    } else if (cp == '\\') {
        pgr_sb_puts(sb, "\\\\");
    } else if (cp < 32) {
        pgr_sb_putc(sb, '\\');
        pgr_sb_puts(sb, ascii_names[cp]);
        *so_prev = cp == 14;
    } else if (cp == 127) {
        pgr_sb_puts(sb, "\\DEL");
    } else if (cp > 127) {
        pgr_sb_putc(sb, '\\');
        pgr_sb_put_long(sb, (long long)cp);
        *numeric_prev = true;
    } else {
        pgr_sb_putc(sb, (char)cp);
    }
}

/* One UTF-8 code point at *p (advanced); U+FFFD for a malformed byte. */
static unsigned long next_code_point(const unsigned char **p)
{
    const unsigned char *s = *p;
    int len = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3
                              : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (len == 0) {
        *p = s + 1;
        return 0xFFFD;
    }
    unsigned long cp = len == 1 ? s[0] : (unsigned long)(s[0] & (0x7F >> len));
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *p = s + 1;
            return 0xFFFD;
        }
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    *p = s + len;
    return cp;
}

void pgr_hs_show_cstring(pgr_sb *sb, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    bool numeric_prev = false, so_prev = false;
    pgr_sb_putc(sb, '"');
    while (*p)
        pgr_hs_show_lit_char(sb, next_code_point(&p), '"', &numeric_prev, &so_prev);
    pgr_sb_putc(sb, '"');
}

void pgr_hs_show_bytes(pgr_sb *sb, const char *s)
{
    bool numeric_prev = false, so_prev = false;
    pgr_sb_putc(sb, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        pgr_hs_show_lit_char(sb, *p, '"', &numeric_prev, &so_prev);
    pgr_sb_putc(sb, '"');
}

char *hs_show_string(const char *s)
{
    pgrest_arena *a = pgrest_arena_new(0);
    if (a == NULL)
        return NULL;
    pgr_sb sb;
    pgr_sb_init(&sb, a, strlen(s) + 16);
    pgr_hs_show_cstring(&sb, s);
    const char *shown = pgr_sb_finish(&sb);
    char *copy = shown ? strdup(shown) : NULL;
    pgrest_arena_free(a);
    return copy;
}
