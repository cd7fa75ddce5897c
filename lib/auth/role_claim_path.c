/* The role claim path parser and evaluator; see role_claim_path.h. */
#include "auth/role_claim_path.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/strbuf.h"

typedef struct jsp_parser {
    pgrest_arena *a;
    const char *p;
    bool failed;
} jsp_parser;

static void jsp_ws(jsp_parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t')
        ps->p++;
}

static bool jsp_accept(jsp_parser *ps, const char *tok)
{
    size_t n = strlen(tok);
    if (strncmp(ps->p, tok, n) != 0)
        return false;
    ps->p += n;
    return true;
}

typedef struct jsp_op_token {
    const char *tok;
    jsp_op op;
} jsp_op_token;

/* The first of ops[0..n) that the input starts with (longer tokens that
 * share a prefix come first), consumed into *op. */
static bool jsp_accept_op(jsp_parser *ps, const jsp_op_token *ops, size_t n, jsp_op *op)
{
    for (size_t i = 0; i < n; i++)
        if (jsp_accept(ps, ops[i].tok)) {
            *op = ops[i].op;
            return true;
        }
    return false;
}

static char jsp_unescape(char c)
{
    switch (c) {
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    default: return c;
    }
}

/* A '...' or "..." literal with backslash escapes. */
static const char *jsp_quoted(jsp_parser *ps)
{
    char q = *ps->p;
    if (q != '"' && q != '\'')
        return NULL;
    ps->p++;
    pgr_sb sb;
    pgr_sb_init(&sb, ps->a, 16);
    while (*ps->p != '\0' && *ps->p != q) {
        if (*ps->p == '\\' && ps->p[1] != '\0') {
            ps->p++;
            pgr_sb_putc(&sb, jsp_unescape(*ps->p));
        } else {
            pgr_sb_putc(&sb, *ps->p);
        }
        ps->p++;
    }
    if (*ps->p != q)
        return NULL;
    ps->p++;
    return pgr_sb_finish(&sb);
}

/* RFC 9535 name-first: ALPHA / "_" / non-ASCII */
static bool jsp_name_first(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (unsigned char)c >= 0x80;
}

/* RFC 9535 member-name-shorthand: name-first *(name-first / DIGIT) */
static const char *jsp_name(jsp_parser *ps)
{
    const char *start = ps->p;
    if (!jsp_name_first(*ps->p))
        return NULL;
    while (jsp_name_first(*ps->p) || (*ps->p >= '0' && *ps->p <= '9'))
        ps->p++;
    return pgr_strndup(ps->a, start, (size_t)(ps->p - start));
}

static bool jsp_index(jsp_parser *ps, long long *out)
{
    bool neg = *ps->p == '-';
    if (neg)
        ps->p++;
    if (*ps->p < '0' || *ps->p > '9')
        return false;
    long long v = 0;
    while (*ps->p >= '0' && *ps->p <= '9') {
        if (v > (LLONG_MAX - 9) / 10)
            return false;
        v = v * 10 + (*ps->p - '0');
        ps->p++;
    }
    *out = neg ? -v : v;
    return true;
}

static void regex_free_cb(void *re)
{
    regfree(re);
}

/* search() finds the pattern anywhere, match() the whole string (RFC 9535
 * I-Regexp, approximated by POSIX ERE). */
static regex_t *jsp_regex(pgrest_arena *a, const char *pattern, bool whole)
{
    regex_t *re = PGR_NEW(a, regex_t);
    const char *src = whole ? pgr_asprintf(a, "^(%s)$", pattern) : pattern;
    if (re == NULL || src == NULL || regcomp(re, src, REG_EXTENDED | REG_NOSUB) != 0)
        return NULL;
    if (!pgr_arena_on_free(a, regex_free_cb, re)) {
        regfree(re);
        return NULL;
    }
    return re;
}

/* search(@, 're') / match(@, 're') */
static bool jsp_function(jsp_parser *ps, jsp_seg *s)
{
    bool search = jsp_accept(ps, "search(");
    if (!search && !jsp_accept(ps, "match("))
        return false;
    jsp_ws(ps);
    if (!jsp_accept(ps, "@"))
        return false;
    jsp_ws(ps);
    if (!jsp_accept(ps, ","))
        return false;
    jsp_ws(ps);
    s->lit = jsp_quoted(ps);
    jsp_ws(ps);
    if (s->lit == NULL || !jsp_accept(ps, ")"))
        return false;
    s->op = search ? JSP_SEARCH : JSP_MATCH;
    s->re = jsp_regex(ps->a, s->lit, !search);
    return s->re != NULL;
}

