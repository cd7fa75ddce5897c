/* Haskell's `show` for text (GHC showLitString / showLitChar): PostgREST's
 * messages and dumps go through it, e.g. Parsec's error messages, the
 * fatal config error, the deprecated JSPath dump `."role"` and the quoted
 * parse error of role-claim-key. */
#ifndef PGRS_HS_SHOW_H
#define PGRS_HS_SHOW_H

#include <stdbool.h>
#include <stddef.h>

#include "util/strbuf.h"

/* showLitChar for one code point; `quote` is the delimiter that needs a
 * backslash (" in strings, ' in characters). *numeric_prev / *so_prev
 * carry the \& rule between the characters of one string (start false). */
void pgr_hs_show_lit_char(pgr_sb *sb, unsigned long cp, char quote, bool *numeric_prev,
                          bool *so_prev);

/* s (UTF-8, NUL-terminated; a malformed byte shows as U+FFFD) as a
 * Haskell string literal, quotes included. */
void pgr_hs_show_cstring(pgr_sb *sb, const char *s);

/* Data.ByteString.Char8's show: s as a string literal whose characters
 * are its bytes (a UTF-8 "é" shows as "\195\169", Text's show as
 * "\233"). */
void pgr_hs_show_bytes(pgr_sb *sb, const char *s);

/* pgr_hs_show_cstring into a malloc'd string; NULL on OOM. */
char *hs_show_string(const char *s);

#endif
