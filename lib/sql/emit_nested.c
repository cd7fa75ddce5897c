/* A POST with nested rows (plan/nested_insert.h) as one statement of
 * data-modifying CTEs, so the request keeps its one pipeline and a
 * failing row anywhere leaves nothing behind:
 *
 *   WITH pgrst_payload AS (SELECT $1::json AS json_data),
 *   pgrst_rows_0 AS MATERIALIZED (<the body's objects WITH ORDINALITY>),
 *   pgrst_source AS (INSERT INTO <table> SELECT ... FROM pgrst_rows_0,
 *                    LATERAL json_to_record(elem) ... ORDER BY ord RETURNING ...),
 *   pgrst_keys_0 AS (SELECT row_number() OVER () AS ord, <keys> FROM pgrst_source),
 *   pgrst_rows_1 AS MATERIALIZED (<each parent's objects under its key,
 *                                  numbered in parent, then body order>),
 *   pgrst_ins_1 AS (INSERT INTO <child>(..., <fk>) SELECT ..., <parent key>
 *                   FROM pgrst_rows_1, pgrst_keys_0, LATERAL ... ORDER BY ord ...),
 *   ...
 *
 * A many-to-one level comes before the level that references it
 * (pgrst_rows_<id> holds the objects to insert, not those naming an
 * existing row by its key alone), and that level's INSERT reads the
 * inserted keys through a LEFT JOIN by ordinal, else the key in the body.
 *
 * An INSERT ... SELECT ... ORDER BY inserts, and returns, its rows in that
 * order, so the n-th returned row is the n-th object: that is how a row
 * finds its own related row's key. A row that is not inserted (a BEFORE
 * trigger returning NULL) would break the count, so the insert that
 * depends on it then fails instead of binding a row to another's key. */
#include "sql/emit_nested.h"

#include <stdio.h>
#include <string.h>

#include "plan/nested_insert.h"
#include "sql/emit_write.h"

/* One level of the tree: the request's own rows (self NULL) or a
 * nested key's (under parent, NULL for the request's rows). */
typedef struct level {
    int id;
    const pgr_table *table;
    const pgr_column *const *columns;
    size_t n_columns;
    const pgr_nested_insert *self;
    const pgr_nested_insert *children;
    const pgr_nested_insert *parent;
} level;

static level level_of(const pgr_nested_insert *n, const level *parent)
{
    return (level){n->id, n->table, n->columns, n->n_columns, n, n->children, parent->self};
}

/* A one-to-many level (one-to-one from the referenced side): its rows
 * take their parent's key into their foreign key. */
static bool takes_parent_key(const level *l)
{
    return l->self != NULL && !l->self->to_one && !l->self->many_to_many;
}

/* A many-to-many level inserts only its objects that name no existing
 * row (pgrst_new_<id>); the others insert all of pgrst_rows_<id>. */
static const char *objects_inserted(const pgr_nested_insert *n)
{
    return n != NULL && n->many_to_many ? "pgrst_new_" : "pgrst_rows_";
}

static void put_id(pgr_sql *q, const char *prefix, int id)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s%d", prefix, id);
    pgr_sql_put(q, buf);
}

/* The alias of the i-th key column n takes from its related row
 * (pgrst_<id>_<i>), or of the i-th key column of a many-to-many target
 * its junction row takes (pgrst_<id>_t<i>). */
static const char *alias_name(char *buf, size_t size, const pgr_nested_insert *n,
                              const char *kind, size_t i)
{
    snprintf(buf, size, "pgrst_%d_%s%zu", n->id, kind, i);
    return buf;
}

static void key_alias(pgr_sql *q, const pgr_nested_insert *n, size_t i)
{
    char buf[64];
    pgr_sql_ident(q, alias_name(buf, sizeof buf, n, "", i));
}

static void target_alias(pgr_sql *q, const pgr_nested_insert *n, size_t i)
{
    char buf[64];
    pgr_sql_ident(q, alias_name(buf, sizeof buf, n, "t", i));
}

static void inserted_rows(pgr_sql *q, int id)
{
    if (id == 0)
        pgr_sql_put(q, "pgrst_source");
    else
        put_id(q, "pgrst_ins_", id);
}

