/* select= parser: PostgREST src/ApiRequest/QueryParams.hs pFieldForest,
 * pFieldTree, pRelationSelect, pSpreadRelationSelect, pFieldSelect. */
#include "parse/select_parser.h"

#include <string.h>

#include "parse/filter_parser.h"
#include "util/error.h"

static int forest(pgr_pstate *ps, pgr_select_item **out);

static inline int peek(const pgr_pstate *ps, size_t off)
{
    return ps->pos + off < ps->len ? (unsigned char)ps->s[ps->pos + off] : -1;
}

/* optionMaybe (try (pFieldName <* aliasSeparator)); ':' not followed by
 * ':'. aliasSeparator's notFollowedBy (char ':') succeeds through
 * `try p <|> return ()`, which passes char ':''s error on: right after an
 * alias, ":" is among what Parsec says it expected. */
static const char *try_alias(pgr_pstate *ps)
{
    size_t start = ps->pos;
    const char *name = NULL;
    if (pgr_ps_field_name(ps, &name) == PGR_P_OK && peek(ps, 0) == ':' &&
        peek(ps, 1) != ':') {
        ps->pos++;
        pgr_ps_expect(ps, ps->pos, "\":\"");
        return name;
    }
    ps->pos = start;
    return NULL;
}

/* `!hint`, `!inner`, `!left`, at most two of them (pEmbedParams) */
static int embed_params(pgr_pstate *ps, pgr_select_item *it)
{
    /* char '!' *> (try "left" <|> try "inner" <|> try pFieldName): the
     * join words match as prefixes, as in PostgREST. Of two hints (or two
     * join types) the first counts: embedParamHint prm1 <|>
     * embedParamHint prm2 is Maybe's <|>. */
    for (int i = 0; i < 2 && peek(ps, 0) == '!'; i++) {
        ps->pos++;
        const char *word;
        if (pgr_ps_mismatch(ps, ps->pos, "left") == ps->pos + 4) {
            if (it->join == PGR_JOIN_DEFAULT)
                it->join = PGR_JOIN_LEFT;
            ps->pos += 4;
        } else if (pgr_ps_mismatch(ps, ps->pos, "inner") == ps->pos + 5) {
            if (it->join == PGR_JOIN_DEFAULT)
                it->join = PGR_JOIN_INNER;
            ps->pos += 5;
        } else if (pgr_ps_field_name(ps, &word) == PGR_P_OK) {
            if (it->hint == NULL)
                it->hint = word;
        } else {
            return PGR_P_FAIL;
        }
    }
    pgr_ps_expect(ps, ps->pos, "\"!\"");
    return PGR_P_OK;
}

/* [alias:]name[!params] or ...name[!params], followed by '(' */
static int relation_head(pgr_pstate *ps, bool spread, pgr_select_item *it)
{
    pgr_ps_ws(ps);
    if (spread) {
        if (!pgr_ps_lit(ps, "..."))
            return PGR_P_EMPTY;
        it->kind = PGR_SELECT_SPREAD;
    } else {
        it->kind = PGR_SELECT_EMBED;
        it->alias = try_alias(ps);
    }
    if (pgr_ps_field_name(ps, &it->relation) != PGR_P_OK)
        return PGR_P_FAIL;
    /* `count` can't be an embed: legacy select=count (pRelationSelect) */
    if (!spread && strcmp(it->relation, "count") == 0)
        return PGR_P_FAIL;
    if (embed_params(ps, it) != PGR_P_OK)
        return PGR_P_FAIL;
    if (peek(ps, 0) != '(') {
        pgr_ps_expect(ps, ps->pos, "\"(\"");
        return PGR_P_FAIL;
    }
    pgr_ps_ws(ps);
    return PGR_P_OK;
}

static int children(pgr_pstate *ps, pgr_select_item *it)
{
    ps->pos++; /* '(' checked by relation_head */
    if (!pgr_ps_enter(ps))
        return PGR_P_FAIL;
    int rc = forest(ps, &it->children);
    pgr_ps_leave(ps);
    if (rc != PGR_P_OK)
        return PGR_P_FAIL;
    if (peek(ps, 0) != ')') {
        pgr_ps_expect(ps, ps->pos, "\")\"");
        return PGR_P_FAIL;
    }
    ps->pos++;
    return PGR_P_OK;
}

