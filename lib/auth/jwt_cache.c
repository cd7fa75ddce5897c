#include "auth/jwt_cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Open addressing with tombstones; eviction is first-in-first-out over a
 * ring of slot indexes, enough to bound memory (PostgREST uses SIEVE). */
typedef struct entry {
    char *token;        /* NULL = empty; TOMBSTONE = deleted */
    uint64_t hash;
    char *role;
    char *claims;
    bool authenticated;
    time_t expires;
    unsigned long keys_gen;
} entry;

static char tombstone_mark;
#define TOMBSTONE (&tombstone_mark)

struct pgr_jwt_cache {
    atomic_uint refs;     /* configuration snapshots sharing the cache */
    pthread_mutex_t lock;
    entry *slots;
    size_t cap;           /* power of two, >= 2 * max */
    size_t max;
    size_t count;
    size_t *ring;         /* slot of each live entry in insertion order */
    size_t ring_head;
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

pgr_jwt_cache *pgr_jwt_cache_new(size_t max_entries)
{
    if (max_entries == 0)
        return NULL;
    pgr_jwt_cache *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->max = max_entries;
    c->cap = 16;
    while (c->cap < max_entries * 2)
        c->cap *= 2;
    c->slots = calloc(c->cap, sizeof(entry));
    c->ring = calloc(max_entries, sizeof(size_t));
    if (c->slots == NULL || c->ring == NULL) {
        free(c->slots);
        free(c->ring);
        free(c);
        return NULL;
    }
    pthread_mutex_init(&c->lock, NULL);
    atomic_init(&c->refs, 1);
    return c;
}

static void drop(entry *e)
{
    free(e->token);
    free(e->role);
    free(e->claims);
    memset(e, 0, sizeof *e);
    e->token = TOMBSTONE;
}

static bool live(const entry *e)
{
    return e->token != NULL && e->token != TOMBSTONE;
}

void pgr_jwt_cache_clear(pgr_jwt_cache *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->cap; i++) {
        if (live(&c->slots[i]))
            drop(&c->slots[i]);
        c->slots[i].token = NULL;
    }
    c->count = 0;
    c->ring_head = 0;
    pthread_mutex_unlock(&c->lock);
}

void pgr_jwt_cache_retain(pgr_jwt_cache *c)
{
    if (c != NULL)
        atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
}

void pgr_jwt_cache_free(pgr_jwt_cache *c)
{
    if (c == NULL || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
        return;
    pgr_jwt_cache_clear(c);
    pthread_mutex_destroy(&c->lock);
    free(c->slots);
    free(c->ring);
    free(c);
}

static entry *find(pgr_jwt_cache *c, const char *token, uint64_t h)
{
    for (size_t i = h & (c->cap - 1), n = 0; n < c->cap; i = (i + 1) & (c->cap - 1), n++) {
        entry *e = &c->slots[i];
        if (e->token == NULL)
            return NULL;
        if (live(e) && e->hash == h && strcmp(e->token, token) == 0)
            return e;
    }
    return NULL;
}

bool pgr_jwt_cache_get(pgr_jwt_cache *c, const char *token, time_t now,
                       unsigned long keys_gen, pgrest_arena *a, pgr_jwt_auth *out)
{
    if (c == NULL)
        return false;
    pthread_mutex_lock(&c->lock);
    entry *e = find(c, token, hash_text(token));
    bool hit = e != NULL && (e->expires == 0 || now < e->expires) && e->keys_gen == keys_gen;
    if (hit) {
        out->role = pgr_strdup(a, e->role);
        out->claims = pgr_strdup(a, e->claims);
        out->authenticated = e->authenticated;
        hit = out->role != NULL && out->claims != NULL;
    }
    pthread_mutex_unlock(&c->lock);
    return hit;
}

static size_t free_slot(pgr_jwt_cache *c, uint64_t h)
{
    size_t i = h & (c->cap - 1);
    while (live(&c->slots[i]))
        i = (i + 1) & (c->cap - 1);
    return i;
}

/* The oldest entry leaves when the cache is full. */
static void evict_oldest(pgr_jwt_cache *c)
{
    size_t slot = c->ring[c->ring_head];
    if (live(&c->slots[slot]))
        drop(&c->slots[slot]);
    c->count--;
}

bool pgr_jwt_cache_put(pgr_jwt_cache *c, const char *token,
                       const pgr_jwt_auth *auth, time_t expires, unsigned long keys_gen)
{
    if (c == NULL)
        return false;
    bool evicted = false;
    uint64_t h = hash_text(token);
    pthread_mutex_lock(&c->lock);
    entry *old = find(c, token, h);
    if (old != NULL && old->keys_gen != keys_gen) {
        /* verified again under new keys: the entry takes the new generation */
        old->keys_gen = keys_gen;
        old->expires = expires;
    } else if (old == NULL) {
        if (c->count == c->max) {
            evict_oldest(c);
            evicted = true;
        }
        size_t i = free_slot(c, h);
        entry *e = &c->slots[i];
        e->token = strdup(token);
        e->role = strdup(auth->role);
        e->claims = strdup(auth->claims);
        if (e->token == NULL || e->role == NULL || e->claims == NULL) {
            drop(e);
        } else {
            e->hash = h;
            e->authenticated = auth->authenticated;
            e->expires = expires;
            e->keys_gen = keys_gen;
            c->ring[c->ring_head] = i;
            c->ring_head = (c->ring_head + 1) % c->max;
            c->count++;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return evicted;
}
