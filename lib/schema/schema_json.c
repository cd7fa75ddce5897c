/* The schema cache as PostgREST's admin /schema_cache prints it: aeson's
 * generic encoding of SchemaCache (SchemaCache.hs ToJSON): records become
 * objects named by their fields, maps with non-text keys become arrays of
 * [key, value] pairs, constructors with fields {"tag": ..., ...}. */
#include <json-c/json.h>
#include <string.h>

#include "context.h"
#include "schema/schema_cache.h"
#include "util/error.h"

typedef struct json_object json;

/* Adding to a container json-c could not allocate drops the value: out of
 * memory gives a shorter document, never a crash. */
static void put(json *o, const char *key, json *v)
{
    if (o == NULL || json_object_object_add(o, key, v) != 0)
        json_object_put(v);
}

static void push(json *arr, json *v)
{
    if (arr == NULL || json_object_array_add(arr, v) != 0)
        json_object_put(v);
}

static json *str_or_null(const char *s)
{
    return s ? json_object_new_string(s) : NULL;
}

static json *qi(const char *schema, const char *name)
{
    json *o = json_object_new_object();
    put(o, "qiSchema", json_object_new_string(schema ? schema : ""));
    put(o, "qiName", json_object_new_string(name ? name : ""));
    return o;
}

static json *pair(json *a, json *b)
{
    json *p = json_object_new_array();
    push(p, a);
    push(p, b);
    return p;
}

static json *strings(const char *const *items, size_t n)
{
    json *a = json_object_new_array();
    for (size_t i = 0; i < n; i++)
        push(a, json_object_new_string(items[i]));
    return a;
}

static json *column(const pgr_column *c)
{
    json *o = json_object_new_object();
    put(o, "colName", json_object_new_string(c->name));
    put(o, "colDescription", str_or_null(c->description));
    put(o, "colNullable", json_object_new_boolean(c->nullable));
    put(o, "colType", json_object_new_string(c->type ? c->type : ""));
    put(o, "colNominalType",
                           json_object_new_string(c->nominal_type ? c->nominal_type : ""));
    put(o, "colMaxLen",
                           c->max_length >= 0 ? json_object_new_int(c->max_length) : NULL);
    put(o, "colDefault", str_or_null(c->default_expr));
    put(o, "colEnum", strings(c->enum_values, c->n_enum_values));
    return o;
}

static json *table(const pgr_table *t)
{
    json *o = json_object_new_object();
    put(o, "tableSchema", json_object_new_string(t->schema));
    put(o, "tableName", json_object_new_string(t->name));
    put(o, "tableDescription", str_or_null(t->description));
    put(o, "tableIsView", json_object_new_boolean(t->kind != 'r' && t->kind != 'p'));
    put(o, "tableInsertable", json_object_new_boolean(t->insertable));
    put(o, "tableUpdatable", json_object_new_boolean(t->updatable));
    put(o, "tableDeletable", json_object_new_boolean(t->deletable));
    put(o, "tablePKCols", strings(t->pk, t->n_pk));
    json *cols = json_object_new_object();
    for (size_t i = 0; i < t->n_columns; i++)
        put(cols, t->columns[i].name, column(&t->columns[i]));
    put(o, "tableColumns", cols);
    return o;
}

static json *column_pairs(const char **a, const char **b, size_t n)
{
    json *arr = json_object_new_array();
    for (size_t i = 0; i < n; i++)
        push(arr, pair(json_object_new_string(a[i]),
                                        json_object_new_string(b && b[i] ? b[i] : "")));
    return arr;
}

static json *cardinality(const pgr_relationship *r)
{
    static const char *const tags[] = {"M2O", "O2M", "O2O", "M2M"};
    json *o = json_object_new_object();
    put(o, "tag", json_object_new_string(tags[r->cardinality]));
    if (r->cardinality == PGR_REL_M2M) {
        json *j = json_object_new_object();
        put(j, "junTable", qi(r->junction ? r->junction->schema : "",
                                                 r->junction ? r->junction->name : ""));
        put(j, "junConstraint1", str_or_null(r->junction_constraint1));
        put(j, "junConstraint2", str_or_null(r->junction_constraint2));
        put(j, "junColsSource", column_pairs(r->cols, r->jcols1, r->n_jcols1));
        put(j, "junColsTarget", column_pairs(r->cols2, r->jcols2, r->n_jcols2));
        put(o, "contents", j);
        return o;
    }
    put(o, "relCons", str_or_null(r->constraint_name));
    put(o, "relColumns", column_pairs(r->cols, r->fcols, r->n_cols));
    if (r->cardinality == PGR_REL_O2O)
        put(o, "isParent", json_object_new_boolean(r->is_parent));
    return o;
}

