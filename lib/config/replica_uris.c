#include "config/replica_uris.h"

#include <string.h>

#include "util/error.h"

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static size_t uri_scheme_len(const char *s)
{
    if (strncmp(s, "postgresql://", 13) == 0)
        return 13;
    if (strncmp(s, "postgres://", 11) == 0)
        return 11;
    return 0;
}

/* A separating comma: blanks, then a URI's scheme. */
static bool separating_comma(const char *p)
{
    if (*p != ',')
        return false;
    p++;
    while (blank(*p))
        p++;
    return uri_scheme_len(p) > 0;
}

/* The end of the item starting at p. */
static const char *item_end(const char *p)
{
    while (*p != '\0' && !blank(*p) && !separating_comma(p))
        p++;
    return p;
}

int pgr_replica_uris_split(pgrest_arena *a, const char *value, const char ***out, size_t *n,
                           pgrest_error *err)
{
    size_t cap = 1;
    for (const char *p = value; *p; p++)
        cap += blank(*p) || *p == ',';
    const char **items = PGR_NEW_ARRAY(a, const char *, cap + 1);
    if (items == NULL)
        return pgr_error_oom(err);
    size_t k = 0;
    const char *p = value;
    for (;;) {
        while (blank(*p) || *p == ',')
            p++;
        if (*p == '\0')
            break;
        const char *end = item_end(p);
        while (end > p + 1 && end[-1] == ',')   /* "uri," at the end */
            end--;
        if (uri_scheme_len(p) == 0) {
            pgr_errorf(err, a, 0, NULL, NULL, NULL,
                       "Invalid db-replica-uris: '%s' is not a postgresql:// URI",
                       pgr_strndup(a, p, (size_t)(end - p)));
            return PGREST_ERR_CONFIG;
        }
        if ((items[k++] = pgr_strndup(a, p, (size_t)(end - p))) == NULL)
            return pgr_error_oom(err);
        p = end;
    }
    items[k] = NULL;
    *out = items;
    *n = k;
    return PGREST_OK;
}
