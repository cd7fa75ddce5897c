/* What a query parameter's dotted name ends in (PostgREST QueryParams.hs
 * `endingIn`): shared by the classifier (query_string.c) and the
 * limit/offset reader (ranges.c), which query_string.c calls, so neither
 * has to reach back into the other. */
#ifndef PGR_PARAM_NAME_H
#define PGR_PARAM_NAME_H

#include <stdbool.h>

#include "parse/api_types.h"

/* endingIn: the text after the last '.' of the (decoded) name is word. */
bool pgr_param_ends_in(const pgr_kv *p, const char *word);

#endif
