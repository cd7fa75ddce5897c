/* Loading the schema cache: snapshot JSON -> C structs (json-c).
 * Relationships are derived in relationships.c, which looks tables up in
 * schema_cache.c; this file calls both, neither calls back. Everything
 * lives in the cache's own arena; json-c objects are released before
 * pgr_schema_cache_from_json returns. */
#include "schema/schema_cache.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "schema/relationships.h"
#include "util/arena.h"
#include "util/error.h"

/* A cache holds the whole catalogue of the exposed schemas: allow far more
 * than a request arena does. */
#define SCHEMA_ARENA_CAP ((size_t)1 << 30)

typedef struct parse_ctx {
    pgrest_arena *a;
    const char *problem; /* constant text for the error details */
    bool oom;
} parse_ctx;

/* ------------------------------------------------------- JSON helpers */

/* Member of o, or NULL when absent or JSON null. */
static json_object *member(json_object *o, const char *key)
{
    json_object *v = NULL;
    if (o == NULL || !json_object_object_get_ex(o, key, &v))
        return NULL;
    return v;
}

static bool fail(parse_ctx *p, const char *problem)
{
    if (p->problem == NULL)
        p->problem = problem;
    return false;
}

static const char *dup_string(parse_ctx *p, json_object *v)
{
    char *s = pgr_strndup(p->a, json_object_get_string(v),
                          (size_t)json_object_get_string_len(v));
    if (s == NULL)
        p->oom = true;
    return s;
}

/* String member copied into the arena; NULL if absent/null or not a
 * string (the latter recorded as a problem). */
static const char *opt_str(parse_ctx *p, json_object *o, const char *key)
{
    json_object *v = member(o, key);
    if (v == NULL)
        return NULL;
    if (!json_object_is_type(v, json_type_string)) {
        fail(p, "a key has a value of the wrong type (string expected)");
        return NULL;
    }
    return dup_string(p, v);
}

static const char *req_str(parse_ctx *p, json_object *o, const char *key)
{
    const char *s = opt_str(p, o, key);
    if (s == NULL)
        fail(p, "a required string key is missing");
    return s;
}

static bool get_bool(json_object *o, const char *key, bool def)
{
    json_object *v = member(o, key);
    return v == NULL ? def : json_object_get_boolean(v) != 0;
}

static int get_int(json_object *o, const char *key, int def)
{
    json_object *v = member(o, key);
    if (v == NULL || !json_object_is_type(v, json_type_int))
        return def;
    return (int)json_object_get_int(v);
}

/* Array member (NULL and length 0 when absent or not an array). */
static json_object *get_array(json_object *o, const char *key, size_t *n)
{
    json_object *v = member(o, key);
    if (v == NULL || !json_object_is_type(v, json_type_array)) {
        *n = 0;
        return NULL;
    }
    *n = json_object_array_length(v);
    return v;
}

/* Array of strings -> arena vector; NULL entries are rejected. */
static const char **str_array(parse_ctx *p, json_object *o, const char *key,
                              size_t *n)
{
    json_object *arr = get_array(o, key, n);
    if (arr == NULL || *n == 0)
        return NULL;
    const char **v = PGR_NEW_ARRAY(p->a, const char *, *n);
    if (v == NULL) {
        p->oom = true;
        return NULL;
    }
    for (size_t i = 0; i < *n; i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        if (e == NULL || !json_object_is_type(e, json_type_string)) {
            fail(p, "an array that should hold strings holds something else");
            return NULL;
        }
        v[i] = dup_string(p, e);
    }
    return v;
}

/* Allocates an array of n elements of size sz (at least one). */
static void *alloc_items(parse_ctx *p, size_t n, size_t sz)
{
    void *v = pgr_alloc(p->a, (n ? n : 1) * sz);
    if (v == NULL)
        p->oom = true;
    return v;
}

/* ------------------------------------------------------------ tables */

