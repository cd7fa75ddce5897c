/* Embeds and the body as text in the bytes jsonb and json_agg print
 * (bench/README.md, issue 34 item 4, candidate D). The jsonb shape
 * (sql/emit_embed.c) builds each embed as jsonb and json_agg prints the
 * rows; here the same bytes are concatenated directly:
 *
 *   object (jsonb):   '{"k1": ' || v1 || ', "k2": ' || v2 || '}', keys in
 *                     jsonb's order (shorter first, then bytewise), values
 *                     coalesce(to_jsonb(col)::text, 'null'), an embed's
 *                     own text as it is
 *   to-many:          '[' || string_agg(object, ', ') || ']' in the same
 *                     LATERAL subquery, COALESCE '[]' as before
 *   to-one:           the same LATERAL subquery plus `true AS pgrst_m`,
 *                     and CASE WHEN pgrst_m THEN object END above the
 *                     join (built inside the subquery, a dearer projection
 *                     changed a join's plan and so an unordered result's
 *                     row order)
 *   body (json_agg):  '[' || string_agg('{"c1":' || v1 || ',"c2":' ...
 *                     '}', E', \n ') || ']', columns in order, values
 *                     coalesce(to_json(col)::text, 'null')
 *
 * to_jsonb / to_json of one column render it as the row conversion does
 * (the same per-type conversion), so only the framing is written here.
 * The statement names every output column, so this needs each object's
 * keys when it is built: plain columns, `*` (the schema cache's columns)
 * and aliases, distinct (jsonb keeps the last of repeated keys). */
#include "sql/emit_embed_text.h"

#include <string.h>

#include "plan/call_plan.h"
#include "util/arena.h"
#include "util/strbuf.h"

/* ------------------------------------------------------------ keys */

typedef struct text_key {
    const char *name;
    const pgr_embed *embed;  /* the embed behind the key, NULL for a column */
} text_key;

typedef struct key_list {
    text_key *v;
    size_t n;
} key_list;

static size_t count_keys(const pgr_read_node *node)
{
    size_t n = node->select_star && node->table != NULL ? node->table->n_columns : 0;
    for (const pgr_plan_field *f = node->fields; f; f = f->next)
        n++;
    for (const pgr_embed *e = node->embeds; e; e = e->next)
        n++;
    return n;
}

static void add_star(const pgr_read_node *node, key_list *l)
{
    if (node->select_star && node->table != NULL)
        for (size_t i = 0; i < node->table->n_columns; i++)
            l->v[l->n++] = (text_key){node->table->columns[i].name, NULL};
}

/* The output columns of node in the order of its select list
 * (sql/emit_read.c emit_select_list: `*` at its place among the fields,
 * then the embeds). NULL when the arena is exhausted. */
static key_list node_keys(pgrest_arena *a, const pgr_read_node *node)
{
    key_list l = {PGR_NEW_ARRAY(a, text_key, count_keys(node) + 1), 0};
    if (l.v == NULL)
        return l;
    if (node->star_after == NULL)
        add_star(node, &l);
    for (const pgr_plan_field *f = node->fields; f; f = f->next) {
        l.v[l.n++] = (text_key){f->output_name, NULL};
        if (node->star_after == f)
            add_star(node, &l);
    }
    for (const pgr_embed *e = node->embeds; e; e = e->next)
        l.v[l.n++] = (text_key){e->output_name, e};
    return l;
}

/* jsonb's key order (jsonb_util.c lengthCompareJsonbStringValue): the
 * shorter key first, equal lengths bytewise. */
static int key_cmp(const text_key *x, const text_key *y)
{
    size_t lx = strlen(x->name), ly = strlen(y->name);
    if (lx != ly)
        return lx < ly ? -1 : 1;
    return memcmp(x->name, y->name, lx);
}

static void sort_keys(key_list *l)
{
    for (size_t i = 1; i < l->n; i++) {
        text_key k = l->v[i];
        size_t j = i;
        for (; j > 0 && key_cmp(&l->v[j - 1], &k) > 0; j--)
            l->v[j] = l->v[j - 1];
        l->v[j] = k;
    }
}

/* ------------------------------------------------------------ eligibility */

static bool plain_field(const pgr_plan_field *f)
{
    const pgr_select_item *it = f->item;
    return f->column != NULL && f->computed == NULL && f->out_fn == NULL &&
           it->cast == NULL && it->aggregate == NULL && it->agg_cast == NULL &&
           it->field.json_path == NULL && f->output_name != NULL;
}

/* jsonb keeps the last of repeated keys, and a to-one's lateral row also
 * carries the match marker: each object's keys must be distinct and, in
 * a to-one, other than the marker. */
static bool keys_usable(pgrest_arena *a, const pgr_read_node *node)
{
    key_list l = node_keys(a, node);
    if (l.v == NULL || l.n == 0)
        return false;
    bool to_one = node->embed != NULL && node->embed->is_to_one;
    sort_keys(&l);
    for (size_t i = 0; i < l.n; i++)
        if ((i > 0 && key_cmp(&l.v[i - 1], &l.v[i]) == 0) ||
            (to_one && strcmp(l.v[i].name, PGR_EMBED_TEXT_MATCH) == 0))
            return false;
    return true;
}

