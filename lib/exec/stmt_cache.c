#include "exec/stmt_cache.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-events.h>

/* Open addressing; bounded so a client cannot grow it without limit
 * (each distinct URL shape is one statement). */
#define MAX_ENTRIES 4096

typedef struct entry {
    char *sql;
    size_t len;
    char name[24];
    uint64_t hash;
} entry;

struct pgr_stmt_cache {
    entry *slots;
    size_t cap;
    size_t count;
    unsigned long next_id;
    unsigned generation;
};

/* Eight bytes per step (a statement is a kilobyte or more and is looked
 * up on every request; byte-wise FNV-1a was a visible share of a request's
 * CPU). Only the probe sequence depends on it: equality is memcmp. */
static uint64_t hash_text(const char *s, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    uint64_t tail = 0;
    memcpy(&tail, s + i, n - i);
    h = (h ^ tail) * 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 29);
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

static entry *find(const pgr_stmt_cache *c, const char *sql, size_t len, uint64_t h)
{
    size_t i = h & (c->cap - 1);
    while (c->slots[i].sql != NULL) {
        const entry *e = &c->slots[i];
        if (e->hash == h && e->len == len && memcmp(e->sql, sql, len) == 0)
            return &c->slots[i];
        i = (i + 1) & (c->cap - 1);
    }
    return NULL;
}

const char *pgr_stmt_cache_lookup(const pgr_stmt_cache *c, const char *sql)
{
    size_t len = strlen(sql);
    entry *e = find(c, sql, len, hash_text(sql, len));
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
    e.len = strlen(sql);
    e.sql = malloc(e.len + 1);
    if (e.sql == NULL)
        return NULL;
    memcpy(e.sql, sql, e.len + 1);
    e.hash = hash_text(sql, e.len);
    snprintf(e.name, sizeof e.name, "pgrst_%lu", ++c->next_id);
    insert_entry(c->slots, c->cap, e);
    c->count++;
    return find(c, sql, e.len, e.hash)->name;
}

void pgr_stmt_cache_forget(pgr_stmt_cache *c, const char *sql)
{
    /* Rebuild without the entry: rare (failed PREPARE), keeps probing
     * chains intact. */
    size_t len = strlen(sql);
    entry *victim = find(c, sql, len, hash_text(sql, len));
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

size_t pgr_stmt_cache_count(const pgr_stmt_cache *c)
{
    return c->count;
}

unsigned pgr_stmt_cache_generation(const pgr_stmt_cache *c)
{
    return c->generation;
}

void pgr_stmt_cache_set_generation(pgr_stmt_cache *c, unsigned generation)
{
    c->generation = generation;
}

static int conn_event(PGEventId id, void *info, void *pass_through)
{
    (void)pass_through;
    if (id == PGEVT_CONNDESTROY) {
        PGconn *pg = ((PGEventConnDestroy *)info)->conn;
        pgr_stmt_cache_free(PQinstanceData(pg, conn_event));
    } else if (id == PGEVT_CONNRESET) {
        /* a reset connection is a new session: nothing is prepared */
        pgr_stmt_cache *c = PQinstanceData(((PGEventConnReset *)info)->conn, conn_event);
        if (c != NULL)
            pgr_stmt_cache_clear(c);
    }
    return 1;
}

pgr_stmt_cache *pgr_conn_stmt_cache(PGconn *pg)
{
    pgr_stmt_cache *c = PQinstanceData(pg, conn_event);
    if (c != NULL)
        return c;
    c = pgr_stmt_cache_new();
    if (c == NULL)
        return NULL;
    /* registered once per connection; a second registration (after an
     * earlier failure to store the cache) is refused by libpq */
    if (!PQregisterEventProc(pg, conn_event, "pgrest statement cache", NULL) ||
        !PQsetInstanceData(pg, conn_event, c)) {
        pgr_stmt_cache_free(c);
        return NULL;
    }
    return c;
}
