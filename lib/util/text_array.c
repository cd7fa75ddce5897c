/* array_out's text form of a one-dimensional array: elements separated by
 * ',', double-quoted (with \" and \\ escapes) when empty, NULL-like or
 * holding special characters, an unquoted NULL for a null element. */
#include "util/text_array.h"

#include <string.h>
#include <strings.h>

#include "util/strbuf.h"

/* A quoted element at *p (on its '"'); *p is left after the closing '"'. */
static const char *quoted(pgrest_arena *a, const char **p)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, 32);
    const char *s = *p + 1;
    for (; *s != '"'; s++) {
        if (*s == '\\')
            s++;
        if (*s == '\0')
            return NULL;
        pgr_sb_putc(&sb, *s);
    }
    *p = s + 1;
    return pgr_sb_finish(&sb);
}

/* One element at *p; *p is left on the ',' or '}' after it. */
static bool element(pgrest_arena *a, const char **p, pgr_str_list *out)
{
    if (**p == '"') {
        const char *v = quoted(a, p);
        return v != NULL && pgr_str_list_push(a, out, v);
    }
    const char *s = *p, *e = s + strcspn(s, ",}");
    if (e == s || *e == '\0')
        return false;
    *p = e;
    if (e - s == 4 && strncasecmp(s, "NULL", 4) == 0)
        return true;
    const char *v = pgr_strndup(a, s, (size_t)(e - s));
    return v != NULL && pgr_str_list_push(a, out, v);
}

bool pgr_text_array_parse(pgrest_arena *a, const char *text, pgr_str_list *out)
{
    if (text == NULL || *text != '{')
        return false;
    const char *p = text + 1;
    if (*p == '}')
        return p[1] == '\0';
    for (;;) {
        if (!element(a, &p, out))
            return false;
        if (*p == '}')
            return p[1] == '\0';
        if (*p != ',')
            return false;
        p++;
    }
}
