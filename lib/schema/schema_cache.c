/* The schema cache once built: lookups, the orders they search by,
 * reference counting and the summary line. Loading it from JSON is
 * schema_load.c's job; it sorts by the orders defined here. */
#include "schema/schema_cache.h"

#include <stdlib.h>
#include <string.h>

#include "util/arena.h"
#include "util/error.h"

void pgr_schema_cache_retain(pgr_schema_cache *sc)
{
    if (sc != NULL)
        atomic_fetch_add_explicit(&sc->refcount, 1, memory_order_relaxed);
}

void pgr_schema_cache_release(pgr_schema_cache *sc)
{
    if (sc == NULL)
        return;
    if (atomic_fetch_sub_explicit(&sc->refcount, 1, memory_order_acq_rel) == 1)
        pgrest_arena_free(sc->arena); /* sc lives in its own arena */
}

/* ------------------------------------------------------------ orders */

int pgr_table_cmp(const void *pa, const void *pb)
{
    const pgr_table *a = pa, *b = pb;
    int c = strcmp(a->schema, b->schema);
    return c != 0 ? c : strcmp(a->name, b->name);
}

int pgr_column_ptr_cmp(const void *pa, const void *pb)
{
    const pgr_column *a = *(const pgr_column *const *)pa;
    const pgr_column *b = *(const pgr_column *const *)pb;
    return strcmp(a->name, b->name);
}

int pgr_representation_cmp(const void *pa, const void *pb)
{
    const pgr_representation *a = pa, *b = pb;
    int c = strcmp(a->source, b->source);
    return c != 0 ? c : strcmp(a->target, b->target);
}

static int cmp_opt(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return (a != NULL) - (b != NULL);
    return strcmp(a, b);
}

/* anyelement handlers (no target) first, then by target and media type */
int pgr_media_handler_cmp(const void *pa, const void *pb)
{
    const pgr_media_handler *a = pa, *b = pb;
    int c = cmp_opt(a->target_name ? a->target_schema : NULL,
                    b->target_name ? b->target_schema : NULL);
    if (c == 0)
        c = cmp_opt(a->target_name, b->target_name);
    return c != 0 ? c : strcmp(a->media_type, b->media_type);
}

/* ------------------------------------------------------------ lookups */

const pgr_table *pgr_find_table(const pgr_schema_cache *sc, const char *schema,
                                const char *name)
{
    if (sc == NULL || schema == NULL || name == NULL || sc->n_tables == 0)
        return NULL;
    pgr_table key;
    memset(&key, 0, sizeof(key));
    key.schema = schema;
    key.name = name;
    return bsearch(&key, sc->tables, sc->n_tables, sizeof(pgr_table),
                   pgr_table_cmp);
}

static const pgr_column *scan_columns(const pgr_table *t, const char *name)
{
    for (size_t i = 0; i < t->n_columns; i++)
        if (strcmp(t->columns[i].name, name) == 0)
            return &t->columns[i];
    return NULL;
}

const pgr_column *pgr_find_column(const pgr_table *t, const char *name)
{
    if (t == NULL || name == NULL || t->n_columns == 0)
        return NULL;
    if (t->columns_by_name == NULL) /* a table not built by this file */
        return scan_columns(t, name);
    pgr_column key;
    memset(&key, 0, sizeof(key));
    key.name = name;
    const pgr_column *kp = &key;
    const pgr_column *const *hit = bsearch(&kp, t->columns_by_name,
                                           t->n_columns, sizeof(*hit),
                                           pgr_column_ptr_cmp);
    return hit != NULL ? *hit : NULL;
}

const pgr_column *pgr_find_typed_column(const pgr_table *t, const char *name)
{
    if (t == NULL || t->kind == 'F')
        return NULL;
    return pgr_find_column(t, name);
}

/* Range of t's relationships in sc->relationships. */
static bool table_rel_range(const pgr_schema_cache *sc, const pgr_table *t,
                            size_t *lo, size_t *hi)
{
    if (sc->rel_offsets == NULL || t < sc->tables ||
        t >= sc->tables + sc->n_tables)
        return false;
    size_t i = (size_t)(t - sc->tables);
    *lo = sc->rel_offsets[i];
    *hi = sc->rel_offsets[i + 1];
    return true;
}

size_t pgr_table_relationships(const pgr_schema_cache *sc, const pgr_table *t,
                               const pgr_relationship **out, size_t max)
{
    if (sc == NULL || t == NULL)
        return 0;
    size_t lo = 0, hi = 0, k = 0;
    bool ranged = table_rel_range(sc, t, &lo, &hi);
    if (!ranged)
        hi = sc->n_relationships; /* hand-built cache: scan */
    for (size_t i = lo; i < hi; i++) {
        if (!ranged && sc->relationships[i].table != t)
            continue;
        if (out != NULL && k >= max)
            break;
        if (out != NULL)
            out[k] = &sc->relationships[i];
        k++;
    }
    return k;
}

