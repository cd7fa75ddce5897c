#include "config/config_snapshot.h"

#include <stdlib.h>
#include <string.h>

#include "auth/jwt.h"
#include "auth/jwt_cache.h"
#include "config/config.h"
#include "util/error.h"

pgr_kv *pgr_kv_with(pgrest_arena *a, const pgr_kv *list, const char *key,
                    const char *value)
{
    const char *name = pgr_config_canonical_key(key);
    pgr_kv *head = NULL, **tail = &head;
    bool seen = false;
    for (const pgr_kv *kv = list; kv != NULL; kv = kv->next) {
        bool same = strcmp(kv->name, name) == 0;
        seen = seen || same;
        if (same && value == NULL)
            continue;
        pgr_kv *copy = PGR_NEW(a, pgr_kv);
        if (copy == NULL)
            return NULL;
        copy->name = pgr_strdup(a, kv->name);
        copy->value = pgr_strdup(a, same ? value : kv->value);
        *tail = copy;
        tail = &copy->next;
    }
    if (!seen && value != NULL) {
        pgr_kv *kv = PGR_NEW(a, pgr_kv);
        if (kv == NULL)
            return NULL;
        kv->name = pgr_strdup(a, name);
        kv->value = pgr_strdup(a, value);
        *tail = kv;
    }
    return pgr_arena_exhausted(a) ? NULL : head;
}

static pgr_kv *copy_list(pgrest_arena *a, const pgr_kv *list, bool *ok)
{
    pgr_kv *out = NULL;
    for (const pgr_kv *kv = list; kv != NULL && *ok; kv = kv->next) {
        out = pgr_kv_with(a, out, kv->name, kv->value);
        *ok = out != NULL;
    }
    return out;
}

/* err's strings outlive the snapshot arena they were formatted in. */
static void move_error(pgrest_error *err, pgrest_arena *to)
{
    if (err == NULL)
        return;
    err->message = err->message ? pgr_strdup(to, err->message) : NULL;
    err->details = err->details ? pgr_strdup(to, err->details) : NULL;
    err->hint = err->hint ? pgr_strdup(to, err->hint) : NULL;
    err->code = err->code ? pgr_strdup(to, err->code) : NULL;
}

static bool same_text(const char *x, const char *y)
{
    return x == y || (x != NULL && y != NULL && strcmp(x, y) == 0);
}

/* Cached verifications stay true while what they depend on stays. */
static bool same_jwt_outcome(const pgr_config *x, const pgr_config *y)
{
    return same_text(x->jwt_secret, y->jwt_secret) &&
           x->jwt_secret_is_base64 == y->jwt_secret_is_base64 &&
           /* another key set URL: its generations count anew */
           same_text(x->jwt_jwks_uri, y->jwt_jwks_uri) &&
           same_text(x->jwt_jwks_cafile, y->jwt_jwks_cafile) &&
           same_text(x->jwt_aud, y->jwt_aud) &&
           same_text(x->jwt_role_claim_key, y->jwt_role_claim_key) &&
           same_text(x->db_anon_role, y->db_anon_role) &&
           x->jwt_cache_max_entries == y->jwt_cache_max_entries;
}

/* What PostgREST derives once per AppConfig (configJWKS, the JWT cache)
 * instead of per request. */
static int derive(pgr_conf *c, const pgr_conf *prev, pgrest_error *err)
{
    pgr_config *cfg = &c->cfg;
    int rc = pgr_jwt_check_role_claim_key(c->arena, cfg->jwt_role_claim_key, err);
    if (rc == PGREST_OK)
        rc = pgr_jwt_check_secret(c->arena, cfg, err);
    if (rc != PGREST_OK)
        return rc;
    if (prev != NULL && same_jwt_outcome(&prev->cfg, cfg)) {
        cfg->jwt_cache = prev->cfg.jwt_cache;
        pgr_jwt_cache_retain(cfg->jwt_cache);
        return PGREST_OK;
    }
    /* NULL when caching is off; out of memory only costs the caching */
    cfg->jwt_cache = pgr_jwt_cache_new((size_t)cfg->jwt_cache_max_entries);
    return PGREST_OK;
}

static int apply_all(pgr_conf *c, const pgr_kv *effective, const pgr_conf *prev,
                     pgrest_error *err)
{
    for (const pgr_kv *kv = effective; kv != NULL; kv = kv->next) {
        int rc = pgr_config_set(&c->cfg, c->arena, kv->name, kv->value, err);
        if (rc != PGREST_OK)
            return rc;
    }
    return derive(c, prev, err);
}

