/* Nested inserts: the body keys that name relationships, resolved as
 * select='s embeds are (the same names, !hint and errors), and the
 * columns written at each level, from the nested objects themselves. */
#include "plan/nested_insert.h"

#include <json-c/json.h>
#include <limits.h>
#include <string.h>

#include "plan/embed.h"
#include "util/error.h"

/* The objects at one level of the body, across all their parents. */
typedef struct row_set {
    json_object **rows;
    size_t n;
} row_set;

typedef struct nested_ctx {
    pgrest_arena *a;
    const pgrest_api_request *api;
    const pgr_schema_cache *sc;
    int last_id;                       /* ids of the nodes planned so far */
} nested_ctx;

bool pgr_nested_inserts_apply(const pgrest_api_request *api)
{
    return api->action == PGR_ACTION_CREATE &&
           api->payload_json != NULL && api->prefs.resolution == PGR_PREF_RESOLUTION_NONE &&
           (api->content_type == NULL || api->content_type->kind == PGR_MEDIA_JSON);
}

static void put_json(void *o)
{
    json_object_put(o);
}

int pgr_nested_parse_body(pgrest_arena *a, const char *json, int max_depth,
                          struct json_object **out, pgrest_error *err)
{
    size_t len = strlen(json);
    json_tokener *tok = len <= INT_MAX ? json_tokener_new_ex(max_depth + 1) : NULL;
    if (tok == NULL)
        return pgr_error_oom(err);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *doc = json_tokener_parse_ex(tok, json, (int)len);
    bool whole = json_tokener_get_error(tok) == json_tokener_success &&
                 json_tokener_get_parse_end(tok) == len;
    json_tokener_free(tok);
    if (doc == NULL || !whole || (!json_object_is_type(doc, json_type_object) &&
                                  !json_object_is_type(doc, json_type_array))) {
        json_object_put(doc);
        return pgr_errorf(err, a, 400, "PGRST102", NULL, NULL, "Empty or invalid json");
    }
    if (!pgr_arena_on_free(a, put_json, doc)) {
        json_object_put(doc);
        return pgr_error_oom(err);
    }
    *out = doc;
    return PGREST_OK;
}

static bool push_row(nested_ctx *nc, row_set *set, size_t *cap, json_object *row)
{
    if (set->n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        json_object **grown = PGR_NEW_ARRAY(nc->a, json_object *, ncap);
        if (grown == NULL)
            return false;
        if (set->n > 0)
            memcpy(grown, set->rows, set->n * sizeof *grown);
        set->rows = grown;
        *cap = ncap;
    }
    set->rows[set->n++] = row;
    return true;
}

/* Nested rows are an array of objects, one object, or null (none) --
 * for a to-one relationship one object or null: what the SQL reads the
 * same way. */
static int invalid_rows(nested_ctx *nc, const char *key, bool to_one, pgrest_error *err)
{
    const char *shape = to_one ? "an object or null" : "an object, an array of objects or null";
    return pgr_errorf(err, nc->a, 400, "PGRST102",
                      pgr_asprintf(nc->a, "The value of '%s' must be %s", key, shape),
                      NULL, "Empty or invalid json");
}

/* The objects under key in every row of parents. */
static int child_rows(nested_ctx *nc, const row_set *parents, const char *key, bool to_one,
                      row_set *out, pgrest_error *err)
{
    size_t cap = 0;
    out->rows = NULL;
    out->n = 0;
    for (size_t i = 0; i < parents->n; i++) {
        json_object *v = NULL;
        if (!json_object_object_get_ex(parents->rows[i], key, &v) || v == NULL)
            continue;
        bool array = json_object_is_type(v, json_type_array);
        if (array && to_one)
            return invalid_rows(nc, key, to_one, err);
        size_t n = array ? json_object_array_length(v) : 1;
        for (size_t k = 0; k < n; k++) {
            json_object *row = array ? json_object_array_get_idx(v, k) : v;
            if (!json_object_is_type(row, json_type_object))
                return invalid_rows(nc, key, to_one, err);
            if (!push_row(nc, out, &cap, row))
                return pgr_error_oom(err);
        }
    }
    return PGREST_OK;
}

static int cmp_name(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The union of the rows' keys, as a sorted set (the column order of the
 * INSERT, as PostgREST's Data.Set of payload keys). */
static const char **union_keys(nested_ctx *nc, const row_set *rows, size_t *n)
{
    size_t total = 0;
    for (size_t i = 0; i < rows->n; i++)
        total += (size_t)json_object_object_length(rows->rows[i]);
    const char **keys = PGR_NEW_ARRAY(nc->a, const char *, total + 1);
    if (keys == NULL)
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < rows->n; i++) {
        json_object_object_foreach(rows->rows[i], k, v) {
            (void)v;
            keys[m++] = k;
        }
    }
    qsort(keys, m, sizeof *keys, cmp_name);
    size_t u = 0;
    for (size_t i = 0; i < m; i++)
        if (u == 0 || strcmp(keys[u - 1], keys[i]) != 0)
            keys[u++] = keys[i];
    *n = u;
    return keys;
}