/* The key columns a relationship takes from the related row: the parent's
 * for one-to-many (cols), the referenced row's for many-to-one (fcols). */
static const char *const *key_columns(const pgr_nested_insert *n)
{
    return n->to_one ? n->rel->fcols : n->rel->cols;
}

/* ... and the foreign key they fill: the child's (fcols), the row's own (cols). */
static const char *const *fk_columns(const pgr_nested_insert *n)
{
    return n->to_one ? n->rel->cols : n->rel->fcols;
}

/* Objects under a value: an array's elements, one object, or none. */
static void rows_of(pgr_sql *q, const char *value)
{
    pgr_sql_put(q, "CASE json_typeof(");
    pgr_sql_put(q, value);
    pgr_sql_put(q, ") WHEN 'array' THEN ");
    pgr_sql_put(q, value);
    pgr_sql_put(q, " WHEN 'object' THEN json_build_array(");
    pgr_sql_put(q, value);
    pgr_sql_put(q, ") ELSE '[]'::json END");
}

/* The rows of the level as a record, through missing=default's object
 * when the request asks for defaults. */
static void record_of(pgr_sql *q, const pgrest_query_plan *plan, const level *l)
{
    bool defaults = plan->mutate->apply_defaults;
    pgr_sql_put(q, ", LATERAL ");
    if (l->n_columns == 0) {
        pgr_sql_put(q, "(SELECT) pgrst_body");
        return;
    }
    pgr_sql_put(q, defaults ? "jsonb_to_record(" : "json_to_record(");
    if (defaults) {
        pgr_emit_defaults_object(q, l->columns, l->n_columns);
        pgr_sql_put(q, " || ");
    }
    put_id(q, "pgrst_rows_", l->id);
    pgr_sql_put(q, defaults ? ".elem::jsonb" : ".elem");
    pgr_sql_put(q, ") AS pgrst_body(");
    pgr_emit_record_columns(q, plan->schema, l->columns, l->n_columns);
    pgr_sql_put(q, ")");
}

static void root_rows(pgr_sql *q, const pgrest_query_plan *plan)
{
    pgr_sql_put(q, "WITH pgrst_payload AS (SELECT ");
    pgr_sql_param_cast(q, plan->api->payload_json, "json");
    pgr_sql_put(q, " AS json_data), pgrst_rows_0 AS MATERIALIZED (SELECT pgrst_e.ord, "
                   "pgrst_e.elem FROM pgrst_payload, json_array_elements(");
    rows_of(q, "pgrst_payload.json_data");
    pgr_sql_put(q, ") WITH ORDINALITY AS pgrst_e(elem, ord))");
}

/* pgrst_p.elem -> $n: the value under a nested key of the parent's object
 * (the key is the request's: a parameter, like every value) */
static void value_under_key(pgr_sql *q, const char *object, const pgr_nested_insert *n)
{
    pgr_sql_put(q, object);
    pgr_sql_put(q, " -> ");
    pgr_sql_param_cast(q, n->key, "text");
}

static void rows_head(pgr_sql *q, const pgr_nested_insert *n, const char *numbering)
{
    pgr_sql_put(q, ", ");
    put_id(q, "pgrst_rows_", n->id);
    pgr_sql_put(q, " AS MATERIALIZED (SELECT pgrst_p.ord AS parent_ord, row_number() OVER "
                   "(ORDER BY ");
    pgr_sql_put(q, numbering);
    pgr_sql_put(q, ") AS ord, ");
}

/* " FROM" each parent's objects under the key, pgrst_e(elem, ord) */
static void objects_under_key(pgr_sql *q, const pgr_nested_insert *n, int parent_id)
{
    pgr_sql_put(q, " FROM ");
    put_id(q, "pgrst_rows_", parent_id);
    pgr_sql_put(q, " AS pgrst_p, LATERAL (SELECT ");
    value_under_key(q, "pgrst_p.elem", n);
    pgr_sql_put(q, " AS v) pgrst_v, json_array_elements(");
    rows_of(q, "pgrst_v.v");
    pgr_sql_put(q, ") WITH ORDINALITY AS pgrst_e(elem, ord))");
}

/* pgrst_rows_<id> of a one-to-many key: each parent's objects, in parent
 * order, then in the order the body gives them. */
