/* Base64 decoding for the two readers PostgREST has: jose's base64url for
 * JWS segments and JWK members, and Data.ByteString.Base64.decode for
 * jwt-secret-is-base64 (Config.hs decodeSecret); and the standard padded
 * encoding --dump-config shows a base64 secret in. */
#ifndef PGR_BASE64_H
#define PGR_BASE64_H

#include <stdbool.h>
#include <stddef.h>

typedef enum pgr_base64_padding {
    /* any number of trailing '=' or none (RFC 7515 base64url omits it) */
    PGR_BASE64_PADDING_OPTIONAL,
    /* a multiple of four characters, at most two of them trailing '=' */
    PGR_BASE64_PADDING_REQUIRED,
} pgr_base64_padding;

/* The bytes out must hold to decode n characters, its NUL included. */
static inline size_t pgr_base64_decoded_size(size_t n)
{
    return n / 4 * 3 + 3;
}

/* Decodes n characters of s, either alphabet ("+/" or the URL-safe "-_",
 * even mixed), into out (pgr_base64_decoded_size(n) bytes), NUL-terminated,
 * and sets *out_len. Bits beyond the last byte are ignored, as OpenSSL's
 * and base64-bytestring's decoders do. False on any other character, on a
 * lone final character, or on padding the mode refuses. */
bool pgr_base64_decode(const char *s, size_t n, pgr_base64_padding padding,
                       unsigned char *out, size_t *out_len);

/* The n bytes as padded standard base64 (OpenSSL's EVP_EncodeBlock), a
 * malloc'd string; NULL on OOM. */
char *pgr_base64_encode(const unsigned char *bytes, size_t n);

#endif
