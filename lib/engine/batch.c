/* Transactional batches (docs/batch.md). The items reuse the single
 * request's stages as they are; what is the batch's own is here: reading
 * the body into item requests, handing the transaction to the batch
 * (statement rewriting), and the batch's answer. */
#include "engine/batch.h"

#include <json-c/json.h>
#include <string.h>
#include <strings.h>

#include "engine/decorate.h"
#include "engine/stage_view.h"
#include "exec/response_record.h"
#include "parse/api_request.h"
#include "parse/preferences.h"
#include "parse/request.h"
#include "plan/plan.h"
#include "util/error.h"
#include "util/strbuf.h"

typedef struct batch_item {
    pgrest_response *resp;
    const char *warning;       /* its legacy-name Warning header, or NULL */
} batch_item;

struct pgr_batch {
    pgrest_arena *arena;
    batch_item *items;
    const pgrest_statements **units;  /* item i's statements, rewritten */
    size_t n;
    bool commit;               /* the batch's own tx end (db-tx-end, Prefer: tx) */
    bool tx_override_applied;
};

/* Each item's response GUCs start empty, as they would in a transaction
 * of its own (a function in an earlier item may have set them; the main
 * statement reads '' as unset). */
#define RESET_RESPONSE_GUCS "SELECT set_config('response.headers', '', true), " \
                            "set_config('response.status', '', true)"

bool pgr_batch_requested(const pgr_config *cfg, const pgrest_request *req)
{
    if (cfg->limits.max_batch_items <= 0)
        return false;
    if (strcmp(req->method, "POST") != 0 || (strcmp(req->path, "/") != 0 && req->path[0] != '\0'))
        return false;
    const char *ct = pgr_request_header(req, "Content-Type");
    if (ct == NULL)
        return false;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    size_t n = strlen(PGR_BATCH_MEDIA_TYPE);
    return strncasecmp(ct, PGR_BATCH_MEDIA_TYPE, n) == 0 &&
           (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ' || ct[n] == '\t');
}

/* ------------------------------------------------------------ errors */

static int batch_error(pgrest_error *err, int status, const char *message, const char *details)
{
    return pgr_error(err, status, "PGRST102", message, details, NULL);
}

/* The failing item's details: its index (from 0) before its own. */
static const char *item_details(pgrest_arena *a, size_t i, const char *details)
{
    return details != NULL && details[0] != '\0'
               ? pgr_asprintf(a, "batch item %zu: %s", i, details)
               : pgr_asprintf(a, "batch item %zu", i);
}

static void name_item(pgrest_arena *a, size_t i, pgrest_error *err)
{
    err->details = item_details(a, i, err->details);
}

/* A response the item's statements built for their error (RAISE SQLSTATE
 * 'PGRST' chooses status, headers and body): its body's details too. */
static void name_item_in_body(pgrest_arena *a, size_t i, pgrest_response *resp)
{
    json_object *doc = json_tokener_parse(resp->body != NULL ? resp->body : "");
    if (doc == NULL || !json_object_is_type(doc, json_type_object)) {
        json_object_put(doc);
        return;
    }
    json_object *d = NULL;
    const char *old = json_object_object_get_ex(doc, "details", &d) &&
                              json_object_is_type(d, json_type_string)
                          ? json_object_get_string(d)
                          : NULL;
    const char *details = item_details(a, i, old);
    if (details != NULL) {
        json_object_object_add(doc, "details", json_object_new_string(details));
        const char *body = pgr_strdup(
            a, json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN |
                                                       JSON_C_TO_STRING_NOSLASHESCAPE));
        if (body != NULL) {
            resp->body = body;
            resp->body_len = strlen(body);
        }
    }
    json_object_put(doc);
}

/* ------------------------------------------------------------ the items */

static const char *const allowed_methods[] = {"GET", "POST", "PATCH", "PUT", "DELETE"};

static bool allowed_method(const char *m)
{
    for (size_t i = 0; i < sizeof allowed_methods / sizeof allowed_methods[0]; i++)
        if (strcmp(m, allowed_methods[i]) == 0)
            return true;
    return false;
}