const char *pgr_rel_key_schema(const pgr_relationship *r)
{
    return r->is_computed ? r->function_schema : r->foreign_table->schema;
}

bool pgr_table_has_rel_key(const pgr_schema_cache *sc, const pgr_table *t,
                           const char *schema)
{
    if (sc == NULL || t == NULL)
        return false;
    size_t lo = 0, hi = sc->n_relationships;
    table_rel_range(sc, t, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        if (sc->relationships[i].table == t &&
            strcmp(pgr_rel_key_schema(&sc->relationships[i]), schema) == 0)
            return true;
    for (size_t i = 0; i < sc->n_emptied_rel_keys; i++)
        if (sc->emptied_rel_keys[i].table == t &&
            strcmp(sc->emptied_rel_keys[i].schema, schema) == 0)
            return true;
    return false;
}

static int routine_key_cmp(const pgr_routine *r, const char *schema,
                           const char *name)
{
    int c = strcmp(r->schema, schema);
    return c != 0 ? c : strcmp(r->name, name);
}

size_t pgr_find_routines(const pgr_schema_cache *sc, const char *schema,
                         const char *name, const pgr_routine **out, size_t max)
{
    if (sc == NULL || schema == NULL || name == NULL)
        return 0;
    size_t lo = 0, hi = sc->n_routines;
    while (lo < hi) { /* lower bound */
        size_t mid = lo + (hi - lo) / 2;
        if (routine_key_cmp(&sc->routines[mid], schema, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t k = 0;
    for (size_t i = lo; i < sc->n_routines &&
                        routine_key_cmp(&sc->routines[i], schema, name) == 0;
         i++) {
        if (out != NULL && k >= max)
            break;
        if (out != NULL)
            out[k] = &sc->routines[i];
        k++;
    }
    return k;
}

const pgr_representation *pgr_find_representation(const pgr_schema_cache *sc,
                                                  const char *source,
                                                  const char *target)
{
    if (sc == NULL || source == NULL || target == NULL ||
        sc->n_representations == 0)
        return NULL;
    pgr_representation key = {source, target, NULL};
    return bsearch(&key, sc->representations, sc->n_representations,
                   sizeof(pgr_representation), pgr_representation_cmp);
}

const pgr_media_handler *pgr_find_media_handler(const pgr_schema_cache *sc,
                                                const char *schema,
                                                const char *name,
                                                const char *media_type)
{
    if (sc == NULL || media_type == NULL || sc->n_media_handlers == 0)
        return NULL;
    pgr_media_handler key = {0};
    key.target_schema = name ? schema : NULL;
    key.target_name = name;
    key.media_type = media_type;
    /* lower bound, so duplicates resolve to the first */
    size_t lo = 0, hi = sc->n_media_handlers;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pgr_media_handler_cmp(&sc->media_handlers[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < sc->n_media_handlers && pgr_media_handler_cmp(&sc->media_handlers[lo], &key) == 0)
        return &sc->media_handlers[lo];
    return NULL;
}

/* The keys of PostgREST's relationships map: (table, schema) pairs, some
 * emptied by removeInternal. */
static size_t rel_keys(const pgr_schema_cache *sc)
{
    size_t n = 0;
    for (size_t i = 0; i < sc->n_tables; i++) {
        for (size_t r = sc->rel_offsets[i]; r < sc->rel_offsets[i + 1]; r++) {
            const char *schema = pgr_rel_key_schema(&sc->relationships[r]);
            bool seen = false;
            for (size_t q = sc->rel_offsets[i]; q < r && !seen; q++)
                seen = strcmp(pgr_rel_key_schema(&sc->relationships[q]), schema) == 0;
            n += seen ? 0 : 1;
        }
    }
    return n + sc->n_emptied_rel_keys;
}

char *pgr_schema_cache_summary(const pgr_schema_cache *sc, pgrest_arena *a)
{
    size_t rels = sc->rel_offsets != NULL ? rel_keys(sc) : 0, rpcs = 0;
    for (size_t i = 0; i < sc->n_routines; i++)
        if (i == 0 || strcmp(sc->routines[i].schema, sc->routines[i - 1].schema) != 0 ||
            strcmp(sc->routines[i].name, sc->routines[i - 1].name) != 0)
            rpcs++;
    return pgr_asprintf(a, "%zu Relations, %zu Relationships, %zu RPCs, "
                           "%zu Domain Representations, %zu Media Type Handlers",
                        sc->n_tables, rels, rpcs, sc->n_representations,
                        sc->n_media_handlers);
}

/* A handful of roles: a scan is enough. */
const pgr_role_settings *pgr_find_role_settings(const pgr_schema_cache *sc,
                                                const char *role)
{
    for (size_t i = 0; sc != NULL && role != NULL && i < sc->n_role_settings; i++)
        if (strcmp(sc->role_settings[i].role, role) == 0)
            return &sc->role_settings[i];
    return NULL;
}
