#include "auth/jspath_legacy.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hs_show.h"

typedef struct jsp_state {
    const char *start, *p;
    FILE *dump;
    const char *expecting;   /* what the failing position wanted */
} jsp_state;

static bool key_char(unsigned char c)
{
    /* Parsec's alphaNum is Unicode-aware: any non-ASCII byte of a UTF-8
     * letter is taken as part of the key */
    return isalnum(c) || c == '_' || c == '$' || c == '@' || c >= 0x80;
}

static bool fail(jsp_state *st, const char *expecting)
{
    st->expecting = expecting;
    return false;
}

/* '"' (noneOf "\"")* '"'; the text goes to out. */
static bool quoted(jsp_state *st, char **out)
{
    if (*st->p != '"')
        return fail(st, "\"\\\"\"");
    const char *close = strchr(st->p + 1, '"');
    if (close == NULL) {
        st->p += strlen(st->p);
        return fail(st, "\"\\\"\"");
    }
    *out = strndup(st->p + 1, (size_t)(close - st->p - 1));
    st->p = close + 1;
    return *out != NULL;
}

static bool key(jsp_state *st)
{
    st->p++; /* '.' */
    char *k = NULL;
    if (key_char((unsigned char)*st->p)) {
        const char *b = st->p;
        while (key_char((unsigned char)*st->p))
            st->p++;
        k = strndup(b, (size_t)(st->p - b));
    } else if (!quoted(st, &k)) {
        return fail(st, "letter or digit, \"_\", \"$\", \"@\" or \"\\\"\"");
    }
    if (k == NULL)
        return false;
    fputc('.', st->dump);
    hs_show(st->dump, k);
    free(k);
    return true;
}

static bool index_exp(jsp_state *st)
{
    st->p++; /* '[' */
    const char *b = st->p;
    while (isdigit((unsigned char)*st->p))
        st->p++;
    if (st->p == b)
        return fail(st, "\"?(\" or digit");
    if (*st->p != ']')
        return fail(st, "digit or \"]\"");
    fprintf(st->dump, "[%.*s]", (int)(st->p - b), b);
    st->p++;
    return true;
}

static void skip_spaces(jsp_state *st)
{
    while (isspace((unsigned char)*st->p))
        st->p++;
}

/* "[?(" '@' spaces op spaces quoted ')' ']' eof */
static bool filter(jsp_state *st)
{
    static const char *const ops[] = {"==^", "==", "!=", "^==", "*=="};
    st->p += 3;
    if (*st->p != '@')
        return fail(st, "\"@\"");
    st->p++;
    skip_spaces(st);
    const char *op = NULL;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0] && op == NULL; i++)
        if (strncmp(st->p, ops[i], strlen(ops[i])) == 0)
            op = ops[i];
    if (op == NULL)
        return fail(st, "space, \"==^\", \"==\", \"!=\", \"^==\" or \"*==\"");
    st->p += strlen(op);
    skip_spaces(st);
    char *lit = NULL;
    if (!quoted(st, &lit))
        return fail(st, "space or \"\\\"\"");
    bool ok = *st->p == ')' && st->p[1] == ']' && st->p[2] == '\0';
    if (ok) {
        fprintf(st->dump, "[?(@ %s ", op);
        hs_show(st->dump, lit);
        fputs(")]", st->dump);
        st->p += 2;
    } else if (*st->p != ')')
        fail(st, "\")\"");
    else {
        st->p += *st->p == ')' ? 1 : 0;
        fail(st, *st->p != ']' ? "\"]\"" : "end of input");
    }
    free(lit);
    return ok;
}

static bool expression(jsp_state *st)
{
    if (*st->p == '.')
        return key(st);
    if (strncmp(st->p, "[?(", 3) == 0)
        return filter(st);
    if (*st->p == '[')
        return index_exp(st);
    return fail(st, st->p == st->start ? "\".\", \"[?(\" or \"[\""
                                       : "\".\", \"[?(\", \"[\" or end of input");
}

static char *parse_error(const jsp_state *st)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        return NULL;
    char *src = NULL;
    if (asprintf(&src, "failed to parse role-claim-key value (%s)", st->start) < 0)
        src = NULL;
    hs_show(f, src ? src : "");
    free(src);
    fprintf(f, " (line 1, column %d):\n", (int)(st->p - st->start) + 1);
    if (*st->p == '\0')
        fputs("unexpected end of input", f);
    else {
        char c[2] = {*st->p, '\0'};
        fputs("unexpected ", f);
        hs_show(f, c);
    }
    fprintf(f, "\nexpecting %s", st->expecting ? st->expecting : "end of input");
    fclose(f);
    return buf;
}

bool jspath_legacy_parse(const char *s, char **dump, char **error)
{
    char *buf = NULL;
    size_t len = 0;
    jsp_state st = {s, s, open_memstream(&buf, &len), NULL};
    *dump = NULL;
    *error = NULL;
    if (st.dump == NULL)
        return false;
    bool ok = expression(&st);
    while (ok && *st.p != '\0')
        ok = expression(&st);
    fclose(st.dump);
    if (ok) {
        *dump = buf;
        return true;
    }
    free(buf);
    *error = parse_error(&st);
    return false;
}