static void to_many_rows(pgr_sql *q, const pgr_nested_insert *n, int parent_id)
{
    rows_head(q, n, "pgrst_p.ord, pgrst_e.ord");
    pgr_sql_put(q, "pgrst_e.elem");
    objects_under_key(q, n, parent_id);
}

/* Whether the object (a json expression) is one to insert: not one that
 * holds nothing but the reference columns, which names an existing row
 * (the planner's is_reference, plan/nested_insert.c) */
static void is_new_row(pgr_sql *q, const char *object, const pgr_nested_insert *n)
{
    size_t count;
    const char *const *cols = pgr_nested_reference_columns(n, &count);
    pgr_sql_put(q, "CASE WHEN json_typeof(");
    pgr_sql_put(q, object);
    pgr_sql_put(q, ") = 'object' THEN NOT EXISTS (SELECT FROM json_object_keys(");
    pgr_sql_put(q, object);
    pgr_sql_put(q, ")) OR EXISTS (SELECT FROM json_object_keys(");
    pgr_sql_put(q, object);
    pgr_sql_put(q, ") AS pgrst_key(name) WHERE pgrst_key.name NOT IN (");
    for (size_t i = 0; i < count; i++) {
        if (i > 0)
            pgr_sql_put(q, ", ");
        pgr_sb_put_literal(&q->sb, cols[i]);
    }
    pgr_sql_put(q, ")) ELSE false END");
}

/* pgrst_rows_<id> of a many-to-one key: the objects to insert, in parent
 * order */
static void to_one_rows(pgr_sql *q, const pgr_nested_insert *n, int parent_id)
{
    rows_head(q, n, "pgrst_p.ord");
    pgr_sql_put(q, "pgrst_v.v AS elem FROM ");
    put_id(q, "pgrst_rows_", parent_id);
    pgr_sql_put(q, " AS pgrst_p, LATERAL (SELECT ");
    value_under_key(q, "pgrst_p.elem", n);
    pgr_sql_put(q, " AS v) pgrst_v WHERE ");
    is_new_row(q, "pgrst_v.v", n);
    pgr_sql_put(q, ")");
}

/* Writes one key column a related level reads, under its alias. */
typedef struct key_writer {
    void (*write)(pgr_sql *q, const char *column, const char *alias, struct key_writer *w);
    const char **written;              /* key_returned: the columns so far */
    size_t n_written;
} key_writer;

/* The level's key columns other levels read: a many-to-one level's key
 * for the row referencing it, a many-to-many target's for its junction
 * row, and the key its one-to-many and many-to-many children take. */
static void each_key(pgr_sql *q, const level *l, key_writer *w)
{
    char alias[64];
    const pgr_nested_insert *s = l->self;
    for (size_t i = 0; s != NULL && s->to_one && i < s->rel->n_cols; i++)
        w->write(q, key_columns(s)[i], alias_name(alias, sizeof alias, s, "", i), w);
    for (size_t i = 0; s != NULL && s->many_to_many && i < s->rel->n_jcols2; i++)
        w->write(q, s->rel->cols2[i], alias_name(alias, sizeof alias, s, "t", i), w);
    for (const pgr_nested_insert *c = l->children; c != NULL; c = c->next)
        for (size_t i = 0; !c->to_one && i < c->rel->n_cols; i++)
            w->write(q, key_columns(c)[i], alias_name(alias, sizeof alias, c, "", i), w);
}

static void key_as_alias(pgr_sql *q, const char *column, const char *alias, key_writer *w)
{
    (void)w;
    pgr_sql_put(q, ", ");
    pgr_sql_ident(q, column);
    pgr_sql_put(q, " AS ");
    pgr_sql_ident(q, alias);
}

/* Each column once: the key CTE reads them by name. */
static void key_returned(pgr_sql *q, const char *column, const char *alias, key_writer *w)
{
    (void)alias;
    for (size_t i = 0; i < w->n_written; i++)
        if (strcmp(w->written[i], column) == 0)
            return;
    pgr_sql_put(q, w->n_written > 0 ? ", " : "");
    pgr_sql_ident(q, column);
    w->written[w->n_written++] = column;
}

