/* The OpenAPI 2.0 document (PostgREST Response/OpenAPI.hs), and pgrest's
 * OpenAPI 3.1 rendering of the same walk (docs/openapi.md): one pass over
 * the schema cache, where the two versions differ only in how a part is
 * written (where components live, parameters' schemas, request bodies and
 * response content instead of body parameters and produces, nullable
 * types). Built with json-c; like the Haskell swagger2 encoder, empty
 * lists and objects are left out rather than written as [] or {}. */
#include "openapi/openapi.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "schema/routine_order.h"
#include "util/error.h"
#include "util/number.h"
#include "util/strbuf.h"

/* externalDocs: PostgREST's docs for the release whose behaviour pgrest
 * follows (Version.hs docsVersion of 16.x is "v16"). */
#define PGR_DOCS_URL "https://postgrest.org/en/v16/references/api.html"

typedef enum sw_type {
    SW_NONE,      /* json, jsonb: any value, no "type" */
    SW_STRING,
    SW_BOOLEAN,
    SW_INTEGER,
    SW_NUMBER,
    SW_ARRAY
} sw_type;

/* A sorted list of names the request role may access. */
typedef struct name_set {
    bool all;          /* ignore-privileges: no filtering */
    const char **names;
    size_t n;
} name_set;

typedef struct doc_ctx {
    pgrest_arena *a;
    const pgr_schema_cache *sc;
    const char *schema;
    name_set tables;
    /* follow-privileges: the functions the request read (SqlFragment.hs
     * accessibleFuncs, argument types printed on the request's search
     * path); otherwise the schema cache's functions of the schema */
    bool live_functions;
    pgr_routine *functions;
    size_t n_functions;
    /* db-aggregates-enabled: pgrest's having= and distinct= are listed
     * (docs/aggregates.md); off, the document is PostgREST's */
    bool query_extensions;
    /* server-max-batch-items > 0: POST / takes pgrest's batches
     * (docs/batch.md); 0, the document is PostgREST's */
    bool batches;
    /* OpenAPI 3.1 rather than PostgREST's Swagger 2.0 */
    bool v31;
} doc_ctx;

/* ------------------------------------------------------------ json helpers */

/* A key the exhausted arena could not build is no key: the document is
 * dropped for the out-of-memory error (pgr_stage_end) */
static void put(json_object *o, const char *key, json_object *v)
{
    if (key == NULL) {
        json_object_put(v);
        return;
    }
    json_object_object_add(o, key, v);
}

static void put_str(json_object *o, const char *key, const char *v)
{
    if (v != NULL)
        put(o, key, json_object_new_string(v));
}

/* swagger2 omits empty containers. */
static void put_nonempty(json_object *o, const char *key, json_object *v)
{
    bool empty = json_object_is_type(v, json_type_array)
                     ? json_object_array_length(v) == 0
                     : json_object_object_length(v) == 0;
    if (empty)
        json_object_put(v);
    else
        put(o, key, v);
}

static json_object *str_array(const char *const *items, size_t n)
{
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < n; i++)
        json_object_array_add(arr, json_object_new_string(items[i]));
    return arr;
}

static json_object *ref_to(pgrest_arena *a, const char *prefix, const char *name)
{
    json_object *o = json_object_new_object();
    put_str(o, "$ref", pgr_asprintf(a, "%s%s", prefix, name));
    return o;
}

/* ------------------------------------------------------------ 2.0 or 3.1 */

typedef enum component {
    COMPONENT_SCHEMA,
    COMPONENT_PARAMETER,
    COMPONENT_BODY          /* 3.1 only: 2.0 has body parameters */
} component;

static bool key_char(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           c == '.' || c == '_';
}

/* 3.1 component names match ^[a-zA-Z0-9.\-_]+$: any other byte (and '-',
 * the escape) is written -XX, so distinct names stay distinct. 2.0 keeps
 * PostgREST's names as they are. */
static const char *component_key(const doc_ctx *d, const char *name)
{
    if (!d->v31 || name == NULL)
        return name;
    pgr_sb sb;
    pgr_sb_init(&sb, d->a, strlen(name) + 8);
    for (const unsigned char *c = (const unsigned char *)name; *c != '\0'; c++) {
        if (key_char(*c))
            pgr_sb_putc(&sb, (char)*c);
        else
            pgr_sb_puts(&sb, pgr_asprintf(d->a, "-%02X", *c));
    }
    return pgr_sb_finish(&sb);
}

static json_object *component_ref(const doc_ctx *d, component kind, const char *name)
{
    static const char *const v2[] = {"#/definitions/", "#/parameters/", NULL};
    static const char *const v31[] = {"#/components/schemas/", "#/components/parameters/",
                                      "#/components/requestBodies/"};
    return ref_to(d->a, d->v31 ? v31[kind] : v2[kind], component_key(d, name));
}

/* ------------------------------------------------------------ types */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

/* OpenAPI.hs toSwaggerType */
static sw_type swagger_type(const char *t)
{
    static const struct { const char *pg; sw_type sw; } map[] = {
        {"character varying", SW_STRING}, {"character", SW_STRING},
        {"text", SW_STRING}, {"boolean", SW_BOOLEAN},
        {"smallint", SW_INTEGER}, {"integer", SW_INTEGER},
        {"bigint", SW_INTEGER}, {"numeric", SW_NUMBER}, {"real", SW_NUMBER},
        {"double precision", SW_NUMBER}, {"json", SW_NONE}, {"jsonb", SW_NONE},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(t, map[i].pg) == 0)
            return map[i].sw;
    return ends_with(t, "[]") ? SW_ARRAY : SW_STRING;
}

static const char *swagger_type_name(sw_type t)
{
    static const char *const names[] = {NULL, "string", "boolean", "integer",
                                        "number", "array"};
    return names[t];
}

/* OpenAPI.hs toSwaggerFormat: the PostgreSQL type as PostgREST's schema
 * cache prints it, with the Swagger formats for 16/32- and 64-bit
 * integers. */
static const char *swagger_format(const char *t)
{
    if (strcmp(t, "smallint") == 0 || strcmp(t, "integer") == 0)
        return "int32";
    if (strcmp(t, "bigint") == 0)
        return "int64";
    return t;
}

/* OpenAPI.hs typeFromArray: the type without its trailing "[]" (T.dropEnd 2). */
static const char *element_type(pgrest_arena *a, const char *t)
{
    size_t n = strlen(t);
    return pgr_strndup(a, t, n >= 2 ? n - 2 : 0);
}

