/* distinct= parser: `*` or pFieldName `sepBy1` lexeme (char ','), then
 * eof (docs/distinct.md). */
#include "parse/distinct_parser.h"

#include "parse/filter_parser.h"
#include "util/error.h"
#include "util/str_list.h"

static int column_list(pgr_pstate *ps, pgr_str_list *l)
{
    for (;;) {
        const char *name;
        pgr_ps_ws(ps);
        if (pgr_ps_field_name(ps, &name) != PGR_P_OK || ps->oom)
            return PGR_P_FAIL;
        if (!pgr_str_list_push(ps->a, l, name)) {
            ps->oom = true;
            return PGR_P_FAIL;
        }
        pgr_ps_ws(ps);
        if (ps->pos >= ps->len)
            return PGR_P_OK;
        if (ps->s[ps->pos] != ',') {
            pgr_ps_expect(ps, ps->pos, "\",\"");
            pgr_ps_expect_eof(ps, ps->pos);
            return PGR_P_FAIL;
        }
        ps->pos++;
    }
}

int pgr_parse_distinct_n(pgrest_arena *a, const char *text, size_t len,
                         pgr_path_distinct *out, pgrest_error *err)
{
    if (len == 1 && text[0] == '*') {
        out->all = true;
        return PGREST_OK;
    }
    pgr_pstate ps;
    pgr_ps_init(&ps, a, text, len);
    pgr_str_list l = {0};
    if (column_list(&ps, &l) != PGR_P_OK)
        return pgr_ps_error_n(&ps, "distinct", text, len, err);
    if (ps.kept_nul)
        return pgr_ps_nul_error(err);
    out->columns = l.items;
    out->n_columns = l.n;
    return PGREST_OK;
}