/* @ == 'x', @ != 'x' */
static bool jsp_comparison(jsp_parser *ps, jsp_seg *s)
{
    static const jsp_op_token ops[] = {
        {"==", JSP_EQ}, {"!=", JSP_NE},
    };
    if (!jsp_accept(ps, "@"))
        return false;
    jsp_ws(ps);
    if (!jsp_accept_op(ps, ops, sizeof ops / sizeof ops[0], &s->op))
        return false;
    jsp_ws(ps);
    s->lit = jsp_quoted(ps);
    return s->lit != NULL;
}

/* ?(@ op 'x') or ?@ op 'x' or ?search(@, 're'), after the '[' */
static bool jsp_filter(jsp_parser *ps, jsp_seg *s)
{
    s->kind = JSP_FILTER;
    jsp_ws(ps);
    bool paren = jsp_accept(ps, "(");
    jsp_ws(ps);
    bool ok = *ps->p == '@' ? jsp_comparison(ps, s) : jsp_function(ps, s);
    jsp_ws(ps);
    return ok && (!paren || jsp_accept(ps, ")"));
}

/* [n], ['name'], ["name"], [*], [?...] */
static bool jsp_bracket(jsp_parser *ps, jsp_seg *s)
{
    jsp_ws(ps);
    bool ok;
    if (jsp_accept(ps, "?")) {
        ok = jsp_filter(ps, s);
    } else if (jsp_accept(ps, "*")) {
        s->kind = JSP_WILDCARD;
        ok = true;
    } else if (*ps->p == '"' || *ps->p == '\'') {
        s->kind = JSP_KEY;
        s->key = jsp_quoted(ps);
        ok = s->key != NULL;
    } else {
        s->kind = JSP_INDEX;
        ok = jsp_index(ps, &s->index);
    }
    jsp_ws(ps);
    return ok && jsp_accept(ps, "]");
}

static bool rfc_segment(jsp_parser *ps, jsp_seg *s)
{
    bool ok;
    if (jsp_accept(ps, ".")) {
        if (jsp_accept(ps, "*")) {
            s->kind = JSP_WILDCARD;
            ok = true;
        } else {
            s->kind = JSP_KEY;
            s->key = jsp_name(ps);
            ok = s->key != NULL;
        }
    } else if (jsp_accept(ps, "[")) {
        ok = jsp_bracket(ps, s);
    } else {
        ok = false;
    }
    return ok;
}

/* ---- the deprecated syntax (Config/DeprecatedJSPath.hs): .name or
 * ."quoted" keys, [n] indexes and one final [?(@ op "x")] array filter;
 * quoted text runs to the next '"' with no escapes. */

static const char *legacy_quoted(jsp_parser *ps)
{
    if (*ps->p != '"')
        return NULL;
    const char *start = ++ps->p;
    while (*ps->p != '\0' && *ps->p != '"')
        ps->p++;
    if (*ps->p != '"')
        return NULL;
    return pgr_strndup(ps->a, start, (size_t)(ps->p++ - start));
}

/* Parsec's alphaNum (non-ASCII bytes stand for Unicode letters) and _$@ */
static bool legacy_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '$' || c == '@' || (unsigned char)c >= 0x80;
}

static bool is_parsec_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* [?(@ op "x")] after the "[?(" */
static bool legacy_filter(jsp_parser *ps, jsp_seg *s)
{
    static const jsp_op_token ops[] = {
        {"==^", JSP_SUFFIX}, {"==", JSP_EQ}, {"!=", JSP_NE},
        {"^==", JSP_PREFIX}, {"*==", JSP_CONTAINS},
    };
    s->kind = JSP_FILTER;
    s->arrays_only = true;
    if (!jsp_accept(ps, "@"))
        return false;
    while (is_parsec_space(*ps->p))
        ps->p++;
    if (!jsp_accept_op(ps, ops, sizeof ops / sizeof ops[0], &s->op))
        return false;
    while (is_parsec_space(*ps->p))
        ps->p++;
    s->lit = legacy_quoted(ps);
    /* the filter ends the path */
    return s->lit != NULL && jsp_accept(ps, ")]") && *ps->p == '\0';
}

/* [digits]; an index beyond any array selects nothing */
static bool legacy_index(jsp_parser *ps, jsp_seg *s)
{
    s->kind = JSP_INDEX;
    if (*ps->p < '0' || *ps->p > '9')
        return false;
    long long v = 0;
    for (; *ps->p >= '0' && *ps->p <= '9'; ps->p++)
        v = v > (LLONG_MAX - 9) / 10 ? LLONG_MAX : v * 10 + (*ps->p - '0');
    s->index = v;
    return jsp_accept(ps, "]");
}

