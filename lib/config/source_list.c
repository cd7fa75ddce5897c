/* The values of a configuration source as written, in insertion order
 * (source_list.h): shared by the public API (sources.c), the
 * reader (sources_read.c) and the dump (sources_dump.c). */
#include "config/source_list.h"

#include <stdlib.h>
#include <string.h>

static bool set_entry(pgr_src_entry *e, const char *value, pgrest_value_kind kind)
{
    char *v = strdup(value);
    if (v == NULL)
        return false;
    free(e->value);
    e->value = v;
    e->kind = kind;
    return true;
}

static bool grow(pgr_src_list *l)
{
    if (l->n < l->cap)
        return true;
    size_t ncap = l->cap ? l->cap * 2 : 32;
    pgr_src_entry *n = realloc(l->items, ncap * sizeof *n);
    if (n == NULL)
        return false;
    l->items = n;
    l->cap = ncap;
    return true;
}

bool pgr_src_list_set(pgr_src_list *l, const char *key, const char *value,
                      pgrest_value_kind kind)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].key, key) == 0) {
            if (!set_entry(&l->items[i], value, kind))
                l->failed = true;
            return !l->failed;
        }
    pgr_src_entry e = {strdup(key), NULL, kind};
    if (e.key == NULL || !set_entry(&e, value, kind) || !grow(l)) {
        free(e.key);
        free(e.value);
        l->failed = true;
        return false;
    }
    l->items[l->n++] = e;
    return !l->failed;
}

const pgr_src_entry *pgr_src_list_find(const pgr_src_list *l, const char *key)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i].key, key) == 0)
            return &l->items[i];
    return NULL;
}

const char *pgr_src_list_get(const pgr_src_list *l, const char *key)
{
    const pgr_src_entry *e = pgr_src_list_find(l, key);
    return e != NULL ? e->value : NULL;
}

void pgr_src_list_free(pgr_src_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].key);
        free(l->items[i].value);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}