static bool parse_column(parse_ctx *p, json_object *o, pgr_column *c)
{
    c->name = req_str(p, o, "name");
    c->type = opt_str(p, o, "type");
    c->nominal_type = opt_str(p, o, "nominal_type");
    if (c->type == NULL)
        c->type = c->nominal_type;
    if (c->nominal_type == NULL)
        c->nominal_type = c->type;
    c->nullable = get_bool(o, "nullable", true);
    c->default_expr = opt_str(p, o, "default");
    c->max_length = get_int(o, "max_length", -1);
    c->position = get_int(o, "position", 0);
    c->description = opt_str(p, o, "description");
    c->enum_values = str_array(p, o, "enum", &c->n_enum_values);
    c->is_array = get_bool(o, "is_array", false);
    c->is_composite = get_bool(o, "is_composite", false);
    return c->name != NULL && c->type != NULL;
}

static char parse_kind(parse_ctx *p, json_object *o)
{
    const char *k = opt_str(p, o, "kind");
    return k != NULL && k[0] != '\0' ? k[0] : 'r';
}

static bool parse_table(parse_ctx *p, json_object *o, pgr_table *t)
{
    t->schema = req_str(p, o, "schema");
    t->name = req_str(p, o, "name");
    t->kind = parse_kind(p, o);
    t->description = opt_str(p, o, "description");
    t->insertable = get_bool(o, "insertable", false);
    t->updatable = get_bool(o, "updatable", false);
    t->deletable = get_bool(o, "deletable", false);
    t->copy_as_insert = get_bool(o, "copy_as_insert", false);
    t->pk = str_array(p, o, "pk", &t->n_pk);
    json_object *cols = get_array(o, "columns", &t->n_columns);
    t->columns = alloc_items(p, t->n_columns, sizeof(pgr_column));
    if (t->schema == NULL || t->name == NULL || t->columns == NULL)
        return fail(p, "a \"tables\" entry lacks \"schema\" or \"name\"");
    for (size_t i = 0; i < t->n_columns; i++)
        if (!parse_column(p, json_object_array_get_idx(cols, i),
                          &t->columns[i]))
            return fail(p, "a \"columns\" entry lacks \"name\" or \"type\"");
    return true;
}

static bool index_columns(parse_ctx *p, pgr_table *t)
{
    const pgr_column **v = alloc_items(p, t->n_columns, sizeof(*v));
    if (v == NULL)
        return false;
    for (size_t i = 0; i < t->n_columns; i++)
        v[i] = &t->columns[i];
    qsort(v, t->n_columns, sizeof(*v), pgr_column_ptr_cmp);
    t->columns_by_name = v;
    return true;
}

static bool parse_tables(parse_ctx *p, json_object *root, pgr_schema_cache *sc)
{
    json_object *arr = get_array(root, "tables", &sc->n_tables);
    sc->tables = alloc_items(p, sc->n_tables, sizeof(pgr_table));
    if (sc->tables == NULL)
        return false;
    for (size_t i = 0; i < sc->n_tables; i++)
        if (!parse_table(p, json_object_array_get_idx(arr, i), &sc->tables[i]))
            return false;
    qsort(sc->tables, sc->n_tables, sizeof(pgr_table), pgr_table_cmp);
    for (size_t i = 0; i < sc->n_tables; i++)
        if (!index_columns(p, &sc->tables[i]))
            return false;
    return true;
}

/* ---------------------------------------------------------- routines */

static bool parse_param(parse_ctx *p, json_object *o, pgr_routine_param *pp)
{
    pp->name = opt_str(p, o, "name");
    if (pp->name == NULL)
        pp->name = "";
    pp->type = req_str(p, o, "type");
    pp->type_max_length = get_int(o, "type_max_length", -1);
    pp->cast_type = opt_str(p, o, "cast_type");
    if (pp->cast_type == NULL)
        pp->cast_type = pp->type;
    pp->required = get_bool(o, "required", true);
    pp->variadic = get_bool(o, "variadic", false);
    return pp->type != NULL;
}

