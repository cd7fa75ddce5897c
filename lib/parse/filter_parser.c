/* Filter grammar; follows PostgREST src/ApiRequest/QueryParams.hs
 * (pFieldName, pJsonPath, pOpExpr, pListVal, pLogicTree) on the parser
 * state of parsec_state.c. */
#include "parse/filter_parser.h"

#include <string.h>

#include "util/error.h"
#include "util/str_list.h"
#include "util/strbuf.h"

#define FIELD_NAME_LABEL "field name (* or [a..z0..9_$])"
#define JSON_KEY_LABEL "any non reserved character different from: .,>()"

static inline int peek(const pgr_pstate *ps, size_t off)
{
    return ps->pos + off < ps->len ? (unsigned char)ps->s[ps->pos + off] : -1;
}

static inline int peek_at(const pgr_pstate *ps, size_t at)
{
    return at < ps->len ? (unsigned char)ps->s[at] : -1;
}

static inline bool at_end(const pgr_pstate *ps)
{
    return ps->pos >= ps->len;
}

static inline bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static inline bool is_alpha(int c)
{
    /* bytes >= 0x80 belong to UTF-8 letters: Parsec's `letter` is Unicode */
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

static inline bool is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
           c == '\v';
}

void pgr_ps_ws(pgr_pstate *ps)
{
    while (peek(ps, 0) == ' ' || peek(ps, 0) == '\t')
        ps->pos++;
}

static bool starts_with(const pgr_pstate *ps, const char *lit)
{
    size_t n = strlen(lit);
    return ps->len - ps->pos >= n && memcmp(ps->s + ps->pos, lit, n) == 0;
}

/* Where `string lit` stops matching at ps->pos (the token Parsec names). */
size_t pgr_ps_mismatch(const pgr_pstate *ps, size_t at, const char *lit)
{
    size_t i = at;
    for (const char *l = lit; *l != '\0' && i < ps->len && ps->s[i] == *l; l++)
        i++;
    return i;
}

bool pgr_ps_lit(pgr_pstate *ps, const char *lit)
{
    if (starts_with(ps, lit)) {
        ps->pos += strlen(lit);
        return true;
    }
    /* the label is built on every alternative that does not match, so
     * not with a format */
    pgr_sb sb;
    pgr_sb_init(&sb, ps->a, strlen(lit) + 3);
    pgr_sb_putc(&sb, '"');
    pgr_sb_puts(&sb, lit);
    pgr_sb_putc(&sb, '"');
    char *label = pgr_sb_finish(&sb);
    if (label == NULL)
        ps->oom = true;
    pgr_ps_expect_tok(ps, ps->pos, label, pgr_ps_mismatch(ps, ps->pos, lit));
    return false;
}

static const char *dup_range(pgr_pstate *ps, size_t from, size_t to)
{
    if (memchr(ps->s + from, '\0', to - from) != NULL)
        ps->kept_nul = true;
    char *r = pgr_strndup(ps->a, ps->s + from, to - from);
    if (r == NULL)
        ps->oom = true;
    return r;
}

/* ------------------------------------------------------------ names */

int pgr_ps_quoted(pgr_pstate *ps, const char **out)
{
    if (peek(ps, 0) != '"') {
        pgr_ps_expect(ps, ps->pos, "\"\\\"\"");
        return PGR_P_EMPTY;
    }
    pgr_sb sb;
    pgr_sb_init(&sb, ps->a, 16);
    size_t p = ps->pos + 1;
    while (p < ps->len && ps->s[p] != '"') {
        if (ps->s[p] == '\\' && p + 1 < ps->len)
            p++;
        else if (ps->s[p] == '\\')
            break;
        if (ps->s[p] == '\0')
            ps->kept_nul = true;
        pgr_sb_putc(&sb, ps->s[p]);
        p++;
    }
    if (p >= ps->len || ps->s[p] != '"') {
        /* many (noneOf "\\\"" <|> (char '\\' *> anyChar)) <* char '"' */
        if (p < ps->len) {
            /* a trailing backslash: anyChar hits the end, no label */
            ps->pos = ps->len;
            pgr_ps_expect(ps, ps->len, NULL);
            return PGR_P_FAIL;
        }
        ps->pos = p;
        pgr_ps_expect(ps, p, "\"\\\\\"");
        pgr_ps_expect(ps, p, "\"\\\"\"");
        return PGR_P_FAIL;
    }
    ps->pos = p + 1;
    *out = pgr_sb_finish(&sb);
    if (*out == NULL) {
        ps->oom = true;
        return PGR_P_FAIL;
    }
    return PGR_P_OK;
}

