#include "auth/jspath_legacy.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "pgrest/pgrest.h"
#include "util/hs_show.h"
#include "util/strbuf.h"

typedef struct jsp_state {
    const char *start, *p;
    pgr_sb *dump;
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
    pgr_sb_putc(st->dump, '.');
    pgr_hs_show_cstring(st->dump, k);
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
    pgr_sb_putc(st->dump, '[');
    pgr_sb_putn(st->dump, b, (size_t)(st->p - b));
    pgr_sb_putc(st->dump, ']');
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
        pgr_sb_puts(st->dump, "[?(@ ");
        pgr_sb_puts(st->dump, op);
        pgr_sb_putc(st->dump, ' ');
        pgr_hs_show_cstring(st->dump, lit);
        pgr_sb_puts(st->dump, ")]");
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

/* Parsec's error for the failing position, into sb */
static void parse_error(pgr_sb *sb, const jsp_state *st)
{
    pgr_sb src;
    pgr_sb_init(&src, sb->arena, strlen(st->start) + 48);
    pgr_sb_puts(&src, "failed to parse role-claim-key value (");
    pgr_sb_puts(&src, st->start);
    pgr_sb_putc(&src, ')');
    const char *shown_src = pgr_sb_finish(&src);
    pgr_hs_show_cstring(sb, shown_src ? shown_src : "");
    pgr_sb_puts(sb, " (line 1, column ");
    pgr_sb_put_long(sb, (long long)(st->p - st->start) + 1);
    pgr_sb_puts(sb, "):\n");
    if (*st->p == '\0')
        pgr_sb_puts(sb, "unexpected end of input");
    else {
        char c[2] = {*st->p, '\0'};
        pgr_sb_puts(sb, "unexpected ");
        pgr_hs_show_cstring(sb, c);
    }
    pgr_sb_puts(sb, "\nexpecting ");
    pgr_sb_puts(sb, st->expecting ? st->expecting : "end of input");
}

/* a malloc'd copy of sb's text; NULL on OOM */
static char *finish_copy(pgr_sb *sb)
{
    const char *text = pgr_sb_finish(sb);
    return text ? strdup(text) : NULL;
}

bool jspath_legacy_parse(const char *s, char **dump, char **error)
{
    *dump = NULL;
    *error = NULL;
    pgrest_arena *a = pgrest_arena_new(0);
    if (a == NULL)
        return false;
    pgr_sb out;
    pgr_sb_init(&out, a, 64);
    jsp_state st = {s, s, &out, NULL};
    bool ok = expression(&st);
    while (ok && *st.p != '\0')
        ok = expression(&st);
    if (ok) {
        *dump = finish_copy(&out);
    } else {
        pgr_sb err;
        pgr_sb_init(&err, a, 128);
        parse_error(&err, &st);
        *error = finish_copy(&err);
    }
    pgrest_arena_free(a);
    return ok && *dump != NULL;
}
