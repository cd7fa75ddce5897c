/* The Parsec-like parser state the request grammars share: error
 * positions and expectations merged as Parsec merges them (`try`, `<|>`,
 * `<?>`, eof), and PGRST100 rendered as PostgREST's mapError shows a
 * ParseError (Text.Parsec.Error showErrorMessages, Haskell's `show`). */
#include "parse/parsec_state.h"

#include <string.h>

#include "util/error.h"
#include "util/hs_show.h"
#include "util/strbuf.h"

/* ------------------------------------------------------------ state */

void pgr_ps_init(pgr_pstate *ps, pgrest_arena *a, const char *s, size_t len)
{
    memset(ps, 0, sizeof(*ps));
    ps->a = a;
    ps->s = s;
    ps->len = len;
    ps->max_depth = PGR_DEFAULT_MAX_DEPTH;
}

bool pgr_ps_enter(pgr_pstate *ps)
{
    if (ps->depth >= ps->max_depth) {
        ps->too_deep = true;
        return false;
    }
    ps->depth++;
    return true;
}

int pgr_ps_depth_error(const pgr_pstate *ps, const char *what, pgrest_error *err)
{
    return pgr_errorf(err, ps->a, 400, "PGRST100",
                      pgr_asprintf(ps->a, "The %s nests deeper than %d levels; "
                                   "the limit is set by request-max-depth",
                                   what, ps->max_depth),
                      NULL, "%s%s nesting too deep",
                      what[0] == 's' ? "Select" : "Logic tree",
                      what[0] == 's' ? " parameter" : "");
}

void pgr_ps_save_err(const pgr_pstate *ps, pgr_perr *save)
{
    save->has_err = ps->has_err;
    save->err_pos = ps->err_pos;
    save->n_expect = ps->n_expect;
    save->tok_pos = ps->tok_pos;
    save->unexpect = ps->unexpect;
    memcpy(save->expect, ps->expect, sizeof(save->expect));
}

void pgr_ps_restore_err(pgr_pstate *ps, const pgr_perr *save)
{
    ps->has_err = save->has_err;
    ps->err_pos = save->err_pos;
    ps->n_expect = save->n_expect;
    ps->tok_pos = save->tok_pos;
    ps->unexpect = save->unexpect;
    memcpy(ps->expect, save->expect, sizeof(ps->expect));
}

void pgr_ps_merge_err(pgr_pstate *ps, const pgr_perr *alt)
{
    if (!alt->has_err)
        return;
    if (!ps->has_err || alt->err_pos > ps->err_pos) {
        pgr_ps_restore_err(ps, alt);
        return;
    }
    if (alt->err_pos < ps->err_pos)
        return;
    /* same position: alt's messages come first (mergeError msgs1 ++ msgs2) */
    pgr_perr cur;
    pgr_ps_save_err(ps, &cur);
    pgr_ps_restore_err(ps, alt);
    ps->unexpect = ps->unexpect || cur.unexpect;
    for (size_t i = 0; i < cur.n_expect; i++)
        pgr_ps_expect_tok(ps, cur.err_pos, cur.expect[i], cur.tok_pos);
}

void pgr_ps_expect_tok(pgr_pstate *ps, size_t pos, const char *label,
                       size_t tok)
{
    if (!ps->has_err || pos > ps->err_pos) {
        ps->has_err = true;
        ps->err_pos = pos;
        ps->n_expect = 0;
        ps->tok_pos = tok;
        ps->unexpect = false;
    } else if (pos < ps->err_pos) {
        return;
    }
    if (label == NULL)
        return;
    for (size_t i = 0; i < ps->n_expect; i++)
        if (strcmp(ps->expect[i], label) == 0)
            return;
    if (ps->n_expect < PGR_PS_MAX_EXPECT)
        ps->expect[ps->n_expect++] = label;
}

void pgr_ps_expect(pgr_pstate *ps, size_t pos, const char *label)
{
    pgr_ps_expect_tok(ps, pos, label, pos);
}

void pgr_ps_expect_eof(pgr_pstate *ps, size_t pos)
{
    if (pos >= ps->len)
        return;
    pgr_ps_expect(ps, pos, "end of input");
    if (ps->err_pos == pos)
        ps->unexpect = true;
}

/* Text.Show for String: the source name and unexpected token are shown
 * the way Haskell's `show` renders them. */
static unsigned long utf8_next(const unsigned char *s, size_t n, size_t *i)
{
    unsigned char c = s[*i];
    int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
    if (c >= 0x80 && extra == 0) {
        (*i)++;
        return 0xFFFD;
    }
    unsigned long cp = extra == 0 ? c : c & (0x3F >> extra);
    size_t j = *i + 1;
    for (int k = 0; k < extra; k++, j++) {
        if (j >= n || (s[j] & 0xC0) != 0x80) {
            *i = j;
            return 0xFFFD;
        }
        cp = (cp << 6) | (s[j] & 0x3F);
    }
    *i = j;
    return cp;
}

