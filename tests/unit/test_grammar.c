/* Unit tests of the request grammar against PostgREST's own definition:
 * src/library/PostgREST/ApiRequest/QueryParams.hs (its doctests give the
 * exact Parsec errors), RangeQuery.hs and ApiRequest.hs getRanges, and
 * http-types' query-string splitting. Each case names the PostgREST
 * function it follows. Expected texts come from those doctests or from
 * Parsec's rules (Text.Parsec.Error showErrorMessages, `try`, `<?>`,
 * `eof` = notFollowedBy anyToken <?> "end of input"), never from our own
 * output. No database. */
#include <check.h>

#include "check_run.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/api_request.h"
#include "parse/hs_integer.h"
#include "parse/preferences.h"
#include "parse/query_string.h"
#include "pgrest/pgrest.h"

static pgrest_arena *arena;

static void setup(void)
{
    arena = pgrest_arena_new(0);
    ck_assert_ptr_nonnull(arena);
}

static void teardown(void)
{
    pgrest_arena_free(arena);
    arena = NULL;
}

static int parse_qs(const char *qs, bool is_rpc, pgr_query_params *qp,
                    pgrest_error *err)
{
    pgr_kv *params = pgr_query_string_decode(arena, qs);
    return pgr_query_params_parse(arena, params, is_rpc, NULL, qp, err);
}

/* ------------------------------------------------------------ PGRST100 */

typedef struct grammar_case {
    const char *follows; /* PostgREST function (and doctest) followed */
    const char *qs;
    const char *message;
    const char *details;
} grammar_case;