static bool legacy_segment(jsp_parser *ps, jsp_seg *s)
{
    bool ok;
    if (jsp_accept(ps, ".")) {
        s->kind = JSP_KEY;
        const char *start = ps->p;
        while (legacy_name_char(*ps->p))
            ps->p++;
        s->key = ps->p > start ? pgr_strndup(ps->a, start, (size_t)(ps->p - start))
                               : legacy_quoted(ps);
        ok = s->key != NULL;
    } else if (jsp_accept(ps, "[?(")) {
        ok = legacy_filter(ps, s);
    } else if (jsp_accept(ps, "[")) {
        ok = legacy_index(ps, s);
    } else {
        ok = false;
    }
    return ok;
}

static jsp_seg *jsp_segment(jsp_parser *ps, bool legacy)
{
    jsp_seg *s = PGR_NEW(ps->a, jsp_seg);
    bool ok = s != NULL && (legacy ? legacy_segment(ps, s) : rfc_segment(ps, s));
    return ok ? s : NULL;
}

/* Parses a role claim key as PostgREST's Config.hs parseRoleClaimKey
 * does: RFC 9535 (Config/JSPath.hs) when it starts with '$', else the
 * deprecated syntax, one segment at least. */
jsp_seg *pgr_claim_path_parse(pgrest_arena *a, const char *path, bool *ok)
{
    jsp_parser ps = {a, path, false};
    bool legacy = *ps.p != '$';
    if (!legacy)
        ps.p++;
    else if (*ps.p == '\0')
        ps.failed = true;
    jsp_seg *head = NULL;
    jsp_seg **tail = &head;
    while (!ps.failed && *ps.p != '\0') {
        jsp_seg *s = jsp_segment(&ps, legacy);
        if (s == NULL) {
            ps.failed = true;
            break;
        }
        *tail = s;
        tail = &s->next;
    }
    *ok = !ps.failed;
    return head;
}

static bool jsp_match(const jsp_seg *s, json_object *v)
{
    if (!json_object_is_type(v, json_type_string))
        return false;
    const char *str = json_object_get_string(v);
    size_t n = (size_t)json_object_get_string_len(v);
    size_t m = strlen(s->lit);
    switch (s->op) {
    case JSP_EQ: return strcmp(str, s->lit) == 0;
    case JSP_NE: return strcmp(str, s->lit) != 0;
    case JSP_PREFIX: return strncmp(str, s->lit, m) == 0;
    case JSP_SUFFIX: return n >= m && memcmp(str + n - m, s->lit, m) == 0;
    case JSP_CONTAINS: return strstr(str, s->lit) != NULL;
    case JSP_SEARCH:
    case JSP_MATCH: return regexec(s->re, str, 0, NULL, 0) == 0;
    }
    return false;
}



/* The smallest member name of obj after prev (the first with NULL), or
 * NULL: claims objects are small, so no sorted copy is kept. */
static const char *next_member(json_object *obj, const char *prev)
{
    const char *best = NULL;
    json_object_object_foreach(obj, key, val) {
        (void)val;
        if ((prev == NULL || strcmp(key, prev) > 0) && (best == NULL || strcmp(key, best) < 0))
            best = key;
    }
    return best;
}

/* Children of an array or object, in document order, that the segment
 * selects; the first one the rest of the path resolves wins. */
static bool jsp_eval_children(json_object *node, const jsp_seg *s, json_object **out)
{
    if (json_object_is_type(node, json_type_array)) {
        size_t n = json_object_array_length(node);
        for (size_t i = 0; i < n; i++) {
            json_object *c = json_object_array_get_idx(node, i);
            if ((s->kind == JSP_WILDCARD || jsp_match(s, c)) && pgr_claim_path_select(c, s->next, out))
                return true;
        }
        return false;
    }
    if (!json_object_is_type(node, json_type_object) || s->arrays_only)
        return false;
    /* Aeson's KeyMap holds members sorted by key, whatever the token's order */
    for (const char *key = next_member(node, NULL); key != NULL; key = next_member(node, key)) {
        json_object *c = json_object_object_get(node, key);
        if ((s->kind == JSP_WILDCARD || jsp_match(s, c)) && pgr_claim_path_select(c, s->next, out))
            return true;
    }
    return false;
}

bool pgr_claim_path_select(json_object *node, const jsp_seg *s, json_object **out)
{
    if (s == NULL) {
        *out = node;
        return true;
    }
    json_object *child = NULL;
    switch (s->kind) {
    case JSP_KEY:
        return json_object_is_type(node, json_type_object) &&
               json_object_object_get_ex(node, s->key, &child) &&
               pgr_claim_path_select(child, s->next, out);
    case JSP_INDEX: {
        if (!json_object_is_type(node, json_type_array))
            return false;
        long long n = (long long)json_object_array_length(node);
        long long i = s->index < 0 ? n + s->index : s->index;
        return i >= 0 && i < n &&
               pgr_claim_path_select(json_object_array_get_idx(node, (size_t)i), s->next, out);
    }
    case JSP_WILDCARD:
    case JSP_FILTER:
        return jsp_eval_children(node, s, out);
    }
    return false;
}