/* pgrst_keys_<id>: the inserted rows' keys by their object's ordinal in
 * pgrst_rows_<id> -- the n-th inserted row is the n-th object inserted. */
static void level_keys(pgr_sql *q, const level *l)
{
    bool some_new = l->self != NULL && l->self->many_to_many;
    key_writer w = {key_as_alias, NULL, 0};
    pgr_sql_put(q, ", ");
    put_id(q, "pgrst_keys_", l->id);
    pgr_sql_put(q, some_new ? " AS (SELECT pgrst_n.ord, pgrst_i.* FROM (SELECT row_number() "
                              "OVER () AS new_ord"
                            : " AS (SELECT row_number() OVER () AS ord");
    each_key(q, l, &w);
    pgr_sql_put(q, " FROM ");
    inserted_rows(q, l->id);
    if (some_new)
        put_id(q, ") AS pgrst_i JOIN pgrst_new_", l->id);
    pgr_sql_put(q, some_new ? " AS pgrst_n ON pgrst_n.new_ord = pgrst_i.new_ord)" : ")");
}

static bool needs_keys(const level *l)
{
    if (l->self != NULL && (l->self->to_one || l->self->many_to_many))
        return true;
    for (const pgr_nested_insert *c = l->children; c != NULL; c = c->next)
        if (!c->to_one)
            return true;
    return false;
}

/* A related row that is not inserted leaves fewer inserted rows than
 * objects: then rows cannot be bound by ordinal, and the statement fails
 * (an unset setting is an error) rather than guessing. objects is the CTE
 * of the objects to insert. */
static void counts_match(pgr_sql *q, int id, const char *objects, bool *first)
{
    pgr_sql_put(q, *first ? " WHERE " : " AND ");
    *first = false;
    pgr_sql_put(q, "CASE WHEN (SELECT pg_catalog.count(*) FROM ");
    inserted_rows(q, id);
    pgr_sql_put(q, ") = (SELECT pg_catalog.count(*) FROM ");
    put_id(q, objects, id);
    pgr_sql_put(q, ") THEN true ELSE pg_catalog.current_setting("
                   "'pgrst.nested_insert_related_row_not_inserted')::boolean END");
}

static void all_inserted(pgr_sql *q, int id, bool *first)
{
    counts_match(q, id, "pgrst_rows_", first);
}

/* The guard of a level whose rows take their parent's key. */
static void parent_inserted(pgr_sql *q, const pgr_nested_insert *n,
                            const pgr_nested_insert *parent, bool *first)
{
    counts_match(q, n->parent_id, objects_inserted(parent), first);
}

static void list_column(pgr_sql *q, const char *name, bool *first)
{
    pgr_sql_put(q, *first ? "(" : ", ");
    *first = false;
    pgr_sql_ident(q, name);
}

/* The column list, none at all for a row of defaults only */
static void insert_columns(pgr_sql *q, const level *l)
{
    bool first = true;
    for (size_t i = 0; i < l->n_columns; i++)
        list_column(q, l->columns[i]->name, &first);
    for (size_t i = 0; takes_parent_key(l) && i < l->self->rel->n_cols; i++)
        list_column(q, fk_columns(l->self)[i], &first);
    for (const pgr_nested_insert *c = l->children; c != NULL; c = c->next)
        for (size_t i = 0; c->to_one && i < c->rel->n_cols; i++)
            list_column(q, fk_columns(c)[i], &first);
    if (!first)
        pgr_sql_put(q, ")");
}

/* After "COALESCE(<inserted key>, (<object>": " ->> 'column')::type)",
 * the key the object names, as the type of the column it fills. */
static void or_key_named(pgr_sql *q, const char *column, const pgr_column *filled)
{
    pgr_sql_put(q, " ->> ");
    pgr_sb_put_literal(&q->sb, column);
    pgr_sql_put(q, ")::");
    pgr_sql_put(q, filled != NULL ? filled->type : "text");
    pgr_sql_put(q, ")");
}

/* A many-to-one foreign key: the inserted row's key, else the key the
 * body names. */