/* pEnd of pFieldSelect: lookAhead ')' or ',' or eof */
static bool field_end(pgr_pstate *ps)
{
    if (ps->pos >= ps->len || peek(ps, 0) == ')' || peek(ps, 0) == ',')
        return true;
    pgr_ps_expect(ps, ps->pos, "\")\"");
    pgr_ps_expect(ps, ps->pos, "\",\"");
    pgr_ps_expect_eof(ps, ps->pos);
    return false;
}

/* optionMaybe (string "::" *> pIdentifier): `string` is not under try, so
 * a lone ':' commits and fails */
static int opt_cast(pgr_pstate *ps, const char **out)
{
    size_t start = ps->pos, m = pgr_ps_mismatch(ps, start, "::");
    if (m > start && m < start + 2) {
        /* a consumed error stands alone: what was expected before goes */
        ps->has_err = false;
        pgr_ps_expect_tok(ps, start, "\"::\"", m);
        return PGR_P_FAIL;
    }
    if (!pgr_ps_lit(ps, "::"))
        return PGR_P_OK;
    return pgr_ps_identifier(ps, out) == PGR_P_OK ? PGR_P_OK : PGR_P_FAIL;
}

/* optionMaybe (try (char '.' *> pAggregation <* string "()")), where
 * pAggregation = choice [string "sum", "avg", "count", try "max", try
 * "min"]: a partial "sum"/"avg"/"count" ends the choice */
static void opt_aggregate(pgr_pstate *ps, pgr_select_item *it)
{
    static const struct {
        const char *name, *label;
        bool under_try;
    } aggs[] = {{"sum", "\"sum\"", false},   {"avg", "\"avg\"", false},
                {"count", "\"count\"", false}, {"max", "\"max\"", true},
                {"min", "\"min\"", true}};
    if (peek(ps, 0) != '.') {
        pgr_ps_expect(ps, ps->pos, "\".\"");
        return;
    }
    size_t at = ps->pos + 1;
    for (size_t i = 0; i < sizeof(aggs) / sizeof(aggs[0]); i++) {
        size_t n = strlen(aggs[i].name);
        size_t m = pgr_ps_mismatch(ps, at, aggs[i].name);
        if (m - at < n) {
            pgr_ps_expect_tok(ps, at, aggs[i].label, m);
            if (m > at && !aggs[i].under_try)
                return;
            continue;
        }
        size_t p = at + n, mp = pgr_ps_mismatch(ps, p, "()");
        if (mp - p == 2) {
            it->aggregate = aggs[i].name;
            ps->pos = mp;
        } else {
            pgr_ps_expect_tok(ps, p, "\"()\"", mp);
        }
        return;
    }
}

static bool try_star(pgr_pstate *ps, pgr_select_item *it)
{
    size_t start = ps->pos;
    if (peek(ps, 0) == '*') {
        ps->pos++;
        if (field_end(ps)) {
            it->kind = PGR_SELECT_STAR;
            return true;
        }
    } else {
        pgr_ps_expect(ps, ps->pos, "\"*\"");
    }
    ps->pos = start;
    return false;
}

/* [alias:]count()[::cast] */
static int try_count(pgr_pstate *ps, pgr_select_item *it)
{
    size_t start = ps->pos;
    const char *alias = try_alias(ps);
    if (pgr_ps_lit(ps, "count()")) {
        const char *cast = NULL;
        if (opt_cast(ps, &cast) == PGR_P_OK && field_end(ps)) {
            it->kind = PGR_SELECT_FIELD;
            it->alias = alias;
            it->field.name = "*";
            it->aggregate = "count";
            it->agg_cast = cast;
            return PGR_P_OK;
        }
    }
    ps->pos = start;
    return PGR_P_EMPTY;
}

/* pFieldSelect: lexeme (try star <|> try count() <|> field). The errors
 * of the two failed tries count only if the field consumes nothing. */