static inline bool ident_char(int c)
{
    return is_alpha(c) || is_digit(c) || c == '_' || c == ' ' || c == '$';
}

/* noneOf "(-:.,>)": any other character, NUL included */
static inline bool json_key_char(int c)
{
    return c >= 0 && memchr("(-:.,>)", c, 7) == NULL;
}

static bool ident_cls(int c)
{
    return ident_char(c);
}

static bool json_key_cls(int c)
{
    return json_key_char(c);
}

/* many1 of a class, stripped (T.strip) */
static bool span_stripped(pgr_pstate *ps, bool (*cls)(int), size_t *from,
                          size_t *to)
{
    size_t start = ps->pos;
    while (!at_end(ps) && cls(peek(ps, 0)))
        ps->pos++;
    /* many1 (letter <|> digit <|> oneOf "_ $") stopped: it expected more */
    if (cls == ident_cls) {
        pgr_ps_expect(ps, ps->pos, "letter");
        pgr_ps_expect(ps, ps->pos, "digit");
    }
    if (ps->pos == start)
        return false;
    size_t b = start, e = ps->pos;
    while (b < e && is_space((unsigned char)ps->s[b]))
        b++;
    while (e > b && is_space((unsigned char)ps->s[e - 1]))
        e--;
    *from = b;
    *to = e;
    return true;
}

/* `dash >> fieldIdent` consumed the '-' and the identifier is missing: a
 * consumed error, so it stands alone and `<?> label` does not rename it.
 * It keeps what isDash's notFollowedBy (char '>') expected there (its
 * `try p <|> return ()` passes char '>''s error on), then what the
 * identifier expected: letter, digit for pIdentifier, nothing for
 * pJsonKeyIdentifier's noneOf. */
static void dash_without_identifier(pgr_pstate *ps, bool (*cls)(int),
                                    size_t at)
{
    ps->has_err = false;
    pgr_ps_expect(ps, at, "\">\"");
    if (cls == ident_cls) {
        pgr_ps_expect(ps, at, "letter");
        pgr_ps_expect(ps, at, "digit");
    }
}

/* identifiers `sepBy1` (dash not followed by '>'), joined with '-' */
static int sep_by_dash(pgr_pstate *ps, bool (*cls)(int), const char *label,
                       const char **out)
{
    size_t start = ps->pos, b, e;
    pgr_perr before;
    pgr_ps_save_err(ps, &before);
    if (!span_stripped(ps, cls, &b, &e)) {
        /* `<?> label` replaces what the empty alternatives expected */
        pgr_ps_restore_err(ps, &before);
        pgr_ps_expect(ps, start, label);
        return PGR_P_EMPTY;
    }
    pgr_sb sb;
    pgr_sb_init(&sb, ps->a, 16);
    if (memchr(ps->s + b, '\0', e - b) != NULL)
        ps->kept_nul = true;
    pgr_sb_putn(&sb, ps->s + b, e - b);
    while (peek(ps, 0) == '-' && peek(ps, 1) != '>') {
        ps->pos++;
        size_t at = ps->pos;
        if (!span_stripped(ps, cls, &b, &e)) {
            dash_without_identifier(ps, cls, at);
            return PGR_P_FAIL;
        }
        if (memchr(ps->s + b, '\0', e - b) != NULL)
            ps->kept_nul = true;
        pgr_sb_putc(&sb, '-');
        pgr_sb_putn(&sb, ps->s + b, e - b);
    }
    pgr_ps_expect(ps, ps->pos, "\"-\"");
    *out = pgr_sb_finish(&sb);
    if (*out == NULL) {
        ps->oom = true;
        return PGR_P_FAIL;
    }
    return PGR_P_OK;
}

int pgr_ps_field_name(pgr_pstate *ps, const char **out)
{
    size_t start = ps->pos;
    if (peek(ps, 0) == '"')
        return pgr_ps_quoted(ps, out);
    int rc = sep_by_dash(ps, ident_cls, FIELD_NAME_LABEL, out);
    if (rc == PGR_P_EMPTY)
        pgr_ps_expect(ps, start, FIELD_NAME_LABEL);
    return rc;
}

int pgr_ps_identifier(pgr_pstate *ps, const char **out)
{
    size_t b, e;
    if (!span_stripped(ps, ident_cls, &b, &e))
        return PGR_P_EMPTY; /* expected letter, digit */
    *out = dup_range(ps, b, e);
    return *out ? PGR_P_OK : PGR_P_FAIL;
}

/* ------------------------------------------------------------ json path */

/* pJIdx's pEnd: the index must be followed by ->, ::, '.', ',' or the end
 * of the input, else the operand is a key ("0xy1", "0)"). */
