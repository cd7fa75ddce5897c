/* The schema cache as PostgREST's admin /schema_cache and --dump-schema
 * print it (Admin.hs, CLI.hs dumpSchema: JSON.encode): aeson's generic
 * encoding of SchemaCache (SchemaCache.hs ToJSON): records become objects
 * named by their fields, maps with non-text keys become arrays of
 * [key, value] pairs, constructors with fields {"tag": ..., ...}, with
 * one argument {"tag": ..., "contents": ...}, sums of nullary
 * constructors only strings.
 *
 * Divergence: the five maps are HashMaps, which aeson lists in
 * HM.toList order, i.e. by the hashes of their keys (hashable's hash of
 * the Text fields, salted, which changed between hashable versions).
 * That order depends on the build PostgREST was compiled with, so we
 * list them in the cache's own order (tables, routines and
 * representations by name, relationships by table, media handlers by
 * target after the builtin ones), which a reader should not rely on
 * either. */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/stage_view.h"
#include "schema/routine_order.h"
#include "schema/schema_cache.h"
#include "util/error.h"
#include "util/strbuf.h"

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

/* tablesSqlQuery is_view: relkind IN ('v','m'), a foreign table is not */
static bool is_view(const pgr_table *t)
{
    return t != NULL && (t->kind == 'v' || t->kind == 'm');
}