static const grammar_case errors[] = {
    /* pOrder: each term ends at pEnd = lookAhead ',' <|> eof; the
     * failing eof makes Parsec name the character in single quotes */
    {"pOrder doctest clients(name,id)", "order=clients(name,id)",
     "\"failed to parse order (clients(name,id))\" (line 1, column 8)",
     "unexpected '(' expecting letter, digit, \"-\", \"->>\", \"->\", "
     "delimiter (.), \",\" or end of input"},
    {"pOrder doctest id.ac (string names the mismatching char)",
     "order=id.ac", "\"failed to parse order (id.ac)\" (line 1, column 4)",
     "unexpected \"c\" expecting \"asc\", \"desc\", \"nullsfirst\" or "
     "\"nullslast\""},
    {"pOrder doctest id.descc", "order=id.descc",
     "\"failed to parse order (id.descc)\" (line 1, column 8)",
     "unexpected 'c' expecting delimiter (.), \",\" or end of input"},
    {"pOrder doctest id.nulsfist", "order=id.nulsfist",
     "\"failed to parse order (id.nulsfist)\" (line 1, column 4)",
     "unexpected \"n\" expecting \"asc\", \"desc\", \"nullsfirst\" or "
     "\"nullslast\""},
    {"pOrder doctest id.nullslasttt", "order=id.nullslasttt",
     "\"failed to parse order (id.nullslasttt)\" (line 1, column 13)",
     "unexpected 't' expecting \",\" or end of input"},
    {"pOrder doctest id.asc.nlsfst", "order=id.asc.nlsfst",
     "\"failed to parse order (id.asc.nlsfst)\" (line 1, column 8)",
     "unexpected \"l\" expecting \"nullsfirst\" or \"nullslast\""},
    {"pOrder doctest id.asc.nullslasttt", "order=id.asc.nullslasttt",
     "\"failed to parse order (id.asc.nullslasttt)\" (line 1, column 17)",
     "unexpected 't' expecting \",\" or end of input"},
    {"pOrder doctest id.asc.smth34", "order=id.asc.smth34",
     "\"failed to parse order (id.asc.smth34)\" (line 1, column 8)",
     "unexpected \"s\" expecting \"nullsfirst\" or \"nullslast\""},
    {"pOrder: a ';' (sent as %3B) cannot end a term",
     "order=name%3Bdrop%20table%20artist",
     "\"failed to parse order (name;drop table artist)\" (line 1, column 5)",
     "unexpected ';' expecting letter, digit, \"-\", \"->>\", \"->\", "
     "delimiter (.), \",\" or end of input"},
    {"pOrder: sepBy1 needs a term after ','", "order=name,",
     "\"failed to parse order (name,)\" (line 1, column 6)",
     "unexpected end of input expecting field name (* or [a..z0..9_$])"},
    /* pFieldForest / pFieldSelect / pJsonPath */
    {"pFieldForest doctest id,clients(name[]): the children commit",
     "select=id,clients(name[])",
     "\"failed to parse select parameter (id,clients(name[]))\" (line 1, "
     "column 16)",
     "unexpected '[' expecting letter, digit, \"-\", \"->>\", \"->\", "
     "\"::\", \".\", \")\", \",\" or end of input"},
    {"pFieldForest doctest data->>-78xy (pJIdx pEnd)",
     "select=data->>-78xy",
     "\"failed to parse select parameter (data->>-78xy)\" (line 1, column "
     "11)",
     "unexpected 'x' expecting digit, \"->\", \"::\", \".\", \",\" or end "
     "of input"},
    {"pJsonPath doctest ->>-xy-4", "select=data->>-xy-4",
     "\"failed to parse select parameter (data->>-xy-4)\" (line 1, column "
     "9)",
     "unexpected \"x\" expecting digit"},
    {"pFieldSelect doctest name!hint", "select=name!hint",
     "\"failed to parse select parameter (name!hint)\" (line 1, column 5)",
     "unexpected '!' expecting letter, digit, \"-\", \"->>\", \"->\", "
     "\"::\", \".\", \")\", \",\" or end of input"},
    {"pFieldSelect doctest name::", "select=name::",
     "\"failed to parse select parameter (name::)\" (line 1, column 7)",
     "unexpected end of input expecting letter or digit"},
    {"pFieldSelect: string \"::\" is not under try", "select=a:b:c",
     "\"failed to parse select parameter (a:b:c)\" (line 1, column 4)",
     "unexpected \"c\" expecting \"::\""},
    {"pFieldSelect: a NUL is a character the grammar refuses (show: \\NUL)",
     "select=na%00me",
     "\"failed to parse select parameter (na\\NULme)\" (line 1, column 3)",
     "unexpected '\\NUL' expecting letter, digit, \"-\", \"->>\", \"->\", "
     "\"::\", \".\", \")\", \",\" or end of input"},
    {"pFieldSelect: the field branch consumed, the failed try count() "
     "errors drop", "select=count():x",
     "\"failed to parse select parameter (count():x)\" (line 1, column 6)",
     "unexpected '(' expecting letter, digit, \"-\", \"->>\", \"->\", "
     "\"::\", \".\", \")\", \",\" or end of input"},
    /* pOpExpr: pOperation's alternatives are under try, so its label
     * "operator (eq, gt, ...)" replaces what they expected */
    {"pOpExpr doctest fts().value", "a=fts().value",
     "\"failed to parse filter (fts().value)\" (line 1, column 5)",
     "unexpected \")\" expecting operator (eq, gt, ...)"},
    {"pOpExpr doctest eq().value", "a=eq().value",
     "\"failed to parse filter (eq().value)\" (line 1, column 4)",
     "unexpected \")\" expecting operator (eq, gt, ...)"},
    {"pOpExpr doctest is().value", "a=is().value",
     "\"failed to parse filter (is().value)\" (line 1, column 3)",
     "unexpected \"(\" expecting operator (eq, gt, ...)"},
    {"pOpExpr doctest in().value", "a=in().value",
     "\"failed to parse filter (in().value)\" (line 1, column 3)",
     "unexpected \"(\" expecting operator (eq, gt, ...)"},
    {"parse doctest a.b=noop.0", "a.b=noop.0",
     "\"failed to parse filter (noop.0)\" (line 1, column 1)",
     "unexpected \"o\" expecting \"not\" or operator (eq, gt, ...)"},
    {"pRequestFilter doctest id=val", "id=val",
     "\"failed to parse filter (val)\" (line 1, column 1)",
     "unexpected \"v\" expecting \"not\" or operator (eq, gt, ...)"},
    {"pOpExpr: gt matched, the delimiter missing (try pQuantOp)", "a=gtx.1",
     "\"failed to parse filter (gtx.1)\" (line 1, column 3)",
     "unexpected \"x\" expecting operator (eq, gt, ...)"},
    {"pIsVal: ciString under try stops where the word differs", "a=is.nul",
     "\"failed to parse filter (is.nul)\" (line 1, column 7)",
     "unexpected end of input expecting isVal: (null, not_null, true, "
     "false, unknown)"},
    {"pListVal: lexeme (char '(') after in.", "a=in.1,2",
     "\"failed to parse filter (in.1,2)\" (line 1, column 4)",
     "unexpected \"1\" expecting \"(\""},
    {"pQuotedValue: many (noneOf \"\\\\\\\"\" <|> char '\\\\' *> anyChar) <* char '\"'",
     "select=%22ab",
     /* Show SourcePos: the name unescaped */
     "\"failed to parse select parameter (\"ab)\" (line 1, column 4)",
     "unexpected end of input expecting \"\\\\\" or \"\\\"\""},
    /* pLogicPath stops at '>': its last word "x" is the operator */
    {"pLogicPath + pLogicTree: x(a.eq.1)", "x%3E.or=(a.eq.1)",
     "\"failed to parse logic tree ((a.eq.1))\" (line 1, column 2)",
     "unexpected \"(\" expecting letter, digit, \"-\", \"->>\", \"->\" or "
     "delimiter (.)"},
    /* pLogicTree */
    {"pLogicTree doctest or()", "or=()",
     "\"failed to parse logic tree (())\" (line 1, column 4)",
     "unexpected \")\" expecting field name (* or [a..z0..9_$]), negation "
     "operator (not) or logic operator (and, or)"},
    {"pLogicTree doctest or(id.in.1,2,id.eq.3)", "or=(id.in.1,2,id.eq.3)",
     "\"failed to parse logic tree ((id.in.1,2,id.eq.3))\" (line 1, column "
     "10)",
     "unexpected \"1\" expecting \"(\""},
    {"pLogicTree doctest and(ord(...)...)",
     "and=(ord(id.eq.1,id.eq.1),id.eq.2)",
     "\"failed to parse logic tree ((ord(id.eq.1,id.eq.1),id.eq.2))\" (line "
     "1, column 7)",
     "unexpected \"d\" expecting \"(\""},
    {"pLogicTree doctest not.xor: pNot consumed, the leaf's errors drop",
     "or=(id.eq.1,not.xor(id.eq.2,id.eq.3))",
     "\"failed to parse logic tree ((id.eq.1,not.xor(id.eq.2,id.eq.3)))\" "
     "(line 1, column 16)",
     "unexpected \"x\" expecting logic operator (and, or)"},
    /* sepByDash: `many (dash >> fieldIdent)` consumed the '-', so a missing
     * identifier is a consumed error: `<?> "field name ..."` does not rename
     * it, and isDash's notFollowedBy (char '>') passes on char '>''s
     * expectation (notFollowedBy p = try (do {c <- try p; unexpected
     * (show c)} <|> return ()): the failed `try p` error survives the
     * `<|> return ()`) */
    {"sepByDash: dash then end", "select=a-",
     "\"failed to parse select parameter (a-)\" (line 1, column 3)",
     "unexpected end of input expecting \">\", letter or digit"},
    {"sepByDash: dash then dash", "select=a--b",
     "\"failed to parse select parameter (a--b)\" (line 1, column 3)",
     "unexpected \"-\" expecting \">\", letter or digit"},
    {"sepByDash in pColumns", "columns=id-",
     "\"failed to parse columns parameter (id-)\" (line 1, column 4)",
     "unexpected end of input expecting \">\", letter or digit"},
    {"sepByDash in pTreePath", "a-=eq.1",
     "\"failed to parse tree path (a-)\" (line 1, column 3)",
     "unexpected end of input expecting \">\", letter or digit"},
    {"sepByDash in pOrder: try pOrderRelationTerm's error drops", "order=a-,b",
     "\"failed to parse order (a-,b)\" (line 1, column 3)",
     "unexpected \",\" expecting \">\", letter or digit"},
    /* pJsonKeyIdentifier is noneOf "(-:.,>)": no label of its own; try
     * pJKey's error is later than try pJIdx's */
    {"sepByDash in a JSON key", "select=a->b-",
     "\"failed to parse select parameter (a->b-)\" (line 1, column 6)",
     "unexpected end of input expecting \">\""},
    /* aliasSeparator = char ':' >> notFollowedBy (char ':'): the same
     * leak, so right after an alias ":" is expected with the field name;
     * pFieldSelect's third branch consumed the alias, so the failed
     * `try pRelationSelect` / `try count()` errors do not merge */
    {"aliasSeparator: alias then end", "select=alias:",
     "\"failed to parse select parameter (alias:)\" (line 1, column 7)",
     "unexpected end of input expecting \":\" or field name (* or "
     "[a..z0..9_$])"},
    {"aliasSeparator: alias then spread", "select=alias:...rel(*)",
     "\"failed to parse select parameter (alias:...rel(*))\" (line 1, column 7)",
     "unexpected \".\" expecting \":\" or field name (* or [a..z0..9_$])"},
    {"aliasSeparator: pField's lexeme consumed a space, the alias error drops",
     "select=a:%20!",
     "\"failed to parse select parameter (a: !)\" (line 1, column 4)",
     "unexpected \"!\" expecting field name (* or [a..z0..9_$])"},
};

