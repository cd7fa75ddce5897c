#include "origin_form.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t scheme_length(const char *target)
{
    if (strncmp(target, "http://", 7) == 0)
        return 7;
    if (strncmp(target, "https://", 8) == 0)
        return 8;
    return 0;
}

char *origin_form(const char *target)
{
    size_t scheme = scheme_length(target);
    if (scheme == 0)
        return strdup(target);
    const char *authority = target + scheme;
    size_t path_end = strcspn(authority, "?");
    const char *path = memchr(authority, '/', path_end);
    const char *rest = path != NULL ? path : authority + path_end;
    size_t size = strlen(rest) + 2;
    char *out = malloc(size);
    if (out != NULL)
        snprintf(out, size, "%s%s", path != NULL ? "" : "/", rest);
    return out;
}