static const char *string_member(json_object *o, const char *key, bool *bad)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
        return NULL;
    if (!json_object_is_type(v, json_type_string)) {
        *bad = true;
        return NULL;
    }
    return json_object_get_string(v);
}

/* The item's headers: one identity per batch, so no Authorization. */
static int add_headers(pgrest_request *ireq, json_object *item, bool *has_ct, pgrest_error *err)
{
    json_object *h = NULL;
    *has_ct = false;
    if (!json_object_object_get_ex(item, "headers", &h) || json_object_is_type(h, json_type_null))
        return PGREST_OK;
    if (!json_object_is_type(h, json_type_object))
        return batch_error(err, 400, "Invalid batch item", "\"headers\" must be an object");
    json_object_object_foreach(h, name, value) {
        if (!json_object_is_type(value, json_type_string))
            return batch_error(err, 400, "Invalid batch item",
                               "header values must be strings");
        if (strcasecmp(name, "Authorization") == 0)
            return batch_error(err, 400, "Invalid batch item",
                               "an item cannot carry Authorization: the batch's credentials apply");
        if (strcasecmp(name, "Content-Type") == 0)
            *has_ct = true;
        pgrest_request_add_header(ireq, name, json_object_get_string(value));
    }
    return PGREST_OK;
}

/* A JSON item -> the request it stands for. */
static int item_request(pgrest_arena *a, json_object *item, pgrest_request **out,
                        pgrest_error *err)
{
    if (!json_object_is_type(item, json_type_object))
        return batch_error(err, 400, "Invalid batch item", "an item must be an object");
    bool bad = false;
    const char *method = string_member(item, "method", &bad);
    const char *path = string_member(item, "path", &bad);
    const char *query = string_member(item, "query", &bad);
    if (bad || method == NULL || path == NULL)
        return batch_error(err, 400, "Invalid batch item",
                           "\"method\" and \"path\" are required strings, \"query\" a string");
    if (!allowed_method(method))
        return batch_error(err, 400, "Invalid batch item",
                           "method must be one of GET, POST, PATCH, PUT, DELETE");
    /* the root is the OpenAPI document, a db-root-spec function or a
     * nested batch: none of them belongs in a batch */
    if (path[0] != '/' || path[1] == '\0')
        return batch_error(err, 400, "Invalid batch item",
                           "path must start with / and name a table, view or /rpc/ function");
    pgrest_request *ireq = pgrest_request_new(a, method, path, query);
    if (ireq == NULL)
        return pgr_error_oom(err);
    bool has_ct;
    int rc = add_headers(ireq, item, &has_ct, err);
    if (rc != PGREST_OK)
        return rc;
    json_object *body = NULL;
    if (json_object_object_get_ex(item, "body", &body)) {
        const char *text = json_object_to_json_string_ext(
            body, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!has_ct)
            pgrest_request_add_header(ireq, "Content-Type", "application/json");
        pgrest_request_set_body(ireq, text, strlen(text));
    }
    if (pgr_arena_exhausted(a))
        return pgr_error_oom(err);
    *out = ireq;
    return PGREST_OK;
}

/* The item's statements with the transaction handed to the batch: the
 * first item's BEGIN opens it (read-write, whatever the item), later
 * items begin nothing and reset the response GUCs, and only the last
 * item ends it, with the batch's COMMIT or ROLLBACK. All items go out in
 * one pipeline, so that end waits for every item's answer: an item whose
 * post-check fails (or whose answer cannot be built) after later items
 * ran must still be able to roll them all back. A rollback checks the
 * deferred constraints first, as PostgREST's does. */
static int rewrite_for_batch(pgrest_arena *a, const pgrest_statements *st, size_t i,
                             size_t n, bool commit, const pgrest_statements **out,
                             pgrest_error *err)
{
    bool last = i + 1 == n;
    pgrest_statements *copy = pgr_statements_rewrite(a, st, 1);
    if (copy == NULL)
        return pgr_error_oom(err);
    for (size_t k = 0; k < st->n; k++) {
        pgr_stmt s = st->items[k];
        if (s.role == PGR_STMT_BEGIN) {
            /* the reset keeps BEGIN's role: the batch's frame, not the
             * item's main query (which log-query shows) */
            s.sql = i == 0 ? "BEGIN ISOLATION LEVEL READ COMMITTED" : RESET_RESPONSE_GUCS;
        } else if (s.role == PGR_STMT_END) {
            if (!last)
                continue;
            if (!commit)
                copy->items[copy->n++] = (pgr_stmt){PGR_STMT_CHECK_CONSTRAINTS,
                                                    "SET CONSTRAINTS ALL IMMEDIATE", NULL, 0,
                                                    s.prepare};
            s.sql = commit ? "COMMIT" : "ROLLBACK";
        }
        copy->items[copy->n++] = s;
    }
    copy->end_after_check = last;
    *out = copy;
    return PGREST_OK;
}

