#include "plan/per_row_update.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

#define PER_ROW_MAX_DEPTH 4096

static bool writes_column(const pgr_mutate_plan *mp, const char *name)
{
    for (size_t i = 0; i < mp->n_columns; i++)
        if (strcmp(mp->columns[i]->name, name) == 0)
            return true;
    return false;
}

static bool applies(const pgrest_api_request *api, const pgr_mutate_plan *mp)
{
    const pgr_table *t = mp->table;
    /* ?columns= sends the body unparsed (RawJSON): its keys are unknown */
    if (api->action != PGR_ACTION_UPDATE || !api->payload_is_array || api->payload_raw ||
        api->payload_json == NULL || t->n_pk == 0)
        return false;
    for (size_t i = 0; i < t->n_pk; i++)
        if (!writes_column(mp, t->pk[i]))
            return false;
    return true;
}

/* One element's key as text: its key values as JSON, in key order. */
typedef struct row_key {
    char *text;
    size_t index;
} row_key;

static char *key_text(json_object *elem, const pgr_table *t)
{
    size_t cap = 64, len = 0;
    char *s = malloc(cap);
    for (size_t i = 0; s != NULL && i < t->n_pk; i++) {
        json_object *v = NULL;
        json_object_object_get_ex(elem, t->pk[i], &v);
        const char *part = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
        size_t n = strlen(part);
        if (len + n + 2 > cap) {
            cap = (len + n + 2) * 2;
            char *grown = realloc(s, cap);
            if (grown == NULL) {
                free(s);
                return NULL;
            }
            s = grown;
        }
        memcpy(s + len, part, n);
        len += n;
        s[len++] = '\x1f';   /* a unit separator: JSON text never holds it raw */
    }
    if (s != NULL)
        s[len] = '\0';
    return s;
}

static int by_text(const void *x, const void *y)
{
    const row_key *a = x, *b = y;
    int c = strcmp(a->text, b->text);
    return c != 0 ? c : (a->index > b->index) - (a->index < b->index);
}

static int duplicate_error(pgrest_arena *a, const pgr_table *t, const row_key *first,
                           const row_key *second, pgrest_error *err)
{
    const char *cols = t->pk[0];
    for (size_t i = 1; i < t->n_pk; i++)
        cols = pgr_asprintf(a, "%s, %s", cols, t->pk[i]);
    return pgr_errorf(err, a, 400, "PGRST102",
                      pgr_asprintf(a, "Elements %zu and %zu have the same (%s).",
                                   first->index, second->index, cols),
                      "Each row can be updated by one element: merge the two.",
                      "Two elements of the body update the same row");
}

/* Sorted by key text, a duplicate sits next to its twin; the two reported
 * are the earliest pair (indexes from 0, as a JSON array counts). */
static int check_duplicates(pgrest_arena *a, json_object *doc, const pgr_table *t,
                            pgrest_error *err)
{
    size_t n = json_object_array_length(doc);
    row_key *keys = calloc(n, sizeof *keys);
    int rc = keys == NULL ? pgr_error_oom(err) : PGREST_OK;
    for (size_t i = 0; rc == PGREST_OK && i < n; i++) {
        keys[i].index = i;
        keys[i].text = key_text(json_object_array_get_idx(doc, i), t);
        if (keys[i].text == NULL)
            rc = pgr_error_oom(err);
    }
    if (rc == PGREST_OK) {
        qsort(keys, n, sizeof *keys, by_text);
        const row_key *dup = NULL;
        for (size_t i = 1; i < n; i++)
            if (strcmp(keys[i - 1].text, keys[i].text) == 0 &&
                (dup == NULL || keys[i].index < dup[1].index))
                dup = &keys[i - 1];
        if (dup != NULL)
            rc = duplicate_error(a, t, &dup[0], &dup[1], err);
    }
    for (size_t i = 0; keys != NULL && i < n; i++)
        free(keys[i].text);
    free(keys);
    return rc;
}

int pgr_plan_per_row_update(pgrest_arena *a, const pgrest_api_request *api,
                            pgr_mutate_plan *mp, pgrest_error *err)
{
    if (!applies(api, mp))
        return PGREST_OK;
    /* the body passed the request's own depth limit already; json-c's
     * default (32) could be lower */
    json_tokener *tok = json_tokener_new_ex(PER_ROW_MAX_DEPTH);
    json_object *doc = tok ? json_tokener_parse_ex(tok, api->payload_json,
                                                   (int)strlen(api->payload_json))
                           : NULL;
    json_tokener_free(tok);
    if (doc == NULL)
        return pgr_error(err, 400, "PGRST102", "Empty or invalid json",
                         "The body is nested too deeply to update rows one by one.", NULL);
    if (!json_object_is_type(doc, json_type_array) || json_object_array_length(doc) == 0) {
        json_object_put(doc);
        return PGREST_OK;
    }
    int rc = check_duplicates(a, doc, mp->table, err);
    json_object_put(doc);
    if (rc == PGREST_OK) {
        mp->row_keys = mp->table->pk;
        mp->n_row_keys = mp->table->n_pk;
    }
    return rc;
}
