#include "util/str_list.h"

bool pgr_str_list_push(pgrest_arena *a, pgr_str_list *l, const char *s)
{
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 8;
        const char **n = pgr_realloc(a, (void *)l->items,
                                     l->cap * sizeof(*n), ncap * sizeof(*n));
        if (n == NULL)
            return false;
        l->items = n;
        l->cap = ncap;
    }
    l->items[l->n++] = s;
    return true;
}