static pgr_return_kind parse_return_kind(parse_ctx *p, json_object *o)
{
    const char *k = opt_str(p, o, "return_kind");
    if (k != NULL && strcmp(k, "composite") == 0)
        return PGR_RETURN_COMPOSITE;
    if (k != NULL && strcmp(k, "void") == 0)
        return PGR_RETURN_VOID;
    return PGR_RETURN_SCALAR;
}

/* "settings": [["name", "value"], ...] of a routine or a role. */
static bool parse_settings(parse_ctx *p, json_object *o, const char ***names,
                           const char ***values, size_t *n)
{
    json_object *arr = get_array(o, "settings", n);
    *names = alloc_items(p, *n, sizeof(char *));
    *values = alloc_items(p, *n, sizeof(char *));
    if (*names == NULL || *values == NULL)
        return false;
    for (size_t i = 0; i < *n; i++) {
        json_object *kv = json_object_array_get_idx(arr, i);
        /* json-c aborts when indexing a non-array: check first */
        if (!json_object_is_type(kv, json_type_array))
            return fail(p, "a \"settings\" entry is not [name, value]");
        json_object *k = json_object_array_get_idx(kv, 0);
        json_object *v = json_object_array_get_idx(kv, 1);
        if (k == NULL || v == NULL)
            return fail(p, "a \"settings\" entry is not [name, value]");
        (*names)[i] = dup_string(p, k);
        (*values)[i] = dup_string(p, v);
    }
    return true;
}

/* The columns a function returns through OUT/TABLE parameters, kept as a
 * relation (kind 'F') that the read tree of its result can resolve. */
static bool parse_out_columns(parse_ctx *p, json_object *o, pgr_routine *r)
{
    size_t n = 0;
    json_object *cols = get_array(o, "out_columns", &n);
    if (n == 0)
        return true;
    pgr_table *t = alloc_items(p, 1, sizeof(pgr_table));
    pgr_column *c = alloc_items(p, n, sizeof(pgr_column));
    if (t == NULL || c == NULL)
        return fail(p, "out of memory");
    for (size_t i = 0; i < n; i++)
        if (!parse_column(p, json_object_array_get_idx(cols, i), &c[i]))
            return fail(p, "an \"out_columns\" entry lacks \"name\" or \"type\"");
    t->schema = r->schema;
    t->name = r->name;
    t->kind = 'F';
    t->columns = c;
    t->n_columns = n;
    r->out_table = t;
    return true;
}

static bool parse_routine(parse_ctx *p, json_object *o, pgr_routine *r)
{
    r->schema = req_str(p, o, "schema");
    r->name = req_str(p, o, "name");
    r->description = opt_str(p, o, "description");
    json_object *params = get_array(o, "params", &r->n_params);
    r->params = alloc_items(p, r->n_params, sizeof(pgr_routine_param));
    if (r->schema == NULL || r->name == NULL || r->params == NULL)
        return fail(p, "a \"routines\" entry lacks \"schema\" or \"name\"");
    for (size_t i = 0; i < r->n_params; i++)
        if (!parse_param(p, json_object_array_get_idx(params, i),
                         &r->params[i]))
            return fail(p, "a routine parameter lacks \"type\"");
    r->return_schema = opt_str(p, o, "return_schema");
    r->return_type = opt_str(p, o, "return_type");
    r->return_kind = parse_return_kind(p, o);
    r->return_composite_alias = get_bool(o, "return_composite_alias", false);
    r->returns_set = get_bool(o, "returns_set", false);
    const char *vol = opt_str(p, o, "volatility");
    r->volatility = vol != NULL && vol[0] != '\0' ? vol[0] : 'v';
    r->has_out_params = get_bool(o, "has_out_params", false);
    r->isolation_level = opt_str(p, o, "isolation_level");
    if (!parse_out_columns(p, o, r))
        return false;
    return parse_settings(p, o, &r->setting_names, &r->setting_values,
                          &r->n_settings);
}

typedef struct routine_slot {
    pgr_routine r;
    size_t idx;
} routine_slot;