START_TEST(test_grammar_errors)
{
    const grammar_case *c = &errors[_i];
    pgr_query_params qp;
    pgrest_error err = {0};
    ck_assert_msg(parse_qs(c->qs, false, &qp, &err) == PGREST_ERR_REQUEST,
                  "%s: parsed", c->follows);
    ck_assert_int_eq(err.http_status, 400);
    ck_assert_str_eq(err.code, "PGRST100");
    ck_assert_msg(strcmp(err.message, c->message) == 0, "%s: message %s",
                  c->follows, err.message);
    ck_assert_msg(strcmp(err.details, c->details) == 0, "%s: details %s",
                  c->follows, err.details);
}
END_TEST

/* ------------------------------------------------------------ valid prefixes */

/* P.parse without eof: pFieldForest, pLogicTree, pColumns, pOpExpr (is,
 * in) stop after the longest valid prefix and ignore the rest. */
START_TEST(test_valid_prefixes)
{
    pgr_query_params qp;
    pgrest_error err = {0};
    /* pRequestSelect: pFieldTree `sepBy` ... ends at ')' */
    ck_assert_int_eq(parse_qs("select=id)garbage", false, &qp, &err), PGREST_OK);
    ck_assert_str_eq(qp.select->field.name, "id");
    ck_assert_ptr_null(qp.select->next);
    /* pRequestLogicTree: the tree ends at its ')' */
    ck_assert_int_eq(parse_qs("or=(a.eq.1)xyz", false, &qp, &err), PGREST_OK);
    ck_assert(qp.logic->tree->is_or);
    /* pRequestColumns / pRequestOnConflict: pFieldName `sepBy1` ',' */
    ck_assert_int_eq(parse_qs("columns=a,b)x&on_conflict=c;d", false, &qp, &err),
                     PGREST_OK);
    ck_assert_int_eq(qp.n_columns, 2);
    ck_assert_int_eq(qp.n_on_conflict, 1);
    /* pOpExpr pIs / pIn: nothing has to follow the value */
    ck_assert_int_eq(parse_qs("a=is.null.garbage&b=in.(1,2)xyz", false, &qp, &err),
                     PGREST_OK);
    ck_assert_int_eq(qp.filters->filter.expr.is_value, PGR_IS_NULL);
    ck_assert_int_eq(qp.filters->next->filter.expr.n_list, 2);
    /* pFieldSelect "*!hint" fails without consuming (its branches are
     * under try), so `sepBy` gives [] and the rest is ignored */
    ck_assert_int_eq(parse_qs("select=*!hint", false, &qp, &err), PGREST_OK);
    ck_assert(qp.has_select);
    ck_assert_ptr_null(qp.select);
    /* pTreePath: names `sepBy1` '.', then the JSON path; ".c" ignored */
    ck_assert_int_eq(parse_qs("a->b.c=eq.1", false, &qp, &err), PGREST_OK);
    ck_assert_int_eq(qp.filters->path.n, 0);
    ck_assert_str_eq(qp.filters->filter.field.name, "a");
    ck_assert_str_eq(qp.filters->filter.field.json_path->key, "b");
    /* SqlFragment In [""]: `in.("")` is the empty list like `in.()` */
    ck_assert_int_eq(parse_qs("a=in.(%22%22)", false, &qp, &err), PGREST_OK);
    ck_assert_int_eq(qp.filters->filter.expr.n_list, 0);
    /* pFieldSelect reads an aggregate cast even without an aggregate
     * (pgFmtApplyAggregate then ignores it) */
    ck_assert_int_eq(parse_qs("select=name::text::int", false, &qp, &err),
                     PGREST_OK);
    ck_assert_str_eq(qp.select->cast, "text");
    ck_assert_ptr_null(qp.select->agg_cast);
    /* a NUL in the ignored rest never reaches PostgreSQL */
    ck_assert_int_eq(parse_qs("a=is.null%00x", false, &qp, &err), PGREST_OK);
}
END_TEST

