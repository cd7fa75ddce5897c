#include "plan/aggregate_names.h"

#include <string.h>

#include "util/arena.h"
#include "util/error.h"

/* PostgreSQL 15's pg_catalog functions that `"t"."name"` (attribute
 * notation) applies to a row of any table, found by trying every
 * pg_catalog function name on a table; any_value is PostgreSQL 16's.
 * Ordering by one of these names keeps PostgREST's meaning. */
static const char *const row_functions[] = {
    "any_value", "array_agg", "concat", "count", "hash_record", "json_agg",
    "json_build_array", "json_build_object", "jsonb_agg", "jsonb_build_array",
    "jsonb_build_object", "num_nonnulls", "num_nulls", "pg_collation_for",
    "pg_column_compression", "pg_column_size", "pg_typeof", "quote_literal",
    "quote_nullable", "record_out", "record_send", "row_to_json", "to_json",
    "to_jsonb",
};

static bool is_row_function(const char *name)
{
    for (size_t i = 0; i < sizeof row_functions / sizeof *row_functions; i++)
        if (strcmp(row_functions[i], name) == 0)
            return true;
    return false;
}

/* PostgREST reads an order term as "relation"."name", which means
 * something when name is a column of node's relation, a computed field or
 * another function of the row in the schema cache, or one of the built-ins
 * above. Unknown columns (a call's record rows) count as readable. */
static bool reads_as_column(const pgr_read_node *node, const char *name)
{
    const pgr_table *t = node->table;
    if (t == NULL || pgr_find_column(t, name) != NULL || is_row_function(name))
        return true;
    return node->schema != NULL &&
           pgr_find_routines(node->schema, t->schema, name, NULL, 0) > 0;
}

static bool is_aggregate(const pgr_plan_field *f)
{
    return f->item != NULL && f->item->aggregate != NULL;
}

static bool hoists_to_parent(const pgr_read_node *node)
{
    return node->embed != NULL && node->embed->spread && node->embed->is_to_one;
}

/* node's own aggregates and, through to-one spreads, the ones they lift */
static const pgr_plan_field *find_lifted(const pgr_read_node *node, const char *name)
{
    for (const pgr_plan_field *f = node->fields; f != NULL; f = f->next)
        if (is_aggregate(f) && strcmp(f->output_name, name) == 0)
            return f;
    for (const pgr_embed *e = node->embeds; e != NULL; e = e->next) {
        if (!e->spread || !e->is_to_one)
            continue;
        const pgr_plan_field *f = find_lifted(e->node, name);
        if (f != NULL)
            return f;
    }
    return NULL;
}

const pgr_plan_field *pgr_find_aggregate_output(const pgr_read_node *node,
                                                const char *name)
{
    return hoists_to_parent(node) ? NULL : find_lifted(node, name);
}

static bool names_aggregate(const pgr_read_node *node, const pgr_order_term *t)
{
    return t->relation == NULL && t->field.json_path == NULL &&
           pgr_find_aggregate_output(node, t->field.name) != NULL &&
           !reads_as_column(node, t->field.name);
}

static bool any_names_aggregate(const pgr_read_node *node)
{
    for (const pgr_order_term *t = node->order; t != NULL; t = t->next)
        if (names_aggregate(node, t))
            return true;
    return false;
}

/* The terms are the parsed request's: marked on a copy. */
static int mark_node(pgrest_arena *a, pgr_read_node *node, pgrest_error *err)
{
    if (!any_names_aggregate(node))
        return PGREST_OK;
    pgr_order_term *head = NULL, **tail = &head;
    for (const pgr_order_term *t = node->order; t != NULL; t = t->next) {
        pgr_order_term *c = PGR_NEW(a, pgr_order_term);
        if (c == NULL)
            return pgr_error_oom(err);
        *c = *t;
        c->by_aggregate = names_aggregate(node, t);
        c->next = NULL;
        *tail = c;
        tail = &c->next;
    }
    node->order = head;
    return PGREST_OK;
}

/* "count, total": the names having= can use at node, for the hint */
static const char *aggregate_names(pgrest_arena *a, const pgr_read_node *node)
{
    const char *names = NULL;
    for (const pgr_plan_field *f = node->fields; f != NULL; f = f->next) {
        if (!is_aggregate(f))
            continue;
        names = names == NULL ? f->output_name
                              : pgr_asprintf(a, "%s, %s", names, f->output_name);
    }
    for (const pgr_embed *e = node->embeds; e != NULL; e = e->next) {
        const char *lifted = e->spread && e->is_to_one ? aggregate_names(a, e->node) : NULL;
        if (lifted != NULL)
            names = names == NULL ? lifted : pgr_asprintf(a, "%s, %s", names, lifted);
    }
    return names;
}

static int not_an_aggregate(pgrest_arena *a, const pgr_read_node *node,
                            const pgr_field *field, pgrest_error *err)
{
    const char *names = hoists_to_parent(node) ? NULL : aggregate_names(a, node);
    const char *hint = names == NULL
        ? "Select an aggregate, e.g. select=col,count(), and name it in having."
        : pgr_asprintf(a, "The aggregates of this select are: %s.", names);
    return pgr_errorf(err, a, 400, "PGRST100",
                      pgr_asprintf(a, "'%s' is not the name or alias of an aggregate "
                                      "in the select", field->name),
                      hint, "having can only test aggregates of the select");
}

static int check_having_tree(pgrest_arena *a, const pgr_read_node *node,
                             const pgr_logic_tree *t, pgrest_error *err)
{
    if (t->is_leaf) {
        const pgr_field *field = &t->filter.field;
        if (field->json_path == NULL && pgr_find_aggregate_output(node, field->name) != NULL)
            return PGREST_OK;
        return not_an_aggregate(a, node, field, err);
    }
    for (const pgr_logic_tree *c = t->children; c != NULL; c = c->next) {
        int rc = check_having_tree(a, node, c, err);
        if (rc != PGREST_OK)
            return rc;
    }
    return PGREST_OK;
}

int pgr_resolve_aggregate_names(pgrest_arena *a, pgr_read_node *root,
                                pgrest_error *err)
{
    int rc = mark_node(a, root, err);
    for (size_t i = 0; rc == PGREST_OK && i < root->n_having; i++)
        rc = check_having_tree(a, root, root->having[i], err);
    for (pgr_embed *e = root->embeds; rc == PGREST_OK && e != NULL; e = e->next)
        rc = pgr_resolve_aggregate_names(a, e->node, err);
    return rc;
}
