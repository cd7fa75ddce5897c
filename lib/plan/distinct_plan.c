/* distinct= on a read node: the SELECT DISTINCT [ON] and the ORDER BY
 * PostgreSQL requires to start with the DISTINCT ON expressions. */
#include "plan/distinct_plan.h"

#include <string.h>

#include "util/error.h"

bool pgr_node_is_distinct(const pgr_read_node *node)
{
    return node->distinct_all || node->n_distinct_on > 0;
}

/* An order term over the plain column `name` of the node itself. */
static bool orders_column(const pgr_order_term *t, const char *name)
{
    return t->relation == NULL && t->field.json_path == NULL &&
           t->field.name != NULL && strcmp(t->field.name, name) == 0;
}

static bool is_distinct_column(const pgr_path_distinct *d, const pgr_order_term *t)
{
    for (size_t i = 0; i < d->n_columns; i++)
        if (orders_column(t, d->columns[i]))
            return true;
    return false;
}

/* The term the ORDER BY starts with for distinct column `name`: the
 * order= term naming it (its direction and nulls), else ascending. */
static pgr_order_term *leading_term(pgrest_arena *a, const pgr_order_term *order,
                                    const char *name)
{
    pgr_order_term *t = PGR_NEW(a, pgr_order_term);
    if (t == NULL)
        return NULL;
    t->field.name = name;
    for (const pgr_order_term *o = order; o != NULL; o = o->next)
        if (orders_column(o, name)) {
            t->dir = o->dir;
            t->nulls = o->nulls;
            break;
        }
    return t;
}

/* Builds a new list: the parsed terms are shared by the query params. */
static int distinct_order(pgrest_arena *a, pgr_read_node *node,
                          const pgr_path_distinct *d, pgrest_error *err)
{
    pgr_order_term *head = NULL, **tail = &head;
    for (size_t i = 0; i < d->n_columns; i++) {
        pgr_order_term *t = leading_term(a, node->order, d->columns[i]);
        if (t == NULL)
            return pgr_error_oom(err);
        *tail = t;
        tail = &t->next;
    }
    for (const pgr_order_term *o = node->order; o != NULL; o = o->next) {
        if (is_distinct_column(d, o))
            continue;
        pgr_order_term *t = PGR_NEW(a, pgr_order_term);
        if (t == NULL)
            return pgr_error_oom(err);
        *t = *o;
        t->next = NULL;
        *tail = t;
        tail = &t->next;
    }
    node->order = head;
    return PGREST_OK;
}

int pgr_plan_distinct(pgrest_arena *a, pgr_read_node *node,
                      const pgr_path_distinct *d, pgrest_error *err)
{
    if (pgr_node_is_distinct(node))
        return PGREST_OK;
    node->distinct_all = d->all;
    node->distinct_on = d->columns;
    node->n_distinct_on = d->n_columns;
    return d->all ? PGREST_OK : distinct_order(a, node, d, err);
}