static int routine_slot_cmp(const void *pa, const void *pb)
{
    const routine_slot *a = pa, *b = pb;
    int c = strcmp(a->r.schema, b->r.schema);
    if (c == 0)
        c = strcmp(a->r.name, b->r.name);
    if (c == 0) /* overloads keep snapshot order */
        c = (a->idx > b->idx) - (a->idx < b->idx);
    return c;
}

static bool parse_routines(parse_ctx *p, json_object *root,
                           pgr_schema_cache *sc)
{
    size_t n = 0;
    json_object *arr = get_array(root, "routines", &n);
    routine_slot *slots = alloc_items(p, n, sizeof(routine_slot));
    sc->routines = alloc_items(p, n, sizeof(pgr_routine));
    if (slots == NULL || sc->routines == NULL)
        return false;
    for (size_t i = 0; i < n; i++) {
        slots[i].idx = i;
        if (!parse_routine(p, json_object_array_get_idx(arr, i), &slots[i].r))
            return false;
    }
    qsort(slots, n, sizeof(*slots), routine_slot_cmp);
    for (size_t i = 0; i < n; i++)
        sc->routines[i] = slots[i].r;
    sc->n_routines = n;
    return true;
}

/* --------------------------------------------------- representations */

static bool parse_representations(parse_ctx *p, json_object *root,
                                  pgr_schema_cache *sc)
{
    size_t n = 0;
    json_object *arr = get_array(root, "representations", &n);
    sc->representations = alloc_items(p, n, sizeof(pgr_representation));
    if (sc->representations == NULL)
        return false;
    for (size_t i = 0; i < n; i++) {
        json_object *o = json_object_array_get_idx(arr, i);
        pgr_representation *r = &sc->representations[i];
        r->source = req_str(p, o, "source");
        r->target = req_str(p, o, "target");
        r->function = req_str(p, o, "function");
        if (r->source == NULL || r->target == NULL || r->function == NULL)
            return fail(p, "a \"representations\" entry is incomplete");
    }
    qsort(sc->representations, n, sizeof(pgr_representation), pgr_representation_cmp);
    sc->n_representations = n;
    return true;
}

/* ---------------------------------------------------- media handlers */

static bool parse_media_handlers(parse_ctx *p, json_object *root,
                                 pgr_schema_cache *sc)
{
    size_t n = 0;
    json_object *arr = get_array(root, "media_handlers", &n);
    sc->media_handlers = alloc_items(p, n, sizeof(pgr_media_handler));
    if (sc->media_handlers == NULL)
        return false;
    for (size_t i = 0; i < n; i++) {
        json_object *o = json_object_array_get_idx(arr, i);
        pgr_media_handler *h = &sc->media_handlers[i];
        h->handler_schema = req_str(p, o, "handler_schema");
        h->handler_name = req_str(p, o, "handler_name");
        h->any_element = get_bool(o, "any_element", false);
        h->target_schema = h->any_element ? NULL : req_str(p, o, "target_schema");
        h->target_name = h->any_element ? NULL : req_str(p, o, "target_name");
        h->media_type = req_str(p, o, "media_type");
        h->resolved_media_type = req_str(p, o, "resolved_media_type");
        h->base_type = opt_str(p, o, "base_type");
        h->send_fn = opt_str(p, o, "send_fn");
        h->function_target = get_bool(o, "function_target", false);
        if (h->handler_schema == NULL || h->handler_name == NULL ||
            h->media_type == NULL || h->resolved_media_type == NULL ||
            (!h->any_element && h->target_name == NULL))
            return fail(p, "a \"media_handlers\" entry is incomplete");
    }
    /* stable choice among duplicates: the first after sorting */
    qsort(sc->media_handlers, n, sizeof(pgr_media_handler), pgr_media_handler_cmp);
    sc->n_media_handlers = n;
    return true;
}

/* ------------------------------------------- relationship input data */

