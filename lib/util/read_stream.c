/* A whole stream read into memory, growing by doubling. */
#include "util/read_stream.h"

#include <stdlib.h>

char *pgr_read_stream(FILE *f, size_t *len)
{
    size_t cap = 4096, n = 0, got;
    char *buf = malloc(cap);
    while (buf != NULL && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 < cap)
            continue;
        char *grown = realloc(buf, cap * 2);
        if (grown == NULL) {
            free(buf);
            return NULL;
        }
        buf = grown;
        cap *= 2;
    }
    if (buf == NULL)
        return NULL;
    buf[n] = '\0';
    if (len != NULL)
        *len = n;
    return buf;
}