static void put_type(json_object *o, sw_type t)
{
    if (t != SW_NONE)
        put_str(o, "type", swagger_type_name(t));
}

/* A column's type: in 3.1 (JSON Schema 2020-12) a nullable column also
 * takes null, ["string", "null"]; 2.0 has no way to say so. */
static void put_column_type(const doc_ctx *d, json_object *o, sw_type t, bool nullable)
{
    if (t == SW_NONE || !d->v31 || !nullable) {
        put_type(o, t);
        return;
    }
    json_object *types = json_object_new_array();
    json_object_array_add(types, json_object_new_string(swagger_type_name(t)));
    json_object_array_add(types, json_object_new_string("null"));
    put(o, "type", types);
}

/* "items" of an array property: the element's Swagger type. */
static void put_items(pgrest_arena *a, json_object *o, const char *t)
{
    json_object *items = json_object_new_object();
    put_type(items, swagger_type(element_type(a, t)));
    put(o, "items", items);
}

/* ------------------------------------------------------------ text helpers */

/* First line / rest with leading newlines dropped (OpenAPI.hs: breakOn "\n"
 * then dropWhile (== '\n')). */
static void split_comment(pgrest_arena *a, const char *text, const char **first,
                          const char **rest)
{
    *first = *rest = NULL;
    if (text == NULL)
        return;
    const char *nl = strchr(text, '\n');
    if (nl == NULL) {
        *first = text;
        *rest = "";
        return;
    }
    *first = pgr_strndup(a, text, (size_t)(nl - text));
    while (*nl == '\n')
        nl++;
    *rest = nl;
}

/* A JSON text that must be consumed whole (aeson's decode). */
static json_object *decode_exact(const char *text)
{
    json_tokener *tok = json_tokener_new();
    if (tok == NULL)
        return NULL;
    /* aeson is RFC 8259 strict: no single quotes, NaN or bare words */
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    size_t n = strlen(text);
    /* the terminating NUL is passed too, so a number at the very end is
     * known to be complete */
    json_object *v = json_tokener_parse_ex(tok, text, (int)n + 1);
    size_t used = json_tokener_get_parse_end(tok);
    bool ok = v != NULL && json_tokener_get_error(tok) == json_tokener_success &&
              !(json_object_is_type(v, json_type_double) &&
                !isfinite(json_object_get_double(v)));
    while (ok && used < n && strchr(" \t\r\n", text[used]) != NULL)
        used++;
    json_tokener_free(tok);
    if (!ok || used < n) {
        json_object_put(v);
        return NULL;
    }
    return v;
}

/* A non-string default decoded as aeson does: numbers keep aeson's
 * printing (json-c would print its own), other JSON values as they are. */
static json_object *decode_default(pgrest_arena *a, const char *expr)
{
    const char *number = pgr_aeson_number(a, expr);
    if (number == NULL)
        return decode_exact(expr);
    if (strpbrk(number, ".e") == NULL) {
        errno = 0;
        char *end = NULL;
        long long v = strtoll(number, &end, 10);
        if (errno == 0 && *end == '\0')
            return json_object_new_int64(v);
    }
    return json_object_new_double_s(strtod(number, NULL), number);
}

/* OpenAPI.hs parseDefault: string-typed defaults lose their "::type" cast
 * and quotes; the result is kept only if it decodes as JSON (so
 * nextval(...) and other expressions on numbers are left out). */
static json_object *default_value(pgrest_arena *a, const char *type,
                                  const char *expr)
{
    if (swagger_type(type) != SW_STRING)
        return decode_default(a, expr);
    const char *suffix = pgr_asprintf(a, "::%s", type);
    const char *body = expr;
    size_t n = strlen(expr);
    if (ends_with(expr, suffix)) {
        n -= strlen(suffix);
        while (n > 0 && *body == '\'') {
            body++;
            n--;
        }
        while (n > 0 && body[n - 1] == '\'')
            n--;
    }
    pgr_sb sb;
    pgr_sb_init(&sb, a, n + 3);
    pgr_sb_putc(&sb, '"');
    pgr_sb_putn(&sb, body, n);
    pgr_sb_putc(&sb, '"');
    const char *quoted = pgr_sb_finish(&sb);
    return quoted ? decode_exact(quoted) : NULL;
}

/* ------------------------------------------------------------ name sets */

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static bool read_name_set(pgrest_arena *a, json_object *doc, const char *key,
                          name_set *out)
{
    json_object *arr;
    out->all = !json_object_object_get_ex(doc, key, &arr) ||
               !json_object_is_type(arr, json_type_array);
    if (out->all)
        return true;
    out->n = json_object_array_length(arr);
    out->names = PGR_NEW_ARRAY(a, const char *, out->n + 1);
    if (out->names == NULL)
        return false;
    for (size_t i = 0; i < out->n; i++) {
        const char *s = json_object_get_string(json_object_array_get_idx(arr, i));
        if ((out->names[i] = pgr_strdup(a, s ? s : "")) == NULL)
            return false;
    }
    qsort(out->names, out->n, sizeof *out->names, cmp_str);
    return true;
}

static bool name_allowed(const name_set *s, const char *name)
{
    return s->all || bsearch(&name, s->names, s->n, sizeof *s->names, cmp_str) != NULL;
}

static bool table_included(const doc_ctx *d, const pgr_table *t)
{
    return strcmp(t->schema, d->schema) == 0 && name_allowed(&d->tables, t->name);
}

/* ------------------------------------------------------------ live functions */

/* A string member copied to the arena; NULL when absent or not a string. */
static const char *member_str(pgrest_arena *a, json_object *o, const char *key)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return NULL;
    return pgr_strdup(a, json_object_get_string(v));
}