static bool index_end(pgr_pstate *ps)
{
    static const char *const ends[][2] = {
        {"->", "\"->\""}, {"::", "\"::\""}, {".", "\".\""}, {",", "\",\""}};
    for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
        if (starts_with(ps, ends[i][0]))
            return true;
        pgr_ps_expect_tok(ps, ps->pos, ends[i][1],
                          pgr_ps_mismatch(ps, ps->pos, ends[i][0]));
    }
    if (at_end(ps))
        return true;
    pgr_ps_expect_eof(ps, ps->pos);
    return false;
}

/* try pJIdx: option '+' (char '-') <*> many1 digit <* pEnd */
static bool json_index(pgr_pstate *ps, const char **out)
{
    size_t start = ps->pos;
    if (peek(ps, 0) == '-')
        ps->pos++;
    else
        pgr_ps_expect(ps, ps->pos, "\"-\"");
    size_t digits = ps->pos;
    while (is_digit(peek(ps, 0)))
        ps->pos++;
    pgr_ps_expect(ps, ps->pos, "digit");
    if (ps->pos == digits || !index_end(ps)) {
        ps->pos = start;
        return false;
    }
    *out = dup_range(ps, start, ps->pos);
    return *out != NULL;
}

static int json_operand(pgr_pstate *ps, pgr_json_op *op)
{
    size_t start = ps->pos;
    if (json_index(ps, &op->key)) {
        op->is_index = true;
        return PGR_P_OK;
    }
    if (peek(ps, 0) == '"')
        return pgr_ps_quoted(ps, &op->key);
    int rc = sep_by_dash(ps, json_key_cls, JSON_KEY_LABEL, &op->key);
    if (rc == PGR_P_EMPTY)
        pgr_ps_expect(ps, start, JSON_KEY_LABEL);
    return rc;
}

int pgr_ps_json_path(pgr_pstate *ps, pgr_json_op **out)
{
    pgr_json_op **tail = out;
    *out = NULL;
    for (;;) {
        bool as_text;
        if (starts_with(ps, "->>")) {
            as_text = true;
            ps->pos += 3;
        } else if (starts_with(ps, "->")) {
            as_text = false;
            ps->pos += 2;
        } else {
            pgr_ps_expect_tok(ps, ps->pos, "\"->>\"",
                              pgr_ps_mismatch(ps, ps->pos, "->>"));
            pgr_ps_expect_tok(ps, ps->pos, "\"->\"",
                              pgr_ps_mismatch(ps, ps->pos, "->"));
            return PGR_P_OK;
        }
        pgr_json_op *op = PGR_NEW(ps->a, pgr_json_op);
        if (op == NULL) {
            ps->oom = true;
            return PGR_P_FAIL;
        }
        op->as_text = as_text;
        if (json_operand(ps, op) != PGR_P_OK)
            return PGR_P_FAIL;
        *tail = op;
        tail = &op->next;
    }
}

int pgr_ps_field(pgr_pstate *ps, pgr_field *out)
{
    size_t start = ps->pos;
    pgr_ps_ws(ps);
    int rc = pgr_ps_field_name(ps, &out->name);
    if (rc != PGR_P_OK)
        return rc == PGR_P_EMPTY && ps->pos == start ? PGR_P_EMPTY
                                                     : PGR_P_FAIL;
    if (pgr_ps_json_path(ps, &out->json_path) != PGR_P_OK)
        return PGR_P_FAIL;
    pgr_ps_ws(ps);
    return PGR_P_OK;
}

/* ------------------------------------------------------------ operators */

typedef enum { OPK_SIMPLE, OPK_QUANT, OPK_IN, OPK_IS, OPK_FTS } op_kind;

static const struct {
    const char *name;
    pgr_operator op;
    op_kind kind;
} operators[] = {
    {"eq", PGR_OP_EQ, OPK_QUANT},         {"neq", PGR_OP_NEQ, OPK_SIMPLE},
    {"gt", PGR_OP_GT, OPK_QUANT},         {"gte", PGR_OP_GTE, OPK_QUANT},
    {"lt", PGR_OP_LT, OPK_QUANT},         {"lte", PGR_OP_LTE, OPK_QUANT},
    {"like", PGR_OP_LIKE, OPK_QUANT},     {"ilike", PGR_OP_ILIKE, OPK_QUANT},
    {"match", PGR_OP_MATCH, OPK_QUANT},   {"imatch", PGR_OP_IMATCH, OPK_QUANT},
    {"in", PGR_OP_IN, OPK_IN},            {"is", PGR_OP_IS, OPK_IS},
    {"isdistinct", PGR_OP_ISDISTINCT, OPK_SIMPLE},
    {"fts", PGR_OP_FTS, OPK_FTS},         {"plfts", PGR_OP_PLFTS, OPK_FTS},
    {"phfts", PGR_OP_PHFTS, OPK_FTS},     {"wfts", PGR_OP_WFTS, OPK_FTS},
    {"cs", PGR_OP_CS, OPK_SIMPLE},        {"cd", PGR_OP_CD, OPK_SIMPLE},
    {"ov", PGR_OP_OV, OPK_SIMPLE},        {"sl", PGR_OP_SL, OPK_SIMPLE},
    {"sr", PGR_OP_SR, OPK_SIMPLE},        {"nxr", PGR_OP_NXR, OPK_SIMPLE},
    {"nxl", PGR_OP_NXL, OPK_SIMPLE},      {"adj", PGR_OP_ADJ, OPK_SIMPLE},
};