static bool is_view(const pgr_table *t)
{
    return t != NULL && t->kind != 'r' && t->kind != 'p';
}

static json *relationship(const pgr_relationship *r)
{
    json *o = json_object_new_object();
    const pgr_table *t = r->table, *f = r->foreign_table;
    if (r->is_computed) {
        put(o, "tag", json_object_new_string("ComputedRelationship"));
        put(o, "relFunction", qi(r->function_schema, r->function_name));
        put(o, "relTable", qi(t->schema, t->name));
        put(o, "relForeignTable", qi(f->schema, f->name));
        put(o, "relTableAlias", qi(t->schema, t->name));
        put(o, "relToOne", json_object_new_boolean(r->cardinality == PGR_REL_M2O));
        put(o, "relIsSelf", json_object_new_boolean(r->is_self));
        return o;
    }
    put(o, "tag", json_object_new_string("Relationship"));
    put(o, "relTable", qi(t->schema, t->name));
    put(o, "relForeignTable", qi(f->schema, f->name));
    put(o, "relIsSelf", json_object_new_boolean(r->is_self));
    put(o, "relCardinality", cardinality(r));
    put(o, "relTableIsView", json_object_new_boolean(is_view(t)));
    put(o, "relFTableIsView", json_object_new_boolean(is_view(f)));
    return o;
}

/* RelationshipsMap: (origin, target schema) -> relationships. */
static json *relationships(const pgr_schema_cache *sc)
{
    json *arr = json_object_new_array();
    for (size_t i = 0; sc->rel_offsets != NULL && i < sc->n_tables; i++) {
        size_t lo = sc->rel_offsets[i], hi = sc->rel_offsets[i + 1];
        for (size_t r = lo; r < hi; r++) {
            const char *schema = sc->relationships[r].foreign_table->schema;
            bool seen = false;
            for (size_t q = lo; q < r && !seen; q++)
                seen = strcmp(sc->relationships[q].foreign_table->schema, schema) == 0;
            if (seen)
                continue;
            json *rels = json_object_new_array();
            for (size_t q = r; q < hi; q++)
                if (strcmp(sc->relationships[q].foreign_table->schema, schema) == 0)
                    push(rels, relationship(&sc->relationships[q]));
            json *key = pair(qi(sc->tables[i].schema, sc->tables[i].name),
                             json_object_new_string(schema));
            push(arr, pair(key, rels));
        }
    }
    return arr;
}

static json *pg_type(const pgr_routine *r)
{
    json *o = json_object_new_object();
    json *name = qi(r->return_schema, r->return_type);
    if (r->return_kind == PGR_RETURN_COMPOSITE) {
        put(o, "tag", json_object_new_string("Composite"));
        put(o, "contents",
                               pair(name, json_object_new_boolean(r->return_composite_alias)));
    } else {
        put(o, "tag", json_object_new_string("Scalar"));
        put(o, "contents", name);
    }
    json *ret = json_object_new_object();
    put(ret, "tag", json_object_new_string(r->returns_set ? "SetOf" : "Single"));
    put(ret, "contents", o);
    return ret;
}

static json *isolation(const char *level)
{
    if (level == NULL)
        return NULL;
    if (strcmp(level, "read committed") == 0)
        return json_object_new_string("ReadCommitted");
    if (strcmp(level, "repeatable read") == 0)
        return json_object_new_string("RepeatableRead");
    if (strcmp(level, "serializable") == 0)
        return json_object_new_string("Serializable");
    return json_object_new_string(level);
}