static void to_one_key(pgr_sql *q, const level *l, const pgr_nested_insert *c, size_t i)
{
    put_id(q, "COALESCE(pgrst_m", c->id);
    pgr_sql_put(q, ".");
    key_alias(q, c, i);
    pgr_sql_put(q, ", (");
    char rows[48];
    snprintf(rows, sizeof rows, "pgrst_rows_%d.elem", l->id);
    value_under_key(q, rows, c);
    or_key_named(q, key_columns(c)[i], pgr_find_column(l->table, fk_columns(c)[i]));
}

static void insert_values(pgr_sql *q, const pgrest_query_plan *plan, const level *l)
{
    bool first = l->n_columns == 0;
    pgr_emit_body_values(q, plan->schema, l->columns, l->n_columns);
    for (size_t i = 0; takes_parent_key(l) && i < l->self->rel->n_cols; i++, first = false) {
        pgr_sql_put(q, first ? "pgrst_k." : ", pgrst_k.");
        key_alias(q, l->self, i);
    }
    for (const pgr_nested_insert *c = l->children; c != NULL; c = c->next)
        for (size_t i = 0; c->to_one && i < c->rel->n_cols; i++, first = false) {
            pgr_sql_put(q, first ? "" : ", ");
            to_one_key(q, l, c, i);
        }
}

/* FROM the level's rows, joined to the keys of its related levels */
static void insert_from(pgr_sql *q, const level *l)
{
    pgr_sql_put(q, " FROM ");
    put_id(q, "pgrst_rows_", l->id);
    if (takes_parent_key(l)) {
        pgr_sql_put(q, " JOIN ");
        put_id(q, "pgrst_keys_", l->self->parent_id);
        put_id(q, " AS pgrst_k ON pgrst_k.ord = pgrst_rows_", l->id);
        pgr_sql_put(q, ".parent_ord");
    }
    for (const pgr_nested_insert *c = l->children; c != NULL; c = c->next) {
        if (!c->to_one)
            continue;
        put_id(q, " LEFT JOIN (SELECT pgrst_r.parent_ord, pgrst_mk.* FROM pgrst_rows_", c->id);
        put_id(q, " AS pgrst_r JOIN pgrst_keys_", c->id);
        put_id(q, " AS pgrst_mk ON pgrst_mk.ord = pgrst_r.ord) AS pgrst_m", c->id);
        put_id(q, " ON pgrst_m", c->id);
        put_id(q, ".parent_ord = pgrst_rows_", l->id);
        pgr_sql_put(q, ".ord");
    }
}

static void insert_guards(pgr_sql *q, const level *l)
{
    bool first = true;
    if (takes_parent_key(l))
        parent_inserted(q, l->self, l->parent, &first);
    for (const pgr_nested_insert *c = l->children; c != NULL; c = c->next)
        if (c->to_one)
            all_inserted(q, c->id, &first);
    if (l->self != NULL && l->self->many_to_many) {
        put_id(q, first ? " WHERE pgrst_rows_" : " AND pgrst_rows_", l->id);
        pgr_sql_put(q, ".pgrst_new");
    }
}

/* ------------------------------------------------------------ views
 * A many-to-one or many-to-many embed of the representation reads the
 * table as the statement began plus every row the statement wrote into it
 * at any level (pgrst_view_<id>, pgrst_jview_<id>): those levels return
 * their whole rows. */

static bool is_viewed_in(const pgr_nested_insert *list, const pgr_table *t)
{
    for (const pgr_nested_insert *n = list; n != NULL; n = n->next) {
        bool viewed = n->represented && (n->to_one || n->many_to_many) && n->table == t;
        if (viewed || (n->represented && n->many_to_many && n->rel->junction == t) ||
            is_viewed_in(n->children, t))
            return true;
    }
    return false;
}

static bool is_viewed(const pgrest_query_plan *plan, const pgr_table *t)
{
    return is_viewed_in(plan->mutate->nested, t);
}

static void union_writes(pgr_sql *q, const pgr_nested_insert *list, const pgr_table *t)
{
    for (const pgr_nested_insert *n = list; n != NULL; n = n->next) {
        if (n->table == t)
            put_id(q, " UNION ALL SELECT * FROM pgrst_ins_", n->id);
        if (n->many_to_many && n->rel->junction == t)
            put_id(q, " UNION ALL SELECT * FROM pgrst_jins_", n->id);
        union_writes(q, n->children, t);
    }
}

