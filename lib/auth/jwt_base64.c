/* base64url as jose reads JWS segments and JWK members, shared by the
 * key reader (jwt_keys.c) and the claims reader (jwt_json.c). */
#include "auth/jwt_internal.h"

#include "util/base64.h"

/* Decodes base64 or base64url, padding optional. Returns an arena buffer
 * (NUL-terminated) or NULL. */
unsigned char *pgr_jwt_b64_decode(pgrest_arena *a, const char *s, size_t n,
                                  size_t *out_len)
{
    unsigned char *out = pgr_alloc(a, pgr_base64_decoded_size(n));
    if (out == NULL || !pgr_base64_decode(s, n, PGR_BASE64_PADDING_OPTIONAL, out, out_len))
        return NULL;
    return out;
}