/* http-types parseQueryReplacePlus: ';' separates pairs like '&', so
 * "order=name;drop table artist" is order=name plus a pair without '='. */
START_TEST(test_semicolon_separates)
{
    pgr_query_params qp;
    pgrest_error err = {0};
    ck_assert_int_eq(parse_qs("order=name;drop+table+artist", false, &qp, &err),
                     PGREST_OK);
    ck_assert_str_eq(qp.orders->terms->field.name, "name");
    ck_assert_ptr_null(qp.orders->terms->next);
    ck_assert_str_eq(qp.canonical, "drop%20table%20artist=&order=name");
}
END_TEST

/* ------------------------------------------------------------ NUL */

/* A decoded %00 keeps the rest of the value: what reaches PostgreSQL is
 * refused as PostgreSQL refuses NUL in text (22021), never truncated. */
START_TEST(test_nul_values)
{
    static const char *const cases[] = {
        "name=eq.AC/DC%00xyz",            /* pOpExpr pSingleVal */
        "or=(name.eq.a%00b)",             /* pLogicSingleVal */
        "name=in.(a,b%00)",               /* pListElement */
        "select=\"na%00me\"",             /* pQuotedValue in pFieldName */
        "select=data->a%00b",             /* pJsonKeyIdentifier (noneOf) */
        "order=data->%22k%00%22",         /* a quoted JSON key */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        pgr_query_params qp;
        pgrest_error err = {0};
        ck_assert_msg(parse_qs(cases[i], false, &qp, &err) == PGREST_ERR_REQUEST,
                      "%s parsed", cases[i]);
        ck_assert_int_eq(err.http_status, 400);
        ck_assert_str_eq(err.code, "22021");
        ck_assert_str_eq(err.message,
                         "invalid byte sequence for encoding \"UTF8\": 0x00");
    }
    /* an RPC argument (NoOpExpr) keeps its NUL: the call planner refuses
     * it once the function is found (test_hostile_request.c) */
    pgr_query_params qp;
    pgrest_error err = {0};
    ck_assert_int_eq(parse_qs("x=a%00b", true, &qp, &err), PGREST_OK);
    ck_assert_uint_eq(qp.rpc_params->value_len, 3);
    /* a NUL in a key is part of the name, so "select\0" is no reserved
     * word; pTreePath (no eof) then reads the column "select" */
    ck_assert_int_eq(parse_qs("select%00=eq.1", false, &qp, &err), PGREST_OK);
    ck_assert(!qp.has_select);
    ck_assert_str_eq(qp.filters->filter.field.name, "select");
    /* ... while a NUL inside a quoted name is kept: 22021 */
    ck_assert_int_eq(parse_qs("%22a%00b%22=eq.1", false, &qp, &err),
                     PGREST_ERR_REQUEST);
    ck_assert_str_eq(err.code, "22021");
}
END_TEST

START_TEST(test_canonical_keeps_nul)
{
    pgr_query_params qp;
    pgrest_error err = {0};
    ck_assert_int_eq(parse_qs("a=is.null%00&&b", false, &qp, &err), PGREST_OK);
    /* urlEncodeVars of the sorted pairs, the empty piece included */
    ck_assert_str_eq(qp.canonical, "=&a=is.null%00&b=");
}
END_TEST

