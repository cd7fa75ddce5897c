/* Filter grammar (PostgREST src/ApiRequest/QueryParams.hs: pTreePath,
 * pField, pJsonPath, pOpExpr, pLogicTree) and the small Parsec-like parser
 * state the other request-grammar parsers (select, order) share.
 *
 * Errors are PostgREST's PGRST100: message `"failed to parse <what>
 * (<text>)" (line 1, column N)` (the source name is shown as Haskell's
 * `show` would) and details in Parsec's "unexpected X expecting A, B or C"
 * form. All results are allocated in the arena. */
#ifndef PGR_FILTER_PARSER_H
#define PGR_FILTER_PARSER_H

#include <stdbool.h>
#include <stddef.h>

#include "parse/api_request.h"
#include "util/arena.h"

/* Length-aware forms of the entry points below: the texts may contain NUL
 * bytes (decoded %00), which the grammar sees as ordinary characters. */
int pgr_parse_op_expr_n(pgrest_arena *a, const char *text, size_t len,
                        pgr_op_expr *out, pgrest_error *err);
/* The same with the operator text the logic path gave ("or", "not.and",
 * or any other word, on which pLogicTree then fails). */
int pgr_parse_logic_tree_op(pgrest_arena *a, const char *op, const char *value,
                            size_t len, int max_depth, pgr_logic_tree **out,
                            pgrest_error *err);
int pgr_parse_logic_tree_n(pgrest_arena *a, bool is_or, bool negated,
                           const char *value, size_t len, int max_depth,
                           pgr_logic_tree **out, pgrest_error *err);

/* Parses a filter key without embed path: a column with an optional JSON
 * path (`data->a->>b`, `"a.b"`). Trailing text after the field is ignored
 * as PostgREST does. PGRST100 on error. */
int pgr_parse_field(pgrest_arena *a, const char *text, pgr_field *out,
                    pgrest_error *err);

/* Parses a filter value `[not.]op[(any|all)|(lang)].value`. like/ilike
 * values get `*` replaced by `%`; in-lists are unquoted into list/n_list
 * (`in.()` gives n_list == 0); quantified values stay verbatim in value;
 * is-values fill is_value. PGRST100 "failed to parse filter (text)". */
int pgr_parse_op_expr(pgrest_arena *a, const char *text, pgr_op_expr *out,
                      pgrest_error *err);

/* Parses the value of `or=` / `and=` (is_or, negated for `not.or=`): the
 * returned node is normally the or/and node itself. PGRST100 "failed to
 * parse logic tree (value)"; PGRST100 "Logic tree nesting too deep" when
 * and/or nodes nest deeper than PGR_DEFAULT_MAX_DEPTH. */
int pgr_parse_logic_tree(pgrest_arena *a, bool is_or, bool negated,
                         const char *value, pgr_logic_tree **out,
                         pgrest_error *err);
/* The same with an explicit nesting limit (request-max-depth). */
int pgr_parse_logic_tree_max(pgrest_arena *a, bool is_or, bool negated,
                             const char *value, int max_depth,
                             pgr_logic_tree **out, pgrest_error *err);

/* ---------------------------------------------------------------------
 * Shared parser state (internal to lib/parse; the state, error merging and
 * rendering live in parsec_state.c). Results of the pgr_ps_* functions: */
enum {
    PGR_P_OK = 0,    /* parsed */
    PGR_P_EMPTY = 1, /* failed without consuming input (Parsec "empty") */
    PGR_P_FAIL = 2   /* failed after consuming input, or out of memory */
};

#define PGR_PS_MAX_EXPECT 16

typedef struct pgr_pstate {
    pgrest_arena *a;
    const char *s;
    size_t len;
    size_t pos;
    /* furthest error seen so far (Parsec's mergeError keeps the later) */
    bool has_err;
    size_t err_pos;
    const char *expect[PGR_PS_MAX_EXPECT];
    size_t n_expect;
    /* the token Parsec's first SysUnExpect names at err_pos (`string`
     * reports the first mismatching character at its start position) */
    size_t tok_pos;
    /* an UnExpect (from eof / notFollowedBy) at err_pos: Parsec then shows
     * the character with show :: Char (single quotes) */
    bool unexpect;
    bool oom;
    /* a NUL byte became part of a parsed name or value: PostgreSQL cannot
     * take it (text refuses NUL), see pgr_ps_nul_error */
    bool kept_nul;
    /* nesting of embeds / logic trees: recursion is bounded by max_depth
     * (too_deep records that a branch hit it) */
    int depth;
    int max_depth;
    bool too_deep;
} pgr_pstate;

