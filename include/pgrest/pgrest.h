/*
 * libpgrest — PostgREST's HTTP semantics as an embeddable C library.
 *
 * The pipeline is four calls, each usable on its own:
 *
 *   pgrest_parse_request  HTTP pieces -> api request      (no database)
 *   pgrest_plan           api request -> plan             (schema cache only)
 *   pgrest_emit_sql       plan -> statements + $n params   (pure)
 *   pgrest_execute        statements -> response           (one round trip)
 *
 * pgrest_handle() chains them on the context's connection pool.
 *
 * Memory: every object produced while answering one request lives in a
 * pgrest_arena that the caller creates and frees; freeing the arena frees
 * the request, the plan, the SQL, the response and any error strings.
 * Pointers returned by accessors stay valid until the arena is freed.
 *
 * Threads: a pgrest_ctx may be shared by many threads once configured
 * (pgrest_ctx_set is not thread-safe; everything else is). An arena belongs
 * to one thread at a time.
 *
 * Errors: fallible calls return PGREST_OK (0) or a negative pgrest_status
 * and fill the caller's pgrest_error, whose strings live in the arena (or,
 * for context-level calls without an arena, in the context until the next
 * call on it from the same thread... see each function).
 */
#ifndef PGREST_H
#define PGREST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PGREST_API __attribute__((visibility("default")))
#else
#define PGREST_API
#endif

#define PGREST_VERSION_MAJOR 0
#define PGREST_VERSION_MINOR 1
#define PGREST_VERSION_PATCH 0
#define PGREST_VERSION_STRING "0.1.0"

/* Feature macros: a host can test for them with #ifdef. */
#define PGREST_HAS_PIPELINE_EXECUTION 1
#define PGREST_HAS_SCHEMA_SNAPSHOT 1

/* Return codes. Values only ever grow; retired values keep their number. */
typedef enum pgrest_status {
    PGREST_OK = 0,
    PGREST_AGAIN = 1,          /* non-blocking execution: not finished yet */
    PGREST_ERR_REQUEST = -1,   /* the client's request is invalid (4xx) */
    PGREST_ERR_DATABASE = -2,  /* PostgreSQL reported an error */
    PGREST_ERR_CONNECTION = -3,/* no usable database connection (503) */
    PGREST_ERR_CONFIG = -4,    /* invalid configuration key or value */
    PGREST_ERR_INTERNAL = -5,  /* out of memory, arena cap, bug */
    PGREST_ERR_SCHEMA = -6     /* schema cache missing or unreadable */
} pgrest_status;

/* Opaque handles. */
typedef struct pgrest_ctx pgrest_ctx;
typedef struct pgrest_arena pgrest_arena;
typedef struct pgrest_request pgrest_request;         /* raw HTTP pieces */
typedef struct pgrest_api_request pgrest_api_request; /* parsed request */
typedef struct pgrest_query_plan pgrest_query_plan;
typedef struct pgrest_statements pgrest_statements;
typedef struct pgrest_response pgrest_response;
typedef struct pgrest_pending pgrest_pending;       /* execution in flight */

/* Read-only records filled by the library. */
typedef struct pgrest_error {
    int http_status;     /* e.g. 400 */
    const char *code;    /* "PGRST100" or a SQLSTATE such as "23505" */
    const char *message;
    const char *details; /* may be NULL */
    const char *hint;    /* may be NULL */
} pgrest_error;

typedef struct pgrest_header {
    const char *name;
    const char *value;
} pgrest_header;

/* ---------------------------------------------------------------- arena */

/* Creates an arena for one request. cap_bytes bounds the total memory the
 * request may use (0 = library default, 64 MiB); exceeding it makes the
 * current call, and every later stage on the arena, fail with
 * PGREST_ERR_INTERNAL (500 PGRST500), never succeed with a missing piece.
 * Returns NULL on OOM.
 * The caller owns the arena and frees it with pgrest_arena_free. */
PGREST_API pgrest_arena *pgrest_arena_new(size_t cap_bytes);

/* Frees the arena and everything allocated in it. Accepts NULL. */
PGREST_API void pgrest_arena_free(pgrest_arena *arena);

/* ---------------------------------------------------------------- context */

/* Creates a context with PostgREST's default configuration. The caller owns
 * it; free with pgrest_ctx_free. Returns NULL on OOM. */
PGREST_API pgrest_ctx *pgrest_ctx_new(void);

/* Frees the context, closes pooled connections. Accepts NULL. Must not be
 * called while other threads still use the context. */
PGREST_API void pgrest_ctx_free(pgrest_ctx *ctx);