static json *routine(const pgr_routine *r)
{
    json *o = json_object_new_object();
    put(o, "pdSchema", json_object_new_string(r->schema));
    put(o, "pdName", json_object_new_string(r->name));
    put(o, "pdDescription", str_or_null(r->description));
    json *params = json_object_new_array();
    bool variadic = false;
    for (size_t i = 0; i < r->n_params; i++) {
        const pgr_routine_param *p = &r->params[i];
        json *po = json_object_new_object();
        put(po, "ppName", json_object_new_string(p->name ? p->name : ""));
        put(po, "ppType", json_object_new_string(p->type ? p->type : ""));
        put(po, "ppTypeMaxLength",
                               json_object_new_string(p->cast_type ? p->cast_type : p->type ? p->type : ""));
        put(po, "ppReq", json_object_new_boolean(p->required));
        put(po, "ppVar", json_object_new_boolean(p->variadic));
        variadic = variadic || p->variadic;
        push(params, po);
    }
    put(o, "pdParams", params);
    put(o, "pdReturnType", pg_type(r));
    put(o, "pdVolatility",
                           json_object_new_string(r->volatility == 'i' ? "Immutable"
                                                  : r->volatility == 's' ? "Stable" : "Volatile"));
    put(o, "pdHasVariadic", json_object_new_boolean(variadic));
    put(o, "pdIsoLvl", isolation(r->isolation_level));
    json *settings = json_object_new_array();
    for (size_t i = 0; i < r->n_settings; i++)
        push(settings, pair(json_object_new_string(r->setting_names[i]),
                                             json_object_new_string(r->setting_values[i])));
    put(o, "pdFuncSettings", settings);
    return o;
}

/* RoutineMap: qualified name -> overloads (routines come sorted). */
static json *routines(const pgr_schema_cache *sc)
{
    json *arr = json_object_new_array();
    json *group = NULL;
    for (size_t i = 0; i < sc->n_routines; i++) {
        const pgr_routine *r = &sc->routines[i];
        if (group == NULL || strcmp(r->schema, sc->routines[i - 1].schema) != 0 ||
            strcmp(r->name, sc->routines[i - 1].name) != 0) {
            group = json_object_new_array();
            push(arr, pair(qi(r->schema, r->name), group));
        }
        push(group, routine(r));
    }
    return arr;
}

static json *representations(const pgr_schema_cache *sc)
{
    json *arr = json_object_new_array();
    for (size_t i = 0; i < sc->n_representations; i++) {
        const pgr_representation *r = &sc->representations[i];
        json *o = json_object_new_object();
        put(o, "drSourceType", json_object_new_string(r->source));
        put(o, "drTargetType", json_object_new_string(r->target));
        put(o, "drFunction", json_object_new_string(r->function));
        push(arr, pair(pair(json_object_new_string(r->source),
                                             json_object_new_string(r->target)), o));
    }
    return arr;
}

/* MediaHandlerMap: (relation or anyelement, media type) -> (handler,
 * resolved media type). */
static json *media_handlers(const pgr_schema_cache *sc)
{
    json *arr = json_object_new_array();
    for (size_t i = 0; i < sc->n_media_handlers; i++) {
        const pgr_media_handler *m = &sc->media_handlers[i];
        json *rel = json_object_new_object();
        if (m->any_element)
            put(rel, "tag", json_object_new_string("RelAnyElement"));
        else {
            put(rel, "tag", json_object_new_string("RelId"));
            put(rel, "contents", qi(m->target_schema, m->target_name));
        }
        json *handler = json_object_new_object();
        put(handler, "tag", json_object_new_string("CustomFunc"));
        json *rel2 = json_object_get(rel);
        put(handler, "contents",
                               pair(qi(m->handler_schema, m->handler_name), rel2));
        json *key = pair(rel, json_object_new_string(m->media_type ? m->media_type : ""));
        json *value = pair(handler, json_object_new_string(
                                        m->resolved_media_type ? m->resolved_media_type : ""));
        push(arr, pair(key, value));
    }
    return arr;
}

const char *pgrest_ctx_schema_cache_json(pgrest_ctx *ctx, pgrest_arena *arena)
{
    if (ctx == NULL || arena == NULL)
        return NULL;
    pgr_schema_cache *sc = pgr_ctx_schema(ctx);
    if (sc == NULL)
        return NULL;
    json *tables = json_object_new_array();
    for (size_t i = 0; i < sc->n_tables; i++)
        push(tables, pair(qi(sc->tables[i].schema, sc->tables[i].name),
                                           table(&sc->tables[i])));
    json *root = json_object_new_object();
    if (root == NULL) {
        json_object_put(tables);
        pgr_schema_cache_release(sc);
        return NULL;
    }
    put(root, "dbTables", tables);
    put(root, "dbRelationships", relationships(sc));
    put(root, "dbRoutines", routines(sc));
    put(root, "dbRepresentations", representations(sc));
    put(root, "dbMediaHandlers", media_handlers(sc));
    const char *text = pgr_strdup(arena, json_object_to_json_string_ext(
                                             root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(root);
    pgr_schema_cache_release(sc);
    return text;
}
