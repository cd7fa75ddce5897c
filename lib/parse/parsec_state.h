/* The small Parsec-like parser state the request-grammar parsers (filter,
 * select, order) share: the state, error merging and rendering
 * (parsec_state.c). Internal to lib/parse. */
#ifndef PGR_PARSEC_STATE_H
#define PGR_PARSEC_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "parse/request.h"
#include "util/arena.h"

/* Results of the pgr_ps_* functions: */
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
    /* logic trees: pgrest's related leaves rel.col.op.value (filter_parser.c) */
    bool related_leaves;
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

#endif
