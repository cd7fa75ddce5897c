/* One-dimensional text[] values as PostgreSQL's array_out prints them. */
#ifndef PGR_TEXT_ARRAY_H
#define PGR_TEXT_ARRAY_H

#include <stdbool.h>

#include "util/str_list.h"

/* Reads "{a,\"b c\",...}" into out (elements copied into the arena,
 * quoted ones unescaped). NULL elements are skipped. False when text is
 * not such a literal or the arena is exhausted. */
bool pgr_text_array_parse(pgrest_arena *a, const char *text, pgr_str_list *out);

#endif