/* Sets a configuration option by its PostgREST name ("db-uri",
 * "db-schemas", "db-anon-role", "app.settings.x", ...). Values are copied.
 * Returns PGREST_ERR_CONFIG for unknown keys or invalid values, with a
 * message in *err (strings owned by ctx, valid until the next set call).
 * Not thread-safe: configure before sharing the context. */
PGREST_API int pgrest_ctx_set(pgrest_ctx *ctx, const char *key,
                              const char *value, pgrest_error *err);

/* Returns the current value of an option as text, or NULL if unset.
 * The string is owned by ctx and valid until the option changes. */
PGREST_API const char *pgrest_ctx_get(const pgrest_ctx *ctx, const char *key);

/* Connects to db-uri and loads the schema cache by introspection (one
 * round trip). Thread-safe: may be called again to reload; requests in
 * flight keep the cache they started with. err strings are owned by ctx
 * until the next reload. */
PGREST_API int pgrest_ctx_load_schema(pgrest_ctx *ctx, pgrest_error *err);

/* Loads the schema cache from a JSON snapshot file written by
 * pgrest_ctx_save_schema (no database needed). Thread-safe swap. */
PGREST_API int pgrest_ctx_load_schema_file(pgrest_ctx *ctx, const char *path,
                                           pgrest_error *err);

/* Writes the current schema cache as a JSON snapshot to path. */
PGREST_API int pgrest_ctx_save_schema_file(pgrest_ctx *ctx, const char *path,
                                           pgrest_error *err);

/* Starts the background worker thread. It LISTENs on db-channel (default
 * "pgrst") on its own connection and reloads the schema cache on the
 * payloads "reload schema" or "" (PostgREST ref/listener); "reload config"
 * calls on_reload_config(arg) if given (from the worker thread); other
 * payloads are ignored. It also recovers the connection (PostgREST
 * connectionWorker): while no schema cache is loaded, or after the LISTEN
 * connection breaks or a request gets PGRST000/PGRST001, it reconnects with
 * exponential backoff (1 s doubling up to 32 s) and reloads the schema
 * cache; pgrest_ctx_ready is 0 meanwhile and 503 responses carry
 * Retry-After. With db-channel-enabled = false it only recovers.
 * Stopped and joined by pgrest_ctx_free or pgrest_ctx_stop_listener. */
PGREST_API int pgrest_ctx_start_listener(pgrest_ctx *ctx,
                                         void (*on_reload_config)(void *arg),
                                         void *arg, pgrest_error *err);
PGREST_API void pgrest_ctx_stop_listener(pgrest_ctx *ctx);

/* Readiness as PostgREST's admin /ready sees it: 1 when a schema cache is
 * loaded and the database is not being recovered, 0 otherwise.
 * Thread-safe. */
PGREST_API int pgrest_ctx_ready(pgrest_ctx *ctx);

/* Metrics in the Prometheus text format (PostgREST ref/observability):
 * pool max/available/waiting/timeouts, schema cache loads and query time,
 * requests by status. The text lives in the arena; NULL when the arena
 * cannot hold it. Thread-safe. */
PGREST_API const char *pgrest_ctx_metrics(pgrest_ctx *ctx, pgrest_arena *arena);

/* PostgREST's log-query for hosts: once a request's response is built,
 * pgrest_handle calls fn(arg, status, sql) for each statement it ran
 * (SQL text only; parameter values are never passed). Called from the
 * thread that handled the request; fn must be thread-safe. Set before
 * sharing the context; NULL turns it off. */
typedef void (*pgrest_query_logger)(void *arg, int status, const char *sql);
PGREST_API void pgrest_ctx_set_query_logger(pgrest_ctx *ctx,
                                            pgrest_query_logger fn, void *arg);

/* ---------------------------------------------------------------- request */

/* Creates a raw request in the arena. method is the HTTP verb, path the
 * percent-encoded path ("/items"), query the raw query string without '?'
 * (may be NULL). Strings are copied into the arena. */
PGREST_API pgrest_request *pgrest_request_new(pgrest_arena *arena,
                                              const char *method,
                                              const char *path,
                                              const char *query);

/* Appends a header (copied). Repeated names are kept in order. */
PGREST_API void pgrest_request_add_header(pgrest_request *req,
                                          const char *name, const char *value);

/* Sets the body (copied; binary-safe). */
PGREST_API void pgrest_request_set_body(pgrest_request *req, const char *body,
                                        size_t len);

/* ---------------------------------------------------------------- stages */

/* Parses the raw request: target, action, select/filter/order trees,
 * range, preferences, payload. Needs no database and no schema cache; reads
 * only the context's configuration. *out lives in the arena. */
