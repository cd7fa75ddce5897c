/* Which nested row a PostgreSQL error is about, for its details: the
 * error names a table (and a column, or a key's values); the body names
 * the rows. Rows are inserted level by level in body order, so the first
 * row of the level that fits the error is the one that failed. */
#include <json-c/json.h>
#include <string.h>

#include "plan/embed.h"
#include "plan/mutate_plan.h"
#include "plan/nested_insert.h"
#include "util/error.h"
#include "util/strbuf.h"

/* What the error says of the failing row. */
typedef struct failing_row {
    const char *sqlstate;
    const char *column;          /* 23502: the NULL column */
    const char **key_cols;       /* 23505 / 23503: "Key (a, b)=(1, 2) ..." */
    const char **key_vals;
    size_t n_key;
} failing_row;

typedef struct search {
    pgrest_arena *a;
    const pgr_nested_insert **chain;   /* root's child .. the level */
    size_t depth;
    bool junction;                     /* the error is on the level's junction */
    const failing_row *fail;
    const char *found;                 /* the failing row's path */
    bool duplicate;                    /* found is a second row with one key */
    bool per_parent;                   /* the key holds the parent's key */
    const char *group;                 /* the parent of the rows fitting */
    size_t fitting;                    /* ... and how many fit so far */
    size_t candidates;
    const char *only;                  /* the path of the last candidate */
} search;

static char *copy_n(pgrest_arena *a, const char *s, size_t n)
{
    char *out = pgr_alloc(a, n + 1);
    if (out != NULL) {
        memcpy(out, s, n);
        out[n] = '\0';
    }
    return out;
}

/* A column as PostgreSQL quotes it in a key ("position"): the name. */
static const char *unquote(pgrest_arena *a, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n < 2 || s[0] != '"' || s[n - 1] != '"')
        return s;
    char *out = pgr_alloc(a, n);
    size_t k = 0;
    for (size_t i = 1; out != NULL && i + 1 < n; i++) {
        out[k++] = s[i];
        if (s[i] == '"' && s[i + 1] == '"')
            i++;
    }
    if (out != NULL)
        out[k] = '\0';
    return out;
}

/* "a, b" into items; NULL on OOM. */
static const char **split_list(pgrest_arena *a, const char *s, size_t len, size_t *n)
{
    size_t cap = 1;
    for (size_t i = 0; i + 1 < len; i++)
        cap += s[i] == ',' && s[i + 1] == ' ';
    const char **items = PGR_NEW_ARRAY(a, const char *, cap + 1);
    if (items == NULL)
        return NULL;
    *n = 0;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++)
        if (i == len || (s[i] == ',' && i + 1 < len && s[i + 1] == ' ')) {
            items[(*n)++] = copy_n(a, s + start, i - start);
            start = i + 2;
            i++;
        }
    return items;
}

/* PostgreSQL's "Key (a, b)=(1, 2) already exists." / "... is not present
 * in table ..." details (values holding ", " split wrongly and then fit
 * no row: the path is left without an index). */
static void parse_key_detail(pgrest_arena *a, const char *detail, failing_row *f)
{
    const char *open = detail ? strstr(detail, "Key (") : NULL;
    const char *mid = open ? strstr(open, ")=(") : NULL;
    const char *close = mid ? strchr(mid + 3, ')') : NULL;
    for (const char *p = close; p != NULL && (p = strchr(p + 1, ')')) != NULL;)
        if (p[1] == ' ' || p[1] == '\0')
            close = p;
    if (close == NULL)
        return;
    size_t nc = 0, nv = 0;
    f->key_cols = split_list(a, open + 5, (size_t)(mid - open - 5), &nc);
    f->key_vals = split_list(a, mid + 3, (size_t)(close - mid - 3), &nv);
    f->n_key = f->key_cols != NULL && f->key_vals != NULL && nc == nv ? nc : 0;
    for (size_t i = 0; i < f->n_key; i++)
        f->key_cols[i] = unquote(a, f->key_cols[i]);
}

/* The object's value for a column as PostgreSQL prints it in a key. */
static bool same_text(json_object *v, const char *text)
{
    if (v == NULL)
        return false;
    const char *s = json_object_is_type(v, json_type_string)
                        ? json_object_get_string(v)
                        : json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
    return s != NULL && strcmp(s, text) == 0;
}

/* The key in a junction object for a junction column: the target's
 * column it references (the parent's side is not in the object). */
static const char *object_key_for(const search *s, const char *column)
{
    const pgr_nested_insert *n = s->chain[s->depth - 1];
    const pgr_relationship *r = n->rel;
    /* a foreign key a related row filled is not in the object */
    if (!s->junction)
        return pgr_nested_fills_column(r, n->children, column) ? NULL : column;
    for (size_t i = 0; i < r->n_jcols2; i++)
        if (strcmp(r->jcols2[i], column) == 0)
            return r->cols2[i];
    return NULL;
}

static bool fits(const search *s, json_object *row)
{
    const failing_row *f = s->fail;
    if (strcmp(f->sqlstate, "23502") == 0 && f->column != NULL) {
        json_object *v = NULL;
        return !json_object_object_get_ex(row, f->column, &v) || v == NULL;
    }
    if (f->n_key == 0)
        return false;
    for (size_t i = 0; i < f->n_key; i++) {
        const char *key = object_key_for(s, f->key_cols[i]);
        json_object *v = NULL;
        if (key != NULL && (!json_object_object_get_ex(row, key, &v) ||
                            !same_text(v, f->key_vals[i])))
            return false;
    }
    return true;
}