/* One item through the single request's stages. */
static int prepare_item(pgrest_ctx *ctx, pgrest_arena *a, json_object *item,
                        const pgrest_auth *auth, batch_item *bi,
                        const pgrest_statements **st, pgrest_error *err)
{
    pgrest_request *ireq = NULL;
    pgrest_api_request *api;
    pgrest_query_plan *plan;
    pgrest_statements *emitted;
    int rc;
    if ((rc = item_request(a, item, &ireq, err)) != PGREST_OK ||
        (rc = pgr_request_admissible(ctx, a, ireq, err)) != PGREST_OK ||
        (rc = pgr_parse_request_as(ctx, a, ireq, auth, &api, err)) != PGREST_OK ||
        (rc = pgrest_plan(ctx, a, api, &plan, err)) != PGREST_OK)
        return rc;
    plan->in_batch = true;
    bi->warning = pgr_legacy_warning(ctx, a, ireq, plan);
    /* the batch's Prefer: tx decides; an item's is not applied, so not
     * reported in its Preference-Applied either */
    plan->commit = true;
    plan->tx_override_applied = false;
    if ((rc = pgrest_emit_sql(ctx, a, plan, &emitted, err)) != PGREST_OK)
        return rc;
    *st = emitted;
    return PGREST_OK;
}

static int read_items(const pgr_config *cfg, const pgrest_request *req, json_object **out,
                      pgrest_error *err)
{
    json_tokener *tok = json_tokener_new_ex(cfg->limits.max_json_depth);
    if (tok == NULL)
        return pgr_error_oom(err);
    json_object *doc = req->body != NULL
                           ? json_tokener_parse_ex(tok, req->body, (int)req->body_len)
                           : NULL;
    bool complete = doc != NULL && json_tokener_get_error(tok) == json_tokener_success &&
                    (size_t)json_tokener_get_parse_end(tok) == req->body_len;
    json_tokener_free(tok);
    if (!complete || !json_object_is_type(doc, json_type_array)) {
        json_object_put(doc);
        return batch_error(err, 400, "Invalid batch body", "the body must be a JSON array of items");
    }
    size_t n = json_object_array_length(doc);
    if (n == 0 || n > (size_t)cfg->limits.max_batch_items) {
        json_object_put(doc);
        return batch_error(err, n == 0 ? 400 : 413, n == 0 ? "Empty batch" : "Too many batch items",
                           pgr_asprintf(req->arena, "%zu items; server-max-batch-items is %d", n,
                                        cfg->limits.max_batch_items));
    }
    *out = doc;
    return PGREST_OK;
}

static void put_doc(void *doc)
{
    json_object_put(doc);
}