/* ------------------------------------------------------------ integers */

/* readMaybe :: Maybe Integer, as QueryParams reads limit and offset */
START_TEST(test_read_integer)
{
    static const struct {
        const char *in;
        const char *out; /* NULL: Nothing */
    } cases[] = {
        {"5", "5"},         {" 5 ", "5"},       {"007", "7"},
        {"-3", "-3"},       {"- 3", "-3"},      {"(4)", "4"},
        {"( -4 )", "-4"},   {"0x1F", "31"},     {"0o17", "15"},
        {"-0", "0"},        {"+5", NULL},       {"1e3", NULL},
        {"1.0", NULL},      {"5x", NULL},       {"--5", NULL},
        {"", NULL},         {"-(5)", NULL},     {"0x", NULL},
        {"99999999999999999999999999", "99999999999999999999999999"},
        {"0xFFFFFFFFFFFFFFFFFFFF", "1208925819614629174706175"}, /* 2^80-1 */
        {"0o1000000000000000000000", "9223372036854775808"},      /* 2^63 */
        {"0x000", "0"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        pgr_hs_int v;
        bool oom;
        bool ok = pgr_hs_read_integer(arena, cases[i].in, strlen(cases[i].in),
                                      &v, &oom);
        ck_assert_msg(ok == (cases[i].out != NULL), "%s", cases[i].in);
        if (ok)
            ck_assert_str_eq(pgr_hs_show(arena, v), cases[i].out);
    }
    /* a NUL is not white space: "5\0" is Nothing */
    pgr_hs_int v;
    bool oom;
    ck_assert(!pgr_hs_read_integer(arena, "5\0", 2, &v, &oom));
}
END_TEST

/* The reference for 0x / 0o literals: Horner's rule on decimal text, one
 * digit at a time (obviously right, quadratic; the reader converts
 * several digits per pass and must give the same text). */
static void reference_decimal(const char *digits, int base, char *out, size_t cap)
{
    size_t len = 1;
    out[0] = '0';
    for (const char *p = digits; *p; p++) {
        int carry = (*p >= 'a' ? *p - 'a' + 10 : *p >= 'A' ? *p - 'A' + 10 : *p - '0');
        for (size_t i = len; i-- > 0;) { /* out[0..len) most significant first */
            int d = (out[i] - '0') * base + carry;
            out[i] = (char)('0' + d % 10);
            carry = d / 10;
        }
        while (carry > 0) {
            ck_assert_uint_lt(len + 1, cap);
            memmove(out + 1, out, len);
            out[0] = (char)('0' + carry % 10);
            carry /= 10;
            len++;
        }
    }
    out[len] = '\0';
    size_t z = 0;
    while (z + 1 < len && out[z] == '0')
        z++;
    memmove(out, out + z, len - z + 1);
}

/* 0x / 0o literals of every length up to 300 digits, each digit drawn by
 * a fixed LCG, with and without leading zeros, read as the one-digit-at-
 * a-time reference reads them: the chunked conversion's boundaries (7 hex,
 * 9 octal digits) and the first partial chunk all come up */
START_TEST(test_read_integer_bases)
{
    static const char hexd[] = "0123456789abcdefABCDEF";
    unsigned long long seed = 39;
    char lit[400], digits[320], want[400];
    for (int base = 8; base <= 16; base += 8)
        for (size_t n = 1; n <= 300; n++)
            for (int zeros = 0; zeros <= 12; zeros += 12) {
                for (size_t i = 0; i < n; i++) {
                    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                    size_t r = (size_t)(seed >> 33);
                    digits[i] = base == 16 ? hexd[r % 22] : (char)('0' + r % 8);
                }
                digits[n] = '\0';
                snprintf(lit, sizeof lit, "0%c%.*s%s", base == 16 ? 'x' : 'o',
                         zeros, "000000000000", digits);
                reference_decimal(digits, base, want, sizeof want);
                pgr_hs_int v;
                bool oom;
                ck_assert_msg(pgr_hs_read_integer(arena, lit, strlen(lit), &v, &oom),
                              "%s", lit);
                ck_assert_msg(strcmp(v.digits, want) == 0, "%s: %s, want %s", lit,
                              v.digits, want);
                /* the Int64 reader keeps only the value modulo 2^64: the
                 * same as wrapping the whole Integer, negated too */
                long long w;
                ck_assert(pgr_hs_read_int64_wrapped(arena, lit, strlen(lit), &w, &oom));
                ck_assert_msg(w == pgr_hs_to_int64_wrapped(v), "%s", lit);
                char neg[420];
                snprintf(neg, sizeof neg, "( - %s )", lit);
                ck_assert(pgr_hs_read_integer(arena, neg, strlen(neg), &v, &oom));
                ck_assert(pgr_hs_read_int64_wrapped(arena, neg, strlen(neg), &w, &oom));
                ck_assert_msg(w == pgr_hs_to_int64_wrapped(v), "%s", neg);
            }
    /* the bigint limits through every base */
    static const struct {
        const char *in, *out;
    } edges[] = {
        {"0x7FFFFFFFFFFFFFFF", "9223372036854775807"},
        {"0x8000000000000000", "9223372036854775808"},
        {"0xFFFFFFFFFFFFFFFF", "18446744073709551615"},
        {"0x10000000000000000", "18446744073709551616"},
        {"0o777777777777777777777", "9223372036854775807"},
        {"0o1777777777777777777777", "18446744073709551615"},
        {"0x0000000000000000000000000000001", "1"},
        {"0xfffffff", "268435455"},  /* one whole chunk */
        {"0x10000000", "268435456"}, /* a partial chunk, then a whole one */
        {"0o777777777", "134217727"},
        {"0o1000000000", "134217728"},
    };
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
        pgr_hs_int v;
        bool oom;
        ck_assert(pgr_hs_read_integer(arena, edges[i].in, strlen(edges[i].in), &v, &oom));
        ck_assert_str_eq(v.digits, edges[i].out);
    }
}
END_TEST

