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