static bool member_bool(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

static bool read_live_param(pgrest_arena *a, json_object *o, pgr_routine_param *p)
{
    p->name = member_str(a, o, "name");
    p->type = member_str(a, o, "type");
    p->required = member_bool(o, "required");
    p->variadic = member_bool(o, "variadic");
    return p->name != NULL && p->type != NULL;
}

static bool read_live_function(pgrest_arena *a, const char *schema, json_object *o,
                               pgr_routine *r)
{
    json_object *params;
    const char *volatility = member_str(a, o, "volatility");
    r->schema = schema;
    r->name = member_str(a, o, "name");
    r->description = member_str(a, o, "description");
    r->volatility = volatility != NULL ? volatility[0] : 'v';
    if (r->name == NULL || !json_object_object_get_ex(o, "params", &params) ||
        !json_object_is_type(params, json_type_array))
        return false;
    r->n_params = json_object_array_length(params);
    r->params = PGR_NEW_ARRAY(a, pgr_routine_param, r->n_params + 1);
    if (r->params == NULL)
        return false;
    for (size_t i = 0; i < r->n_params; i++)
        if (!read_live_param(a, json_object_array_get_idx(params, i), &r->params[i]))
            return false;
    return true;
}

/* "functions": [{name, description, volatility, params: [{name, type,
 * required, variadic}]}] as emit_openapi.c reads them; absent with
 * ignore-privileges. */
static bool read_live_functions(pgrest_arena *a, json_object *in, doc_ctx *d)
{
    json_object *arr;
    d->live_functions = json_object_object_get_ex(in, "functions", &arr) &&
                        json_object_is_type(arr, json_type_array);
    if (!d->live_functions)
        return true;
    d->n_functions = json_object_array_length(arr);
    d->functions = PGR_NEW_ARRAY(a, pgr_routine, d->n_functions + 1);
    if (d->functions == NULL)
        return false;
    for (size_t i = 0; i < d->n_functions; i++)
        if (!read_live_function(a, d->schema, json_object_array_get_idx(arr, i),
                                &d->functions[i]))
            return false;
    return true;
}

/* ------------------------------------------------------------ definitions */

static bool is_pk(const pgr_table *t, const char *col)
{
    for (size_t i = 0; i < t->n_pk; i++)
        if (strcmp(t->pk[i], col) == 0)
            return true;
    return false;
}

static bool is_view(const pgr_table *t)
{
    return t->kind == 'v' || t->kind == 'm';
}

/* Relationships of one table (fetched once per definition). */
typedef struct rel_list {
    const pgr_relationship **items;
    size_t n;
} rel_list;

static rel_list table_rels(const doc_ctx *d, const pgr_table *t)
{
    rel_list l = {NULL, pgr_table_relationships(d->sc, t, NULL, 0)};
    l.items = PGR_NEW_ARRAY(d->a, const pgr_relationship *, l.n + 1);
    l.n = l.items ? pgr_table_relationships(d->sc, t, l.items, l.n) : 0;
    return l;
}

/* OpenAPI.hs makeProperty fk: the relationship whose foreign key is col
 * alone, many-to-one or the FK side of a one-to-one; PostgREST looks
 * relationships up by (table, table's schema), so only targets in the
 * same schema count, computed ones never, and tables win over views
 * (relsSortedByIsView). */
static bool is_fk_on(const pgr_relationship *r, const pgr_table *t, const char *col)
{
    bool fk_side = r->cardinality == PGR_REL_M2O ||
                   (r->cardinality == PGR_REL_O2O && !r->is_parent);
    return !r->is_computed && fk_side && r->n_cols == 1 &&
           strcmp(r->cols[0], col) == 0 &&
           strcmp(r->foreign_table->schema, t->schema) == 0;
}

static const pgr_relationship *fk_of(const rel_list *rels, const pgr_table *t,
                                     const char *col)
{
    const pgr_relationship *view_rel = NULL;
    for (size_t i = 0; i < rels->n; i++) {
        const pgr_relationship *r = rels->items[i];
        if (!is_fk_on(r, t, col))
            continue;
        if (!is_view(r->foreign_table))
            return r;
        if (view_rel == NULL)
            view_rel = r;
    }
    return view_rel;
}

static const char *column_description(const doc_ctx *d, const pgr_table *t,
                                      const rel_list *rels, const pgr_column *c)
{
    bool pk = is_pk(t, c->name);
    const pgr_relationship *fk = fk_of(rels, t, c->name);
    if (!pk && fk == NULL)
        return c->description;
    pgr_sb sb;
    pgr_sb_init(&sb, d->a, 128);
    if (c->description != NULL) {
        pgr_sb_puts(&sb, c->description);
        pgr_sb_puts(&sb, "\n\n");
    }
    pgr_sb_puts(&sb, "Note:");
    if (pk)
        pgr_sb_puts(&sb, "\nThis is a Primary Key.<pk/>");
    if (fk != NULL) {
        const char *ft = fk->foreign_table->name, *fc = fk->fcols[0];
        pgr_sb_puts(&sb, pgr_asprintf(d->a, "\nThis is a Foreign Key to `%s.%s`."
                                            "<fk table='%s' column='%s'/>",
                                      ft, fc, ft, fc));
    }
    return pgr_sb_finish(&sb);
}

static json_object *column_property(const doc_ctx *d, const pgr_table *t,
                                    const rel_list *rels, const pgr_column *c)
{
    json_object *p = json_object_new_object();
    sw_type st = swagger_type(c->type);
    json_object *def = c->default_expr ? default_value(d->a, c->type, c->default_expr) : NULL;
    if (def != NULL)
        put(p, "default", def);
    put_str(p, "description", column_description(d, t, rels, c));
    if (c->n_enum_values > 0) {
        json_object *values = str_array(c->enum_values, c->n_enum_values);
        if (d->v31 && c->nullable)
            json_object_array_add(values, NULL);
        put(p, "enum", values);
    }
    put_str(p, "format", swagger_format(c->type));
    if (c->max_length >= 0)
        put(p, "maxLength", json_object_new_int(c->max_length));
    put_column_type(d, p, st, c->nullable);
    if (st == SW_ARRAY)
        put_items(d->a, p, c->type);
    return p;
}

static json_object *table_definition(const doc_ctx *d, const pgr_table *t)
{
    json_object *def = json_object_new_object();
    json_object *props = json_object_new_object();
    json_object *required = json_object_new_array();
    rel_list rels = table_rels(d, t);
    put_str(def, "description", t->description);
    for (size_t i = 0; i < t->n_columns; i++) {
        const pgr_column *c = &t->columns[i];
        put(props, c->name, column_property(d, t, &rels, c));
        /* OpenAPI.hs makeTableDef: every NOT NULL column, defaults or not */
        if (!c->nullable)
            json_object_array_add(required, json_object_new_string(c->name));
    }
    put_nonempty(def, "properties", props);
    put_nonempty(def, "required", required);
    put_str(def, "type", "object");
    return def;
}

/* ------------------------------------------------------------ parameters */

/* A parameter's value constraints: on the parameter in 2.0, in its
 * "schema" in 3.1. */
static json_object *param_schema(const doc_ctx *d, json_object *p)
{
    if (!d->v31)
        return p;
    json_object *schema = NULL;
    if (!json_object_object_get_ex(p, "schema", &schema)) {
        schema = json_object_new_object();
        put(p, "schema", schema);
    }
    return schema;
}

static json_object *query_param(const doc_ctx *d, const char *name, const char *description,
                                const char *in)
{
    json_object *p = json_object_new_object();
    put_str(p, "name", name);
    put_str(p, "description", description);
    put(p, "required", json_object_new_boolean(0));
    put_str(p, "in", in);
    put_str(param_schema(d, p), "type", "string");
    return p;
}

/* OpenAPI.hs makePreferParam: no "enum" when no value is known (the
 * "params" preference has none since params=single-object was removed). */
static json_object *prefer_param(const doc_ctx *d, const char *const *values, size_t n)
{
    json_object *p = query_param(d, "Prefer", "Preference", "header");
    if (n > 0)
        put(param_schema(d, p), "enum", str_array(values, n));
    return p;
}

static void add_common_params(const doc_ctx *d, json_object *params)
{
    static const char *const return_v[] = {"return=representation", "return=minimal",
                                           "return=none"};
    static const char *const count_v[] = {"count=none"};
    static const char *const post_v[] = {"return=representation", "return=minimal",
                                         "return=none", "resolution=ignore-duplicates",
                                         "resolution=merge-duplicates"};
    put(params, "preferParams", prefer_param(d, NULL, 0));
    put(params, "preferReturn", prefer_param(d, return_v, 3));
    put(params, "preferCount", prefer_param(d, count_v, 1));
    put(params, "preferPost", prefer_param(d, post_v, 5));
    put(params, "select", query_param(d, "select", "Filtering Columns", "query"));
    put(params, "on_conflict", query_param(d, "on_conflict", "On Conflict", "query"));
    put(params, "order", query_param(d, "order", "Ordering", "query"));
    put(params, "range", query_param(d, "Range", "Limiting and Pagination", "header"));
    json_object *unit = query_param(d, "Range-Unit", "Limiting and Pagination", "header");
    put_str(param_schema(d, unit), "default", "items");
    put(params, "rangeUnit", unit);
    put(params, "offset", query_param(d, "offset", "Limiting and Pagination", "query"));
    put(params, "limit", query_param(d, "limit", "Limiting and Pagination", "query"));
}

/* pgrest's reads beyond PostgREST, beside the parameters it lists */
static void add_extension_params(const doc_ctx *d, json_object *params)
{
    put(params, "having", query_param(d, "having", "Filtering Aggregates (pgrest)", "query"));
    put(params, "distinct", query_param(d, "distinct", "Distinct Rows (pgrest)", "query"));
}

/* ------------------------------------------------------------ 3.1 content */

/* What a table's rows are written as (the 2.0 document's "produces" and
 * "consumes"): JSON arrays of the row object, one object, CSV text. */
static const char *const row_media[] = {
    "application/json", "application/vnd.pgrst.object+json;nulls=stripped",
    "application/vnd.pgrst.object+json", "text/csv"};

static json_object *media_schema(json_object *schema)
{
    json_object *m = json_object_new_object();
    put(m, "schema", schema);
    return m;
}

static json_object *string_schema(void)
{
    json_object *s = json_object_new_object();
    put_str(s, "type", "string");
    return s;
}

static json_object *array_of(json_object *items)
{
    json_object *s = json_object_new_object();
    put_str(s, "type", "array");
    put(s, "items", items);
    return s;
}

/* A table's rows by media type: many for application/json (many is
 * false: a body, which may be one row or many), one for the
 * vnd.pgrst.object types, text for CSV; a form body is one row. */
static json_object *row_content(const doc_ctx *d, const pgr_table *t, bool many, bool form)
{
    json_object *content = json_object_new_object();
    json_object *row_or_rows = json_object_new_object();
    json_object *alts = json_object_new_array();
    json_object_array_add(alts, component_ref(d, COMPONENT_SCHEMA, t->name));
    json_object_array_add(alts, array_of(component_ref(d, COMPONENT_SCHEMA, t->name)));
    put(row_or_rows, "oneOf", alts);
    put(content, row_media[0],
        media_schema(many ? array_of(component_ref(d, COMPONENT_SCHEMA, t->name))
                          : row_or_rows));
    if (many)
        json_object_put(row_or_rows);
    put(content, row_media[1], media_schema(component_ref(d, COMPONENT_SCHEMA, t->name)));
    put(content, row_media[2], media_schema(component_ref(d, COMPONENT_SCHEMA, t->name)));
    put(content, row_media[3], media_schema(string_schema()));
    if (form) {
        put(content, "application/x-www-form-urlencoded",
            media_schema(component_ref(d, COMPONENT_SCHEMA, t->name)));
        /* pgrest's NDJSON bodies for POST and PATCH (docs/bulk-import.md):
         * text, one object per line, which JSON Schema cannot describe */
        put(content, "application/x-ndjson", media_schema(string_schema()));
    }
    return content;
}

/* The same schema under each media type. */
static json_object *content_of(const char *const *media, size_t n, json_object *schema)
{
    json_object *content = json_object_new_object();
    for (size_t i = 0; i < n; i++)
        put(content, media[i], media_schema(i + 1 < n ? json_object_get(schema) : schema));
    return content;
}

/* body.<table> and rowFilter.<table>.<column> (makeObjectBody,
 * makeRowFilter). */
static void add_table_params(const doc_ctx *d, json_object *params, json_object *bodies,
                             const pgr_table *t)
{
    json_object *body = json_object_new_object();
    const char *body_key = component_key(d, pgr_asprintf(d->a, "body.%s", t->name));
    if (d->v31 && !(t->insertable || t->updatable || t->deletable)) {
        /* no operation of the path takes it (table_path) */
        json_object_put(body);
    } else if (d->v31) {
        put_str(body, "description", t->name);
        put(body, "required", json_object_new_boolean(0));
        put(body, "content", row_content(d, t, false, true));
        put(bodies, body_key, body);
    } else {
        put_str(body, "name", t->name);
        put_str(body, "description", t->name);
        put(body, "required", json_object_new_boolean(0));
        put_str(body, "in", "body");
        put(body, "schema", component_ref(d, COMPONENT_SCHEMA, t->name));
        put(params, body_key, body);
    }
    for (size_t i = 0; i < t->n_columns; i++) {
        const pgr_column *c = &t->columns[i];
        /* OpenAPI.hs makeRowFilter: a plain string, no format */
        json_object *p = query_param(d, c->name, c->description, "query");
        put(params, component_key(d, pgr_asprintf(d->a, "rowFilter.%s.%s", t->name, c->name)),
            p);
    }
}

/* ------------------------------------------------------------ paths */

static json_object *responses(const char *const *codes, const char *const *texts,
                              size_t n)
{
    json_object *r = json_object_new_object();
    for (size_t i = 0; i < n; i++) {
        json_object *one = json_object_new_object();
        put_str(one, "description", texts[i]);
        put(r, codes[i], one);
    }
    return r;
}

static json_object *operation(const char *tag, const char *comment,
                              pgrest_arena *a)
{
    json_object *op = json_object_new_object();
    const char *summary, *description;
    split_comment(a, comment, &summary, &description);
    const char *tags[] = {tag};
    put(op, "tags", str_array(tags, 1));
    put_str(op, "summary", summary);
    if (description != NULL && *description != '\0')
        put_str(op, "description", description);
    return op;
}

/* The row filters, the body (2.0: a parameter after the filters), the
 * named parameters. */
static json_object *param_refs(const doc_ctx *d, const pgr_table *t,
                               bool row_filters, bool body, const char *const *names,
                               size_t n)
{
    json_object *arr = json_object_new_array();
    for (size_t i = 0; row_filters && i < t->n_columns; i++)
        json_object_array_add(arr, component_ref(d, COMPONENT_PARAMETER,
                                                 pgr_asprintf(d->a, "rowFilter.%s.%s",
                                                              t->name, t->columns[i].name)));
    if (body && !d->v31)
        json_object_array_add(arr, component_ref(d, COMPONENT_PARAMETER,
                                                 pgr_asprintf(d->a, "body.%s", t->name)));
    for (size_t i = 0; i < n; i++)
        json_object_array_add(arr, component_ref(d, COMPONENT_PARAMETER, names[i]));
    return arr;
}

typedef struct table_op {
    const char *method;
    bool row_filters;
    bool body;
    const char *const *refs;
    size_t n_refs;
    const char *const *codes;
    const char *const *texts;
    size_t n_codes;
} table_op;

static void add_table_op(const doc_ctx *d, json_object *item, const pgr_table *t,
                         const table_op *o)
{
    json_object *op = operation(t->name, t->description, d->a);
    put_nonempty(op, "parameters", param_refs(d, t, o->row_filters, o->body, o->refs, o->n_refs));
    if (o->body && d->v31)
        put(op, "requestBody", component_ref(d, COMPONENT_BODY,
                                             pgr_asprintf(d->a, "body.%s", t->name)));
    put(op, "responses", responses(o->codes, o->texts, o->n_codes));
    put(item, o->method, op);
}

static json_object *at_key(json_object *o, const char *key)
{
    json_object *v = NULL;
    json_object_object_get_ex(o, key, &v);
    return v;
}

/* OpenAPI.hs makePathItem getOp: the 200 response is an array of rows
 * (3.1: as each media type writes them, 206 too). */
static void add_rows_schema(const doc_ctx *d, json_object *responses, const pgr_table *t)
{
    if (d->v31) {
        put(at_key(responses, "200"), "content", row_content(d, t, true, false));
        put(at_key(responses, "206"), "content", row_content(d, t, true, false));
        return;
    }
    json_object *schema = json_object_new_object();
    put(schema, "items", component_ref(d, COMPONENT_SCHEMA, t->name));
    put_str(schema, "type", "array");
    put(at_key(responses, "200"), "schema", schema);
}

/* OpenAPI.hs makePathItem: get always; post/patch/delete when the
 * relation is insertable, updatable or deletable. */
static json_object *table_path(const doc_ctx *d, const pgr_table *t)
{
    json_object *item = json_object_new_object();
    static const char *const get_refs[] = {"select", "order", "range", "rangeUnit", "offset",
                                           "limit", "preferCount", "having", "distinct"};
    static const char *const get_codes[] = {"200", "206"},
                             *const get_texts[] = {"OK", "Partial Content"};
    add_table_op(d, item, t, &(table_op){"get", true, false, get_refs,
                                         d->query_extensions ? 9 : 7, get_codes, get_texts, 2});
    add_rows_schema(d, at_key(at_key(item, "get"), "responses"), t);
    if (!(t->insertable || t->updatable || t->deletable))
        return item;
    static const char *const post_refs[] = {"select", "preferPost"};
    static const char *const created[] = {"201"}, *const created_t[] = {"Created"};
    add_table_op(d, item, t, &(table_op){"post", false, true, post_refs, 2, created, created_t, 1});
    static const char *const patch_refs[] = {"preferReturn"};
    static const char *const nc[] = {"204"}, *const nc_t[] = {"No Content"};
    add_table_op(d, item, t, &(table_op){"patch", true, true, patch_refs, 1, nc, nc_t, 1});
    add_table_op(d, item, t, &(table_op){"delete", true, false, patch_refs, 1, nc, nc_t, 1});
    return item;
}

/* OpenAPI.hs makeProcGetParam toParamType: query parameters need a type;
 * arrays are written {a,b} and json has no Swagger type, so both are
 * strings. */
static const char *query_param_type(sw_type t)
{
    return t == SW_NONE || t == SW_ARRAY ? "string" : swagger_type_name(t);
}

/* OpenAPI.hs makeProcGetParam: VARIADIC parameters repeat (schemaMulti:
 * collectionFormat multi, items of the element type, the element's type
 * left out when it has none); others are single values (schemaNotMulti). */
static json_object *routine_get_param(const doc_ctx *d, const pgr_routine_param *p)
{
    const char *type = p->type;
    json_object *o = json_object_new_object();
    put_str(o, "name", p->name);
    put(o, "required", json_object_new_boolean(p->required));
    put_str(o, "in", "query");
    json_object *schema = param_schema(d, o);
    if (p->variadic) {
        const char *elem = element_type(d->a, type);
        sw_type st = swagger_type(type);
        json_object *items = json_object_new_object();
        put_str(items, "format", swagger_format(elem));
        put_type(items, swagger_type(elem));
        put_str(schema, "type", swagger_type_name(st == SW_NONE ? SW_STRING : st));
        put(schema, "items", items);
        if (d->v31) {
            /* 2.0's collectionFormat multi: ?v=1&v=2 */
            put_str(o, "style", "form");
            put(o, "explode", json_object_new_boolean(1));
        } else {
            put_str(o, "collectionFormat", "multi");
        }
        return o;
    }
    put_str(schema, "format", swagger_format(type));
    put_str(schema, "type", query_param_type(swagger_type(type)));
    return o;
}

/* OpenAPI.hs makeProcSchema / makeProcProperty: the POST body object. */
static json_object *routine_schema(const doc_ctx *d, const pgr_routine *r)
{
    json_object *s = json_object_new_object();
    json_object *props = json_object_new_object();
    json_object *required = json_object_new_array();
    put_str(s, "description", r->description);
    for (size_t i = 0; i < r->n_params; i++) {
        const pgr_routine_param *p = &r->params[i];
        const char *type = p->type;
        json_object *prop = json_object_new_object();
        sw_type st = swagger_type(type);
        put_str(prop, "format", swagger_format(type));
        put_type(prop, st);
        if (st == SW_ARRAY)
            put_items(d->a, prop, type);
        put(props, p->name, prop);
        if (p->required)
            json_object_array_add(required, json_object_new_string(p->name));
    }
    put_nonempty(s, "properties", props);
    put_nonempty(s, "required", required);
    put_str(s, "type", "object");
    return s;
}

/* The body's schema: a body parameter in 2.0, a request body in 3.1. */
static void put_body(const doc_ctx *d, json_object *op, json_object *params, const char *name,
                     const char *const *media, size_t n, json_object *schema)
{
    if (d->v31) {
        json_object *body = json_object_new_object();
        put(body, "required", json_object_new_boolean(1));
        put(body, "content", content_of(media, n, schema));
        put(op, "requestBody", body);
        return;
    }
    json_object *p = json_object_new_object();
    put_str(p, "name", name);
    put(p, "required", json_object_new_boolean(1));
    put_str(p, "in", "body");
    put(p, "schema", schema);
    json_object_array_add(params, p);
}

/* The one answer of a function, the batch and the root document: 200 OK,
 * and in 3.1 what it is in each media type 2.0's "produces" names
 * (schema is taken). */
static json_object *ok_responses(const doc_ctx *d, const char *const *media, size_t n,
                                 json_object *schema)
{
    json_object *ok = json_object_new_object();
    put_str(ok, "description", "OK");
    if (d->v31)
        put(ok, "content", content_of(media, n, schema));
    else
        json_object_put(schema);
    json_object *r = json_object_new_object();
    put(r, "200", ok);
    return r;
}

/* OpenAPI.hs makeProcGetParam / makeProcPostParams: GET takes the
 * arguments as query parameters, POST as its body, then Prefer. */
static json_object *routine_op(const doc_ctx *d, const pgr_routine *r, bool post)
{
    static const char *const produces[] = {
        "application/json", "application/vnd.pgrst.object+json;nulls=stripped",
        "application/vnd.pgrst.object+json"};
    static const char *const consumes[] = {"application/json",
                                           "application/x-www-form-urlencoded"};
    json_object *op = operation(pgr_asprintf(d->a, "(rpc) %s", r->name), r->description, d->a);
    if (!d->v31)
        put(op, "produces", str_array(produces, 3));
    json_object *params = json_object_new_array();
    if (post) {
        put_body(d, op, params, "args", consumes, 2, routine_schema(d, r));
        json_object_array_add(params, component_ref(d, COMPONENT_PARAMETER, "preferParams"));
    } else {
        for (size_t i = 0; i < r->n_params; i++)
            json_object_array_add(params, routine_get_param(d, &r->params[i]));
    }
    put_nonempty(op, "parameters", params);
    /* the answer is any JSON value */
    put(op, "responses", ok_responses(d, produces, 3, json_object_new_object()));
    return op;
}

/* OpenAPI.hs makeProcPathItem: GET only for STABLE/IMMUTABLE functions. */
static json_object *routine_path(const doc_ctx *d, const pgr_routine *r)
{
    json_object *item = json_object_new_object();
    if (r->volatility != 'v')
        put(item, "get", routine_op(d, r, false));
    put(item, "post", routine_op(d, r, true));
    return item;
}

/* pgrest's batch (docs/batch.md): POST / with a JSON array of requests. */
static json_object *batch_item_schema(void)
{
    static const char *const methods[] = {"GET", "POST", "PATCH", "PUT", "DELETE"};
    static const char *const required[] = {"method", "path"};
    json_object *props = json_object_new_object();
    json_object *method = json_object_new_object();
    put_str(method, "type", "string");
    put(method, "enum", str_array(methods, 5));
    put(props, "method", method);
    json_object *path = json_object_new_object();
    put_str(path, "type", "string");
    put_str(path, "description", "/table, /view or /rpc/function, percent-encoded");
    put(props, "path", path);
    json_object *query = json_object_new_object();
    put_str(query, "type", "string");
    put_str(query, "description", "the query string, without ?");
    put(props, "query", query);
    json_object *headers = json_object_new_object();
    json_object *value = json_object_new_object();
    put_str(value, "type", "string");
    put_str(headers, "type", "object");
    put(headers, "additionalProperties", value);
    put(props, "headers", headers);
    json_object *body = json_object_new_object();
    put_str(body, "description", "any JSON value, the item's JSON body");
    put(props, "body", body);
    json_object *item = json_object_new_object();
    put_str(item, "type", "object");
    put(item, "required", str_array(required, 2));
    put(item, "properties", props);
    return item;
}

static json_object *batch_op(const doc_ctx *d)
{
    static const char *const consumes[] = {"application/vnd.pgrest.batch+json"};
    static const char *const produces[] = {"application/json"};
    const char *tags[] = {"Batch"};
    json_object *op = json_object_new_object();
    put(op, "tags", str_array(tags, 1));
    put_str(op, "summary", "Transactional batch (pgrest)");
    put_str(op, "description",
            "Runs the requests in order in one transaction; answers an array of "
            "{status, headers, body}, or the first failing request's error with "
            "\"batch item <index>\" in its details, everything rolled back");
    if (!d->v31) {
        put(op, "consumes", str_array(consumes, 1));
        put(op, "produces", str_array(produces, 1));
    }
    json_object *schema = json_object_new_object();
    put_str(schema, "type", "array");
    put(schema, "items", batch_item_schema());
    json_object *params = json_object_new_array();
    put_body(d, op, params, "batch", consumes, 1, schema);
    json_object_array_add(params, component_ref(d, COMPONENT_PARAMETER, "preferParams"));
    put(op, "parameters", params);
    put(op, "responses", ok_responses(d, produces, 1, json_object_new_object()));
    return op;
}

/* OpenAPI.hs makeRootPathItem, and pgrest's batch when batches are on */
static json_object *root_path(const doc_ctx *d)
{
    static const char *const produces[] = {"application/openapi+json", "application/json"};
    const char *tags[] = {"Introspection"};
    json_object *op = json_object_new_object();
    put(op, "tags", str_array(tags, 1));
    put_str(op, "summary", "OpenAPI description (this document)");
    if (!d->v31)
        put(op, "produces", str_array(produces, 2));
    json_object *doc = json_object_new_object();
    put_str(doc, "type", "object");
    put(op, "responses", ok_responses(d, produces, 2, doc));
    json_object *item = json_object_new_object();
    put(item, "get", op);
    if (d->batches)
        put(item, "post", batch_op(d));
    return item;
}

/* ------------------------------------------------------------ document */

/* openapi-server-proxy-uri, else server-host:server-port (OpenAPI.hs
 * postgrestSpec + Config/Proxy.hs; wildcard hosts print as 0.0.0.0). */
typedef struct endpoint {
    const char *scheme;
    const char *host;    /* host:port */
    const char *base_path;
} endpoint;

/* Config/Proxy.hs isMalformedProxyUri port check: 1..65535, digits only. */
static bool parse_port(const char *p, size_t n, long *out)
{
    long v = 0;
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return false;
        v = v * 10 + (p[i] - '0');
        if (v > 65535)
            return false;
    }
    *out = v;
    return v > 0;
}