static int lookup_operator(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof(operators) / sizeof(operators[0]); i++)
        if (strlen(operators[i].name) == n &&
            memcmp(operators[i].name, s, n) == 0)
            return (int)i;
    return -1;
}

/* traverse ciChar lit (char c <|> char (toUpper c)) from ps->pos: the
 * offset of the first character that does not match */
static size_t ci_mismatch(const pgr_pstate *ps, const char *lit)
{
    size_t i = ps->pos;
    for (; *lit != '\0' && i < ps->len; lit++, i++) {
        char c = ps->s[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != *lit)
            break;
    }
    return i;
}

/* pIsVal: each word under try, so a failure stands where the word stopped
 * matching; all of them labelled "isVal: (...)" */
static int parse_is_value(pgr_pstate *ps, pgr_op_expr *out)
{
    static const struct {
        const char *name;
        pgr_is_value v;
    } vals[] = {{"null", PGR_IS_NULL},
                {"not_null", PGR_IS_NOT_NULL},
                {"true", PGR_IS_TRUE},
                {"false", PGR_IS_FALSE},
                {"unknown", PGR_IS_UNKNOWN}};
    size_t start = ps->pos;
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        size_t m = ci_mismatch(ps, vals[i].name);
        if (m - start == strlen(vals[i].name)) {
            ps->pos = m;
            out->is_value = vals[i].v;
            out->value = dup_range(ps, start, ps->pos);
            return out->value ? PGR_P_OK : PGR_P_FAIL;
        }
        pgr_ps_expect(ps, m, "isVal: (null, not_null, true, false, unknown)");
    }
    return PGR_P_FAIL;
}

/* growable array of strings in the arena */

/* try (quoted <* notFollowedBy (noneOf ",)")) */
static bool quoted_element(pgr_pstate *ps, const char **out)
{
    size_t start = ps->pos;
    pgr_perr save;
    pgr_ps_save_err(ps, &save);
    if (peek(ps, 0) == '"' && pgr_ps_quoted(ps, out) == PGR_P_OK &&
        (at_end(ps) || peek(ps, 0) == ',' || peek(ps, 0) == ')'))
        return true;
    pgr_ps_restore_err(ps, &save);
    ps->pos = start;
    return false;
}

static const char *raw_element(pgr_pstate *ps)
{
    size_t start = ps->pos;
    while (!at_end(ps) && peek(ps, 0) != ',' && peek(ps, 0) != ')')
        ps->pos++;
    return dup_range(ps, start, ps->pos);
}

/* pListVal: `(a,"b,c")`; `()` and `(  )` are the empty list. */
static int parse_list(pgr_pstate *ps, pgr_op_expr *out)
{
    pgr_ps_ws(ps);
    size_t start = ps->pos;
    if (peek(ps, 0) != '(') {
        pgr_ps_expect(ps, ps->pos, "\"(\"");
        return PGR_P_FAIL;
    }
    ps->pos++;
    pgr_ps_ws(ps);
    pgr_str_list l = {0};
    if (peek(ps, 0) != ')') {
        for (;;) {
            const char *el;
            if (!quoted_element(ps, &el))
                el = raw_element(ps);
            if (el == NULL || !pgr_str_list_push(ps->a, &l, el)) {
                ps->oom = true;
                return PGR_P_FAIL;
            }
            if (peek(ps, 0) != ',')
                break;
            ps->pos++;
        }
        pgr_ps_ws(ps);
        if (peek(ps, 0) != ')') {
            pgr_ps_expect(ps, ps->pos, "\",\"");
            pgr_ps_expect(ps, ps->pos, "\")\"");
            return PGR_P_FAIL;
        }
    }
    ps->pos++;
    out->value = dup_range(ps, start, ps->pos);
    pgr_ps_ws(ps);
    /* SqlFragment: In [""] is "= ANY('{}')", so `()`, `( )` and `("")`
     * are all the empty list */
    if (l.n == 1 && l.items[0][0] == '\0' && !ps->kept_nul)
        l.n = 0;
    out->list = l.items;
    out->n_list = l.n;
    return out->value ? PGR_P_OK : PGR_P_FAIL;
}

