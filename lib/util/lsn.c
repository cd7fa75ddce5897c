#include "util/lsn.h"

#include <stdio.h>

#include "util/number.h"

/* 1 to 8 hex digits from s[*i], stopping at stop or the end. */
static bool hex_part(const char *s, size_t len, size_t *i, uint32_t *out)
{
    uint64_t v = 0;
    size_t start = *i;
    while (*i < len && *i - start < 9) {
        int d = pgr_hex_value(s[*i]);
        if (d < 0)
            break;
        v = v * 16 + (uint64_t)d;
        (*i)++;
    }
    size_t n = *i - start;
    if (n == 0 || n > 8)
        return false;
    *out = (uint32_t)v;
    return true;
}

bool pgr_lsn_parse(const char *s, size_t len, uint64_t *out)
{
    if (s == NULL)
        return false;
    size_t i = 0;
    uint32_t hi, lo;
    if (!hex_part(s, len, &i, &hi) || i >= len || s[i] != '/')
        return false;
    i++;
    if (!hex_part(s, len, &i, &lo) || i != len)
        return false;
    *out = ((uint64_t)hi << 32) | lo;
    return true;
}

void pgr_lsn_format(uint64_t lsn, char buf[PGR_LSN_LEN])
{
    snprintf(buf, PGR_LSN_LEN, "%X/%X", (unsigned)(lsn >> 32), (unsigned)(lsn & 0xffffffffu));
}
