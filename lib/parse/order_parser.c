/* order= parser: PostgREST src/ApiRequest/QueryParams.hs pOrder
 * (pOrderTerm, pOrderRelationTerm). */
#include "parse/order_parser.h"

#include <string.h>

#include "parse/filter_parser.h"
#include "util/error.h"

static inline int peek(const pgr_pstate *ps, size_t off)
{
    return ps->pos + off < ps->len ? (unsigned char)ps->s[ps->pos + off] : -1;
}

/* try (pDelimiter *> string word) */
static bool dotted_word(pgr_pstate *ps, const char *word, const char *label)
{
    if (peek(ps, 0) != '.') {
        pgr_ps_expect(ps, ps->pos, "delimiter (.)");
        return false;
    }
    size_t at = ps->pos + 1, m = pgr_ps_mismatch(ps, at, word);
    if (m - at == strlen(word)) {
        ps->pos = m;
        return true;
    }
    pgr_ps_expect_tok(ps, at, label, m);
    return false;
}

/* pEnd: try (lookAhead (char ',')) <|> try eof */
static bool term_end(pgr_pstate *ps)
{
    if (ps->pos >= ps->len || peek(ps, 0) == ',')
        return true;
    pgr_ps_expect(ps, ps->pos, "\",\"");
    pgr_ps_expect_eof(ps, ps->pos);
    return false;
}

/* optionMaybe pOrdDir, then optionMaybe pNulls <* pEnd <|> pEnd */
static int term_tail(pgr_pstate *ps, pgr_order_term *t)
{
    if (dotted_word(ps, "asc", "\"asc\""))
        t->dir = PGR_ORDER_ASC;
    else if (dotted_word(ps, "desc", "\"desc\""))
        t->dir = PGR_ORDER_DESC;
    if (dotted_word(ps, "nullsfirst", "\"nullsfirst\""))
        t->nulls = PGR_NULLS_FIRST;
    else if (dotted_word(ps, "nullslast", "\"nullslast\""))
        t->nulls = PGR_NULLS_LAST;
    return term_end(ps) ? PGR_P_OK : PGR_P_FAIL;
}

/* pOrderRelationTerm: rel(field)[.dir][.nulls] */
static int relation_term(pgr_pstate *ps, pgr_order_term *t)
{
    if (pgr_ps_field_name(ps, &t->relation) != PGR_P_OK)
        return PGR_P_FAIL;
    if (peek(ps, 0) != '(') {
        pgr_ps_expect(ps, ps->pos, "\"(\"");
        return PGR_P_FAIL;
    }
    ps->pos++;
    if (pgr_ps_field(ps, &t->field) != PGR_P_OK)
        return PGR_P_FAIL;
    if (peek(ps, 0) != ')') {
        pgr_ps_expect(ps, ps->pos, "\")\"");
        return PGR_P_FAIL;
    }
    ps->pos++;
    return term_tail(ps, t);
}

/* lexeme (try pOrderRelationTerm <|> pOrderTerm) */
static int term(pgr_pstate *ps, pgr_order_term *t)
{
    pgr_ps_ws(ps);
    size_t start = ps->pos;
    pgr_perr before, rel;
    pgr_ps_save_err(ps, &before);
    if (relation_term(ps, t) == PGR_P_OK && !ps->oom) {
        pgr_ps_ws(ps);
        return PGR_P_OK;
    }
    /* the failed try's errors count only if pOrderTerm consumes nothing */
    pgr_ps_save_err(ps, &rel);
    pgr_ps_restore_err(ps, &before);
    ps->pos = start;
    memset(t, 0, sizeof(*t));
    int rc = pgr_ps_field(ps, &t->field);
    if (rc == PGR_P_EMPTY)
        pgr_ps_merge_err(ps, &rel);
    if (rc != PGR_P_OK || term_tail(ps, t) != PGR_P_OK)
        return PGR_P_FAIL;
    pgr_ps_ws(ps);
    return PGR_P_OK;
}

int pgr_parse_order(pgrest_arena *a, const char *text, pgr_order_term **out,
                    pgrest_error *err)
{
    return pgr_parse_order_n(a, text, strlen(text), out, err);
}

int pgr_parse_order_n(pgrest_arena *a, const char *text, size_t len,
                      pgr_order_term **out, pgrest_error *err)
{
    pgr_pstate ps;
    pgr_ps_init(&ps, a, text, len);
    pgr_order_term **tail = out;
    *out = NULL;
    for (;;) {
        pgr_order_term *t = PGR_NEW(a, pgr_order_term);
        if (t == NULL)
            return pgr_error_oom(err);
        if (term(&ps, t) != PGR_P_OK || ps.oom) {
            *out = NULL;
            return pgr_ps_error_n(&ps, "order", text, len, err);
        }
        *tail = t;
        tail = &t->next;
        if (ps.pos >= ps.len)
            return ps.kept_nul ? pgr_ps_nul_error(err) : PGREST_OK;
        ps.pos++; /* ',' checked by term_tail */
    }
}
