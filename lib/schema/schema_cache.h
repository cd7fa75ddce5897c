/* The schema cache (PostgREST's SchemaCache.hs): relations, columns,
 * relationships and routines of the exposed schemas. Immutable once built,
 * reference counted, swapped atomically on reload. Everything it owns lives
 * in its own arena.
 *
 * Snapshot JSON format (what introspection produces and what
 * pgr_schema_cache_from_json reads):
 * {
 *   "pg_version": 150004,
 *   "tables": [{"schema","name","kind" ("r","v","m","f","p"),
 *               "description", "insertable","updatable","deletable",
 *               "pk": ["col",...],
 *               "columns": [{"name","type","nominal_type","nullable",
 *                            "default","max_length","position",
 *                            "description","enum":[...]|null,
 *                            "is_array", "is_composite"}]}],
 *   "foreign_keys": [{"name","schema","table","columns":[...],
 *                     "ref_schema","ref_table","ref_columns":[...],
 *                     "one_to_one": bool}],
 *   "view_columns": [{"view_schema","view","view_column",
 *                     "table_schema","table","table_column"}],
 *   "routines": [{"schema","name","description","params":[{"name","type",
 *                 "type_max_length","cast_type","required","variadic"}],
 *                 "return_schema","return_type","return_kind"
 *                 ("scalar"|"composite"|"void"),"return_composite_alias",
 *                 "returns_set",
 *                 "volatility" ("v"|"s"|"i"),"has_out_params",
 *                 "isolation_level","settings":[["k","v"]...],
 *                 "out_columns":[{"name","type","is_composite","is_array"}]}],
 *   "computed_relationships": [{"function_schema","function","table_schema",
 *                 "table","target_schema","target","to_one": bool}],
 *   "representations": [{"source","target","function"}],
 *   "media_handlers": [{"handler_schema","handler_name","target_schema",
 *                 "target_name","any_element","media_type",
 *                 "resolved_media_type","base_type","send_fn"}],
 *   "role_settings": [{"role","isolation_level","settings":[["k","v"]...]}]
 * }
 * Relationships (many-to-one, one-to-many, one-to-one, many-to-many, view
 * relationships) are derived in C from foreign_keys + view_columns
 * (schema/relationships.c).
 *
 * Notes on the keys (introspection fills them as PostgREST does):
 * - "tables" are the relations of the exposed schemas (partitions
 *   excluded); a view's "pk" is derived from its base tables' PKs
 *   (PostgREST addViewPrimaryKeys). Optional keys default to
 *   null/false/[]/-1.
 * - "foreign_keys" includes FKs whose other side (or both sides, when
 *   views in the exposed schemas select from them) is outside the exposed
 *   schemas; relationships are only kept between relations in "tables".
 * - "computed_relationships" come from every function of any schema and
 *   kind (PostgREST allComputedRels); one whose function is in another
 *   schema is filed under that schema's key, so it is not embeddable.
 * - a table's "pk" lists its columns by name (PostgREST tbl_pk_cols); a
 *   view's in its base key's column order.
 * - "view_columns" maps a view column to the base-table column it comes
 *   from, through views of views (exposed + extra search path schemas);
 *   only columns that are part of a PK/UNIQUE/FK constraint are listed.
 * - param "cast_type" is PostgREST's ppTypeMaxLength: the type to cast
 *   arguments to ("character varying" for character, "bit varying" for
 *   bit) so values are not truncated; "type_max_length" is -1.
 * - "return_composite_alias": the return type is a domain over a
 *   composite type.
 * - routine "settings" are the proconfig entries matching a pattern of
 *   db-hoisted-tx-settings (PostgREST funcsSqlQuery: setting ~ ANY(..));
 *   "isolation_level" is the lower-cased default_transaction_isolation of
 *   proconfig or null.
 * - "role_settings" (PostgREST Config/Database.hs queryRoleSettings): the
 *   ALTER ROLE ... SET settings (and, beyond PostgREST, ALTER ROLE ... IN
 *   DATABASE of this database, which win) of the roles the authenticator
 *   is a direct member of, user-settable ones only; "isolation_level" is the
 *   role's lower-cased default_transaction_isolation or null, "settings"
 *   the others. Empty when db-config is false.
 * - "media_handlers" (PostgREST SchemaCache.hs mediaHandlers): a domain
 *   named like a media type ("application/vnd.twkb", "*" "/" "*") returned
 *   by an aggregate over a relation's row type (target = the relation) or
 *   over anyelement ("any_element": true), or by a non-set function
 *   (target = the function; handler = the domain itself, a no-op cast).
 *   "media_type" is the lower-cased domain name, "resolved_media_type" the
 *   Content-Type ("application/octet-stream" for the any handler);
 *   "base_type"/"send_fn" are the domain's base type and its binary output
 *   function (PostgREST reads the body in binary format).
 */