/* Preferences fromHeaders: max-affected is readMaybe :: Maybe Int64,
 * which wraps a large Integer modulo 2^64 instead of failing */
START_TEST(test_max_affected_int64)
{
    static const struct {
        const char *pref;
        long long want;
    } cases[] = {{"max-affected=99999999999999999999", 7766279631452241919LL},
                 {"max-affected=0x10", 16},
                 {"max-affected=18446744073709551617", 1},
                 {"max-affected=1e3", -1},
                 /* 2^64 + 5, -(2^64) - 1, 2^64 - 1 and 2^65 - 1 in the
                  * other bases: modulo 2^64 */
                 {"max-affected=18446744073709551621", 5},
                 {"max-affected=-18446744073709551617", -1},
                 {"max-affected=0xFFFFFFFFFFFFFFFF", -1},
                 {"max-affected=0o3777777777777777777777", -1},
                 {"max-affected=(0x10000000000000007)", 7},
                 {"max-affected=0x1.5", -1},
                 {"max-affected=007", 7}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        pgrest_request *req = pgrest_request_new(arena, "PATCH", "/albums", "");
        pgrest_request_add_header(req, "Prefer", cases[i].pref);
        pgr_preferences p;
        memset(&p, 0, sizeof(p));
        p.max_affected = -1;
        pgr_parse_preferences(arena, req, &p);
        ck_assert_msg(p.max_affected == cases[i].want, "%s: %lld", cases[i].pref,
                      p.max_affected);
    }
}
END_TEST

/* 48,000 hex digits in max-affected (issue 39), read modulo 2^64 without
 * building their decimal text: 0x7fff...f is 2^191999 - 1, -1 modulo
 * 2^64; 0x1000...02a is 2^191988 + 42, 42 modulo 2^64 */
START_TEST(test_max_affected_huge)
{
    size_t n = 48000;
    char *v = malloc(n + 32);
    ck_assert_ptr_nonnull(v);
    memcpy(v, "max-affected=0x7", 16);
    memset(v + 16, 'f', n - 1);
    v[16 + n - 1] = '\0';
    pgrest_request *req = pgrest_request_new(arena, "PATCH", "/albums", "");
    pgrest_request_add_header(req, "Prefer", v);
    pgr_preferences p;
    memset(&p, 0, sizeof(p));
    pgr_parse_preferences(arena, req, &p);
    ck_assert(p.has_max_affected);
    ck_assert_int_eq(p.max_affected, -1);
    memcpy(v, "max-affected=0x1", 16);
    memset(v + 16, '0', n - 3);
    memcpy(v + 16 + n - 3, "2a", 3);
    req = pgrest_request_new(arena, "PATCH", "/albums", "");
    pgrest_request_add_header(req, "Prefer", v);
    memset(&p, 0, sizeof(p));
    pgr_parse_preferences(arena, req, &p);
    ck_assert(p.has_max_affected);
    ck_assert_int_eq(p.max_affected, 42);
    free(v);
}
END_TEST

/* ------------------------------------------------------------ ranges */

static pgrest_ctx *ctx;

static void ctx_setup(void)
{
    setup();
    pgrest_error err;
    ctx = pgrest_ctx_new();
    ck_assert_ptr_nonnull(ctx);
    pgrest_ctx_set(ctx, "db-schemas", "api", &err);
    pgrest_ctx_set(ctx, "db-anon-role", "web_anon", &err);
}

static void ctx_teardown(void)
{
    pgrest_ctx_free(ctx);
    teardown();
}

static int api(const char *method, const char *path, const char *query,
               const char *range, pgrest_api_request **out, pgrest_error *err)
{
    pgrest_request *req = pgrest_request_new(arena, method, path, query);
    if (range != NULL)
        pgrest_request_add_header(req, "Range", range);
    return pgrest_parse_request(ctx, arena, req, out, err);
}

typedef struct range_case {
    const char *follows;
    const char *query;
    const char *range;
    int status;              /* 0: parsed */
    const char *code;
    const char *message;
    long long offset, limit; /* when parsed */
} range_case;

