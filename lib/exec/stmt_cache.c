#include "exec/stmt_cache.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Open addressing; bounded so a client cannot grow it without limit
 * (each distinct URL shape is one statement). */
#define MAX_ENTRIES 4096

typedef struct entry {
    char *sql;
    char name[24];
    uint64_t hash;
} entry;

struct pgr_stmt_cache {
    entry *slots;
    size_t cap;
    size_t count;
    unsigned long next_id;
};

static uint64_t hash_text(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

pgr_stmt_cache *pgr_stmt_cache_new(void)
{
    pgr_stmt_cache *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->cap = 64;
    c->slots = calloc(c->cap, sizeof(entry));
    if (c->slots == NULL) {
        free(c);
        return NULL;
    }
    return c;
}

void pgr_stmt_cache_clear(pgr_stmt_cache *c)
{
    for (size_t i = 0; i < c->cap; i++) {
        free(c->slots[i].sql);
        c->slots[i].sql = NULL;
    }
    c->count = 0;
}

void pgr_stmt_cache_free(pgr_stmt_cache *c)
{
    if (c == NULL)
        return;
    pgr_stmt_cache_clear(c);
    free(c->slots);
    free(c);
}

static entry *find(const pgr_stmt_cache *c, const char *sql, uint64_t h)
{
    size_t i = h & (c->cap - 1);
    while (c->slots[i].sql != NULL) {
        if (c->slots[i].hash == h && strcmp(c->slots[i].sql, sql) == 0)
            return &c->slots[i];
        i = (i + 1) & (c->cap - 1);
    }
    return NULL;
}

const char *pgr_stmt_cache_lookup(const pgr_stmt_cache *c, const char *sql)
{
    entry *e = find(c, sql, hash_text(sql));
    return e ? e->name : NULL;
}

static void insert_entry(entry *slots, size_t cap, entry e)
{
    size_t i = e.hash & (cap - 1);
    while (slots[i].sql != NULL)
        i = (i + 1) & (cap - 1);
    slots[i] = e;
}

static int grow(pgr_stmt_cache *c)
{
    size_t ncap = c->cap * 2;
    entry *n = calloc(ncap, sizeof(entry));
    if (n == NULL)
        return -1;
    for (size_t i = 0; i < c->cap; i++)
        if (c->slots[i].sql != NULL)
            insert_entry(n, ncap, c->slots[i]);
    free(c->slots);
    c->slots = n;
    c->cap = ncap;
    return 0;
}

const char *pgr_stmt_cache_add(pgr_stmt_cache *c, const char *sql)
{
    if (c->count >= MAX_ENTRIES)
        return NULL;
    if ((c->count + 1) * 2 > c->cap && grow(c) != 0)
        return NULL;
    entry e = {0};
    e.sql = strdup(sql);
    if (e.sql == NULL)
        return NULL;
    e.hash = hash_text(sql);
    snprintf(e.name, sizeof e.name, "pgrst_%lu", ++c->next_id);
    insert_entry(c->slots, c->cap, e);
    c->count++;
    return find(c, sql, e.hash)->name;
}

void pgr_stmt_cache_forget(pgr_stmt_cache *c, const char *sql)
{
    /* Rebuild without the entry: rare (failed PREPARE), keeps probing
     * chains intact. */
    uint64_t h = hash_text(sql);
    entry *victim = find(c, sql, h);
    if (victim == NULL)
        return;
    free(victim->sql);
    victim->sql = NULL;
    c->count--;
    entry *old = c->slots;
    entry *n = calloc(c->cap, sizeof(entry));
    if (n == NULL)
        return;
    for (size_t i = 0; i < c->cap; i++)
        if (old[i].sql != NULL)
            insert_entry(n, c->cap, old[i]);
    free(old);
    c->slots = n;
}
