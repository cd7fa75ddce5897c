/* Configuration snapshots. PostgREST keeps its AppConfig in an IORef and
 * replaces it whole: a reload (SIGUSR2, NOTIFY 'reload config', every
 * schema cache load with db-config) builds a complete new AppConfig and
 * either puts it or, when a value is invalid, keeps the old one
 * (AppState/Reload.hs readInDbConfig). pgrest does the same with
 * immutable, reference-counted snapshots swapped atomically like the
 * schema cache: a request keeps the snapshot it started with (bound to its
 * arena), so two fields written together (db-schemas and its parsed list,
 * jwt-secret and the JWT cache) are never seen half-changed. */
#ifndef PGR_CONFIG_SNAPSHOT_H
#define PGR_CONFIG_SNAPSHOT_H

#include <pthread.h>
#include <stdatomic.h>

#include "config/config_types.h"
#include "pgrest/pgrest.h"

typedef struct pgr_conf {
    atomic_uint refs;
    pgrest_arena *arena;   /* every string and list below */
    pgr_config cfg;        /* parsed values and derived state */
    pgr_kv *base;          /* options the host set: canonical keys, in order */
    pgr_kv *db;            /* in-database settings, overriding base */
} pgr_conf;

/* Builds a snapshot: defaults, then base, then db (PostgREST: database
 * settings win over the environment and the file), then the derived state
 * (JWT key validated, JWT cache -- prev's when the JWT settings are the
 * same, so a reload keeps verified tokens) into *out. PGREST_ERR_CONFIG
 * when a value is invalid (PGREST_ERR_INTERNAL: out of memory), with
 * err's strings in err_arena. prev may be NULL. */
int pgr_conf_build(const pgr_kv *base, const pgr_kv *db, const pgr_conf *prev,
                   pgrest_arena *err_arena, pgrest_error *err, pgr_conf **out);
void pgr_conf_retain(pgr_conf *c);
void pgr_conf_release(pgr_conf *c);
/* The effective value of an option as text (canonical or alias key). */
const char *pgr_conf_option(const pgr_conf *c, const char *key);
/* The value of an option as text in cfg (in-database settings included). */
const char *pgr_cfg_option(const pgr_config *cfg, const char *key);
/* A copy of list in a with key (canonicalised) set to value: replaced in
 * place when present, appended otherwise. NULL value removes it. */
pgr_kv *pgr_kv_with(pgrest_arena *a, const pgr_kv *list, const char *key,
                    const char *value);

/* The context's current snapshot. Updates (pgrest_ctx_set, reloads) are
 * read-modify-write: one at a time, so two never lose each other's
 * change; readers only take a reference. */
typedef struct pgr_conf_slot pgr_conf_slot;

pgr_conf_slot *pgr_conf_slot_new(void);
void pgr_conf_slot_free(pgr_conf_slot *s);
/* The current snapshot with a reference taken; release when done. */
pgr_conf *pgr_conf_slot_get(pgr_conf_slot *s);
/* Builds the next snapshot from the current one (under the update lock)
 * into *out and swaps it in; an error keeps the current one. */
typedef int (*pgr_conf_next_fn)(const pgr_conf *cur, void *arg, pgrest_arena *err_arena,
                                pgrest_error *err, pgr_conf **out);
int pgr_conf_slot_update(pgr_conf_slot *s, pgr_conf_next_fn next, void *arg,
                         pgrest_arena *err_arena, pgrest_error *err);
/* value copied into storage that lives as long as the slot (the strings
 * pgrest_ctx_get returns outlive the snapshot they came from). */
const char *pgr_conf_slot_intern(pgr_conf_slot *s, const char *value);

#endif