static int no_column(nested_ctx *nc, const char *key, const pgr_table *t, pgrest_error *err)
{
    return pgr_errorf(err, nc->a, 400, "PGRST204", NULL, NULL,
                      "Could not find the '%s' column of '%s' in the schema cache", key,
                      t->name);
}

static bool writable_rel(const pgr_relationship *r)
{
    return !r->is_computed;
}

/* One-to-one is one-to-many from the referenced side (is_parent), many-to-
 * one from the side holding the foreign key, with one row either way. */
static bool references_parent(const pgr_relationship *r)
{
    return r->cardinality == PGR_REL_M2O || (r->cardinality == PGR_REL_O2O && !r->is_parent);
}

static bool from_parent(const pgr_relationship *r)
{
    return r->cardinality == PGR_REL_O2M || (r->cardinality == PGR_REL_O2O && r->is_parent);
}

/* The embed of the level's select= whose alias is key: the body may give
 * nested rows the name their representation has (`songs` for
 * select=songs:tracks(*)). */
static const pgr_select_item *aliased_embed(const pgr_select_item *select, const char *key)
{
    for (const pgr_select_item *it = select; it != NULL; it = it->next)
        if (it->kind == PGR_SELECT_EMBED && it->alias != NULL && strcmp(it->alias, key) == 0)
            return it;
    return NULL;
}

/* A body key read as select='s embed item: `rel`, `rel!hint`, `alias:rel`,
 * `alias:rel!hint` (the alias only names it). */
static bool key_as_embed(nested_ctx *nc, const char *key, pgr_select_item *item)
{
    const char *colon = strchr(key, ':');
    const char *name = colon ? colon + 1 : key;
    const char *bang = strchr(name, '!');
    item->kind = PGR_SELECT_EMBED;
    item->alias = colon ? pgr_strndup(nc->a, key, (size_t)(colon - key)) : NULL;
    item->relation = bang ? pgr_strndup(nc->a, name, (size_t)(bang - name)) : name;
    item->hint = bang ? bang + 1 : NULL;
    return item->relation != NULL && (colon == NULL || item->alias != NULL);
}

/* The key resolved from table as select='s embeds are: the embed of the
 * level's select= it is the alias of, else the key read as an embed item.
 * A plain key that names no relationship, or a computed one, keeps
 * PostgREST's PGRST204. */
static int resolve_key(nested_ctx *nc, const pgr_table *table, const pgr_select_item *select,
                       const char *key, const pgr_relationship **rel, pgrest_error *err)
{
    pgr_select_item item = {0};
    const pgr_select_item *aliased = aliased_embed(select, key);
    if (aliased != NULL)
        item = *aliased;
    else if (!key_as_embed(nc, key, &item))
        return pgr_error_oom(err);
    bool plain = aliased == NULL && item.alias == NULL && item.hint == NULL;
    pgr_read_node origin = {.table = table, .schema = nc->sc};
    *rel = NULL;
    int rc = pgr_find_relationship(nc->a, nc->sc, nc->api->schema, &origin, &item, rel, err);
    if (rc != PGREST_OK && plain && err->code != NULL && strcmp(err->code, "PGRST200") == 0)
        return no_column(nc, key, table, err);
    if (rc != PGREST_OK)
        return rc;
    if (!writable_rel(*rel)) {
        *rel = NULL;
        return no_column(nc, key, table, err);
    }
    return PGREST_OK;
}

/* The select= items under the embed a key resolved to (its alias, else
 * an embed naming the same relationship), for the aliases of the next
 * level. */
static const pgr_select_item *select_under(nested_ctx *nc, const pgr_table *table,
                                           const pgr_select_item *select, const char *key,
                                           const pgr_relationship *rel)
{
    const pgr_select_item *aliased = aliased_embed(select, key);
    if (aliased != NULL)
        return aliased->children;
    pgr_read_node origin = {.table = table, .schema = nc->sc};
    for (const pgr_select_item *it = select; it != NULL; it = it->next) {
        const pgr_relationship *found = NULL;
        pgrest_error ignored = {0};
        if (it->kind == PGR_SELECT_EMBED &&
            pgr_find_relationship(nc->a, nc->sc, nc->api->schema, &origin, it, &found,
                                  &ignored) == PGREST_OK &&
            found == rel)
            return it->children;
    }
    return NULL;
}

