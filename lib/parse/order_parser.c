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
static bool dotted_word(pgr_pstate *ps, const char *word)
{
    size_t n = strlen(word);
    if (peek(ps, 0) != '.') {
        pgr_ps_expect(ps, ps->pos, "delimiter (.)");
        return false;
    }
    if (ps->len - ps->pos - 1 >= n && memcmp(ps->s + ps->pos + 1, word, n) == 0) {
        ps->pos += n + 1;
        return true;
    }
    char *label = pgr_asprintf(ps->a, "\"%s\"", word);
    if (label == NULL)
        ps->oom = true;
    pgr_ps_expect(ps, ps->pos + 1, label);
    return false;
}

/* direction, nulls and pEnd (lookAhead ',' or eof) */
static int term_tail(pgr_pstate *ps, pgr_order_term *t)
{
    if (dotted_word(ps, "asc"))
        t->dir = PGR_ORDER_ASC;
    else if (dotted_word(ps, "desc"))
        t->dir = PGR_ORDER_DESC;
    if (dotted_word(ps, "nullsfirst"))
        t->nulls = PGR_NULLS_FIRST;
    else if (dotted_word(ps, "nullslast"))
        t->nulls = PGR_NULLS_LAST;
    if (ps->pos >= ps->len || peek(ps, 0) == ',')
        return PGR_P_OK;
    pgr_ps_expect(ps, ps->pos, "\",\"");
    pgr_ps_expect(ps, ps->pos, "end of input");
    return PGR_P_FAIL;
}

/* rel(field)[.dir][.nulls] */
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

static int term(pgr_pstate *ps, pgr_order_term *t)
{
    pgr_ps_ws(ps);
    size_t start = ps->pos;
    if (relation_term(ps, t) == PGR_P_OK && !ps->oom) {
        pgr_ps_ws(ps);
        return PGR_P_OK;
    }
    ps->pos = start;
    memset(t, 0, sizeof(*t));
    if (pgr_ps_field(ps, &t->field) != PGR_P_OK)
        return PGR_P_FAIL;
    if (term_tail(ps, t) != PGR_P_OK)
        return PGR_P_FAIL;
    pgr_ps_ws(ps);
    return PGR_P_OK;
}

int pgr_parse_order(pgrest_arena *a, const char *text, pgr_order_term **out,
                    pgrest_error *err)
{
    pgr_pstate ps;
    pgr_ps_init(&ps, a, text, strlen(text));
    pgr_order_term **tail = out;
    *out = NULL;
    for (;;) {
        pgr_order_term *t = PGR_NEW(a, pgr_order_term);
        if (t == NULL)
            return pgr_error_oom(err);
        if (term(&ps, t) != PGR_P_OK || ps.oom) {
            *out = NULL;
            return pgr_ps_error(&ps, "order", text, err);
        }
        *tail = t;
        tail = &t->next;
        if (ps.pos >= ps.len)
            return PGREST_OK;
        ps.pos++; /* ',' checked by term_tail */
    }
}