PGREST_API int pgrest_parse_request(pgrest_ctx *ctx, pgrest_arena *arena,
                                    const pgrest_request *req,
                                    pgrest_api_request **out,
                                    pgrest_error *err);

/* Resolves the api request against the context's schema cache (relations,
 * columns, relationships, routines, media types). No database. */
PGREST_API int pgrest_plan(pgrest_ctx *ctx, pgrest_arena *arena,
                           const pgrest_api_request *api, pgrest_query_plan **out,
                           pgrest_error *err);

/* Turns the plan into statements with $n parameters. Pure. */
PGREST_API int pgrest_emit_sql(pgrest_ctx *ctx, pgrest_arena *arena,
                               const pgrest_query_plan *plan,
                               pgrest_statements **out, pgrest_error *err);

/* Number of statements (settings preamble, pre-request, main, ...). */
PGREST_API size_t pgrest_statements_count(const pgrest_statements *st);
/* SQL text of statement i (owned by the arena). */
PGREST_API const char *pgrest_statements_sql(const pgrest_statements *st,
                                             size_t i);
/* Parameters of statement i: count, and value j (NULL = SQL NULL). */
PGREST_API size_t pgrest_statements_param_count(const pgrest_statements *st,
                                                size_t i);
PGREST_API const char *pgrest_statements_param(const pgrest_statements *st,
                                               size_t i, size_t j);

/* Runs the statements in one pipelined round trip on conn (a libpq
 * PGconn *, passed as void * so this header does not need libpq-fe.h).
 * The connection must be idle and is left idle. Errors from PostgreSQL are
 * mapped to PostgREST's status codes in *err. *out lives in the arena.
 * Some failures also set *out to the complete error response, whose
 * headers the error alone cannot carry: a function raising SQLSTATE
 * 'PGRST' (PGREST_ERR_DATABASE; status and headers the function chose)
 * and an unsatisfiable range (416 with Content-Range). */
PGREST_API int pgrest_execute(pgrest_ctx *ctx, pgrest_arena *arena,
                              const pgrest_statements *st, void *conn,
                              pgrest_response **out, pgrest_error *err);

/* Non-blocking execution for hosts with their own event loop: send puts
 * the pipeline on the connection (switched to non-blocking for the
 * duration) and returns at once; then, whenever PQsocket(conn) is readable
 * -- or writable while pgrest_pending_wants_write() is true -- call
 * consume, which returns PGREST_AGAIN until the response is complete and
 * then PGREST_OK (or an error, as pgrest_execute). The connection must
 * not be used for anything else until consume stops returning AGAIN. The
 * pending object lives in the arena. */
PGREST_API int pgrest_execute_send(pgrest_ctx *ctx, pgrest_arena *arena,
                                   const pgrest_statements *st, void *conn,
                                   pgrest_pending **out, pgrest_error *err);
PGREST_API int pgrest_pending_wants_write(const pgrest_pending *p);
PGREST_API int pgrest_execute_consume(pgrest_pending *p, pgrest_response **out,
                                      pgrest_error *err);

/* One call for hosts: parse, authenticate, plan, emit, execute on a pooled
 * connection. Always produces a response (errors become PostgREST's JSON
 * error responses); returns NULL only on OOM. */
PGREST_API pgrest_response *pgrest_handle(pgrest_ctx *ctx,
                                          pgrest_arena *arena,
                                          const pgrest_request *req);

/* Builds the HTTP response PostgREST sends for err. On an exhausted arena
 * it may use up to 16 KiB beyond the cap; an error whose response still
 * does not fit is answered with the out-of-memory error. NULL only on OOM
 * or NULL arguments. */
PGREST_API pgrest_response *pgrest_error_response(pgrest_ctx *ctx,
                                                  pgrest_arena *arena,
                                                  const pgrest_error *err);

/* ---------------------------------------------------------------- response */

PGREST_API int pgrest_response_status(const pgrest_response *resp);
PGREST_API size_t pgrest_response_header_count(const pgrest_response *resp);
/* Header i; the record and its strings are owned by the arena. */
PGREST_API const pgrest_header *
pgrest_response_header(const pgrest_response *resp, size_t i);
/* Body bytes (not NUL-terminated necessarily) and their length. */
PGREST_API const char *pgrest_response_body(const pgrest_response *resp,
                                            size_t *len);

/* Library version string, e.g. "0.1.0". */
PGREST_API const char *pgrest_version(void);

#ifdef __cplusplus
}
#endif
#endif /* PGREST_H */