#ifndef PGR_SCHEMA_CACHE_H
#define PGR_SCHEMA_CACHE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "pgrest/pgrest.h"

typedef struct pgr_column {
    const char *name;
    const char *type;          /* formatted type: "integer", "character varying" */
    const char *nominal_type;  /* type name as declared (domains kept) */
    bool nullable;
    const char *default_expr;  /* NULL if none */
    int max_length;            /* -1 if none */
    int position;
    const char *description;
    const char **enum_values;
    size_t n_enum_values;
    bool is_array;
    bool is_composite;
} pgr_column;

typedef struct pgr_table pgr_table;

struct pgr_table {
    const char *schema;
    const char *name;
    char kind;                 /* 'r','v','m','f','p' */
    const char *description;
    bool insertable, updatable, deletable;
    /* COPY FROM into it does what an INSERT of the same columns does: a
     * table (or partitioned one) without row-level security, INSERT
     * rules, GENERATED ALWAYS identity or generated columns (which COPY
     * writes or refuses otherwise), or AFTER INSERT triggers of its own
     * (the GUCs they set come after PostgREST's answer is read) */
    bool copy_as_insert;
    const char **pk;
    size_t n_pk;
    pgr_column *columns;       /* in position order */
    size_t n_columns;
    /* internal: columns sorted by name, for pgr_find_column */
    const pgr_column **columns_by_name;
};

typedef enum pgr_cardinality {
    PGR_REL_M2O,  /* many-to-one: FK on this table */
    PGR_REL_O2M,  /* one-to-many */
    PGR_REL_O2O,  /* one-to-one */
    PGR_REL_M2M   /* many-to-many through a junction */
} pgr_cardinality;

/* Relationships of a table come sorted as PostgREST sorts them (the derived
 * Ord of Relationship, SchemaCache.hs getOverrideRelationshipsMap): FK and
 * view relationships by target (schema, name), is_self, cardinality
 * (O2M < M2O < O2O < M2M), constraint, columns; then computed ones by
 * function. That order is the order of PGRST201 "details".
 * M2M: cols = table columns referenced by the junction (n_cols == n_jcols1),
 * cols2 = foreign_table columns (n_jcols2), fcols is NULL.
 * Computed: cardinality is PGR_REL_M2O for to-one (not SETOF or ROWS 1),
 * PGR_REL_O2M for to-many; no columns, constraint_name is NULL. */

typedef struct pgr_relationship {
    const pgr_table *table;          /* origin */
    const pgr_table *foreign_table;  /* target */
    pgr_cardinality cardinality;
    bool is_self;
    const char *constraint_name;     /* FK name (M2O/O2M/O2O) */
    /* join columns: table.cols[i] = foreign_table.fcols[i] */
    const char **cols;
    const char **fcols;
    size_t n_cols;
    /* M2M: junction and both FKs */
    const pgr_table *junction;
    const char *junction_constraint1;  /* junction -> table */
    const char *junction_constraint2;  /* junction -> foreign_table */
    const char **jcols1;               /* junction cols referencing table */
    const char **jcols2;               /* junction cols referencing foreign */
    size_t n_jcols1, n_jcols2;
    const char **cols2;                /* foreign_table cols referenced */
    /* computed relationship */
    bool is_computed;
    const char *function_schema;
    const char *function_name;
    /* O2O: true on the side the FK points to (PostgREST relIsParent) */
    bool is_parent;
} pgr_relationship;