/* pLogicSingleVal: quoted, {pg array} or up to ',' / ')' */
static const char *logic_value(pgr_pstate *ps)
{
    const char *v;
    if (quoted_element(ps, &v))
        return v;
    if (peek(ps, 0) == '{') {
        size_t p = ps->pos + 1;
        while (p < ps->len && ps->s[p] != '{' && ps->s[p] != '}')
            p++;
        if (p < ps->len && ps->s[p] == '}') {
            size_t start = ps->pos;
            ps->pos = p + 1;
            return dup_range(ps, start, ps->pos);
        }
    }
    return raw_element(ps);
}

static const char *star_to_percent(pgr_pstate *ps, const char *v)
{
    char *r = pgr_strdup(ps->a, v);
    if (r == NULL) {
        ps->oom = true;
        return NULL;
    }
    for (char *p = r; *p; p++)
        if (*p == '*')
            *p = '%';
    return r;
}

/* try (between (char '(') (char ')') (try "any" <|> "all")) */
static void op_quantifier(pgr_pstate *ps, pgr_op_expr *out)
{
    static const struct {
        const char *word, *label;
        pgr_quantifier q;
    } quants[] = {{"any", "\"any\"", PGR_QUANT_ANY}, {"all", "\"all\"", PGR_QUANT_ALL}};
    if (peek(ps, 0) != '(') {
        pgr_ps_expect(ps, ps->pos, "\"(\"");
        return;
    }
    size_t at = ps->pos + 1;
    for (size_t i = 0; i < 2; i++) {
        size_t m = pgr_ps_mismatch(ps, at, quants[i].word);
        if (m - at < 3) {
            pgr_ps_expect_tok(ps, at, quants[i].label, m);
            continue;
        }
        if (at + 3 < ps->len && ps->s[at + 3] == ')') {
            out->quant = quants[i].q;
            ps->pos = at + 4;
        } else {
            pgr_ps_expect(ps, at + 3, "\")\"");
        }
        return;
    }
}

/* try (between (char '(') (char ')') pIdentifier): the fts language */
static void op_language(pgr_pstate *ps, pgr_op_expr *out)
{
    if (peek(ps, 0) != '(') {
        pgr_ps_expect(ps, ps->pos, "\"(\"");
        return;
    }
    size_t start = ps->pos;
    ps->pos++;
    const char *lang;
    if (pgr_ps_identifier(ps, &lang) == PGR_P_OK && peek(ps, 0) == ')') {
        out->language = lang;
        ps->pos++;
        return;
    }
    if (ps->pos > start + 1)
        pgr_ps_expect(ps, ps->pos, "\")\"");
    ps->pos = start;
}

static int op_value(pgr_pstate *ps, bool in_logic, op_kind kind,
                    pgr_op_expr *out)
{
    if (kind == OPK_IN)
        return parse_list(ps, out);
    if (kind == OPK_IS)
        return parse_is_value(ps, out);
    if (in_logic) {
        out->value = logic_value(ps);
    } else {
        out->value = dup_range(ps, ps->pos, ps->len);
        ps->pos = ps->len;
    }
    if (out->value != NULL &&
        (out->op == PGR_OP_LIKE || out->op == PGR_OP_ILIKE))
        out->value = star_to_percent(ps, out->value);
    return out->value ? PGR_P_OK : PGR_P_FAIL;
}

/* The operator names in the order pOperation tries them: pIn, pIs,
 * pIsDist, pFts, simpleOperator, quantOperator (each a `try (string ..)`,
 * so "gte" is tried before "gt"). Within a group the first name that
 * matches is taken, and the group fails as a whole after it. */
static const char *const op_groups[][10] = {
    {"in"}, {"is"}, {"isdistinct"},
    {"fts", "plfts", "phfts", "wfts"},
    {"neq", "cs", "cd", "ov", "sl", "sr", "nxr", "nxl", "adj"},
    {"eq", "gte", "gt", "lte", "lt", "like", "ilike", "match", "imatch"},
};

/* Tries one group at ps->pos: the operator, its modifier, the delimiter.
 * True with ps->pos after the '.'; false with the errors recorded. */
