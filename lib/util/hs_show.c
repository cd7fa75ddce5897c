#include "util/hs_show.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* GHC.Show asciiTab: the names of the control characters below ' '. */
static const char *const ascii_names[32] = {
    "NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "a",  "b",  "t",  "n",
    "v",   "f",   "r",   "SO",  "SI",  "DLE", "DC1", "DC2", "DC3", "DC4", "NAK",
    "SYN", "ETB", "CAN", "EM",  "SUB", "ESC", "FS",  "GS",  "RS",  "US",
};

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

void hs_show(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', out);
    while (*p) {
        unsigned long c = next_code_point(&p);
        /* a numeric escape followed by a digit, and \SO followed by 'H',
         * need the empty escape \& to stay unambiguous */
        bool numeric = false, so = false;
        if (c == '"')
            fputs("\\\"", out);
        else if (c == '\\')
            fputs("\\\\", out);
        else if (c >= 0x20 && c < 0x7F)
            fputc((int)c, out);
        else if (c < 0x20) {
            fprintf(out, "\\%s", ascii_names[c]);
            so = c == 0x0E;
        } else if (c == 0x7F)
            fputs("\\DEL", out);
        else {
            fprintf(out, "\\%lu", c);
            numeric = true;
        }
        if ((numeric && *p >= '0' && *p <= '9') || (so && *p == 'H'))
            fputs("\\&", out);
    }
    fputc('"', out);
}

char *hs_show_string(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        return NULL;
    hs_show(f, s);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}