static int field_select(pgr_pstate *ps, pgr_select_item *it)
{
    size_t start = ps->pos;
    pgr_perr before, tries;
    pgr_ps_ws(ps);
    pgr_ps_save_err(ps, &before);
    if (try_star(ps, it) || try_count(ps, it) == PGR_P_OK) {
        pgr_ps_ws(ps);
        return PGR_P_OK;
    }
    pgr_ps_save_err(ps, &tries);
    pgr_ps_restore_err(ps, &before);
    it->kind = PGR_SELECT_FIELD;
    it->alias = try_alias(ps);
    int rc = pgr_ps_field(ps, &it->field);
    if (rc != PGR_P_OK) {
        if (rc == PGR_P_EMPTY && ps->pos == start) {
            pgr_ps_merge_err(ps, &tries);
            return PGR_P_EMPTY;
        }
        return PGR_P_FAIL;
    }
    /* cast, optional aggregate, and an aggregate cast that is read (and
     * ignored by pgFmtApplyAggregate) even without an aggregate */
    const char *agg_cast = NULL;
    if (opt_cast(ps, &it->cast) != PGR_P_OK)
        return PGR_P_FAIL;
    opt_aggregate(ps, it);
    if (opt_cast(ps, &agg_cast) != PGR_P_OK)
        return PGR_P_FAIL;
    if (it->aggregate != NULL)
        it->agg_cast = agg_cast;
    if (!field_end(ps))
        return PGR_P_FAIL;
    pgr_ps_ws(ps);
    return PGR_P_OK;
}

/* pFieldTree: try spread head <|> try relation head <|> field. Only the
 * heads are under try: once `name(` is read, the children commit. */
static int item(pgr_pstate *ps, pgr_select_item **out)
{
    size_t start = ps->pos;
    pgr_select_item *it = PGR_NEW(ps->a, pgr_select_item);
    if (it == NULL) {
        ps->oom = true;
        return PGR_P_FAIL;
    }
    *out = it;
    pgr_perr before, heads;
    pgr_ps_save_err(ps, &before);
    for (int spread = 1; spread >= 0; spread--) {
        if (relation_head(ps, spread, it) == PGR_P_OK && !ps->oom) {
            if (children(ps, it) != PGR_P_OK)
                return PGR_P_FAIL;
            pgr_ps_ws(ps);
            return PGR_P_OK;
        }
        ps->pos = start;
        memset(it, 0, sizeof(*it));
    }
    /* the failed heads' errors count only if the field consumes nothing */
    pgr_ps_save_err(ps, &heads);
    pgr_ps_restore_err(ps, &before);
    int rc = field_select(ps, it);
    if (rc == PGR_P_EMPTY)
        pgr_ps_merge_err(ps, &heads);
    return rc;
}

/* pFieldTree `sepBy` lexeme (char ',') */
static int forest(pgr_pstate *ps, pgr_select_item **out)
{
    pgr_select_item **tail = out;
    *out = NULL;
    for (bool first = true;; first = false) {
        pgr_select_item *it;
        int rc = item(ps, &it);
        if (rc == PGR_P_EMPTY && first)
            return ps->oom ? PGR_P_FAIL : PGR_P_OK;
        if (rc != PGR_P_OK)
            return PGR_P_FAIL;
        *tail = it;
        tail = &it->next;
        size_t save = ps->pos;
        pgr_ps_ws(ps);
        if (peek(ps, 0) != ',') {
            pgr_ps_expect(ps, ps->pos, "\",\"");
            ps->pos = save;
            return PGR_P_OK;
        }
        ps->pos++;
        pgr_ps_ws(ps);
    }
}

int pgr_parse_select(pgrest_arena *a, const char *text, pgr_select_item **out,
                     pgrest_error *err)
{
    return pgr_parse_select_max(a, text, PGR_DEFAULT_MAX_DEPTH, out, err);
}

int pgr_parse_select_max(pgrest_arena *a, const char *text, int max_depth,
                         pgr_select_item **out, pgrest_error *err)
{
    return pgr_parse_select_n(a, text, strlen(text), max_depth, out, err);
}

int pgr_parse_select_n(pgrest_arena *a, const char *text, size_t len,
                       int max_depth, pgr_select_item **out, pgrest_error *err)
{
    pgr_pstate ps;
    pgr_ps_init(&ps, a, text, len);
    ps.max_depth = max_depth;
    *out = NULL;
    int rc = forest(&ps, out);
    if (ps.too_deep && !ps.oom) {
        *out = NULL;
        return pgr_ps_depth_error(&ps, "select parameter", err);
    }
    if (rc != PGR_P_OK || ps.oom) {
        *out = NULL;
        return pgr_ps_error_n(&ps, "select parameter", text, len, err);
    }
    /* P.parse without eof: text after the forest is ignored, but a NUL
     * inside a parsed name cannot reach PostgreSQL */
    if (ps.kept_nul) {
        *out = NULL;
        return pgr_ps_nul_error(err);
    }
    return PGREST_OK;
}