/* Error state snapshot, to drop the errors of a `try` branch whose
 * alternative then consumed input (as Parsec does). */
typedef struct pgr_perr {
    bool has_err;
    size_t err_pos;
    const char *expect[PGR_PS_MAX_EXPECT];
    size_t n_expect;
    size_t tok_pos;
    bool unexpect;
} pgr_perr;

/* max_depth starts at PGR_DEFAULT_MAX_DEPTH. */
void pgr_ps_init(pgr_pstate *ps, pgrest_arena *a, const char *s, size_t len);
/* Enters one nesting level; false (and too_deep set) past max_depth. */
bool pgr_ps_enter(pgr_pstate *ps);
static inline void pgr_ps_leave(pgr_pstate *ps)
{
    ps->depth--;
}
/* The PGRST100 for a too deep nesting of `what` ("select", "logic tree"). */
int pgr_ps_depth_error(const pgr_pstate *ps, const char *what, pgrest_error *err);
void pgr_ps_save_err(const pgr_pstate *ps, pgr_perr *save);
void pgr_ps_restore_err(pgr_pstate *ps, const pgr_perr *save);
/* Parsec's `try a <|> b` when b failed without consuming: the errors of a
 * (saved in *alt) merge with the current ones (the later position wins,
 * equal positions join their expectations, a's first). */
void pgr_ps_merge_err(pgr_pstate *ps, const pgr_perr *alt);
/* Records that `label` was expected at byte offset pos. */
void pgr_ps_expect(pgr_pstate *ps, size_t pos, const char *label);
/* The same when the unexpected token is not the one at pos (Parsec's
 * `string` fails at its start but names the first mismatching char). */
void pgr_ps_expect_tok(pgr_pstate *ps, size_t pos, const char *label,
                       size_t tok);
/* Parsec's `eof` failing at pos (nothing when pos is the end): expects
 * "end of input" and names the character with single quotes. */
void pgr_ps_expect_eof(pgr_pstate *ps, size_t pos);
/* Fills err with the PGRST100 for the furthest error (or OOM). `what` is
 * e.g. "select parameter", `shown` the text named in the message. */
int pgr_ps_error(const pgr_pstate *ps, const char *what, const char *shown,
                 pgrest_error *err);
/* The same with the shown text's length (it may contain NUL bytes, shown
 * as Haskell's `show` does: \NUL). */
int pgr_ps_error_n(const pgr_pstate *ps, const char *what, const char *shown,
                   size_t shown_len, pgrest_error *err);
/* The error PostgreSQL gives for a NUL byte in a parameter or identifier
 * (text cannot hold it): 400 22021 `invalid byte sequence for encoding
 * "UTF8": 0x00`. The value is refused before it reaches the database, where
 * libpq's text parameters would cut it at the NUL. */
int pgr_ps_nul_error(pgrest_error *err);

/* Skips spaces and tabs (PostgREST's lexeme). */
void pgr_ps_ws(pgr_pstate *ps);
/* Consumes lit if the input continues with it; otherwise records the
 * expectation "lit" and consumes nothing (Parsec try (string lit)). */
bool pgr_ps_lit(pgr_pstate *ps, const char *lit);
/* The offset where the input from `at` stops matching lit. */
size_t pgr_ps_mismatch(const pgr_pstate *ps, size_t at, const char *lit);
/* `"..."` with backslash escapes. */
int pgr_ps_quoted(pgr_pstate *ps, const char **out);
/* pFieldName: quoted value or identifiers joined by dashes not followed by
 * '>'; label "field name (* or [a..z0..9_$])". */
int pgr_ps_field_name(pgr_pstate *ps, const char **out);
/* pIdentifier: [letters digits _ space $]+, stripped (cast types). */
int pgr_ps_identifier(pgr_pstate *ps, const char **out);
/* pJsonPath: many (("->>" | "->") operand); empty when none. */
int pgr_ps_json_path(pgr_pstate *ps, pgr_json_op **out);
/* pField: lexeme (field name, optional JSON path). */
int pgr_ps_field(pgr_pstate *ps, pgr_field *out);
/* pOpExpr; in_logic selects the logic-tree value grammar (values end at
 * ',' or ')', may be quoted or `{...}`), otherwise the value is the rest
 * of the input. */
int pgr_ps_op_expr(pgr_pstate *ps, bool in_logic, pgr_op_expr *out);

#endif
