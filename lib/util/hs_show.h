/* Haskell's `show` for text (GHC showLitString): PostgREST's messages and
 * dumps go through it, e.g. the fatal config error, the deprecated
 * JSPath dump `."role"` and the quoted parse error of role-claim-key. */
#ifndef PGRS_HS_SHOW_H
#define PGRS_HS_SHOW_H

#include <stdio.h>

/* Writes s (UTF-8) to out as a Haskell string literal, quotes included. */
void hs_show(FILE *out, const char *s);

/* hs_show into a malloc'd string; NULL on OOM. */
char *hs_show_string(const char *s);

#endif
