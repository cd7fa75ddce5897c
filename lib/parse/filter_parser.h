/* Filter grammar (PostgREST src/ApiRequest/QueryParams.hs: pTreePath,
 * pField, pJsonPath, pOpExpr, pLogicTree) and the lexemes the other
 * request-grammar parsers (select, order) share.
 *
 * Errors are PostgREST's PGRST100: message `"failed to parse <what>
 * (<text>)" (line 1, column N)` (the source name is shown as Haskell's
 * `show` would) and details in Parsec's "unexpected X expecting A, B or C"
 * form. All results are allocated in the arena. */
#ifndef PGR_FILTER_PARSER_H
#define PGR_FILTER_PARSER_H

#include <stdbool.h>
#include <stddef.h>

#include "parse/api_types.h"
#include "parse/parsec_state.h"
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
/* pgr_parse_logic_tree_op with pgrest's related leaves when
 * related_leaves (docs/embed-or.md): a leaf `rel.col.op.value` that
 * PostgREST's grammar rejects (no operator after `rel.`) parses with
 * relation = "rel" and the filter `col.op.value`. Everything PostgREST's
 * grammar accepts parses as it does. */
int pgr_parse_logic_tree_ext(pgrest_arena *a, const char *op, const char *value,
                             size_t len, int max_depth, bool related_leaves,
                             pgr_logic_tree **out, pgrest_error *err);
/* pgrest's having=(...) (docs/aggregates.md): an and=(...) tree that must
 * be the whole value (PGRST100 "failed to parse logic tree" otherwise). */
int pgr_parse_having_tree(pgrest_arena *a, const char *value, size_t len, int max_depth,
                          pgr_logic_tree **out, pgrest_error *err);
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
 * The lexemes the other request-grammar parsers (select, order) share,
 * on the parser state of parse/parsec_state.h: */
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