int pgr_batch_prepare(pgrest_ctx *ctx, pgrest_arena *arena, const pgrest_request *req,
                      const pgrest_auth *auth, pgr_batch **out, pgrest_error *err)
{
    const pgr_config *cfg = pgr_cfg(ctx, arena);
    json_object *doc = NULL;
    int rc = read_items(cfg, req, &doc, err);
    if (rc != PGREST_OK)
        return rc;
    if (!pgr_arena_on_free(arena, put_doc, doc)) {
        json_object_put(doc);
        return pgr_error_oom(err);
    }
    size_t n = json_object_array_length(doc);
    pgr_batch *b = PGR_NEW(arena, pgr_batch);
    batch_item *items = PGR_NEW_ARRAY(arena, batch_item, n);
    const pgrest_statements **units = PGR_NEW_ARRAY(arena, const pgrest_statements *, n);
    if (b == NULL || items == NULL || units == NULL)
        return pgr_error_oom(err);
    *b = (pgr_batch){.arena = arena, .items = items, .units = units, .n = n};
    pgr_preferences prefs;
    pgr_parse_preferences(arena, req, &prefs);
    b->commit = pgr_plan_commits(cfg, prefs.tx, &b->tx_override_applied);
    for (size_t i = 0; i < n; i++) {
        const pgrest_statements *st;
        items[i] = (batch_item){0};
        rc = prepare_item(ctx, arena, json_object_array_get_idx(doc, i), auth, &items[i], &st,
                          err);
        if (rc == PGREST_OK)
            rc = rewrite_for_batch(arena, st, i, n, b->commit, &units[i], err);
        if (rc != PGREST_OK) {
            name_item(arena, i, err);
            return rc;
        }
    }
    *out = b;
    return PGREST_OK;
}

size_t pgr_batch_count(const pgr_batch *b)
{
    return b->n;
}

const pgrest_statements *pgr_batch_statements(const pgr_batch *b, size_t i)
{
    return b->units[i];
}

const pgrest_statements *const *pgr_batch_units(const pgr_batch *b)
{
    return b->units;
}

/* ------------------------------------------------------------ the answer */

/* Bodies PostgreSQL built as JSON go in as they are. */
static bool json_body(const pgrest_response *r)
{
    const char *ct = pgr_response_get_header(r, "Content-Type");
    return ct != NULL && r->body_len > 0 && (strstr(ct, "json") != NULL);
}

static void put_item(pgr_sb *sb, const pgrest_response *r)
{
    pgr_sb_puts(sb, "{\"status\":");
    pgr_sb_put_long(sb, r->status);
    pgr_sb_puts(sb, ",\"headers\":{");
    for (size_t h = 0; h < r->n_headers; h++) {
        if (h > 0)
            pgr_sb_putc(sb, ',');
        pgr_sb_put_json_string(sb, r->headers[h].name);
        pgr_sb_putc(sb, ':');
        pgr_sb_put_json_string(sb, r->headers[h].value);
    }
    pgr_sb_puts(sb, "},\"body\":");
    if (r->body_len == 0)
        pgr_sb_puts(sb, "null");
    else if (json_body(r))
        pgr_sb_putn(sb, r->body, r->body_len);
    else
        pgr_sb_put_json_string(sb, pgr_strndup(sb->arena, r->body, r->body_len));
    pgr_sb_putc(sb, '}');
}

static int batch_response(pgr_batch *b, pgrest_response **out, pgrest_error *err)
{
    pgr_sb sb;
    pgr_sb_init(&sb, b->arena, 256 * b->n);
    pgr_sb_putc(&sb, '[');
    for (size_t i = 0; i < b->n; i++) {
        if (i > 0)
            pgr_sb_putc(&sb, ',');
        put_item(&sb, b->items[i].resp);
    }
    pgr_sb_putc(&sb, ']');
    const char *body = pgr_sb_finish(&sb);
    pgrest_response *r = pgr_response_new(b->arena, 200);
    if (body == NULL || r == NULL)
        return pgr_error_oom(err);
    pgr_response_add_header(b->arena, r, "Content-Type", "application/json; charset=utf-8");
    if (b->tx_override_applied)
        pgr_response_add_header(b->arena, r, "Preference-Applied",
                                b->commit ? "tx=commit" : "tx=rollback");
    r->body = body;
    r->body_len = strlen(body);
    *out = r;
    return PGREST_OK;
}

bool pgr_batch_item_done(pgr_batch *b, size_t i, int *rc, pgrest_response **resp,
                         pgrest_error *err)
{
    if (*rc != PGREST_OK) {
        name_item(b->arena, i, err);
        if (*resp != NULL)
            name_item_in_body(b->arena, i, *resp);
        return false;
    }
    b->items[i].resp = *resp;
    /* what decorating the item's own response would have added */
    if (b->items[i].warning != NULL)
        pgr_response_add_header(b->arena, *resp, "Warning", b->items[i].warning);
    if (i + 1 < b->n)
        return true;
    *rc = batch_response(b, resp, err);
    return false;
}
