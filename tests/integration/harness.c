#include "harness.h"

#include <check.h>
#include <poll.h>
#include <json-c/json.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *harness_db_uri(void)
{
    const char *uri = getenv("PGREST_TEST_DB_URI");
    if (uri == NULL || *uri == '\0') {
        fprintf(stderr, "PGREST_TEST_DB_URI not set: skipping integration tests\n");
        exit(77);
    }
    return uri;
}

pgrest_ctx *harness_ctx(const char *const *extra)
{
    const char *uri = harness_db_uri();
    pgrest_ctx *ctx = pgrest_ctx_new();
    pgrest_error err = {0};
    const char *base[][2] = {
        {"db-uri", uri}, {"db-schemas", "api"}, {"db-anon-role", "web_anon"},
        {"db-pool", "4"}, {"jwt-secret", "reallyreallyreallyreallyverysafe"},
    };
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
        if (pgrest_ctx_set(ctx, base[i][0], base[i][1], &err) != PGREST_OK)
            abort();
    for (size_t i = 0; extra != NULL && extra[i] != NULL; i += 2)
        if (pgrest_ctx_set(ctx, extra[i], extra[i + 1], &err) != PGREST_OK)
            abort();
    if (pgrest_ctx_load_schema(ctx, &err) != PGREST_OK) {
        fprintf(stderr, "schema load failed: %s %s\n", err.message,
                err.details ? err.details : "");
        abort();
    }
    return ctx;
}

const char *harness_chinook_uri(void)
{
    const char *uri = getenv("PGREST_TEST_CHINOOK_URI");
    return uri != NULL && *uri != '\0' ? uri : NULL;
}

static void set_options(pgrest_ctx *ctx, const char *const *kv)
{
    pgrest_error err = {0};
    for (size_t i = 0; kv != NULL && kv[i] != NULL; i += 2)
        if (pgrest_ctx_set(ctx, kv[i], kv[i + 1], &err) != PGREST_OK) {
            fprintf(stderr, "option %s: %s\n", kv[i], err.message);
            abort();
        }
}

pgrest_ctx *harness_chinook_ctx(const char *const *extra)
{
    const char *base[] = {"db-uri", harness_chinook_uri(), "db-schemas", "public",
                          "db-anon-role", "postgres", "db-pool", "2", NULL};
    pgrest_ctx *ctx = pgrest_ctx_new();
    set_options(ctx, base);
    set_options(ctx, extra);
    pgrest_error err = {0};
    ck_assert_msg(pgrest_ctx_load_schema(ctx, &err) == PGREST_OK, "%s", err.message);
    return ctx;
}

PGconn *harness_chinook_connect(void)
{
    PGconn *c = PQconnectdb(harness_chinook_uri());
    ck_assert_msg(PQstatus(c) == CONNECTION_OK, "%s", PQerrorMessage(c));
    return c;
}

json_object *harness_sql_json(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "%s: %s", sql, PQerrorMessage(c));
    /* json_agg over no rows is NULL: the empty array */
    json_object *j = json_tokener_parse(PQgetisnull(r, 0, 0) ? "[]" : PQgetvalue(r, 0, 0));
    PQclear(r);
    ck_assert_msg(j != NULL, "not JSON: %s", sql);
    return j;
}

long harness_sql_long(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "%s: %s", sql, PQerrorMessage(c));
    long n = strtol(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return n;
}

void harness_assert_same_json(json_object *ours, json_object *theirs, bool sort_arrays)
{
    char *a = harness_json_canonical(ours, sort_arrays);
    char *b = harness_json_canonical(theirs, sort_arrays);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    json_object_put(ours);
    json_object_put(theirs);
}

pgrest_request *harness_new_request(pgrest_arena *a, const char *method, const char *path,
                                    const char *query, const char *const *headers,
                                    const char *body)
{
    pgrest_request *req = pgrest_request_new(a, method, path, query);
    for (size_t i = 0; headers != NULL && headers[i] != NULL; i += 2)
        pgrest_request_add_header(req, headers[i], headers[i + 1]);
    if (body != NULL)
        pgrest_request_set_body(req, body, strlen(body));
    return req;
}

void harness_request(pgrest_ctx *ctx, const char *method, const char *path,
                     const char *query, const char *const *headers,
                     const char *body, test_response *out)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = harness_new_request(a, method, path, query, headers, body);
    pgrest_response *resp = pgrest_handle(ctx, a, req);
    memset(out, 0, sizeof *out);
    out->status = pgrest_response_status(resp);
    const char *reason = pgrest_response_reason(resp);
    out->reason = reason ? strdup(reason) : NULL;
    size_t len;
    const char *b = pgrest_response_body(resp, &len);
    out->body = strndup(b ? b : "", len);
    size_t n = pgrest_response_header_count(resp);
    for (size_t i = 0; i < n && i < 32; i++) {
        const pgrest_header *h = pgrest_response_header(resp, i);
        out->headers[i][0] = strdup(h->name);
        out->headers[i][1] = strdup(h->value);
        out->n_headers++;
    }
    pgrest_arena_free(a);
}

