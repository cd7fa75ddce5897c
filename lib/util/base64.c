#include "util/base64.h"

#include <limits.h>
#include <openssl/evp.h>
#include <stdlib.h>

/* The 6-bit value of one character of either alphabet, -1 for others. */
static int sextet(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

bool pgr_base64_decode(const char *s, size_t n, pgr_base64_padding padding,
                       unsigned char *out, size_t *out_len)
{
    size_t data = n;    /* the characters before the padding */
    while (data > 0 && s[data - 1] == '=')
        data--;
    if (padding == PGR_BASE64_PADDING_REQUIRED && (n % 4 != 0 || n - data > 2))
        return false;
    if (data % 4 == 1)  /* six bits cannot make a byte */
        return false;
    size_t o = 0;
    unsigned long bits = 0;
    int nbits = 0;
    for (size_t i = 0; i < data; i++) {
        int v = sextet(s[i]);
        if (v < 0)
            return false;
        bits = (bits << 6 | (unsigned long)v) & 0xffffff;
        nbits += 6;
        if (nbits >= 8) {
            nbits -= 8;
            out[o++] = (unsigned char)(bits >> nbits);
        }
    }
    out[o] = '\0';
    *out_len = o;
    return true;
}

char *pgr_base64_encode(const unsigned char *bytes, size_t n)
{
    if (n > INT_MAX / 4 * 3 - 3)
        return NULL;
    char *out = malloc((n + 2) / 3 * 4 + 1);
    if (out != NULL)
        EVP_EncodeBlock((unsigned char *)out, bytes, (int)n);
    return out;
}