static void table_view(pgr_sql *q, const pgrest_query_plan *plan, const char *view, int id,
                       const pgr_table *t)
{
    put_id(q, view, id);
    pgr_sql_put(q, " AS (SELECT * FROM ");
    pgr_sql_qualified(q, t->schema, t->name);
    if (plan->mutate->table == t)
        pgr_sql_put(q, " UNION ALL SELECT * FROM pgrst_source");
    union_writes(q, plan->mutate->nested, t);
    pgr_sql_put(q, ")");
}

static void emit_views(pgr_sql *q, const pgrest_query_plan *plan, const pgr_nested_insert *list)
{
    for (const pgr_nested_insert *n = list; n != NULL; n = n->next) {
        if (n->represented && (n->to_one || n->many_to_many))
            table_view(q, plan, ", pgrst_view_", n->id, n->table);
        if (n->represented && n->many_to_many)
            table_view(q, plan, ", pgrst_jview_", n->id, n->rel->junction);
        emit_views(q, plan, n->children);
    }
}

static void whole_rows(pgr_sql *q, const pgr_table *t)
{
    pgr_sql_put(q, " RETURNING ");
    pgr_sql_qualified(q, t->schema, t->name);
    pgr_sql_put(q, ".*");
}

static void nested_returning(pgr_sql *q, const pgrest_query_plan *plan, const level *l)
{
    const pgr_nested_insert *n = l->self;
    if (n->represented || is_viewed(plan, n->table)) {
        whole_rows(q, n->table);
        return;
    }
    pgr_sql_put(q, " RETURNING ");
    size_t most = 0;
    for (const pgr_nested_insert *c = l->children; c != NULL; c = c->next)
        most += c->rel->n_cols;
    key_writer w = {key_returned, NULL, 0};
    w.written = PGR_NEW_ARRAY(q->arena, const char *, most + n->rel->n_cols + n->rel->n_jcols2);
    if (w.written == NULL) {
        q->sb.failed = true;
        return;
    }
    each_key(q, l, &w);
    if (w.n_written == 0)
        pgr_sql_put(q, "1");
}

static void level_insert(pgr_sql *q, const pgrest_query_plan *plan, const level *l)
{
    pgr_sql_put(q, ", ");
    inserted_rows(q, l->id);
    pgr_sql_put(q, " AS (INSERT INTO ");
    pgr_sql_qualified(q, l->table->schema, l->table->name);
    insert_columns(q, l);
    pgr_sql_put(q, " SELECT ");
    insert_values(q, plan, l);
    insert_from(q, l);
    record_of(q, plan, l);
    insert_guards(q, l);
    put_id(q, " ORDER BY pgrst_rows_", l->id);
    pgr_sql_put(q, ".ord");
    if (l->self != NULL)
        nested_returning(q, plan, l);
    else if (is_viewed(plan, l->table))
        whole_rows(q, l->table);
    else
        pgr_emit_returning(q, plan->mutate);
    pgr_sql_put(q, ")");
}

/* ------------------------------------------------------------ many-to-many
 * The target's objects (pgrst_rows_<id>, each flagged pgrst_new unless it
 * names an existing row by key), the new ones numbered apart
 * (pgrst_new_<id>), inserted as any level is (pgrst_ins_<id>, with their
 * own related rows), then one junction row per object (pgrst_jins_<id>):
 * the parent's key and the target's, inserted or named. */

static void m2m_rows(pgr_sql *q, const pgr_nested_insert *n, int parent_id)
{
    rows_head(q, n, "pgrst_p.ord, pgrst_e.ord");
    pgr_sql_put(q, "pgrst_e.elem, ");
    is_new_row(q, "pgrst_e.elem", n);
    pgr_sql_put(q, " AS pgrst_new");
    objects_under_key(q, n, parent_id);
    put_id(q, ", pgrst_new_", n->id);
    pgr_sql_put(q, " AS (SELECT pgrst_r.ord, row_number() OVER (ORDER BY pgrst_r.ord) AS "
                   "new_ord FROM ");
    put_id(q, "pgrst_rows_", n->id);
    pgr_sql_put(q, " AS pgrst_r WHERE pgrst_r.pgrst_new)");
}

