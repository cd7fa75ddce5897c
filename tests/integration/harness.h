/* Shared setup for integration tests: a context on the database named by
 * PGREST_TEST_DB_URI (loaded with tests/fixtures/test_schema.sql), and a
 * helper that runs one request through pgrest_handle. */
#ifndef PGREST_TEST_HARNESS_H
#define PGREST_TEST_HARNESS_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>
#include <libpq-fe.h>

#include "pgrest/pgrest.h"

typedef struct test_response {
    int status;
    char *reason;               /* pgrest_response_reason copy, or NULL */
    char *body;                 /* NUL-terminated copy */
    char *headers[32][2];
    size_t n_headers;
} test_response;

/* Exits 77 (skip) when PGREST_TEST_DB_URI is unset. */
pgrest_ctx *harness_ctx(const char *const *extra_options);
/* The request harness_request sends: headers as name, value pairs ended
 * by NULL, body may be NULL. */
pgrest_request *harness_new_request(pgrest_arena *a, const char *method, const char *path,
                                    const char *query, const char *const *headers,
                                    const char *body);
void harness_request(pgrest_ctx *ctx, const char *method, const char *path,
                     const char *query, const char *const *headers,
                     const char *body, test_response *out);
const char *harness_header(const test_response *r, const char *name);

/* A superuser connection to the test database (PGREST_TEST_ADMIN_URI;
 * exits 77, skip, when it is unset), with client_min_messages = warning. */
PGconn *harness_admin_connect(void);
/* Runs sql on c; the test fails unless the command succeeded. */
void harness_admin_exec(PGconn *c, const char *sql);
void harness_free(test_response *r);
/* The staged API's authentication, before parsing (parsing never reads
 * the token): authenticates req and attaches the identity the statements
 * run as. Returns pgrest_authenticate's status. */
int harness_authenticate(pgrest_ctx *ctx, pgrest_arena *a, pgrest_request *req,
                         pgrest_error *err);
/* The database URI (for tests that open their own PGconn). */
const char *harness_db_uri(void);

/* The Chinook database (../shared/bench/chinook.sql) named by
 * PGREST_TEST_CHINOOK_URI, or NULL when it is unset (tests skip then). */
const char *harness_chinook_uri(void);
/* A context on Chinook as PostgREST's benchmark serves it (schema public,
 * db-anon-role postgres, pool of 2) plus extra options (key, value pairs
 * ended by NULL), its schema loaded. */
pgrest_ctx *harness_chinook_ctx(const char *const *extra);
/* A direct connection to Chinook. */
PGconn *harness_chinook_connect(void);
/* The first column of sql's first row on c, parsed as JSON (NULL, as
 * json_agg gives over no rows: the empty array). */
json_object *harness_sql_json(PGconn *c, const char *sql);
/* The first column of sql's first row on c, as an integer (a count). */
long harness_sql_long(PGconn *c, const char *sql);
/* ours and theirs have the same canonical text (see below); frees both. */
void harness_assert_same_json(json_object *ours, json_object *theirs, bool sort_arrays);

/* Canonical text of a JSON value: object keys sorted; with sort_arrays,
 * array elements too (rows compared as a multiset). Free the result. */
char *harness_json_canonical(json_object *j, bool sort_arrays);

/* Advances t as a host loop would (poll on its socket, or a short sleep
 * while it waits for a connection) until its wait state is `until` or
 * DONE; it must never want its body meanwhile. */
void harness_advance_until(pgrest_task *t, int until);
/* A response flattened to one string: status, reason, headers in order,
 * body; for comparing two answers whole. Free the result. */
char *harness_flatten(const pgrest_response *resp);

#endif