/* OpenAPI.hs pickProxy over a URI that Config/Proxy.hs accepts: http or
 * https (any case, printed lower-case), an authority without user info,
 * a host, an optional valid port (else 80/443), no query; the path ("/"
 * when empty) is the basePath. A malformed URI is ignored. */
static bool parse_proxy(pgrest_arena *a, const char *uri, endpoint *e)
{
    const char *sep = strstr(uri, "://");
    if (sep == NULL || strchr(uri, '?') != NULL)
        return false;
    char *scheme = pgr_strndup(a, uri, (size_t)(sep - uri));
    if (scheme == NULL)
        return false;
    for (char *c = scheme; *c != '\0'; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
    bool https = strcmp(scheme, "https") == 0;
    if (!https && strcmp(scheme, "http") != 0)
        return false;
    const char *h = sep + 3;
    size_t hn = strcspn(h, "/#");
    if (memchr(h, '@', hn) != NULL)
        return false;
    /* the port follows the last ':' outside an IPv6 literal's brackets */
    const char *bracket = hn > 0 && h[0] == '[' ? memchr(h, ']', hn) : NULL;
    const char *from = bracket ? bracket : h;
    const char *colon = memchr(from, ':', hn - (size_t)(from - h));
    size_t host_n = colon ? (size_t)(colon - h) : hn;
    long port = https ? 443 : 80;
    if (host_n == 0 ||
        (colon && !parse_port(colon + 1, hn - host_n - 1, &port)))
        return false;
    e->scheme = scheme;
    e->host = pgr_asprintf(a, "%.*s:%ld", (int)host_n, h, port);
    const char *path = h + hn;
    size_t pn = strcspn(path, "#");
    e->base_path = pn > 0 ? pgr_strndup(a, path, pn) : "/";
    return e->host != NULL && e->base_path != NULL;
}

static endpoint server_endpoint(const pgrest_ctx *ctx, pgrest_arena *a)
{
    endpoint e = {"http", NULL, "/"};
    const pgr_config *cfg = pgr_cfg(ctx, a);
    const char *proxy = pgr_cfg_option(cfg, "openapi-server-proxy-uri");
    if (proxy != NULL && *proxy != '\0' && parse_proxy(a, proxy, &e))
        return e;
    const char *host = pgr_cfg_option(cfg, "server-host");
    const char *port = pgr_cfg_option(cfg, "server-port");
    static const char *const wildcard[] = {"*", "*4", "!4", "*6", "!6"};
    if (host == NULL)
        host = "!4";
    for (size_t i = 0; i < sizeof wildcard / sizeof wildcard[0]; i++)
        if (strcmp(host, wildcard[i]) == 0)
            host = "0.0.0.0";
    e.host = pgr_asprintf(a, "%s:%s", host, port ? port : "3000");
    return e;
}

static bool security_active(const pgrest_ctx *ctx, pgrest_arena *a)
{
    const char *v = pgr_cfg_option(pgr_cfg(ctx, a), "openapi-security-active");
    return v != NULL && (strcasecmp(v, "true") == 0 || strcasecmp(v, "on") == 0 ||
                         strcasecmp(v, "yes") == 0 || strcmp(v, "1") == 0);
}

/* 2.0 (OpenAPI.hs securityDefinitions): an API key in Authorization;
 * 3.1 says what it is, an HTTP bearer token that is a JWT. */
static void add_security(const doc_ctx *d, json_object *doc, json_object *components)
{
    json_object *jwt = json_object_new_object();
    json_object *defs = json_object_new_object();
    put(defs, "JWT", jwt);
    if (d->v31) {
        put_str(jwt, "type", "http");
        put_str(jwt, "scheme", "bearer");
        put_str(jwt, "bearerFormat", "JWT");
        put(components, "securitySchemes", defs);
    } else {
        put_str(jwt, "type", "apiKey");
        put_str(jwt, "in", "header");
        put_str(jwt, "name", "Authorization");
        put_str(jwt, "description",
                "Add the token prepending \"Bearer \" (without quotes) to it");
        put(doc, "securityDefinitions", defs);
    }
    json_object *req = json_object_new_object();
    put(req, "JWT", json_object_new_array());
    json_object *sec = json_object_new_array();
    json_object_array_add(sec, req);
    put(doc, "security", sec);
}

static json_object *info(pgrest_arena *a, const char *schema_comment)
{
    const char *title, *description;
    split_comment(a, schema_comment, &title, &description);
    json_object *o = json_object_new_object();
    put_str(o, "description", description ? description
                                          : "This is a dynamic API generated by PostgREST");
    put_str(o, "title", title ? title : "PostgREST API");
    put_str(o, "version", PGREST_PRETTY_VERSION);   /* OpenAPI.hs: prettyVersion */
    return o;
}

/* Overloads share a path: OpenAPI.hs makePathItems builds the path map
 * with fromList from each name's overloads in decodeFuncs' order (sorted
 * by Routine's Ord), so the last -- the greatest, most parameters first --
 * is the one shown; of equal ones, the later. */
static bool overload_shown(const pgr_routine *fns, size_t n, size_t i)
{
    for (size_t j = 0; j < n; j++) {
        if (j == i || strcmp(fns[j].schema, fns[i].schema) != 0 ||
            strcmp(fns[j].name, fns[i].name) != 0)
            continue;
        int c = pgr_routine_cmp(&fns[j], &fns[i]);
        if (c > 0 || (c == 0 && j > i))
            return false;
    }
    return true;
}

static void add_relations(const doc_ctx *d, json_object *paths,
                          json_object *defs, json_object *params, json_object *bodies)
{
    for (size_t i = 0; i < d->sc->n_tables; i++) {
        const pgr_table *t = &d->sc->tables[i];
        if (!table_included(d, t))
            continue;
        put(defs, component_key(d, t->name), table_definition(d, t));
        add_table_params(d, params, bodies, t);
        put(paths, pgr_asprintf(d->a, "/%s", t->name), table_path(d, t));
    }
    const pgr_routine *fns = d->live_functions ? d->functions : d->sc->routines;
    size_t n = d->live_functions ? d->n_functions : d->sc->n_routines;
    for (size_t i = 0; i < n; i++) {
        const pgr_routine *r = &fns[i];
        if (strcmp(r->schema, d->schema) != 0 || !overload_shown(fns, n, i))
            continue;
        const char *path = pgr_asprintf(d->a, "/rpc/%s", r->name);
        if (path != NULL)
            put(paths, path, routine_path(d, r));
    }
}

/* 3.1: the 2.0 document's host, basePath and scheme as one URL. */
static void add_server(pgrest_arena *a, json_object *doc, const endpoint *e)
{
    json_object *server = json_object_new_object();
    put_str(server, "url", pgr_asprintf(a, "%s://%s%s", e->scheme, e->host, e->base_path));
    json_object *servers = json_object_new_array();
    json_object_array_add(servers, server);
    put(doc, "servers", servers);
}

/* What both versions start with. */
static json_object *doc_head(const doc_ctx *d, const char *schema_comment)
{
    json_object *doc = json_object_new_object();
    put_str(doc, d->v31 ? "openapi" : "swagger", d->v31 ? "3.1.0" : "2.0");
    put(doc, "info", info(d->a, schema_comment));
    json_object *docs = json_object_new_object();
    put_str(docs, "description", "PostgREST Documentation");
    put_str(docs, "url", PGR_DOCS_URL);
    put(doc, "externalDocs", docs);
    return doc;
}

/* 2.0: where the API is, and the media types of every operation. */
static void add_v2_endpoint(json_object *doc, const endpoint *e)
{
    static const char *const mimes[] = {
        "application/json", "application/vnd.pgrst.object+json;nulls=stripped",
        "application/vnd.pgrst.object+json", "text/csv"};
    put_str(doc, "host", e->host);
    put_str(doc, "basePath", e->base_path);
    const char *schemes[] = {e->scheme};
    put(doc, "schemes", str_array(schemes, 1));
    put(doc, "consumes", str_array(mimes, 4));
    put(doc, "produces", str_array(mimes, 4));
}

static json_object *build(const pgrest_ctx *ctx, const doc_ctx *d,
                          const char *schema_comment)
{
    endpoint e = server_endpoint(ctx, d->a);
    json_object *doc = doc_head(d, schema_comment);
    if (d->v31)
        add_server(d->a, doc, &e);
    else
        add_v2_endpoint(doc, &e);
    json_object *paths = json_object_new_object();
    json_object *schemas = json_object_new_object();
    json_object *params = json_object_new_object();
    json_object *bodies = d->v31 ? json_object_new_object() : NULL;
    put(paths, "/", root_path(d));
    add_common_params(d, params);
    if (d->query_extensions)
        add_extension_params(d, params);
    add_relations(d, paths, schemas, params, bodies);
    put(doc, "paths", paths);
    /* 2.0 keeps the components at the top, 3.1 under "components" */
    json_object *components = d->v31 ? json_object_new_object() : doc;
    put_nonempty(components, d->v31 ? "schemas" : "definitions", schemas);
    put(components, "parameters", params);
    if (d->v31) {
        put_nonempty(components, "requestBodies", bodies);
        put(doc, "components", components);
    }
    if (security_active(ctx, d->a))
        add_security(d, doc, components);
    return doc;
}

char *pgr_openapi_document(const pgrest_ctx *ctx, pgrest_arena *a,
                           const pgr_schema_cache *sc, const char *schema,
                           pgr_openapi_version version, const char *inspect_json,
                           size_t *len, pgrest_error *err)
{
    json_object *in = json_tokener_parse(inspect_json ? inspect_json : "");
    if (in == NULL || !json_object_is_type(in, json_type_object)) {
        json_object_put(in);
        pgr_error_internal(err, "Unexpected OpenAPI introspection result");
        return NULL;
    }
    doc_ctx d = {.a = a, .sc = sc, .schema = schema,
                 .query_extensions = pgr_cfg(ctx, a)->db_aggregates_enabled,
                 .batches = pgr_cfg(ctx, a)->limits.max_batch_items > 0,
                 .v31 = version == PGR_OPENAPI_V3_1};
    json_object *desc;
    const char *comment = NULL;
    if (json_object_object_get_ex(in, "description", &desc) &&
        json_object_is_type(desc, json_type_string))
        comment = pgr_strdup(a, json_object_get_string(desc));
    bool ok = read_name_set(a, in, "tables", &d.tables) &&
              read_live_functions(a, in, &d);
    json_object_put(in);
    if (!ok) {
        pgr_error_oom(err);
        return NULL;
    }
    json_object *doc = build(ctx, &d, comment);
    size_t n = 0;
    const char *text = json_object_to_json_string_length(
        doc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
    char *out = text ? pgr_strndup(a, text, n) : NULL;
    json_object_put(doc);
    if (out == NULL) {
        pgr_error_oom(err);
        return NULL;
    }
    *len = n;
    return out;
}