static void visit(search *s, json_object *row, const char *path)
{
    /* an object naming an existing row inserted nothing there */
    if (!s->junction && pgr_nested_is_reference(row, s->chain[s->depth - 1]))
        return;
    s->candidates++;
    s->only = path;
    if (s->duplicate || !fits(s, row))
        return;
    /* a unique key that two rows of the request share fails on the
     * second (rows of one parent only, when the key holds the parent's
     * key); a row that meets an existing one, on the first */
    size_t parent_len = (size_t)(strrchr(path, '.') ? strrchr(path, '.') - path : 0);
    const char *group = s->per_parent ? copy_n(s->a, path, parent_len) : "";
    if (group == NULL)
        return;
    if (s->group == NULL || strcmp(s->group, group) != 0) {
        s->group = group;
        s->fitting = 0;
    }
    if (s->fitting > 0 && strcmp(s->fail->sqlstate, "23505") == 0) {
        s->found = path;
        s->duplicate = true;
    } else if (s->found == NULL)
        s->found = path;
    s->fitting++;
}

/* Whether the failing key holds a column the parent's key fills. */
static bool key_holds_parent_key(const search *s)
{
    const pgr_nested_insert *n = s->chain[s->depth - 1];
    for (size_t i = 0; i < s->fail->n_key; i++) {
        const char *c = s->fail->key_cols[i];
        if (s->junction ? object_key_for(s, c) == NULL
                        : pgr_nested_fills_column(n->rel, NULL, c))
            return true;
    }
    return false;
}

/* The rows of the chain's last level in insertion order: each parent's,
 * in body order. */
static void walk(search *s, size_t depth, json_object *obj, const char *prefix)
{
    if (depth == s->depth) {
        visit(s, obj, prefix);
        return;
    }
    const pgr_nested_insert *n = s->chain[depth];
    json_object *v = NULL;
    if (!json_object_object_get_ex(obj, n->key, &v) || v == NULL)
        return;
    bool array = json_object_is_type(v, json_type_array);
    size_t count = array ? json_object_array_length(v) : 1;
    for (size_t i = 0; i < count; i++) {
        json_object *row = array ? json_object_array_get_idx(v, i) : v;
        const char *path = array ? pgr_asprintf(s->a, "%s%s%s[%zu]", prefix, *prefix ? "." : "",
                                                n->key, i)
                                 : pgr_asprintf(s->a, "%s%s%s", prefix, *prefix ? "." : "",
                                                n->key);
        if (path != NULL && json_object_is_type(row, json_type_object))
            walk(s, depth + 1, row, path);
    }
}

static bool names_table(const pgr_table *t, const char *schema, const char *table)
{
    return strcmp(t->name, table) == 0 && (schema == NULL || strcmp(t->schema, schema) == 0);
}

/* The first level (depth first, as emitted) writing schema.table, into
 * chain[0..*depth). */
static bool find_level(const pgr_nested_insert *list, const char *schema, const char *table,
                       const pgr_nested_insert **chain, size_t at, size_t *depth,
                       bool *junction)
{
    for (const pgr_nested_insert *n = list; n != NULL; n = n->next) {
        if (at >= PGR_EMBED_MAX_DEPTH)
            return false;
        chain[at] = n;
        *junction = n->many_to_many && names_table(n->rel->junction, schema, table);
        if (names_table(n->table, schema, table) || *junction) {
            *depth = at + 1;
            return true;
        }
        if (find_level(n->children, schema, table, chain, at + 1, depth, junction))
            return true;
    }
    return false;
}

const char *pgr_nested_error_path(pgrest_arena *a, const pgrest_query_plan *plan,
                                  const char *schema, const char *table,
                                  const char *sqlstate, const char *column,
                                  const char *detail)
{
    const pgr_mutate_plan *mp = plan->mutate;
    const pgr_nested_insert *chain[PGR_EMBED_MAX_DEPTH];
    search s = {.a = a, .chain = chain};
    if (mp == NULL || mp->nested == NULL || table == NULL || sqlstate == NULL ||
        !find_level(mp->nested, schema, table, chain, 0, &s.depth, &s.junction))
        return NULL;
    failing_row f = {.sqlstate = sqlstate, .column = column};
    parse_key_detail(a, detail, &f);
    s.fail = &f;
    s.per_parent = key_holds_parent_key(&s);
    json_object *doc = NULL;
    pgrest_error ignored = {0};
    if (pgr_nested_parse_body(a, plan->api->payload_json,
                              pgr_parse_limits_default()->max_json_depth, &doc,
                              &ignored) != PGREST_OK)
        return NULL;
    bool array = json_object_is_type(doc, json_type_array);
    size_t count = array ? json_object_array_length(doc) : 1;
    for (size_t i = 0; i < count; i++) {
        json_object *row = array ? json_object_array_get_idx(doc, i) : doc;
        const char *prefix = array ? pgr_asprintf(a, "[%zu]", i) : "";
        if (prefix != NULL && json_object_is_type(row, json_type_object))
            walk(&s, 0, row, prefix);
    }
    if (s.found != NULL)
        return s.found;
    if (s.candidates == 1)
        return s.only;
    /* no row to point at: the level, its keys from the top */
    pgr_sb sb;
    pgr_sb_init(&sb, a, 64);
    for (size_t i = 0; i < s.depth; i++) {
        if (i > 0)
            pgr_sb_putc(&sb, '.');
        pgr_sb_puts(&sb, chain[i]->key);
    }
    return pgr_sb_finish(&sb);
}