/* The target's key for a junction row: the inserted row's, else the one
 * the object names, as the junction column's type. */
static void m2m_target_key(pgr_sql *q, const pgr_nested_insert *n, size_t i)
{
    const pgr_relationship *r = n->rel;
    pgr_sql_put(q, "COALESCE(pgrst_t.");
    target_alias(q, n, i);
    put_id(q, ", (pgrst_rows_", n->id);
    pgr_sql_put(q, ".elem");
    or_key_named(q, r->cols2[i], pgr_find_column(r->junction, r->jcols2[i]));
}

static void m2m_junction_insert(pgr_sql *q, const pgrest_query_plan *plan,
                                const pgr_nested_insert *n, const pgr_nested_insert *parent)
{
    const pgr_relationship *r = n->rel;
    put_id(q, ", pgrst_jins_", n->id);
    pgr_sql_put(q, " AS (INSERT INTO ");
    pgr_sql_qualified(q, r->junction->schema, r->junction->name);
    pgr_sql_put(q, "(");
    for (size_t i = 0; i < r->n_jcols1; i++) {
        pgr_sql_ident(q, r->jcols1[i]);
        pgr_sql_put(q, ", ");
    }
    for (size_t i = 0; i < r->n_jcols2; i++) {
        pgr_sql_put(q, i > 0 ? ", " : "");
        pgr_sql_ident(q, r->jcols2[i]);
    }
    pgr_sql_put(q, ") SELECT ");
    for (size_t i = 0; i < r->n_jcols1; i++) {
        pgr_sql_put(q, "pgrst_k.");
        key_alias(q, n, i);
        pgr_sql_put(q, ", ");
    }
    for (size_t i = 0; i < r->n_jcols2; i++) {
        pgr_sql_put(q, i > 0 ? ", " : "");
        m2m_target_key(q, n, i);
    }
    put_id(q, " FROM pgrst_rows_", n->id);
    put_id(q, " JOIN pgrst_keys_", n->parent_id);
    put_id(q, " AS pgrst_k ON pgrst_k.ord = pgrst_rows_", n->id);
    put_id(q, ".parent_ord LEFT JOIN pgrst_keys_", n->id);
    put_id(q, " AS pgrst_t ON pgrst_t.ord = pgrst_rows_", n->id);
    pgr_sql_put(q, ".ord");
    bool first = true;
    parent_inserted(q, n, parent, &first);
    counts_match(q, n->id, "pgrst_new_", &first);
    put_id(q, " ORDER BY pgrst_rows_", n->id);
    pgr_sql_put(q, ".ord");
    if (n->represented || is_viewed(plan, r->junction))
        whole_rows(q, r->junction);
    else
        pgr_sql_put(q, " RETURNING 1");
    pgr_sql_put(q, ")");
}

/* A level: the many-to-one levels it references, its own insert, then the
 * one-to-many and many-to-many levels that reference it. */
static void emit_level(pgr_sql *q, const pgrest_query_plan *plan, const level *l)
{
    for (const pgr_nested_insert *c = l->children; c != NULL; c = c->next)
        if (c->to_one) {
            level cl = level_of(c, l);
            to_one_rows(q, c, l->id);
            emit_level(q, plan, &cl);
        }
    level_insert(q, plan, l);
    if (needs_keys(l))
        level_keys(q, l);
    for (const pgr_nested_insert *c = l->children; c != NULL; c = c->next) {
        level cl = level_of(c, l);
        if (c->to_one)
            continue;
        if (c->many_to_many)
            m2m_rows(q, c, l->id);
        else
            to_many_rows(q, c, l->id);
        emit_level(q, plan, &cl);
        if (c->many_to_many)
            m2m_junction_insert(q, plan, c, l->self);
    }
}

void pgr_emit_nested_insert(pgr_sql *q, const pgrest_query_plan *plan)
{
    const pgr_mutate_plan *mp = plan->mutate;
    level root = {0, mp->table, mp->columns, mp->n_columns, NULL, mp->nested, NULL};
    root_rows(q, plan);
    emit_level(q, plan, &root);
    emit_views(q, plan, mp->nested);
}