typedef struct pgr_routine_param {
    const char *name;
    const char *type;
    int type_max_length;
    bool required;
    bool variadic;
    const char *cast_type;     /* PostgREST ppTypeMaxLength */
} pgr_routine_param;

typedef enum pgr_return_kind {
    PGR_RETURN_SCALAR,
    PGR_RETURN_COMPOSITE,
    PGR_RETURN_VOID
} pgr_return_kind;

typedef struct pgr_routine {
    const char *schema;
    const char *name;
    const char *description;
    pgr_routine_param *params;
    size_t n_params;
    const char *return_schema;
    const char *return_type;
    pgr_return_kind return_kind;
    bool returns_set;
    char volatility;            /* 'v','s','i' */
    bool has_out_params;
    /* OUT / INOUT / TABLE columns as a relation of kind 'F' (function
     * result), so filters and JSON paths know their types; NULL if none */
    pgr_table *out_table;
    const char *isolation_level;
    const char **setting_names;
    const char **setting_values;
    size_t n_settings;
    bool return_composite_alias;
} pgr_routine;

typedef struct pgr_representation {
    const char *source;
    const char *target;
    const char *function;
} pgr_representation;

typedef struct pgr_media_handler {
    const char *handler_schema;
    const char *handler_name;   /* aggregate, or the domain (function handler) */
    const char *target_schema;
    const char *target_name;    /* relation or function; NULL for anyelement */
    bool any_element;
    const char *media_type;
    const char *resolved_media_type;
    const char *base_type;
    const char *send_fn;
    /* a function returning the domain (the second half of PostgREST's
     * mediaHandlers query), not an aggregate: only the schema cache's
     * JSON tells them apart */
    bool function_target;
} pgr_media_handler;

/* Settings a role gets in every request's transaction (ALTER ROLE SET). */
typedef struct pgr_role_settings {
    const char *role;
    const char *isolation_level;   /* lower-cased, NULL = read committed */
    const char **setting_names;
    const char **setting_values;
    size_t n_settings;
} pgr_role_settings;

/* A (table, schema) key of PostgREST's relationships map all of whose
 * relationships were internal (to a schema not exposed, or through a
 * junction there): removeInternal empties the key but keeps it, which
 * decides the PGRST200 hint and counts in the loaded-cache summary. */
typedef struct pgr_rel_key {
    const pgr_table *table;
    const char *schema;
} pgr_rel_key;

typedef struct pgr_schema_cache {
    _Atomic int refcount;
    pgrest_arena *arena;
    int pg_version;
    pgr_table *tables;
    size_t n_tables;
    pgr_relationship *relationships;
    size_t n_relationships;
    pgr_routine *routines;
    size_t n_routines;
    pgr_representation *representations;
    size_t n_representations;
    pgr_media_handler *media_handlers;
    size_t n_media_handlers;
    pgr_role_settings *role_settings;
    size_t n_role_settings;
    const char *json;          /* the snapshot text it was built from */
    /* internal: relationships of tables[i] are
     * relationships[rel_offsets[i] .. rel_offsets[i + 1]) */
    size_t *rel_offsets;
    pgr_rel_key *emptied_rel_keys;
    size_t n_emptied_rel_keys;
} pgr_schema_cache;

/* Builds a cache from snapshot JSON text (copied; the cache keeps it in
 * `json`); defined in schema/schema_load.c, as is the next one. Tables are sorted by (schema, name), routines by (schema, name)
 * keeping overloads in snapshot order, representations by
 * (source, target). The returned cache has a reference count of 1. exposed_schemas (NULL-terminated)
 * restricts junction tables to exposed schemas as PostgREST does; NULL keeps
 * all. Returns NULL and fills err on failure. */