static const range_case ranges[] = {
    /* limitOffsetF sends LIMIT/OFFSET as parameters PostgreSQL reads as
     * bigint: out of range is its 22003, never 0 or unbounded */
    {"limitOffsetF offset", "offset=99999999999999999999&limit=1", NULL, 400,
     "22003", "value \"99999999999999999999\" is out of range for type bigint",
     0, 0},
    {"limitOffsetF limit", "limit=99999999999999999999", NULL, 400, "22003",
     "value \"99999999999999999999\" is out of range for type bigint", 0, 0},
    {"limitOffsetF embedded limit", "album.limit=99999999999999999999", NULL,
     400, "22003",
     "value \"99999999999999999999\" is out of range for type bigint", 0, 0},
    {"rangeParse: 1 + upper - lower", NULL, "0-99999999999999999999", 400,
     "22003", "value \"100000000000000000000\" is out of range for type bigint",
     0, 0},
    {"getRanges: header ∩ limit fits", "limit=2", "0-99999999999999999999", 0,
     NULL, NULL, 0, 2},
    {"getRanges NegativeLimit (huge)", "limit=-99999999999999999999", NULL,
     416, "PGRST103", "Requested range not satisfiable", 0, 0},
    {"getRanges LowerGTUpper", NULL, "5-2", 416, "PGRST103",
     "Requested range not satisfiable", 0, 0},
    {"convertToLimitZeroRange beats an empty header range", "limit=0", "5-2",
     0, NULL, NULL, 0, 0},
    {"getRanges: limit=0 with an offset is Range 5 4, empty and not the "
     "limit-zero range (upper -1)", "limit=0&offset=5", NULL, 416, "PGRST103",
     "Requested range not satisfiable", 0, 0},
    {"rangeParse regex: 'items=' is not [0-9]+", NULL, "items=0-1", 0, NULL,
     NULL, 0, -1},
    {"allRange ∩ [-4,∞): RangeSpec negative offset no-op", "offset=-4", NULL,
     0, NULL, NULL, 0, -1},
    {"unionWith f: Range o (o+l-1) then ∩ allRange", "limit=5&offset=-4",
     NULL, 0, NULL, NULL, 0, 1},
    {"ranges: an unreadable limit is allRange", "limit=abc", NULL, 0, NULL,
     NULL, 0, -1},
    {"ranges: unreadable limit with an offset counts 0", "limit=abc&offset=0",
     NULL, 0, NULL, NULL, 0, 0},
    {"ranges: the last limit wins even unreadable", "limit=5&limit=x", NULL, 0,
     NULL, NULL, 0, -1},
    {"readMaybe hex limit", "limit=0x10&offset=(2)", NULL, 0, NULL, NULL, 2,
     16},
    /* bigint's edges through a hex limit or offset (issue 39) */
    {"hex limit at bigint's maximum", "limit=0x7FFFFFFFFFFFFFFF", NULL, 0,
     NULL, NULL, 0, 9223372036854775807LL},
    {"hex limit one past bigint", "limit=0x8000000000000000", NULL, 400,
     "22003", "value \"9223372036854775808\" is out of range for type bigint",
     0, 0},
    {"hex offset one past bigint", "offset=0x08000000000000000&limit=1", NULL,
     400, "22003",
     "value \"9223372036854775808\" is out of range for type bigint", 0, 0},
    {"leading zeros do not count", "limit=0x000000000000000000000000000000005",
     NULL, 0, NULL, NULL, 0, 5},
    {"a huge negative hex limit is 416, not 22003",
     "limit=-0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF", NULL, 416, "PGRST103",
     "Requested range not satisfiable", 0, 0},
    {"huge offset, huge limit: the count shown is the limit",
     "offset=0x1000000000000000000000000&limit=0o1000000000000000000000", NULL,
     400, "22003",
     "value \"9223372036854775808\" is out of range for type bigint", 0, 0},
    {"embedded OFFSET -1 reaches PostgreSQL (2201X)", "album.offset=-1", NULL,
     400, "2201X", "OFFSET must not be negative", 0, 0},
    {"embedded LIMIT -1 reaches PostgreSQL (2201W)", "album.limit=-1", NULL,
     400, "2201W", "LIMIT must not be negative", 0, 0},
};

START_TEST(test_ranges)
{
    const range_case *c = &ranges[_i];
    pgrest_api_request *a = NULL;
    pgrest_error err = {0};
    int rc = api("GET", "/albums", c->query ? c->query : "", c->range, &a, &err);
    if (c->status == 0) {
        ck_assert_msg(rc == PGREST_OK, "%s: %s", c->follows, err.message);
        ck_assert_msg(a->range_offset == c->offset && a->range_limit == c->limit,
                      "%s: offset %lld limit %lld", c->follows, a->range_offset,
                      a->range_limit);
        return;
    }
    ck_assert_msg(rc != PGREST_OK, "%s: parsed", c->follows);
    ck_assert_int_eq(err.http_status, c->status);
    ck_assert_str_eq(err.code, c->code);
    ck_assert_str_eq(err.message, c->message);
}
END_TEST

/* A %00 in the path is part of the name: no relation or function is
 * called so, PostgREST's schema cache lookup fails with 404. */
START_TEST(test_path_nul)
{
    pgrest_api_request *a = NULL;
    pgrest_error err = {0};
    ck_assert_int_ne(api("GET", "/albums%00", "select=id", NULL, &a, &err),
                     PGREST_OK);
    ck_assert_int_eq(err.http_status, 404);
    ck_assert_str_eq(err.code, "PGRST205");
    ck_assert_int_ne(api("POST", "/rpc/f%00x", "", NULL, &a, &err), PGREST_OK);
    ck_assert_int_eq(err.http_status, 404);
    ck_assert_str_eq(err.code, "PGRST202");
}
END_TEST