static bool op_group(pgr_pstate *ps, size_t g, op_kind *kind, pgr_op_expr *out)
{
    size_t start = ps->pos;
    const char *name = NULL;
    for (size_t i = 0; i < 10 && op_groups[g][i] != NULL && name == NULL; i++) {
        size_t m = pgr_ps_mismatch(ps, start, op_groups[g][i]);
        /* matched to its end (no strlen: this runs for every operator
         * name tried on every filter) */
        if (op_groups[g][i][m - start] == '\0')
            name = op_groups[g][i];
        else
            pgr_ps_expect_tok(ps, start, NULL, m);
    }
    if (name == NULL)
        return false;
    int idx = lookup_operator(name, strlen(name));
    *kind = operators[idx].kind;
    out->op = operators[idx].op;
    out->quant = PGR_QUANT_NONE;
    out->language = NULL;
    ps->pos = start + strlen(name);
    if (*kind == OPK_QUANT)
        op_quantifier(ps, out);
    else if (*kind == OPK_FTS)
        op_language(ps, out);
    if (peek(ps, 0) == '.') {
        ps->pos++;
        return true;
    }
    pgr_ps_expect(ps, ps->pos, "delimiter (.)");
    ps->pos = start;
    return false;
}

/* pOperation: the alternatives fail without consuming (try), so their
 * errors, wherever they stopped, get the label "operator (eq, gt, ...)";
 * only pIn / pIs commit once "in." / "is." is read. */
static int op_operation(pgr_pstate *ps, bool in_logic, pgr_op_expr *out)
{
    pgr_perr outer;
    pgr_ps_save_err(ps, &outer);
    ps->has_err = false;
    for (size_t g = 0; g < sizeof(op_groups) / sizeof(op_groups[0]); g++) {
        op_kind kind;
        if (!op_group(ps, g, &kind, out))
            continue;
        int rc = op_value(ps, in_logic, kind, out);
        pgr_ps_merge_err(ps, &outer);
        return rc == PGR_P_OK ? PGR_P_OK : PGR_P_FAIL;
    }
    ps->n_expect = 0;
    pgr_ps_expect(ps, ps->err_pos, "operator (eq, gt, ...)");
    ps->unexpect = false;
    pgr_ps_merge_err(ps, &outer);
    return PGR_P_EMPTY;
}

int pgr_ps_op_expr(pgr_pstate *ps, bool in_logic, pgr_op_expr *out)
{
    size_t start = ps->pos;
    memset(out, 0, sizeof(*out));
    /* try (string "not" *> pDelimiter) <|> pure False */
    size_t m = pgr_ps_mismatch(ps, start, "not");
    if (m - start == 3 && peek_at(ps, m) == '.') {
        out->negated = true;
        ps->pos = m + 1;
    } else if (m - start == 3) {
        pgr_ps_expect(ps, m, "delimiter (.)");
    } else {
        pgr_ps_expect_tok(ps, start, "\"not\"", m);
    }
    int rc = op_operation(ps, in_logic, out);
    if (rc == PGR_P_EMPTY && out->negated)
        return PGR_P_FAIL;
    return rc;
}

/* ------------------------------------------------------------ logic tree */

static int logic_tree(pgr_pstate *ps, pgr_logic_tree **out);
static int logic_children_in(pgr_pstate *ps, pgr_logic_tree *t);

/* pgrest's extension (docs/embed-or.md): where PostgREST's leaf failed
 * after `name.` because no operator follows, `rel.field.opexpr` reads the
 * rest as a filter on the embedded resource rel. Only rel.col.op.value
 * leaves PostgREST rejects take this path; when it fails too, the state
 * (errors included) is PostgREST's again. */
static bool related_leaf(pgr_pstate *ps, pgr_logic_tree *t, size_t after_dot)
{
    if (!ps->related_leaves || t->filter.field.json_path != NULL)
        return false;
    pgr_perr saved;
    pgr_ps_save_err(ps, &saved);
    bool kept_nul = ps->kept_nul;
    size_t pos = ps->pos;
    ps->pos = after_dot;
    pgr_filter f = {0};
    if (pgr_ps_field(ps, &f.field) == PGR_P_OK && peek(ps, 0) == '.') {
        ps->pos++;
        if (pgr_ps_op_expr(ps, true, &f.expr) == PGR_P_OK) {
            t->relation = t->filter.field.name;
            t->filter = f;
            return true;
        }
    }
    pgr_ps_restore_err(ps, &saved);
    ps->kept_nul = kept_nul;
    ps->pos = pos;
    return false;
}

static int logic_leaf(pgr_pstate *ps, pgr_logic_tree *t)
{
    size_t start = ps->pos;
    if (pgr_ps_field(ps, &t->filter.field) == PGR_P_OK) {
        if (peek(ps, 0) == '.') {
            ps->pos++;
            size_t after_dot = ps->pos;
            if (pgr_ps_op_expr(ps, true, &t->filter.expr) == PGR_P_OK ||
                related_leaf(ps, t, after_dot)) {
                t->is_leaf = true;
                return PGR_P_OK;
            }
        } else {
            pgr_ps_expect(ps, ps->pos, "delimiter (.)");
        }
    }
    /* try: back to the start; the leaf's errors merge with the node's */
    ps->pos = start;
    return PGR_P_EMPTY;
}