const char *harness_header(const test_response *r, const char *name)
{
    for (size_t i = 0; i < r->n_headers; i++)
        if (strcasecmp(r->headers[i][0], name) == 0)
            return r->headers[i][1];
    return NULL;
}

void harness_free(test_response *r)
{
    free(r->body);
    free(r->reason);
    for (size_t i = 0; i < r->n_headers; i++) {
        free(r->headers[i][0]);
        free(r->headers[i][1]);
    }
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

char *harness_json_canonical(json_object *j, bool sort_arrays)
{
    if (json_object_is_type(j, json_type_array)) {
        size_t n = json_object_array_length(j);
        char **parts = calloc(n + 1, sizeof *parts);
        size_t total = 3;
        for (size_t i = 0; i < n; i++) {
            parts[i] = harness_json_canonical(json_object_array_get_idx(j, i), sort_arrays);
            total += strlen(parts[i]) + 1;
        }
        if (sort_arrays)
            qsort(parts, n, sizeof *parts, compare_strings);
        char *out = calloc(1, total);
        strcat(out, "[");
        for (size_t i = 0; i < n; i++) {
            if (i > 0)
                strcat(out, ",");
            strcat(out, parts[i]);
            free(parts[i]);
        }
        strcat(out, "]");
        free(parts);
        return out;
    }
    if (json_object_is_type(j, json_type_object)) {
        /* keys sorted so key order does not matter either */
        size_t n = (size_t)json_object_object_length(j), k = 0, total = 3;
        char **parts = calloc(n + 1, sizeof *parts);
        json_object_object_foreach(j, key, val) {
            char *v = harness_json_canonical(val, sort_arrays);
            size_t len = strlen(key) + strlen(v) + 4;
            parts[k] = malloc(len);
            snprintf(parts[k], len, "\"%s\":%s", key, v);
            total += len;
            free(v);
            k++;
        }
        qsort(parts, n, sizeof *parts, compare_strings);
        char *out = calloc(1, total);
        strcat(out, "{");
        for (size_t i = 0; i < n; i++) {
            if (i > 0)
                strcat(out, ",");
            strcat(out, parts[i]);
            free(parts[i]);
        }
        strcat(out, "}");
        free(parts);
        return out;
    }
    return strdup(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
}

PGconn *harness_admin_connect(void)
{
    const char *uri = getenv("PGREST_TEST_ADMIN_URI");
    if (uri == NULL || *uri == '\0') {
        fprintf(stderr, "PGREST_TEST_ADMIN_URI not set: skipping\n");
        exit(77);
    }
    PGconn *c = PQconnectdb(uri);
    ck_assert_msg(PQstatus(c) == CONNECTION_OK, "%s", PQerrorMessage(c));
    harness_admin_exec(c, "SET client_min_messages = warning");
    return c;
}

void harness_admin_exec(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK, "%s: %s", sql, PQerrorMessage(c));
    PQclear(r);
}

int harness_authenticate(pgrest_ctx *ctx, pgrest_arena *a, pgrest_request *req,
                         pgrest_error *err)
{
    pgrest_auth *auth;
    int rc = pgrest_authenticate(ctx, a, req, &auth, err);
    if (rc == PGREST_OK)
        pgrest_request_set_auth(req, auth);
    return rc;
}

void harness_advance_until(pgrest_task *t, int until)
{
    int w = pgrest_task_wait_state(t);
    while (w != PGREST_TASK_DONE && w != until) {
        ck_assert_int_ne(w, PGREST_TASK_WANTS_BODY);
        if (w == PGREST_TASK_WAIT_CONN) {
            poll(NULL, 0, 2);
        } else {
            struct pollfd pfd = {.fd = pgrest_task_socket(t),
                                 .events = POLLIN | (w == PGREST_TASK_WAIT_WRITE ? POLLOUT : 0)};
            ck_assert_int_ge(pfd.fd, 0);
            poll(&pfd, 1, 5000);
        }
        w = pgrest_task_advance(t);
    }
}

char *harness_flatten(const pgrest_response *resp)
{
    ck_assert_ptr_nonnull(resp);
    size_t blen;
    const char *body = pgrest_response_body(resp, &blen);
    size_t cap = 8192 + blen, len = 0;
    char *out = malloc(cap);
    const char *reason = pgrest_response_reason(resp);
    len += (size_t)snprintf(out + len, cap - len, "%d %s\n", pgrest_response_status(resp),
                            reason ? reason : "");
    for (size_t i = 0; i < pgrest_response_header_count(resp); i++) {
        const pgrest_header *h = pgrest_response_header(resp, i);
        len += (size_t)snprintf(out + len, cap - len, "%s: %s\n", h->name, h->value);
    }
    ck_assert_uint_lt(len + blen + 2, cap);
    out[len++] = '\n';
    memcpy(out + len, body, blen);
    out[len + blen] = '\0';
    return out;
}