static bool node_applies(pgrest_arena *a, const pgr_read_node *node)
{
    if (node->select_star && node->table == NULL)
        return false;  /* `*` of a record: its columns are not known here */
    /* SELECT DISTINCT compares the embeds' values: jsonb equality (1.0 is
     * 1.00), which their text would not keep */
    if (node->distinct_all && node->embeds != NULL)
        return false;
    for (const pgr_plan_field *f = node->fields; f; f = f->next)
        if (!plain_field(f))
            return false;
    for (const pgr_embed *e = node->embeds; e; e = e->next) {
        if (e->spread || e->hidden || e->rel == NULL || e->rel->is_computed ||
            e->output_name == NULL || !node_applies(a, e->node))
            return false;
    }
    return keys_usable(a, node);
}

bool pgr_embed_text_applies(pgrest_arena *a, const pgrest_query_plan *plan)
{
    const pgr_read_node *root = plan->read;
    if (root == NULL || root->embeds == NULL || plan->output != PGR_OUT_JSON ||
        plan->nulls_stripped || plan->handler != NULL)
        return false;
    if (plan->action == PGR_ACTION_CALL) {
        if (plan->call == NULL || plan->call->result != PGR_CALL_RESULT_ROWS)
            return false;
    } else if (plan->action != PGR_ACTION_READ) {
        return false;
    }
    return node_applies(a, root);
}

/* ------------------------------------------------------------ pieces */

/* The literal before a key's value: the opening brace or the separator,
 * the key as a JSON string, the colon; jsonb: ", " and ": "; json_agg's
 * rows: "," and ":". */
static void put_key_prefix(pgr_sql *q, const char *key, bool first, bool jsonb)
{
    pgr_sb b;
    pgr_sb_init(&b, q->arena, 64);
    pgr_sb_puts(&b, first ? "{" : jsonb ? ", " : ",");
    pgr_sb_put_json_string(&b, key);
    pgr_sb_puts(&b, jsonb ? ": " : ":");
    const char *lit = pgr_sb_finish(&b);
    if (lit == NULL) {
        q->sb.failed = true;
        return;
    }
    pgr_sb_put_literal(&q->sb, lit); /* E'...' when it holds a backslash */
}

static void put_col(pgr_sql *q, const char *rel, const char *col)
{
    pgr_sql_ident(q, rel);
    pgr_sql_put(q, ".");
    pgr_sql_ident(q, col);
}

/* One key's value read from rel: an embed's text as it is, a column
 * through to_jsonb (inside embeds) or to_json (json_agg's rows). */
static void put_value(pgr_sql *q, const char *rel, const text_key *k, bool jsonb)
{
    pgr_sql_put(q, "coalesce(");
    if (k->embed != NULL) {
        put_col(q, rel, k->name);
    } else {
        pgr_sql_put(q, jsonb ? "to_jsonb(" : "to_json(");
        put_col(q, rel, k->name);
        pgr_sql_put(q, ")::text");
    }
    pgr_sql_put(q, ", 'null')");
}

/* The object of one row of rel with node's keys: jsonb's (sorted keys,
 * spaced) or json_agg's row (select-list order, compact). */
static void put_object(pgr_sql *q, const pgr_read_node *node, const char *rel,
                       bool jsonb)
{
    key_list l = node_keys(q->arena, node);
    if (l.v == NULL) {
        q->sb.failed = true;
        return;
    }
    if (jsonb)
        sort_keys(&l);
    for (size_t i = 0; i < l.n; i++) {
        put_key_prefix(q, l.v[i].name, i == 0, jsonb);
        pgr_sql_put(q, " || ");
        put_value(q, rel, &l.v[i], jsonb);
        pgr_sql_put(q, " || ");
    }
    pgr_sql_put(q, "'}'");
}

void pgr_emit_embed_text_agg(pgr_sql *q, const pgr_embed *e)
{
    pgr_sql_put(q, "SELECT '[' || string_agg(");
    put_object(q, e->node, e->agg_alias, true);
    pgr_sql_put(q, ", ', ') || ']' AS ");
    pgr_sql_ident(q, e->agg_alias);
}

void pgr_emit_embed_text_object(pgr_sql *q, const pgr_embed *e)
{
    pgr_sql_put(q, "CASE WHEN ");
    put_col(q, e->agg_alias, PGR_EMBED_TEXT_MATCH);
    pgr_sql_put(q, " THEN ");
    put_object(q, e->node, e->agg_alias, true);
    pgr_sql_put(q, " END");
}

void pgr_emit_row_text(pgr_sql *q, const pgr_read_node *root)
{
    put_object(q, root, "_postgrest_t", false);
}

void pgr_emit_body_text(pgr_sql *q, const pgr_read_node *root)
{
    pgr_sql_put(q, "coalesce('[' || string_agg(");
    put_object(q, root, "_postgrest_t", false);
    pgr_sql_put(q, ", E', \\n ') || ']', '[]')");
}