static json *table(const pgr_table *t)
{
    json *o = json_object_new_object();
    put(o, "tableSchema", json_object_new_string(t->schema));
    put(o, "tableName", json_object_new_string(t->name));
    put(o, "tableDescription", str_or_null(t->description));
    put(o, "tableIsView", json_object_new_boolean(is_view(t)));
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

static json *relationship(const pgr_relationship *r)
{
    json *o = json_object_new_object();
    const pgr_table *t = r->table, *f = r->foreign_table;
    if (r->is_computed) {
        put(o, "tag", json_object_new_string("ComputedRelationship"));
        put(o, "relFunction", qi(r->function_schema, r->function_name));
        put(o, "relTable", qi(t->schema, t->name));
        put(o, "relForeignTable", qi(f->schema, f->name));
        /* allComputedRels: pure (QualifiedIdentifier mempty mempty) */
        put(o, "relTableAlias", qi("", ""));
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

/* RelationshipsMap: (origin, schema) -> relationships, the schema being
 * the target's or a computed relationship's function's
 * (getOverrideRelationshipsMap deformedRelMap); keys removeInternal
 * emptied stay, with no relationships. */
static json *relationships(const pgr_schema_cache *sc)
{
    json *arr = json_object_new_array();
    for (size_t i = 0; sc->rel_offsets != NULL && i < sc->n_tables; i++) {
        size_t lo = sc->rel_offsets[i], hi = sc->rel_offsets[i + 1];
        for (size_t r = lo; r < hi; r++) {
            const char *schema = pgr_rel_key_schema(&sc->relationships[r]);
            bool seen = false;
            for (size_t q = lo; q < r && !seen; q++)
                seen = strcmp(pgr_rel_key_schema(&sc->relationships[q]), schema) == 0;
            if (seen)
                continue;
            json *rels = json_object_new_array();
            for (size_t q = r; q < hi; q++)
                if (strcmp(pgr_rel_key_schema(&sc->relationships[q]), schema) == 0)
                    push(rels, relationship(&sc->relationships[q]));
            json *key = pair(qi(sc->tables[i].schema, sc->tables[i].name),
                             json_object_new_string(schema));
            push(arr, pair(key, rels));
        }
    }
    for (size_t i = 0; i < sc->n_emptied_rel_keys; i++) {
        const pgr_rel_key *k = &sc->emptied_rel_keys[i];
        json *key = pair(qi(k->table->schema, k->table->name),
                         json_object_new_string(k->schema));
        push(arr, pair(key, json_object_new_array()));
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
    if (strcmp(level, "repeatable read") == 0)
        return json_object_new_string("RepeatableRead");
    if (strcmp(level, "serializable") == 0)
        return json_object_new_string("Serializable");
    /* Config/Database.hs toIsolationLevel: anything else */
    return json_object_new_string("ReadCommitted");
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

/* Position of overload i among [lo, hi) in Routine's Ord (equal ones in
 * cache order). */
static size_t overload_rank(const pgr_schema_cache *sc, size_t lo, size_t hi, size_t i)
{
    size_t rank = 0;
    for (size_t j = lo; j < hi; j++) {
        int c = pgr_routine_cmp(&sc->routines[j], &sc->routines[i]);
        rank += c < 0 || (c == 0 && j < i);
    }
    return rank;
}

static bool same_name(const pgr_routine *x, const pgr_routine *y)
{
    return strcmp(x->schema, y->schema) == 0 && strcmp(x->name, y->name) == 0;
}

/* RoutineMap: qualified name -> overloads, sorted as decodeFuncs does. */
static json *routines(const pgr_schema_cache *sc)
{
    json *arr = json_object_new_array();
    size_t lo = 0;
    while (lo < sc->n_routines) {
        size_t hi = lo + 1;
        while (hi < sc->n_routines && same_name(&sc->routines[hi], &sc->routines[lo]))
            hi++;
        json *group = json_object_new_array();
        for (size_t rank = 0; rank < hi - lo; rank++)
            for (size_t i = lo; i < hi; i++)
                if (overload_rank(sc, lo, hi, i) == rank)
                    push(group, routine(&sc->routines[i]));
        push(arr, pair(qi(sc->routines[lo].schema, sc->routines[lo].name), group));
        lo = hi;
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

static json *tag_only(const char *tag)
{
    json *o = json_object_new_object();
    put(o, "tag", json_object_new_string(tag));
    return o;
}

static json *tagged(const char *tag, json *contents)
{
    json *o = tag_only(tag);
    put(o, "contents", contents);
    return o;
}

/* MediaType.hs decodeMediaType of a media type domain's name (no
 * parameters: the domain name pattern has none), in aeson's encoding of
 * MediaType. */
static json *media_type(const char *text)
{
    static const struct { const char *name, *tag; } plain[] = {
        {"application/json", "MTApplicationJSON"},
        {"application/geo+json", "MTGeoJSON"},
        {"text/csv", "MTTextCSV"},
        {"text/plain", "MTTextPlain"},
        {"text/xml", "MTTextXML"},
        {"application/openapi+json", "MTOpenAPI"},
        {"application/x-www-form-urlencoded", "MTUrlEncoded"},
        {"application/octet-stream", "MTOctetStream"},
        {"application/vnd.pgrst.array+json", "MTApplicationJSON"},
        {"application/vnd.pgrst.array", "MTApplicationJSON"},
        {"*/*", "MTAny"},
    };
    if (text == NULL)
        text = "";
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        if (strcasecmp(text, plain[i].name) == 0)
            return tag_only(plain[i].tag);
    if (strcasecmp(text, "application/vnd.pgrst.object+json") == 0 ||
        strcasecmp(text, "application/vnd.pgrst.object") == 0)
        return tagged("MTVndSingularJSON", json_object_new_boolean(false));
    bool plan_json = strcasecmp(text, "application/vnd.pgrst.plan+json") == 0;
    if (plan_json || strcasecmp(text, "application/vnd.pgrst.plan") == 0 ||
        strcasecmp(text, "application/vnd.pgrst.plan+text") == 0) {
        json *c = json_object_new_array();
        push(c, tag_only("MTApplicationJSON"));
        push(c, json_object_new_string(plan_json ? "PlanJSON" : "PlanText"));
        push(c, json_object_new_array());
        return tagged("MTVndPlan", c);
    }
    return tagged("MTOther", json_object_new_string(text));
}

static json *rel_identifier(const pgr_media_handler *m)
{
    if (m == NULL || m->any_element)
        return tag_only("RelAnyElement");
    return tagged("RelId", qi(m->target_schema, m->target_name));
}

/* SchemaCache.hs initialMediaHandlers: (anyelement, media type) ->
 * builtin aggregate; a custom handler for the same key replaces it. */
static void builtin_handlers(const pgr_schema_cache *sc, json *arr)
{
    static const struct { const char *key, *handler, *resolved; } builtins[] = {
        {"*/*", "BuiltinOvAggJson", "application/json"},
        {"application/json", "BuiltinOvAggJson", "application/json"},
        {"text/csv", "BuiltinOvAggCsv", "text/csv"},
        {"application/geo+json", "BuiltinOvAggGeoJson", "application/geo+json"},
    };
    for (size_t b = 0; b < sizeof builtins / sizeof builtins[0]; b++) {
        json *key = media_type(builtins[b].key);
        bool overridden = false;
        for (size_t i = 0; i < sc->n_media_handlers && !overridden; i++) {
            json *custom = media_type(sc->media_handlers[i].media_type);
            overridden = sc->media_handlers[i].any_element &&
                         json_object_equal(custom, key);
            json_object_put(custom);
        }
        if (overridden)
            json_object_put(key);
        else
            push(arr, pair(pair(rel_identifier(NULL), key),
                           pair(tag_only(builtins[b].handler), media_type(builtins[b].resolved))));
    }
}

/* decodeMediaHandlers' HM.fromList: one entry per key, the key being the
 * decoded media type, so two domains decoding alike (application/json and
 * application/vnd.pgrst.array+json) share one. Which stays depends on
 * the query's row order there; here the first in the cache's sorted order
 * (pgr_find_media_handler resolves duplicates of one text the same way;
 * it still tells texts that decode alike apart). */
static bool key_seen(const json *arr, const json *key, size_t from)
{
    for (size_t i = from; i < json_object_array_length(arr); i++) {
        json *entry = json_object_array_get_idx(arr, i);
        if (json_object_equal(json_object_array_get_idx(entry, 0), (json *)key))
            return true;
    }
    return false;
}

/* MediaHandlerMap: (relation or anyelement, media type) -> (handler,
 * resolved media type). A function's handler is the domain it returns,
 * named by the query's lower(t.typname) column, i.e. the media type text
 * (SchemaCache.hs mediaHandlers: mtype.typname as handler_name). */
static json *media_handlers(const pgr_schema_cache *sc)
{
    json *arr = json_object_new_array();
    builtin_handlers(sc, arr);
    size_t builtins = json_object_array_length(arr);
    for (size_t i = 0; i < sc->n_media_handlers; i++) {
        const pgr_media_handler *m = &sc->media_handlers[i];
        json *key = pair(rel_identifier(m), media_type(m->media_type));
        if (key_seen(arr, key, builtins)) {
            json_object_put(key);
            continue;
        }
        const char *name = m->function_target ? m->media_type : m->handler_name;
        json *handler = tagged("CustomFunc", pair(qi(m->handler_schema, name), rel_identifier(m)));
        push(arr, pair(key, pair(handler, media_type(m->resolved_media_type))));
    }
    return arr;
}

static int cmp_key(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static void encode(pgr_sb *sb, json *v);

/* SchemaCache's toJSON builds an aeson Value, whose objects are KeyMaps
 * ordered by key (Data.Map): every object, the records, the tagged
 * constructors and the column maps (InsOrdHashMap's toJSON) alike, is
 * encoded with its keys sorted, as text compares (bytes of UTF-8). */
static void encode_object(pgr_sb *sb, json *v)
{
    size_t n = (size_t)json_object_object_length(v), k = 0;
    const char **keys = pgr_alloc(sb->arena, (n + 1) * sizeof *keys);
    if (keys == NULL) {
        sb->failed = true;
        return;
    }
    json_object_object_foreach(v, key, member)
    {
        (void)member;
        keys[k++] = key;
    }
    qsort(keys, n, sizeof *keys, cmp_key);
    pgr_sb_putc(sb, '{');
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            pgr_sb_putc(sb, ',');
        pgr_sb_put_aeson_stringn(sb, keys[i], strlen(keys[i]));
        pgr_sb_putc(sb, ':');
        encode(sb, json_object_object_get(v, keys[i]));
    }
    pgr_sb_putc(sb, '}');
}

static void encode_array(pgr_sb *sb, json *v)
{
    pgr_sb_putc(sb, '[');
    for (size_t i = 0; i < json_object_array_length(v); i++) {
        if (i > 0)
            pgr_sb_putc(sb, ',');
        encode(sb, json_object_array_get_idx(v, i));
    }
    pgr_sb_putc(sb, ']');
}

/* aeson's encoding of the Value, compact as JSON.encode prints it; our
 * own writer rather than json-c's, whose string escapes differ from
 * aeson's ('\b' and '\f'). The document holds no fractional numbers
 * (colMaxLen is an Int32). */
static void encode(pgr_sb *sb, json *v)
{
    switch (json_object_get_type(v)) {
    case json_type_object: encode_object(sb, v); break;
    case json_type_array: encode_array(sb, v); break;
    case json_type_string:
        pgr_sb_put_aeson_stringn(sb, json_object_get_string(v),
                                 (size_t)json_object_get_string_len(v));
        break;
    case json_type_boolean: pgr_sb_puts(sb, json_object_get_boolean(v) ? "true" : "false"); break;
    case json_type_int: pgr_sb_put_long(sb, (long long)json_object_get_int64(v)); break;
    default: pgr_sb_puts(sb, "null"); break;
    }
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
    pgr_sb sb;
    pgr_sb_init(&sb, arena, 1 << 16);
    encode(&sb, root);
    const char *text = pgr_sb_finish(&sb);
    json_object_put(root);
    pgr_schema_cache_release(sc);
    return text;
}