/* show :: String */
static void hs_show(pgr_sb *sb, const char *text, size_t n)
{
    const unsigned char *s = (const unsigned char *)text;
    bool numeric_prev = false, so_prev = false;
    pgr_sb_putc(sb, '"');
    for (size_t i = 0; i < n;)
        pgr_hs_show_lit_char(sb, utf8_next(s, n, &i), '"', &numeric_prev, &so_prev);
    pgr_sb_putc(sb, '"');
}

/* show :: Char (what eof's and notFollowedBy's UnExpect carry) */
static void hs_show_char(pgr_sb *sb, const char *text, size_t n)
{
    size_t i = 0;
    bool numeric_prev = false, so_prev = false;
    pgr_sb_putc(sb, '\'');
    pgr_hs_show_lit_char(sb, utf8_next((const unsigned char *)text, n, &i), '\'',
                         &numeric_prev, &so_prev);
    pgr_sb_putc(sb, '\'');
}

static void line_col(const pgr_pstate *ps, long long *line, long long *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < ps->err_pos && i < ps->len; i++) {
        unsigned char c = (unsigned char)ps->s[i];
        if ((c & 0xC0) == 0x80)
            continue;
        if (c == '\n') {
            (*line)++;
            *col = 1;
        } else if (c == '\t') {
            *col += 8 - ((*col - 1) % 8);
        } else {
            (*col)++;
        }
    }
}

/* Text.Parsec.Error showErrorMessages "or" ... "expecting" "unexpected"
 * "end of input", newlines turned into spaces as PostgREST's mapError does:
 * an UnExpect hides the SysUnExpect; the first SysUnExpect is shown. */
static void put_details(pgr_sb *sb, const pgr_pstate *ps)
{
    pgr_sb_puts(sb, "unexpected ");
    size_t at = ps->unexpect ? ps->err_pos : ps->tok_pos;
    if (at >= ps->len) {
        pgr_sb_puts(sb, "end of input");
    } else {
        size_t i = at;
        utf8_next((const unsigned char *)ps->s, ps->len, &i);
        if (ps->unexpect)
            hs_show_char(sb, ps->s + at, i - at);
        else
            hs_show(sb, ps->s + at, i - at);
    }
    for (size_t i = 0; i < ps->n_expect; i++) {
        if (i == 0)
            pgr_sb_puts(sb, " expecting ");
        else if (i + 1 == ps->n_expect)
            pgr_sb_puts(sb, " or ");
        else
            pgr_sb_puts(sb, ", ");
        pgr_sb_puts(sb, ps->expect[i]);
    }
}

int pgr_ps_error(const pgr_pstate *ps, const char *what, const char *shown,
                 pgrest_error *err)
{
    return pgr_ps_error_n(ps, what, shown, strlen(shown), err);
}

/* Parsec's Show SourcePos: the source name between plain quotes, not
 * `show`n (no escapes), so quotes, backslashes and non-ASCII text appear
 * as they are.  A NUL byte cannot live in the C string of a message: it
 * is written as `show` writes it (\NUL). */
static void put_source_name(pgr_sb *sb, const char *text, size_t n)
{
    pgr_sb_putc(sb, '"');
    for (size_t i = 0; i < n; i++) {
        if (text[i] == '\0')
            pgr_sb_puts(sb, "\\NUL");
        else
            pgr_sb_putc(sb, text[i]);
    }
    pgr_sb_putc(sb, '"');
}

/* mapError: message = show (errorPos e) of the source name
 * "failed to parse <what> (<text>)", details the messages on one line */
int pgr_ps_error_n(const pgr_pstate *ps, const char *what, const char *shown,
                   size_t shown_len, pgrest_error *err)
{
    if (ps->oom)
        return pgr_error_oom(err);
    pgr_sb name, msg, det;
    pgr_sb_init(&name, ps->a, 64);
    pgr_sb_init(&msg, ps->a, 64);
    pgr_sb_init(&det, ps->a, 64);
    pgr_sb_puts(&name, "failed to parse ");
    pgr_sb_puts(&name, what);
    pgr_sb_puts(&name, " (");
    pgr_sb_putn(&name, shown, shown_len);
    pgr_sb_putc(&name, ')');
    size_t name_len = name.len;
    const char *n = pgr_sb_finish(&name);
    if (n == NULL)
        return pgr_error_oom(err);
    long long line, col;
    line_col(ps, &line, &col);
    put_source_name(&msg, n, name_len);
    pgr_sb_puts(&msg, " (line ");
    pgr_sb_put_long(&msg, line);
    pgr_sb_puts(&msg, ", column ");
    pgr_sb_put_long(&msg, col);
    pgr_sb_putc(&msg, ')');
    put_details(&det, ps);
    const char *m = pgr_sb_finish(&msg);
    const char *d = pgr_sb_finish(&det);
    if (m == NULL || d == NULL)
        return pgr_error_oom(err);
    return pgr_error(err, 400, "PGRST100", m, d, NULL);
}

int pgr_ps_nul_error(pgrest_error *err)
{
    return pgr_error(err, 400, "22021",
                     "invalid byte sequence for encoding \"UTF8\": 0x00", NULL,
                     NULL);
}
