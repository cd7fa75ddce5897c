/* The values of PostgREST's configuration sources as written (a config
 * file, PGRST_* variables, in-database settings): source_list.c. */
#ifndef PGR_SOURCE_LIST_H
#define PGR_SOURCE_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "pgrest/pgrest.h"

/* One key = value as a source wrote it; keys are unique in a list. */
typedef struct pgr_src_entry {
    char *key;
    char *value;
    pgrest_value_kind kind;
} pgr_src_entry;

/* Insertion-ordered; a later value for a key replaces the earlier one.
 * failed records an allocation that did not happen, so that callers
 * check once at the end instead of after every set. */
typedef struct pgr_src_list {
    pgr_src_entry *items;
    size_t n, cap;
    bool failed;
} pgr_src_list;

bool pgr_src_list_set(pgr_src_list *l, const char *key, const char *value,
                      pgrest_value_kind kind);
const pgr_src_entry *pgr_src_list_find(const pgr_src_list *l, const char *key);
const char *pgr_src_list_get(const pgr_src_list *l, const char *key);
void pgr_src_list_free(pgr_src_list *l);

#endif
