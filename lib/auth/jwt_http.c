/* The JWT in HTTP headers: the Bearer token of Authorization (wai-extra's
 * extractBearerAuth) and the WWW-Authenticate of a 401 (Error.hs). */
#include "auth/jwt_internal.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Word8's isSpace, as wai-extra's extractBearerAuth splits with it. */
static bool is_word8_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

const char *pgr_jwt_bearer_token(const char *authorization)
{
    const char *p = authorization;
    while (*p != '\0' && !is_word8_space((unsigned char)*p))
        p++;
    if (p - authorization != 6 || strncasecmp(authorization, "bearer", 6) != 0)
        return NULL;
    while (is_word8_space((unsigned char)*p))
        p++;
    return p;
}

/* Error.hs invalidTokenHeader: the message as Haskell's `show` quotes it. */
const char *pgr_jwt_www_authenticate(pgrest_arena *a, const pgrest_error *err)
{
    if (err == NULL || err->http_status != 401)
        return NULL;
    if (err->code == NULL || (strcmp(err->code, "PGRST301") != 0 &&
                              strcmp(err->code, "PGRST303") != 0))
        return "Bearer";
    pgr_sb sb;
    pgr_sb_init(&sb, a, 96);
    pgr_sb_puts(&sb, "Bearer error=\"invalid_token\", error_description=\"");
    for (const char *p = err->message ? err->message : ""; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\')
            pgr_sb_putc(&sb, '\\');
        pgr_sb_putc(&sb, *p);
    }
    pgr_sb_putc(&sb, '"');
    return pgr_sb_finish(&sb);
}
