#include "util/qualified_ident.h"

#include <string.h>

bool pgr_to_qi(pgrest_arena *a, const char *text, pgr_qualified_ident *out)
{
    const char *dot = strchr(text, '.');
    if (dot == NULL || dot[1] == '\0') {
        /* T.breakOn "." then T.drop 1 leaves nothing after the dot */
        out->schema = "";
        out->name = dot == NULL ? text : pgr_strndup(a, text, (size_t)(dot - text));
    } else {
        out->schema = pgr_strndup(a, text, (size_t)(dot - text));
        out->name = dot + 1;
    }
    return out->schema != NULL && out->name != NULL;
}