/* A header added with its length keeps a NUL: refused (400 22021), never
 * read up to the NUL ("count=exact\0zz" is not count=exact). */
START_TEST(test_header_nul)
{
    pgrest_request *req = pgrest_request_new(arena, "GET", "/albums", "");
    pgrest_request_add_header_n(req, "Prefer", "count=exact\0zz", 14);
    pgrest_api_request *a = NULL;
    pgrest_error err = {0};
    ck_assert_int_ne(pgrest_parse_request(ctx, arena, req, &a, &err), PGREST_OK);
    ck_assert_int_eq(err.http_status, 400);
    ck_assert_str_eq(err.code, "22021");
    ck_assert_str_eq(err.details, "The request header \"Prefer\" contains a NUL byte");
    req = pgrest_request_new(arena, "GET", "/albums", "");
    pgrest_request_add_header_n(req, "Prefer", "count=exact", 11);
    ck_assert_int_eq(pgrest_parse_request(ctx, arena, req, &a, &err), PGREST_OK);
}
END_TEST

/* Payload bodies keep NUL bytes: a key with one names no column
 * (PostgREST's PGRST204), a value keeps it as \u0000 for PostgreSQL to
 * refuse (22P05); json-c would have cut "a\u0000b" to "a". */
static int body_request(const char *path, const char *ctype, const char *body,
                        size_t len, pgrest_api_request **out, pgrest_error *err)
{
    pgrest_request *req = pgrest_request_new(arena, "POST", path, "");
    pgrest_request_add_header(req, "Content-Type", ctype);
    pgrest_request_set_body(req, body, len);
    return pgrest_parse_request(ctx, arena, req, out, err);
}

START_TEST(test_payload_nul)
{
    static const struct {
        const char *ctype, *body;
        size_t len;
    } keys[] = {{"application/json", "{\"a\\u0000b\":1}", 14},
                {"application/x-www-form-urlencoded", "a%00b=1", 7},
                {"text/csv", "a\0b\n1", 5}};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        pgrest_api_request *a = NULL;
        pgrest_error err = {0};
        ck_assert_int_ne(body_request("/albums", keys[i].ctype, keys[i].body,
                                      keys[i].len, &a, &err),
                         PGREST_OK);
        ck_assert_int_eq(err.http_status, 400);
        ck_assert_str_eq(err.code, "PGRST204");
        ck_assert_str_eq(err.message, "Could not find the 'a\\u0000b' column "
                                      "of 'albums' in the schema cache");
    }
    static const struct {
        const char *ctype, *body;
        size_t len;
    } values[] = {{"application/x-www-form-urlencoded", "title=x%00y", 11},
                  {"text/csv", "title\nx\0y", 9}};
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        pgrest_api_request *a = NULL;
        pgrest_error err = {0};
        ck_assert_int_eq(body_request("/albums", values[i].ctype, values[i].body,
                                      values[i].len, &a, &err),
                         PGREST_OK);
        ck_assert_msg(strstr(a->payload_json, "x\\u0000y") != NULL, "%s",
                      a->payload_json);
    }
    pgrest_api_request *a = NULL;
    pgrest_error err = {0};
    ck_assert_int_ne(body_request("/rpc/add", "application/json",
                                  "{\"a\\u0000\":1}", 13, &a, &err),
                     PGREST_OK);
    ck_assert_str_eq(err.code, "22021");
    /* form arguments of a function: parsed, the call planner refuses the
     * NUL of an argument it passes (test_hostile_request.c) */
    ck_assert_int_eq(body_request("/rpc/add", "application/x-www-form-urlencoded",
                                  "a=1%00", 6, &a, &err),
                     PGREST_OK);
}
END_TEST

static Suite *grammar_suite(void)
{
    Suite *s = suite_create("grammar");
    TCase *tc = tcase_create("grammar");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_grammar_errors, 0,
                        (int)(sizeof(errors) / sizeof(errors[0])));
    tcase_add_test(tc, test_valid_prefixes);
    tcase_add_test(tc, test_semicolon_separates);
    tcase_add_test(tc, test_nul_values);
    tcase_add_test(tc, test_canonical_keeps_nul);
    tcase_add_test(tc, test_read_integer);
    tcase_add_test(tc, test_read_integer_bases);
    tcase_add_test(tc, test_max_affected_int64);
    tcase_add_test(tc, test_max_affected_huge);
    suite_add_tcase(s, tc);
    TCase *tr = tcase_create("ranges");
    tcase_add_checked_fixture(tr, ctx_setup, ctx_teardown);
    tcase_add_loop_test(tr, test_ranges, 0,
                        (int)(sizeof(ranges) / sizeof(ranges[0])));
    tcase_add_test(tr, test_path_nul);
    tcase_add_test(tr, test_header_nul);
    tcase_add_test(tr, test_payload_nul);
    suite_add_tcase(s, tr);
    return s;
}

int main(void)
{
    return check_run(grammar_suite());
}