static int logic_children(pgr_pstate *ps, pgr_logic_tree *t)
{
    if (!pgr_ps_enter(ps))
        return PGR_P_FAIL;
    int rc = logic_children_in(ps, t);
    pgr_ps_leave(ps);
    return rc;
}

/* pNot <*> pLogicOp: "[not.]and" / "[not.]or". PGR_P_EMPTY when nothing
 * was consumed (the leaf's errors then merge in). */
static int logic_operator(pgr_pstate *ps, pgr_logic_tree *t)
{
    size_t start = ps->pos;
    size_t m = pgr_ps_mismatch(ps, start, "not");
    if (m - start == 3 && peek_at(ps, m) == '.') {
        t->negated = true;
        ps->pos = m + 1;
    } else {
        pgr_ps_expect_tok(ps, m - start == 3 ? m : start,
                          "negation operator (not)", m);
    }
    size_t at = ps->pos;
    size_t m_and = pgr_ps_mismatch(ps, at, "and");
    size_t m_or = pgr_ps_mismatch(ps, at, "or");
    if (m_and - at == 3) {
        ps->pos = m_and;
        return PGR_P_OK;
    }
    if (m_or - at == 2) {
        t->is_or = true;
        ps->pos = m_or;
        return PGR_P_OK;
    }
    if (m_or > at) {
        /* `string "or"` is not under try: a partial match consumed */
        pgr_ps_expect_tok(ps, at, "\"or\"", m_or);
        return PGR_P_FAIL;
    }
    pgr_ps_expect_tok(ps, at, "logic operator (and, or)", m_and);
    return t->negated ? PGR_P_FAIL : PGR_P_EMPTY;
}

/* Stmnt <$> try pLogicFilter <|> Expr <$> pNot <*> pLogicOp <*> children */
static int logic_tree(pgr_pstate *ps, pgr_logic_tree **out)
{
    pgr_logic_tree *t = PGR_NEW(ps->a, pgr_logic_tree);
    if (t == NULL) {
        ps->oom = true;
        return PGR_P_FAIL;
    }
    *out = t;
    pgr_perr before, leaf;
    pgr_ps_save_err(ps, &before);
    if (logic_leaf(ps, t) == PGR_P_OK)
        return PGR_P_OK;
    /* the failed try's errors count only if the node consumes nothing */
    pgr_ps_save_err(ps, &leaf);
    pgr_ps_restore_err(ps, &before);
    int rc = logic_operator(ps, t);
    if (rc == PGR_P_EMPTY)
        pgr_ps_merge_err(ps, &leaf);
    if (rc != PGR_P_OK)
        return rc;
    pgr_ps_ws(ps);
    if (peek(ps, 0) != '(') {
        pgr_ps_expect(ps, ps->pos, "\"(\"");
        return PGR_P_FAIL;
    }
    ps->pos++;
    pgr_ps_ws(ps);
    return logic_children(ps, t);
}

/* `child, child, ...)` of an and/or node (one nesting level deeper) */
static int logic_children_in(pgr_pstate *ps, pgr_logic_tree *t)
{
    pgr_logic_tree **tail = &t->children;
    for (;;) {
        pgr_logic_tree *c;
        if (logic_tree(ps, &c) != PGR_P_OK)
            return PGR_P_FAIL;
        *tail = c;
        tail = &c->next;
        pgr_ps_ws(ps);
        if (peek(ps, 0) != ',') {
            pgr_ps_expect(ps, ps->pos, "\",\"");
            break;
        }
        ps->pos++;
        pgr_ps_ws(ps);
    }
    if (peek(ps, 0) != ')') {
        pgr_ps_expect(ps, ps->pos, "\")\"");
        return PGR_P_FAIL;
    }
    ps->pos++;
    pgr_ps_ws(ps);
    return PGR_P_OK;
}

/* ------------------------------------------------------------ entry points */

int pgr_parse_field(pgrest_arena *a, const char *text, pgr_field *out,
                    pgrest_error *err)
{
    pgr_pstate ps;
    pgr_ps_init(&ps, a, text, strlen(text));
    memset(out, 0, sizeof(*out));
    if (pgr_ps_field(&ps, out) != PGR_P_OK || ps.oom)
        return pgr_ps_error(&ps, "field", text, err);
    return PGREST_OK;
}

