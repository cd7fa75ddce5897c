/* What a query parameter's dotted name ends in (QueryParams.hs `endingIn`). */
#include "parse/param_name.h"

#include <string.h>

/* the text after the last '.' of the name (endingIn splits on '.'); the
 * name's length is explicit because a decoded %00 may sit inside it */
bool pgr_param_ends_in(const pgr_kv *p, const char *word)
{
    size_t i = p->name_len, w = strlen(word);
    while (i > 0 && p->name[i - 1] != '.')
        i--;
    return p->name_len - i == w && memcmp(p->name + i, word, w) == 0;
}