pgr_schema_cache *pgr_schema_cache_from_json(const char *json,
                                             const char *const *exposed_schemas,
                                             pgrest_error *err);
/* A copy of sc whose "role_settings" are role_settings (a JSON array as
 * in the snapshot); sc is unchanged. NULL and err on failure. */
pgr_schema_cache *pgr_schema_cache_with_role_settings(const pgr_schema_cache *sc,
                                                      const char *role_settings,
                                                      const char *const *exposed_schemas,
                                                      pgrest_error *err);
/* Thread-safe (atomic). release frees the cache's arena when the count
 * reaches zero; both accept NULL. */
void pgr_schema_cache_retain(pgr_schema_cache *sc);
void pgr_schema_cache_release(pgr_schema_cache *sc);

/* PostgREST's showSummary: "N Relations, N Relationships, N RPCs, N Domain
 * Representations, N Media Type Handlers", counting as its maps do
 * (relationships keyed by origin table and target schema, routines by
 * qualified name so overloads count once). The text lives in a. */
char *pgr_schema_cache_summary(const pgr_schema_cache *sc, pgrest_arena *a);

/* The orders the cache's arrays are sorted in (qsort / bsearch
 * comparators): schema_load.c sorts by them, the lookups below search by
 * them. pgr_table by (schema, name); pointers to pgr_column by name
 * (columns_by_name); pgr_representation by (source, target);
 * pgr_media_handler with anyelement handlers (no target) first, then by
 * target and media type. */
int pgr_table_cmp(const void *pa, const void *pb);
int pgr_column_ptr_cmp(const void *pa, const void *pb);
int pgr_representation_cmp(const void *pa, const void *pb);
int pgr_media_handler_cmp(const void *pa, const void *pb);

const pgr_table *pgr_find_table(const pgr_schema_cache *sc, const char *schema,
                                const char *name);
const pgr_column *pgr_find_column(const pgr_table *t, const char *name);
/* The column whose type decides how a field is written (to_jsonb for json
 * paths, to_tsvector for fts, domain representations): PostgREST resolves
 * names against its tables and views only (Plan.resolveTypeOrUnknown), so
 * the OUT/TABLE columns of a function (kind 'F') are unknown fields. */
const pgr_column *pgr_find_typed_column(const pgr_table *t, const char *name);
/* Relationships whose origin is t, in PostgREST's order: stores at most max
 * pointers in out and returns how many it stored; with out == NULL returns
 * the total count. */
/* The schema of the relationships-map key r is filed under: the target's,
 * or a computed relationship's function's. */
const char *pgr_rel_key_schema(const pgr_relationship *r);
/* Whether the relationships map has the key (t, schema), even emptied. */
bool pgr_table_has_rel_key(const pgr_schema_cache *sc, const pgr_table *t,
                           const char *schema);
size_t pgr_table_relationships(const pgr_schema_cache *sc, const pgr_table *t,
                               const pgr_relationship **out, size_t max);
/* Overloads of schema.name in snapshot order: stores at most max in out and
 * returns how many it stored; with out == NULL returns the total count. */
size_t pgr_find_routines(const pgr_schema_cache *sc, const char *schema,
                         const char *name, const pgr_routine **out, size_t max);
/* Data representation (cast function) from source to target type names as
 * in the snapshot ("api.colour" -> "json"), or NULL. */
const pgr_representation *pgr_find_representation(const pgr_schema_cache *sc,
                                                  const char *source,
                                                  const char *target);

/* The ALTER ROLE settings of role, or NULL when it has none. */
const pgr_role_settings *pgr_find_role_settings(const pgr_schema_cache *sc,
                                                const char *role);

/* Media handler for media_type bound to schema.name (a relation or a
 * function), or with name == NULL to anyelement; NULL when none. */
const pgr_media_handler *pgr_find_media_handler(const pgr_schema_cache *sc,
                                                const char *schema,
                                                const char *name,
                                                const char *media_type);

#endif