int pgr_parse_op_expr(pgrest_arena *a, const char *text, pgr_op_expr *out,
                      pgrest_error *err)
{
    return pgr_parse_op_expr_n(a, text, strlen(text), out, err);
}

int pgr_parse_op_expr_n(pgrest_arena *a, const char *text, size_t len,
                        pgr_op_expr *out, pgrest_error *err)
{
    pgr_pstate ps;
    pgr_ps_init(&ps, a, text, len);
    if (pgr_ps_op_expr(&ps, false, out) != PGR_P_OK || ps.oom)
        return pgr_ps_error_n(&ps, "filter", text, len, err);
    return ps.kept_nul ? pgr_ps_nul_error(err) : PGREST_OK;
}

int pgr_parse_logic_tree(pgrest_arena *a, bool is_or, bool negated,
                         const char *value, pgr_logic_tree **out,
                         pgrest_error *err)
{
    return pgr_parse_logic_tree_max(a, is_or, negated, value,
                                    PGR_DEFAULT_MAX_DEPTH, out, err);
}

int pgr_parse_logic_tree_max(pgrest_arena *a, bool is_or, bool negated,
                             const char *value, int max_depth,
                             pgr_logic_tree **out, pgrest_error *err)
{
    return pgr_parse_logic_tree_n(a, is_or, negated, value, strlen(value),
                                  max_depth, out, err);
}

int pgr_parse_logic_tree_n(pgrest_arena *a, bool is_or, bool negated,
                           const char *value, size_t len, int max_depth,
                           pgr_logic_tree **out, pgrest_error *err)
{
    return pgr_parse_logic_tree_op(a, negated ? (is_or ? "not.or" : "not.and")
                                              : (is_or ? "or" : "and"),
                                   value, len, max_depth, out, err);
}

int pgr_parse_logic_tree_op(pgrest_arena *a, const char *op, const char *value,
                            size_t len, int max_depth, pgr_logic_tree **out,
                            pgrest_error *err)
{
    return pgr_parse_logic_tree_ext(a, op, value, len, max_depth, false, out, err);
}

static int parse_tree(pgrest_arena *a, const char *op, const char *value, size_t len,
                      int max_depth, bool related_leaves, bool whole,
                      pgr_logic_tree **out, pgrest_error *err);

int pgr_parse_logic_tree_ext(pgrest_arena *a, const char *op, const char *value,
                             size_t len, int max_depth, bool related_leaves,
                             pgr_logic_tree **out, pgrest_error *err)
{
    return parse_tree(a, op, value, len, max_depth, related_leaves, false, out, err);
}

int pgr_parse_having_tree(pgrest_arena *a, const char *value, size_t len, int max_depth,
                          pgr_logic_tree **out, pgrest_error *err)
{
    return parse_tree(a, "and", value, len, max_depth, false, true, out, err);
}

/* whole: the tree must be all of value (pgrest's own grammars end with
 * eof; PostgREST's and=/or= ignore what follows the tree) */
static int parse_tree(pgrest_arena *a, const char *op, const char *value, size_t len,
                      int max_depth, bool related_leaves, bool whole,
                      pgr_logic_tree **out, pgrest_error *err)
{
    /* PostgREST parses op <> value ("or(a.eq.1)") so columns count the
     * operator too (pRequestLogicTree). */
    pgr_sb sb;
    pgr_sb_init(&sb, a, len + 8);
    pgr_sb_puts(&sb, op);
    pgr_sb_putn(&sb, value, len);
    size_t text_len = sb.len;
    const char *text = pgr_sb_finish(&sb);
    if (text == NULL)
        return pgr_error_oom(err);
    pgr_pstate ps;
    pgr_ps_init(&ps, a, text, text_len);
    ps.max_depth = max_depth;
    ps.related_leaves = related_leaves;
    int rc = logic_tree(&ps, out);
    /* a tree that fails anyway fails with PostgREST's error, wherever a
     * related leaf moved the failure to */
    if (related_leaves && (rc != PGR_P_OK || ps.too_deep) && !ps.oom)
        return parse_tree(a, op, value, len, max_depth, false, whole, out, err);
    if (ps.too_deep && !ps.oom)
        return pgr_ps_depth_error(&ps, "logic tree", err);
    if (rc == PGR_P_OK && whole && ps.pos < ps.len) {
        pgr_ps_expect_eof(&ps, ps.pos);
        rc = PGR_P_FAIL;
    }
    if (rc != PGR_P_OK || ps.oom)
        return pgr_ps_error_n(&ps, "logic tree", value, len, err);
    /* P.parse without eof: text after the tree is ignored */
    return ps.kept_nul ? pgr_ps_nul_error(err) : PGREST_OK;
}