static bool parse_fk(parse_ctx *p, json_object *o, pgr_fk_def *fk)
{
    size_t nref = 0;
    fk->name = req_str(p, o, "name");
    fk->schema = req_str(p, o, "schema");
    fk->table = req_str(p, o, "table");
    fk->ref_schema = req_str(p, o, "ref_schema");
    fk->ref_table = req_str(p, o, "ref_table");
    fk->columns = str_array(p, o, "columns", &fk->n_columns);
    fk->ref_columns = str_array(p, o, "ref_columns", &nref);
    fk->one_to_one = get_bool(o, "one_to_one", false);
    fk->table_pk = str_array(p, o, "table_pk", &fk->n_table_pk);
    if (fk->name == NULL || fk->schema == NULL || fk->table == NULL ||
        fk->ref_schema == NULL || fk->ref_table == NULL ||
        fk->n_columns == 0 || nref != fk->n_columns)
        return fail(p, "a \"foreign_keys\" entry is incomplete");
    return true;
}

static bool parse_view_col(parse_ctx *p, json_object *o, pgr_view_col_def *v)
{
    v->view_schema = req_str(p, o, "view_schema");
    v->view = req_str(p, o, "view");
    v->view_column = req_str(p, o, "view_column");
    v->table_schema = req_str(p, o, "table_schema");
    v->table = req_str(p, o, "table");
    v->table_column = req_str(p, o, "table_column");
    if (v->view_schema == NULL || v->view == NULL || v->view_column == NULL ||
        v->table_schema == NULL || v->table == NULL || v->table_column == NULL)
        return fail(p, "a \"view_columns\" entry is incomplete");
    return true;
}

static bool parse_computed(parse_ctx *p, json_object *o, pgr_computed_def *c)
{
    c->function_schema = req_str(p, o, "function_schema");
    c->function = req_str(p, o, "function");
    c->table_schema = req_str(p, o, "table_schema");
    c->table = req_str(p, o, "table");
    c->target_schema = req_str(p, o, "target_schema");
    c->target = req_str(p, o, "target");
    c->to_one = get_bool(o, "to_one", false);
    if (c->function_schema == NULL || c->function == NULL ||
        c->table_schema == NULL || c->table == NULL ||
        c->target_schema == NULL || c->target == NULL)
        return fail(p, "a \"computed_relationships\" entry is incomplete");
    return true;
}

static bool parse_rel_input(parse_ctx *p, json_object *root, pgr_rel_input *in)
{
    json_object *fks = get_array(root, "foreign_keys", &in->n_fks);
    json_object *vcs = get_array(root, "view_columns", &in->n_view_cols);
    json_object *crs = get_array(root, "computed_relationships",
                                 &in->n_computed);
    pgr_fk_def *f = alloc_items(p, in->n_fks, sizeof(*f));
    pgr_view_col_def *v = alloc_items(p, in->n_view_cols, sizeof(*v));
    pgr_computed_def *c = alloc_items(p, in->n_computed, sizeof(*c));
    if (f == NULL || v == NULL || c == NULL)
        return false;
    for (size_t i = 0; i < in->n_fks; i++)
        if (!parse_fk(p, json_object_array_get_idx(fks, i), &f[i]))
            return false;
    for (size_t i = 0; i < in->n_view_cols; i++)
        if (!parse_view_col(p, json_object_array_get_idx(vcs, i), &v[i]))
            return false;
    for (size_t i = 0; i < in->n_computed; i++)
        if (!parse_computed(p, json_object_array_get_idx(crs, i), &c[i]))
            return false;
    in->fks = f;
    in->view_cols = v;
    in->computed = c;
    return true;
}

/* ------------------------------------------------------------- build */

static int snapshot_error(pgrest_error *err, const char *details)
{
    return pgr_error(err, 503, "PGRST002",
                     "Could not load the schema cache snapshot", details,
                     NULL);
}