/* The foreign key columns of a relationship: the child's for one-to-many
 * (fcols), the row's own for many-to-one (cols). */
static bool in_columns(const char *const *cols, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(cols[i], name) == 0)
            return true;
    return false;
}

bool pgr_nested_fills_column(const pgr_relationship *own, const pgr_nested_insert *children,
                             const char *column)
{
    if (own != NULL && from_parent(own) && in_columns(own->fcols, own->n_cols, column))
        return true;
    for (const pgr_nested_insert *c = children; c != NULL; c = c->next)
        if (c->to_one && in_columns(c->rel->cols, c->rel->n_cols, column))
            return true;
    return false;
}

const char *const *pgr_nested_reference_columns(const pgr_nested_insert *n, size_t *count)
{
    *count = n->many_to_many ? n->rel->n_jcols2 : n->to_one ? n->rel->n_cols : 0;
    return n->many_to_many ? n->rel->cols2 : n->to_one ? n->rel->fcols : NULL;
}

bool pgr_nested_is_reference(json_object *row, const pgr_nested_insert *n)
{
    size_t count;
    const char *const *cols = pgr_nested_reference_columns(n, &count);
    if (cols == NULL || json_object_object_length(row) == 0)
        return false;
    json_object_object_foreach(row, k, v) {
        (void)v;
        if (!in_columns(cols, count, k))
            return false;
    }
    return true;
}

/* The rows a level inserts: all of a one-to-many key's, the others' but
 * the references. */
static void drop_references(row_set *rows, const pgr_nested_insert *n)
{
    size_t kept = 0;
    for (size_t i = 0; i < rows->n; i++)
        if (!pgr_nested_is_reference(rows->rows[i], n))
            rows->rows[kept++] = rows->rows[i];
    rows->n = kept;
}

static int plan_level(nested_ctx *nc, const pgr_table *table, const pgr_select_item *select,
                      const row_set *rows, const char *const *keys, size_t n, int parent_id,
                      pgr_nested_insert **out, pgrest_error *err);

/* One nested key under a level: its node, its columns, its own nested keys. */
static int plan_node(nested_ctx *nc, const pgr_relationship *rel, const char *key,
                     const pgr_select_item *select, const row_set *parents, int parent_id,
                     pgr_nested_insert **out, pgrest_error *err)
{
    pgr_nested_insert *node = PGR_NEW(nc->a, pgr_nested_insert);
    row_set rows;
    if (node == NULL)
        return pgr_error_oom(err);
    node->to_one = references_parent(rel);
    node->many_to_many = rel->cardinality == PGR_REL_M2M;
    node->rel = rel;
    bool single = rel->cardinality == PGR_REL_M2O || rel->cardinality == PGR_REL_O2O;
    int rc = child_rows(nc, parents, key, single, &rows, err);
    if (rc != PGREST_OK)
        return rc;
    drop_references(&rows, node);
    node->key = key;
    node->table = rel->foreign_table;
    node->id = ++nc->last_id;
    node->parent_id = parent_id;
    size_t n_keys = 0;
    const char **keys = union_keys(nc, &rows, &n_keys);
    node->columns = PGR_NEW_ARRAY(nc->a, const pgr_column *, n_keys + 1);
    const char **rest = PGR_NEW_ARRAY(nc->a, const char *, n_keys + 1);
    if (keys == NULL || node->columns == NULL || rest == NULL)
        return pgr_error_oom(err);
    size_t n_rest = 0;
    for (size_t i = 0; i < n_keys; i++)
        if (pgr_find_column(node->table, keys[i]) == NULL)
            rest[n_rest++] = keys[i];
    *out = node;
    rc = plan_level(nc, node->table, select, &rows, rest, n_rest, node->id, &node->children,
                    err);
    if (rc != PGREST_OK)
        return rc;
    /* the related rows give the foreign keys, whatever the body says */
    for (size_t i = 0; i < n_keys; i++) {
        const pgr_column *c = pgr_find_column(node->table, keys[i]);
        if (c != NULL && !pgr_nested_fills_column(rel, node->children, c->name))
            node->columns[node->n_columns++] = c;
    }
    return PGREST_OK;
}

/* The relationship each key names, into rels[0..n). */
static int resolve_keys(nested_ctx *nc, const pgr_table *table, const pgr_select_item *select,
                        const char *const *keys, size_t n, const pgr_relationship ***rels,
                        pgrest_error *err)
{
    *rels = PGR_NEW_ARRAY(nc->a, const pgr_relationship *, n + 1);
    if (*rels == NULL)
        return pgr_error_oom(err);
    for (size_t i = 0; i < n; i++) {
        int rc = resolve_key(nc, table, select, keys[i], &(*rels)[i], err);
        if (rc != PGREST_OK)
            return rc;
    }
    return PGREST_OK;
}

