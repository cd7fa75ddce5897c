/* Fuzz target: origin_form (server/origin_form.c), the request target
 * as Warp's extractPath leaves it, on arbitrary bytes up to the first NUL
 * (MHD hands the target on as a C string). The result is the target
 * itself, or a suffix of it that starts the path, or "/" before the
 * query; the query is kept whole. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "origin_form.h"

static int has_scheme(const char *t)
{
    return strncmp(t, "http://", 7) == 0 || strncmp(t, "https://", 8) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *target = malloc(size + 1);
    if (target == NULL)
        return 0;
    memcpy(target, data, size);
    target[size] = '\0';
    char *out = origin_form(target);
    if (out == NULL)
        abort();
    size_t n = strlen(target), m = strlen(out);
    if (!has_scheme(target)) {
        if (strcmp(out, target) != 0)
            abort();
    } else {
        const char *authority = target + (target[4] == 's' ? 8 : 7);
        const char *query = strchr(authority, '?');
        if (out[0] != '/')
            abort();
        /* a suffix of the target, or "/" and one */
        if (!(m <= n && strcmp(out, target + n - m) == 0) &&
            !(m >= 1 && strcmp(out + 1, target + n - (m - 1)) == 0))
            abort();
        if (query != NULL && (m < strlen(query) || strcmp(out + m - strlen(query), query) != 0))
            abort();
    }
    free(out);
    free(target);
    return 0;
}