int pgr_conf_build(const pgr_kv *base, const pgr_kv *db, const pgr_conf *prev,
                   pgrest_arena *err_arena, pgrest_error *err, pgr_conf **out)
{
    *out = NULL;
    pgrest_arena *a = pgrest_arena_new(0);
    pgr_conf *c = a ? PGR_NEW(a, pgr_conf) : NULL;
    if (c == NULL) {
        pgrest_arena_free(a);
        return pgr_error_oom(err);
    }
    atomic_init(&c->refs, 1);
    c->arena = a;
    pgr_config_defaults(&c->cfg);
    bool ok = true;
    c->base = copy_list(a, base, &ok);
    c->db = copy_list(a, db, &ok);
    pgr_kv *effective = copy_list(a, base, &ok);
    for (const pgr_kv *kv = db; kv != NULL && ok; kv = kv->next)
        ok = (effective = pgr_kv_with(a, effective, kv->name, kv->value)) != NULL;
    c->cfg.options = effective;
    int rc = ok ? apply_all(c, effective, prev, err) : pgr_error_oom(err);
    if (rc != PGREST_OK) {
        move_error(err, err_arena);
        pgr_conf_release(c);
        return rc;
    }
    *out = c;
    return PGREST_OK;
}

void pgr_conf_retain(pgr_conf *c)
{
    atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
}

void pgr_conf_release(pgr_conf *c)
{
    if (c == NULL || atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
        return;
    pgr_jwt_cache_free(c->cfg.jwt_cache);
    pgrest_arena_free(c->arena);
}

const char *pgr_cfg_option(const pgr_config *cfg, const char *key)
{
    const char *name = pgr_config_canonical_key(key);
    for (const pgr_kv *kv = cfg->options; kv != NULL; kv = kv->next)
        if (strcmp(kv->name, name) == 0)
            return kv->value;
    return NULL;
}

const char *pgr_conf_option(const pgr_conf *c, const char *key)
{
    return pgr_cfg_option(&c->cfg, key);
}

/* ---------------------------------------------------------------- slot */

struct pgr_conf_slot {
    pthread_mutex_t lock;     /* guards current and the interned strings */
    pthread_mutex_t update;   /* one read-modify-write at a time */
    pgr_conf *current;
    pgrest_arena *strings;    /* pgr_conf_slot_intern */
    pgr_kv *interned;
};

pgr_conf_slot *pgr_conf_slot_new(void)
{
    pgr_conf_slot *s = calloc(1, sizeof *s);
    pgrest_arena *scratch = pgrest_arena_new(0);
    if (s != NULL && scratch != NULL) {
        pgrest_error err = {0};
        pgr_conf_build(NULL, NULL, NULL, scratch, &err, &s->current);
        s->strings = pgrest_arena_new(0);
    }
    pgrest_arena_free(scratch);
    if (s == NULL || s->current == NULL || s->strings == NULL) {
        if (s != NULL) {
            pgr_conf_release(s->current);
            pgrest_arena_free(s->strings);
        }
        free(s);
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->update, NULL);
    return s;
}

void pgr_conf_slot_free(pgr_conf_slot *s)
{
    if (s == NULL)
        return;
    pgr_conf_release(s->current);
    pgrest_arena_free(s->strings);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->update);
    free(s);
}

pgr_conf *pgr_conf_slot_get(pgr_conf_slot *s)
{
    pthread_mutex_lock(&s->lock);
    pgr_conf *c = s->current;
    pgr_conf_retain(c);
    pthread_mutex_unlock(&s->lock);
    return c;
}

int pgr_conf_slot_update(pgr_conf_slot *s, pgr_conf_next_fn next, void *arg,
                         pgrest_arena *err_arena, pgrest_error *err)
{
    pthread_mutex_lock(&s->update);
    /* only updates replace current, and they hold the update lock */
    pgr_conf *fresh = NULL;
    int rc = next(s->current, arg, err_arena, err, &fresh);
    if (rc == PGREST_OK) {
        pthread_mutex_lock(&s->lock);
        pgr_conf *old = s->current;
        s->current = fresh;
        pthread_mutex_unlock(&s->lock);
        pgr_conf_release(old);
    }
    pthread_mutex_unlock(&s->update);
    return rc;
}

const char *pgr_conf_slot_intern(pgr_conf_slot *s, const char *value)
{
    if (value == NULL)
        return NULL;
    pthread_mutex_lock(&s->lock);
    const char *found = NULL;
    for (const pgr_kv *kv = s->interned; kv != NULL && found == NULL; kv = kv->next)
        if (strcmp(kv->value, value) == 0)
            found = kv->value;
    if (found == NULL) {
        pgr_kv *kv = PGR_NEW(s->strings, pgr_kv);
        char *copy = pgr_strdup(s->strings, value);
        if (kv != NULL && copy != NULL) {
            kv->value = copy;
            kv->next = s->interned;
            s->interned = kv;
            found = copy;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return found;
}