static int plan_nodes(nested_ctx *nc, const pgr_table *table, const pgr_select_item *select,
                      const pgr_relationship *const *rels, const char *const *keys, size_t n,
                      const row_set *rows, int parent_id, pgr_nested_insert **out,
                      pgrest_error *err)
{
    pgr_nested_insert **tail = out;
    for (size_t i = 0; i < n; i++) {
        const pgr_select_item *under = select_under(nc, table, select, keys[i], rels[i]);
        int rc = plan_node(nc, rels[i], keys[i], under, rows, parent_id, tail, err);
        if (rc != PGREST_OK)
            return rc;
        tail = &(*tail)->next;
    }
    return PGREST_OK;
}

static int plan_level(nested_ctx *nc, const pgr_table *table, const pgr_select_item *select,
                      const row_set *rows, const char *const *keys, size_t n, int parent_id,
                      pgr_nested_insert **out, pgrest_error *err)
{
    const pgr_relationship **rels = NULL;
    int rc = resolve_keys(nc, table, select, keys, n, &rels, err);
    return rc != PGREST_OK ? rc
                           : plan_nodes(nc, table, select, rels, keys, n, rows, parent_id, out,
                                        err);
}

/* The request's own rows: the body object, or the array's objects. */
static int root_rows(nested_ctx *nc, json_object *doc, row_set *rows, pgrest_error *err)
{
    size_t cap = 0;
    rows->rows = NULL;
    rows->n = 0;
    bool array = json_object_is_type(doc, json_type_array);
    size_t n = array ? json_object_array_length(doc) : 1;
    for (size_t i = 0; i < n; i++)
        if (!push_row(nc, rows, &cap, array ? json_object_array_get_idx(doc, i) : doc))
            return pgr_error_oom(err);
    return PGREST_OK;
}

int pgr_plan_nested_inserts(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_api_request *api,
                            const pgr_schema_cache *sc, const pgr_table *table,
                            const char *const *keys, size_t n, pgr_nested_insert **out,
                            pgrest_error *err)
{
    nested_ctx nc = {a, api, sc, 0};
    *out = NULL;
    /* the keys' relationships first: a key that names none is PGRST204
     * before the body is read again */
    const pgr_relationship **rels = NULL;
    const pgr_select_item *select = api->qp.select;
    int rc = resolve_keys(&nc, table, select, keys, n, &rels, err);
    if (rc != PGREST_OK)
        return rc;
    json_object *doc = NULL;
    row_set rows;
    int max_depth = pgr_cfg(ctx, a)->limits.max_json_depth;
    rc = pgr_nested_parse_body(a, api->payload_json, max_depth, &doc, err);
    if (rc == PGREST_OK)
        rc = root_rows(&nc, doc, &rows, err);
    return rc != PGREST_OK ? rc : plan_nodes(&nc, table, select, rels, keys, n, &rows, 0, out, err);
}

static pgr_nested_insert *nested_for(pgr_nested_insert *list, const pgr_relationship *rel)
{
    for (pgr_nested_insert *n = list; n != NULL; n = n->next)
        if (n->rel == rel)
            return n;
    return NULL;
}

int pgr_nested_bind_representation(pgrest_arena *a, pgr_nested_insert *nested,
                                   pgr_read_node *node, pgrest_error *err)
{
    for (pgr_embed *e = node->embeds; e != NULL; e = e->next) {
        pgr_nested_insert *n = nested_for(nested, e->rel);
        if (n == NULL)
            continue;
        n->represented = true;
        /* a many-to-one or many-to-many row may be one that existed: the
         * table and the inserted rows together (pgrst_view_<id>), and for
         * many-to-many the junction's (pgrst_jview_<id>) */
        bool existing = n->to_one || n->many_to_many;
        e->node->source_cte = existing ? pgr_asprintf(a, "pgrst_view_%d", n->id)
                                       : pgr_nested_insert_cte(a, n);
        if (n->many_to_many) {
            e->node->junction_cte = pgr_asprintf(a, "pgrst_jview_%d", n->id);
            if (e->node->sql_alias == NULL)
                e->node->sql_alias = n->table->name;
        }
        e->node->rows_are_records = true;
        if (e->node->source_cte == NULL)
            return pgr_error_oom(err);
        int rc = pgr_nested_bind_representation(a, n->children, e->node, err);
        if (rc != PGREST_OK)
            return rc;
    }
    return PGREST_OK;
}

const char *pgr_nested_insert_cte(pgrest_arena *a, const pgr_nested_insert *n)
{
    return pgr_asprintf(a, "pgrst_ins_%d", n->id);
}
