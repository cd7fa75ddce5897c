/* A growable array of strings in an arena. */
#ifndef PGR_STR_LIST_H
#define PGR_STR_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "util/arena.h"

typedef struct pgr_str_list {
    const char **items;
    size_t n, cap;
} pgr_str_list;

/* Appends s (not copied); false when the arena is exhausted. */
bool pgr_str_list_push(pgrest_arena *a, pgr_str_list *l, const char *s);

#endif