static bool parse_role_settings(parse_ctx *p, json_object *root,
                                pgr_schema_cache *sc)
{
    json_object *arr = get_array(root, "role_settings", &sc->n_role_settings);
    sc->role_settings = alloc_items(p, sc->n_role_settings,
                                    sizeof(pgr_role_settings));
    if (sc->role_settings == NULL)
        return false;
    for (size_t i = 0; i < sc->n_role_settings; i++) {
        json_object *o = json_object_array_get_idx(arr, i);
        pgr_role_settings *rs = &sc->role_settings[i];
        rs->role = req_str(p, o, "role");
        if (rs->role == NULL)
            return fail(p, "a \"role_settings\" entry lacks \"role\"");
        rs->isolation_level = opt_str(p, o, "isolation_level");
        if (!parse_settings(p, o, &rs->setting_names, &rs->setting_values,
                            &rs->n_settings))
            return false;
    }
    return true;
}

static bool build(parse_ctx *p, json_object *root, pgr_schema_cache *sc)
{
    if (!json_object_is_type(root, json_type_object))
        return fail(p, "the snapshot is not a JSON object");
    sc->pg_version = get_int(root, "pg_version", 0);
    return parse_tables(p, root, sc) && parse_routines(p, root, sc) &&
           parse_representations(p, root, sc) &&
           parse_media_handlers(p, root, sc) &&
           parse_role_settings(p, root, sc);
}

/* Parses the snapshot into sc and derives the relationships. */
static int load(pgr_schema_cache *sc, json_object *root,
                const char *const *exposed_schemas, pgrest_error *err)
{
    parse_ctx p = {sc->arena, NULL, false};
    pgr_rel_input in;
    memset(&in, 0, sizeof(in));
    in.exposed_schemas = exposed_schemas;
    bool ok = build(&p, root, sc) && parse_rel_input(&p, root, &in);
    if (p.oom || pgr_arena_exhausted(sc->arena))
        return pgr_error_oom(err);
    if (!ok || p.problem != NULL)
        return snapshot_error(err, p.problem ? p.problem
                                             : "invalid snapshot");
    return pgr_derive_relationships(sc, &in, err);
}

pgr_schema_cache *pgr_schema_cache_from_json(const char *json,
                                             const char *const *exposed_schemas,
                                             pgrest_error *err)
{
    if (json == NULL) {
        snapshot_error(err, "no snapshot text");
        return NULL;
    }
    enum json_tokener_error jerr = json_tokener_success;
    json_object *root = json_tokener_parse_verbose(json, &jerr);
    if (root == NULL) {
        snapshot_error(err, json_tokener_error_desc(jerr));
        return NULL;
    }
    pgrest_arena *a = pgrest_arena_new(SCHEMA_ARENA_CAP);
    pgr_schema_cache *sc = a != NULL ? PGR_NEW(a, pgr_schema_cache) : NULL;
    int rc = PGREST_OK;
    if (sc == NULL) {
        rc = pgr_error_oom(err);
    } else {
        sc->arena = a;
        atomic_init(&sc->refcount, 1);
        sc->json = pgr_strdup(a, json);
        rc = sc->json != NULL ? load(sc, root, exposed_schemas, err)
                              : pgr_error_oom(err);
    }
    json_object_put(root);
    if (rc != PGREST_OK) {
        pgrest_arena_free(a);
        return NULL;
    }
    return sc;
}

pgr_schema_cache *pgr_schema_cache_with_role_settings(const pgr_schema_cache *sc,
                                                      const char *role_settings,
                                                      const char *const *exposed_schemas,
                                                      pgrest_error *err)
{
    enum json_tokener_error jerr = json_tokener_success;
    json_object *root = json_tokener_parse_verbose(sc->json, &jerr);
    json_object *settings = root ? json_tokener_parse_verbose(role_settings, &jerr) : NULL;
    if (settings == NULL || !json_object_is_type(settings, json_type_array) ||
        !json_object_is_type(root, json_type_object)) {
        json_object_put(settings);
        json_object_put(root);
        snapshot_error(err, jerr != json_tokener_success ? json_tokener_error_desc(jerr)
                                                         : "\"role_settings\" is not an array");
        return NULL;
    }
    json_object_object_add(root, "role_settings", settings);
    const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
    pgr_schema_cache *out = text ? pgr_schema_cache_from_json(text, exposed_schemas, err) : NULL;
    if (text == NULL)
        pgr_error_oom(err);
    json_object_put(root);
    return out;
}
