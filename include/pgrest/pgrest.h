/*
 * libpgrest — PostgREST's HTTP semantics as an embeddable C library.
 *
 * The pipeline is five calls, each usable on its own, in this order:
 *
 *   pgrest_authenticate   request -> identity (role, claims)  (JWT cache)
 *   pgrest_parse_request  HTTP pieces -> api request      (no database)
 *   pgrest_plan           api request -> plan             (schema cache only)
 *   pgrest_emit_sql       plan -> statements + $n params   (pure)
 *   pgrest_execute        statements -> response           (one round trip)
 *
 * Authentication is a stage of its own (pgrest_authenticate, or an
 * identity the host supplies with pgrest_auth_supply), attached to the
 * request with pgrest_request_set_auth; parsing never authenticates. The
 * stages do only what their comments say: CORS (preflights and headers),
 * OPTIONS answers, Server-Timing, metrics, the query log and the other
 * decorations of a response belong to the request engine (pgrest_task_*),
 * which runs the whole request -- the stages, a pooled connection,
 * execution, the decorated response -- without ever blocking, for hosts
 * with an event loop; pgrest_handle() is a blocking loop over it.
 *
 * Memory: every object produced while answering one request lives in a
 * pgrest_arena that the caller creates and frees; freeing the arena frees
 * the request, the plan, the SQL, the response and any error strings.
 * Pointers returned by accessors stay valid until the arena is freed.
 *
 * Threads: a pgrest_ctx may be shared by many threads; every call on it is
 * thread-safe except pgrest_ctx_free and the callback setters
 * (pgrest_ctx_set_query_logger, pgrest_ctx_set_observer: set them before
 * sharing the context). The configuration is an immutable snapshot: pgrest_ctx_set
 * and reloads build a new one and swap it in atomically, and a request
 * keeps the snapshot it started with until its arena is freed (so an arena
 * serves requests of one context). An arena belongs to one thread at a
 * time.
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
/* The PostgREST release whose behaviour the library follows. */
#define PGREST_POSTGREST_VERSION "16.1"
/* PostgREST's prettyVersion as pgrest fills it: the followed release, then
 * the implementation (the OpenAPI info.version, the Server header after
 * "postgrest/", the Warning 299 agent without its spaces). */
#define PGREST_PRETTY_VERSION PGREST_POSTGREST_VERSION " (pgrest " PGREST_VERSION_STRING ")"

/* Feature macros: a host can test for them with #ifdef. */
#define PGREST_HAS_PIPELINE_EXECUTION 1
#define PGREST_HAS_SCHEMA_SNAPSHOT 1
#define PGREST_HAS_AUTH_STAGE 1
#define PGREST_HAS_TASK_ENGINE 1
#define PGREST_HAS_STREAMING 1
#define PGREST_HAS_READ_REPLICAS 1
#define PGREST_HAS_BODY_CHUNKS 1

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
typedef struct pgrest_auth pgrest_auth;             /* authentication outcome */
typedef struct pgrest_task pgrest_task;             /* one request in the engine */

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
 * "db-schemas", "db-anon-role", "app.settings.x", ...) or alias
 * ("db-schema", "max-rows", ...). Values are copied; an empty value
 * leaves the option at its default (PostgREST's optString). Returns
 * PGREST_ERR_CONFIG for unknown keys or invalid values (the whole
 * configuration is checked, e.g. a jwt-secret shorter than 32 characters
 * that is no JWK), with PostgREST's config error text in err->message
 * (http_status 0, code NULL: not an HTTP error; strings owned by ctx until
 * it is freed); the configuration is then unchanged. Thread-safe: builds
 * a new configuration snapshot and swaps it in; requests already started
 * finish with the one they began with. db-uri, db-pool and
 * db-pool-acquisition-timeout take effect only before the first
 * pgrest_ctx_load_schema or pgrest_ctx_reload_config (which create the
 * pool). */
PGREST_API int pgrest_ctx_set(pgrest_ctx *ctx, const char *key,
                              const char *value, pgrest_error *err);

/* 1 when key is a configuration option pgrest_ctx_set accepts (PostgREST's
 * options, their aliases, app.settings.*, pgrest's limits), 0 otherwise:
 * a host reading a PostgREST config file can ignore unknown keys, as
 * PostgREST does, and still have invalid values refused. */
PGREST_API int pgrest_config_key_known(const char *key);

/* The configuration options pgrest knows, one record each: PostgREST's
 * (ref/configuration) and pgrest's own (docs/operations.md). A host that
 * reads PostgREST's sources (a file, PGRST_* variables) learns from them
 * which keys are options, under which variable and which in-database
 * setting each is read, and what it defaults to. */
typedef enum pgrest_option_type {
    PGREST_OPTION_TEXT,
    PGREST_OPTION_BOOL,      /* true/false, on/off, yes/no, 1/0 */
    PGREST_OPTION_INT,
    PGREST_OPTION_LIST,      /* comma-separated */
    PGREST_OPTION_CHOICE     /* one of a few words */
} pgrest_option_type;

/* How PostgREST's --dump-config writes an option's line. */
typedef enum pgrest_option_dump {
    PGREST_DUMP_NONE,        /* not dumped */
    PGREST_DUMP_TEXT,        /* key = "text" */
    PGREST_DUMP_NAME,        /* key = "schema.name" as a qualified name (dumpQi) */
    PGREST_DUMP_VALUE,       /* key = 10, key = true; key = "" when unset */
    PGREST_DUMP_IF_SET,      /* key = "text", only when set (pgrest's own) */
    PGREST_DUMP_VALUE_IF_SET /* key = 10, only when set (pgrest's own) */
} pgrest_option_dump;

typedef struct pgrest_option_info {
    const char *name;            /* "db-schemas" */
    const char *alias;           /* its deprecated name ("db-schema"), or NULL */
    const char *env;             /* "PGRST_DB_SCHEMAS" */
    const char *in_database;     /* read as pgrst.<this> with db-config, or NULL */
    pgrest_option_type type;
    const char *default_value;   /* as PostgREST's --dump-config shows it; NULL: unset */
    int postgrest;               /* 1: PostgREST's option, 0: pgrest's own */
    pgrest_option_dump dump;
} pgrest_option_info;

/* The i-th option (0-based), or NULL past the last one. Static storage. */
PGREST_API const pgrest_option_info *pgrest_option_at(size_t i);

/* The option named key or whose alias key is, or NULL (app.settings.*
 * are options too, but not in the table). Static storage. */
PGREST_API const pgrest_option_info *pgrest_option_find(const char *key);

/* For a host that reads PostgREST's configuration sources itself (a
 * config file, PGRST_* variables), as pgrest-server does: how PostgREST
 * reads text there (Config.hs coerceInt / coerceBool: every PGRST_*
 * value, every quoted value of the file) -- 1 and *out when text reads as
 * one, 0 when it does not (the option keeps its default). */
PGREST_API int pgrest_config_read_int(const char *text, long long *out);
PGREST_API int pgrest_config_read_bool(const char *text, int *out);

/* Haskell's `show` of text, as PostgREST's messages quote a value:
 * malloc'd (free()), NULL on OOM. */
PGREST_API char *pgrest_config_show(const char *text);

/* Checks value as option key's value beyond its type, as PostgREST's
 * configuration parser does: jwt-aud (a string, or a URI when it has a
 * ':'), openapi-server-proxy-uri, jwt-role-claim-key (RFC 9535 JSONPath,
 * or the deprecated JSPath DSL: then *legacy = 1), a choice option
 * (PGREST_OPTION_CHOICE: one of its names). Other keys pass. On
 * PGREST_OK, *dump (when dump != NULL) is the value as --dump-config
 * shows it, malloc'd; on PGREST_ERR_CONFIG, *message (when message !=
 * NULL) is PostgREST's text, malloc'd, without "Error in config ". */
PGREST_API int pgrest_option_check(const char *key, const char *value, char **dump,
                                   int *legacy, char **message);

/* Checks jwt-secret as PostgREST's parseSecret does: with is_base64 it is
 * decoded first; a JWK or JWK Set is taken as is, any other secret needs
 * 32 bytes. On PGREST_OK, *dump is the secret as --dump-config shows it
 * (re-encoded when base64), malloc'd; on PGREST_ERR_CONFIG, *message
 * (when message != NULL) is PostgREST's text, malloc'd. */
PGREST_API int pgrest_jwt_secret_check(const char *secret, int is_base64, char **dump,
                                       char **message);

/* PostgREST's configuration sources read as its Config.hs does, for any
 * host (pgrest-server, a binding): the host adds the values it read (a
 * config file, PGRST_* variables, in-database settings) and resolves
 * them; the library applies PostgREST's value kinds and coercions
 * (coerceText / coerceInt / coerceBool), aliases and which one wins,
 * defaults, its checks in its order with its messages, @file for db-uri
 * and jwt-secret, and the JWT secret's check. The resolved options are
 * what the host hands to pgrest_ctx_set / pgrest_ctx_reload_config, and
 * what --dump-config shows. Not thread-safe: one thread at a time. */
typedef struct pgrest_config_sources pgrest_config_sources;

/* How a value was written (configurator's value types). PGRST_* and
 * in-database values are always strings. */
typedef enum pgrest_value_kind {
    PGREST_VALUE_STRING,   /* "quoted" in a file; every other source */
    PGREST_VALUE_NUMBER,   /* unquoted 10, -1, 2.5 in a file (value as written) */
    PGREST_VALUE_BOOL,     /* unquoted true/false in a file (value "true"/"false") */
} pgrest_value_kind;

/* An empty set of sources; the caller frees it with
 * pgrest_config_sources_free. NULL on OOM. */
PGREST_API pgrest_config_sources *pgrest_config_sources_new(void);
PGREST_API void pgrest_config_sources_free(pgrest_config_sources *s);

/* Adds key = value as written (both copied); a later value for the same
 * key replaces the earlier one, so a host adds the sources in order of
 * precedence, lowest first (file, then environment). Any key is accepted:
 * keys PostgREST does not know are passed through as given. Forgets an
 * earlier resolution. PGREST_OK, or PGREST_ERR_INTERNAL on OOM or a
 * NULL argument. */
PGREST_API int pgrest_config_sources_add(pgrest_config_sources *s, const char *key,
                                         const char *value, pgrest_value_kind kind);

/* Adds the values of PostgREST's configuration file at path, as its
 * configurator reads them: `key = value` lines; "quoted strings" with
 * backslash escapes, $$ for a dollar and $(NAME) for an earlier key of
 * the file or else the environment variable NAME; unquoted numbers and
 * true/false/on/off; # comments. Each value keeps the kind it was written
 * in. Nothing is added when the file cannot be read: PGREST_ERR_CONFIG
 * with "Error in config <path>: openFile: does not exist (...)",
 * "Error in config <path>: the file holds a NUL byte" or
 * "Error in config config line <n>: <reason>" in *message (malloc'd, when
 * message != NULL); PGREST_ERR_INTERNAL on OOM; PGREST_OK. */
PGREST_API int pgrest_config_sources_add_file(pgrest_config_sources *s, const char *path,
                                              char **message);

/* The same for a configuration's text. */
PGREST_API int pgrest_config_sources_add_text(pgrest_config_sources *s, const char *text,
                                              char **message);

/* Adds PostgREST's environment variables among envp (NULL-terminated
 * "NAME=value" strings, as environ): PGRST_<OPTION> (upper case, '-' as
 * '_') as the option, PGRST_APP_SETTINGS_<name> as app.settings.<name>
 * (name kept as written), all as strings. Added after a file, they win
 * over it, as in PostgREST. PGREST_OK, or PGREST_ERR_INTERNAL on OOM. */
PGREST_API int pgrest_config_sources_add_environment(pgrest_config_sources *s,
                                                     char *const *envp);

/* Resolves the values added, as PostgREST's readAppConfig does. PGREST_OK;
 * PGREST_ERR_CONFIG with PostgREST's text in *message: "Error in config
 * <reason>" for a parser check, "user error (<reason>)" for the JWT
 * secret, "<path>: openFile: does not exist (...)" for an @file;
 * PGREST_ERR_INTERNAL on OOM. *message (when message != NULL) is malloc'd
 * (the caller frees it) on failure, NULL on success. */
PGREST_API int pgrest_config_sources_resolve(pgrest_config_sources *s, char **message);

/* After a successful resolve: the resolved value of option key (its name
 * or alias, app.settings.*, or a key passed through) as text -- booleans
 * "true"/"false", numbers in decimal, socket modes in octal --, NULL when
 * unset or not resolved. Owned by s, valid until the next add, resolve or
 * free. */
PGREST_API const char *pgrest_config_sources_get(const pgrest_config_sources *s,
                                                 const char *key);

/* After a successful resolve: the i-th (0-based) resolved option, every
 * PostgREST option that has a value (set, or its default) under its own
 * name, plus app.settings.* and the keys passed through: 1 and
 * *key / *value (owned by s, as pgrest_config_sources_get), 0 past the
 * last one. Hand those pgrest_config_key_known accepts to the context. */
PGREST_API int pgrest_config_sources_option(const pgrest_config_sources *s, size_t i,
                                            const char **key, const char **value);

/* 1 when the resolution reads key itself (PostgREST's options and their
 * aliases, app.settings.*, pgrest's db-channel-uri), 0 when it passes the
 * key through as given. */
PGREST_API int pgrest_config_sources_reads_key(const char *key);

/* After a successful resolve: PostgREST's --dump-config text (sorted
 * "key = value" lines, each ending in a newline), malloc'd (the caller
 * frees it); NULL when not resolved or on OOM. */
PGREST_API char *pgrest_config_sources_dump(const pgrest_config_sources *s);

/* The two warnings PostgREST logs when jwt-role-claim-key uses the
 * deprecated JSPath syntax (DeprecatedJSPathSyntaxObs): 1 with *line1 and
 * *line2 malloc'd (the caller frees both), 0 (both NULL) when key is not
 * in that syntax or NULL, PGREST_ERR_INTERNAL on OOM. */
PGREST_API int pgrest_config_role_claim_deprecation(const char *key, char **line1,
                                                    char **line2);

/* Returns the current value of an option as text (in-database settings
 * included), or NULL if unset. The string is owned by ctx and valid until
 * pgrest_ctx_free, whatever reloads happen. Thread-safe. */
PGREST_API const char *pgrest_ctx_get(const pgrest_ctx *ctx, const char *key);

/* Reloads the configuration as PostgREST does on SIGUSR2 or NOTIFY pgrst,
 * 'reload config' (AppState/Reload.hs readInDbConfig): the n options
 * keys[i] = values[i] (what the host read again from its file and
 * environment) replace every option set before -- options not given
 * return to their defaults, except db-uri, which a running context keeps;
 * keys == NULL keeps the options set before. Then, with db-config, the
 * in-database settings (pgrst.* role settings, db-pre-config) are read
 * again on connections borrowed from the pool (PostgREST's usePool: it
 * waits for one like a request does, up to db-pool-acquisition-timeout,
 * and creates the pool if no load did yet) and override them. The result is checked
 * as a whole: if any value is invalid nothing changes, the previous
 * configuration stays, PGREST_ERR_CONFIG is returned and the observer
 * gets PGREST_EVENT_CONFIG_INVALID "Failed reloading config: <error>";
 * on success it gets PGREST_EVENT_CONFIG_RELOADED "Config reloaded".
 * Requests already started finish with the configuration they began with.
 * The schema cache is not reloaded (pgrest_ctx_load_schema does that).
 * Thread-safe; err strings are owned by ctx. */
PGREST_API int pgrest_ctx_reload_config(pgrest_ctx *ctx, const char *const *keys,
                                        const char *const *values, size_t n,
                                        pgrest_error *err);

/* Loads the schema cache by introspection (one READ COMMITTED READ ONLY
 * transaction) on a connection borrowed from the pool, which the first
 * call creates; like PostgREST's loader it borrows once for the version
 * query, once for each in-database settings query and once for the
 * introspection, waiting for a connection as a request does (up to
 * db-pool-acquisition-timeout) and reporting each borrow
 * (PGREST_EVENT_POOL_REQUEST, _POOL_CONNECTION, _POOL_REQUEST_FULFILLED):
 * call it from a thread that does not run the requests holding the pool's
 * connections. With db-config (the default) it first re-reads the
 * in-database settings, as PostgREST's schema cache loader does: a valid
 * change is applied (PGREST_EVENT_CONFIG_RELOADED), an invalid one keeps the
 * previous configuration (PGREST_EVENT_CONFIG_INVALID) and the load goes on.
 * Thread-safe: may be called again to reload; requests in flight keep the
 * cache they started with. err strings are owned by ctx. */
PGREST_API int pgrest_ctx_load_schema(pgrest_ctx *ctx, pgrest_error *err);

/* Loads the schema cache from a JSON snapshot file written by
 * pgrest_ctx_save_schema (no database needed). Thread-safe swap. */
PGREST_API int pgrest_ctx_load_schema_file(pgrest_ctx *ctx, const char *path,
                                           pgrest_error *err);

/* Writes the current schema cache as a JSON snapshot to path. */
PGREST_API int pgrest_ctx_save_schema_file(pgrest_ctx *ctx, const char *path,
                                           pgrest_error *err);

/* Starts the background worker thread. It LISTENs on db-channel (default
 * "pgrst") on its own connection (to db-channel-uri when set, else db-uri:
 * LISTEN needs a session, which a transaction pooler does not keep; read
 * at start, kept across reloads) and reloads the schema cache on the
 * payloads "reload schema" or "" (PostgREST ref/listener); "reload config"
 * calls on_reload_config(arg) if given (from the worker thread; the host
 * re-reads its sources and calls pgrest_ctx_reload_config), or else
 * reloads with the options set before (pgrest_ctx_reload_config with
 * keys == NULL); other payloads are ignored. Each message is reported to
 * the observer first (PGREST_EVENT_LISTEN_SCHEMA_MSG,
 * PGREST_EVENT_LISTEN_CONFIG_MSG). When a reload changes db-channel or
 * db-channel-enabled, the worker moves to the new channel (PostgREST
 * restarts its listener). When the LISTEN connection breaks or cannot be
 * made, the listener is off (pgrest_ctx_connection_established 0) and
 * retried after 1, 2, 4 .. 32 s; back after a retry, it reloads the schema
 * cache (PostgREST Reload.hs retryingListen). A failed schema cache load
 * is retried the same way (retryingSchemaCacheLoad); pgrest_ctx_ready is 0
 * meanwhile. A request that loses its connection changes none of this:
 * the pool replaces that connection. With db-channel-enabled = false it
 * only retries failed loads. Without db-pool-automatic-recovery a lost
 * listener is fatal (PGREST_EVENT_DB_FATAL) and nothing is retried.
 * Stopped and joined by pgrest_ctx_free or pgrest_ctx_stop_listener. */
PGREST_API int pgrest_ctx_start_listener(pgrest_ctx *ctx,
                                         void (*on_reload_config)(void *arg),
                                         void *arg, pgrest_error *err);
PGREST_API void pgrest_ctx_stop_listener(pgrest_ctx *ctx);

/* The schema cache half of PostgREST's admin /ready: 1 when a schema
 * cache is loaded and no load is pending (failed and being retried), 0
 * otherwise. Thread-safe. */
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

/* PostgREST's observations (Observation.hs) for hosts that log them: the
 * library never prints; it calls the observer with the event and the text
 * PostgREST's Logger writes for it (one line per call; an event PostgREST
 * logs as two lines comes as two calls). Which events to print at which
 * log-level is the host's choice (PostgREST Logger.observationLogger).
 * Called from whichever thread observed it (the host's, the listener's, a
 * request's); fn must be thread-safe. Set before sharing the context. */
typedef enum pgrest_event {
    PGREST_EVENT_DB_CONNECTED = 1,     /* "Successfully connected to PostgreSQL ..." */
    PGREST_EVENT_POOL_INIT,            /* "Connection Pool initialized with ..." */
    PGREST_EVENT_PG_VERSION_ERROR,     /* "Failed to query the PostgreSQL version. {...}" */
    PGREST_EVENT_SCHEMA_CACHE_ERROR,   /* "Failed to load the schema cache using ..." */
    PGREST_EVENT_SCHEMA_CACHE_QUERIED, /* "Schema cache queried in X milliseconds " */
    PGREST_EVENT_SCHEMA_CACHE_LOADED,  /* summary line, then "... loaded in X milliseconds" */
    PGREST_EVENT_CONNECTION_RETRY,     /* "Attempting to reconnect to the database in N seconds..." */
    PGREST_EVENT_LISTEN_START,         /* "Listener connected to ... channel" */
    PGREST_EVENT_LISTEN_FAIL,          /* "Failed listening for database notifications ..." */
    PGREST_EVENT_LISTEN_RETRY,         /* "Retrying listening for database notifications ..." */
    PGREST_EVENT_LISTEN_SCHEMA_MSG,    /* "Received a schema cache reload message ..." */
    PGREST_EVENT_LISTEN_CONFIG_MSG,    /* "Received a config reload message ..." */
    PGREST_EVENT_SCHEMA_CACHE_EMPTY,   /* a request found no schema cache (PGRST002 body) */
    PGREST_EVENT_POOL_FLUSHED,         /* "Database connection pool flushed" */
    PGREST_EVENT_POOL_REQUEST,         /* "Trying to borrow a connection from pool" */
    PGREST_EVENT_POOL_REQUEST_FULFILLED, /* "Borrowed a connection from the pool" */
    PGREST_EVENT_JWT_CACHE_LOOKUP,     /* "Looked up a JWT in JWT cache" */
    PGREST_EVENT_JWT_CACHE_EVICTION,   /* "Evicted entry from JWT cache" */
    PGREST_EVENT_QUERY_ERROR,          /* a 5xx database error, as its JSON body */
    PGREST_EVENT_POOL_TIMEOUT,         /* PGRST003 pool acquisition timeout, JSON body */
    PGREST_EVENT_CONFIG_RELOADED,      /* "Config reloaded" */
    PGREST_EVENT_CONFIG_INVALID,       /* "Failed reloading config: ..." (kept the old one) */
    PGREST_EVENT_CONFIG_READ_ERROR,    /* "Failed to query database settings for the
                                        * config parameters...." */
    PGREST_EVENT_DB_FATAL,             /* not retryable (wrong password, unsupported
                                        * PostgreSQL, db-pool-automatic-recovery =
                                        * false, a pooler PostgREST cannot use):
                                        * PostgREST exits with status 1; the library
                                        * stops retrying. Empty when the reason was
                                        * the observation before (a listener lost
                                        * without automatic recovery) */
    PGREST_EVENT_POOL_CONNECTION,      /* "Connection <uuid> is used", "... is
                                        * terminated due to max idletime", ...
                                        * (hasql-pool's ConnectionObservation) */
    PGREST_EVENT_LEGACY_TARGET_NAME,   /* "WARNING: Embedded resource was referenced
                                        * by relation name ...", then "Update
                                        * filters, orders or limits that use ..." */
    PGREST_EVENT_STREAM_ABORTED,       /* a streamed response failed after its
                                        * head went out: "Streamed response
                                        * aborted: " and the error's JSON body */
    PGREST_EVENT_JWKS_FETCHED,         /* "Fetched the JWKS from <uri>" (jwt-jwks-uri) */
    PGREST_EVENT_JWKS_FETCH_FAILED     /* "Failed to fetch the JWKS from <uri>:
                                        * <reason>"; the keys fetched before stay */
} pgrest_event;
typedef void (*pgrest_observer)(void *arg, pgrest_event event, const char *message);
PGREST_API void pgrest_ctx_set_observer(pgrest_ctx *ctx, pgrest_observer fn,
                                        void *arg);

/* The schema cache as PostgREST's admin /schema_cache prints it: a JSON
 * object with dbTables, dbRelationships, dbRoutines, dbRepresentations and
 * dbMediaHandlers; NULL when no schema cache is loaded. The text lives in
 * the arena. Thread-safe. */
PGREST_API const char *pgrest_ctx_schema_cache_json(pgrest_ctx *ctx,
                                                    pgrest_arena *arena);

/* Whether the database answers, as PostgREST's admin /ready checks it
 * (AppState.isConnEstablished): with a listener, whether its connection is
 * up; otherwise a "SELECT 1" on a pooled connection. Thread-safe. */
PGREST_API int pgrest_ctx_connection_established(pgrest_ctx *ctx);

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
/* The same for a value of value_len bytes, which may hold NUL bytes (as
 * HTTP allows no NUL in a field value, such a request is refused with 400
 * 22021 by pgrest_parse_request instead of being read up to the NUL). */
PGREST_API void pgrest_request_add_header_n(pgrest_request *req,
                                            const char *name,
                                            const char *value,
                                            size_t value_len);

/* Sets the body (copied; binary-safe). Undoes pgrest_request_body_follows. */
PGREST_API void pgrest_request_set_body(pgrest_request *req, const char *body,
                                        size_t len);

/* The body will come in chunks through the task started on req
 * (pgrest_task_write_body, pgrest_task_end_body), as the host receives
 * it: the task waits for it in PGREST_TASK_WANTS_BODY. A body set before
 * is dropped; pgrest_request_set_body afterwards undoes this call. Only
 * tasks take chunks: pgrest_handle ends the body at once (the request
 * has an empty body) and the stages (pgrest_parse_request) see the empty
 * body. Accepts NULL (does nothing). */
PGREST_API void pgrest_request_body_follows(pgrest_request *req);

/* The host can take the body in pieces (docs/streaming.md): a task started
 * on req may then stream a large result instead of buffering it. Bodies
 * shorter than threshold_bytes (0: the default, 64 KiB) are always
 * buffered, so they keep their exact status, headers and Content-Length;
 * a longer one may commit its head at the threshold and come through
 * pgrest_task_read_body. Without this call (and in pgrest_handle) nothing
 * is streamed. */
PGREST_API void pgrest_request_allow_streaming(pgrest_request *req,
                                               size_t threshold_bytes);

/* With pgrest_request_body_follows: a POST of rows to a table or view
 * (JSON array, application/x-ndjson or text/csv; insert or upsert, any
 * return=; a JSON or NDJSON representation streams too with
 * pgrest_request_allow_streaming) whose body grows past threshold_bytes
 * (0: the default, 1 MiB) is written to PostgreSQL as it comes, through
 * COPY into a temporary table and one INSERT ... SELECT, instead of being
 * held whole (docs/bulk-import.md). Such a body is not bounded by
 * server-max-body-size. Its answer is the whole body's, except that a
 * row refused after the first chunks went out (by the reader or by
 * PostgreSQL) is named in the error's details. Shorter bodies, and every
 * other request, are unchanged.
 * pgrest_task_write_body may then answer PGREST_AGAIN (backpressure).
 * Accepts NULL (does nothing). */
PGREST_API void pgrest_request_allow_streamed_body(pgrest_request *req,
                                                   size_t threshold_bytes);
/* Whether req (with pgrest_request_allow_streamed_body) is of the kind
 * whose body may stream: a POST of JSON, NDJSON or CSV. A host that
 * bounds bodies itself exempts these from its bound and leaves it to the
 * library (server-max-body-size until the body streams, then
 * server-max-streamed-body-size): pgrest_task_body_streams tells. */
PGREST_API int pgrest_request_body_may_stream(const pgrest_request *req);

/* ---------------------------------------------------------------- auth */

/* Authenticates req as PostgREST's Auth.hs does: a bearer token is
 * verified with jwt-secret (signature, exp/nbf/iat, aud) through the
 * context's JWT cache (jwt-cache-max-entries, with its metrics and
 * observations), its role taken at jwt-role-claim-key (db-anon-role when
 * absent); without a token the role is db-anon-role. *out (in the arena)
 * is the outcome, success or failure alike: read it with the accessors
 * below, and attach it to the request with pgrest_request_set_auth so that
 * parsing uses it. The first stage: PostgREST authenticates before it
 * parses anything (Auth.hs middleware), so a host using the stages calls
 * it first and answers its error before parsing's (a bad token wins over
 * a bad query string); only server-max-body-size (413) and NUL bytes in
 * header values, which an HTTP layer refuses before anything else, win
 * over it (pgrest_parse_request checks those too). Does not parse, read
 * the schema cache or touch the database, and neither answers OPTIONS
 * nor adds CORS or other response headers. Returns PGREST_OK, or the
 * error (PGRST300 500, PGRST301/302/303 401) also in *err; pgrest_error_response(err) gives the
 * response PostgREST sends, WWW-Authenticate included. *out is NULL only
 * when the arena is exhausted. Thread-safe. */
PGREST_API int pgrest_authenticate(pgrest_ctx *ctx, pgrest_arena *arena,
                                   const pgrest_request *req, pgrest_auth **out,
                                   pgrest_error *err);

/* An identity the host established itself (a gateway that verified the
 * token): the transaction runs as role (NULL: db-anon-role; both NULL is
 * PGRST302 401) with request.jwt.claims = claims_json (a JSON object, or
 * NULL for {"role": role}) whose "role" member is set to the role. The
 * request counts as authenticated (401 vs 403 on 42501) when the role is
 * not db-anon-role. Strings are copied; *out lives in the arena. Claims
 * that are no JSON object fail with PGREST_ERR_INTERNAL (PGRST500). */
PGREST_API int pgrest_auth_supply(pgrest_ctx *ctx, pgrest_arena *arena,
                                  const char *role, const char *claims_json,
                                  pgrest_auth **out, pgrest_error *err);

/* The outcome: the role and the claims JSON text (NULL when
 * authentication failed), whether the role is not db-anon-role, and the
 * error that refused the request (NULL on success). Strings and the error
 * record live in the arena. */
PGREST_API const char *pgrest_auth_role(const pgrest_auth *auth);
PGREST_API const char *pgrest_auth_claims(const pgrest_auth *auth);
PGREST_API int pgrest_auth_authenticated(const pgrest_auth *auth);
PGREST_API const pgrest_error *pgrest_auth_error(const pgrest_auth *auth);

/* Makes req run as auth (from pgrest_authenticate or pgrest_auth_supply,
 * in the same arena, or NULL to undo): pgrest_parse_request copies its
 * role and claims into the api request, and pgrest_handle and
 * pgrest_task_start use it instead of reading the Authorization header; a
 * failed outcome fails them with its error. */
PGREST_API void pgrest_request_set_auth(pgrest_request *req,
                                        const pgrest_auth *auth);

/* ---------------------------------------------------------------- stages */

/* Parses the raw request: target, action, select/filter/order trees,
 * range, preferences, payload; first the checks an HTTP layer makes
 * (server-max-body-size 413, NUL bytes in header values). Needs no
 * database and no schema cache; reads only the context's configuration.
 * Never authenticates: the Authorization header is not read and no
 * JWT secret is needed. The identity is the outcome attached with
 * pgrest_request_set_auth, copied into the api request (a failed one
 * fails the parse with its error, before any parse error); without one
 * the api request has no role, and pgrest_emit_sql refuses it. Does not
 * answer OPTIONS (it parses into an info action that the engine answers),
 * nor add CORS, Server-Timing or any response header, nor count metrics.
 * *out lives in the arena. On failure *out is NULL, or, once the attached
 * identity was applied, the partly parsed request (only its role is
 * meaningful then). */
PGREST_API int pgrest_parse_request(pgrest_ctx *ctx, pgrest_arena *arena,
                                    const pgrest_request *req,
                                    pgrest_api_request **out,
                                    pgrest_error *err);

/* Resolves the api request against the context's schema cache (relations,
 * columns, relationships, routines, media types). No database; does not
 * look at the identity. */
PGREST_API int pgrest_plan(pgrest_ctx *ctx, pgrest_arena *arena,
                           const pgrest_api_request *api, pgrest_query_plan **out,
                           pgrest_error *err);

/* Turns the plan into statements with $n parameters (the settings
 * preamble sets the request's role and request.jwt.claims). Pure. A plan
 * of a request parsed without an identity (pgrest_request_set_auth) fails
 * with PGREST_ERR_INTERNAL: its statements would run as the
 * authenticator. */
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
 * and an unsatisfiable range (416 with Content-Range). The response is
 * PostgREST's without the engine's decorations: no CORS, Server-Timing,
 * Retry-After or trace header, not counted in the metrics nor passed to
 * the query logger. */
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

/* ---------------------------------------------------------------- engine */

/* The request engine for hosts with an event loop (pgrest_handle is a
 * blocking loop over it, as libcurl's easy interface over its multi one).
 * pgrest_task_start does everything that needs no database: CORS
 * preflight, authentication (unless pgrest_request_set_auth gave an
 * identity), parsing, planning, SQL; OPTIONS and errors finish there
 * (with a following body, pgrest_request_body_follows, parsing and what
 * comes after wait for pgrest_task_end_body). A task that needs the
 * database then takes a pooled connection: when none
 * is free it queues (first come, first served) and wake(wake_arg) is
 * called once one has been handed to it -- from whichever thread released
 * it, with the pool's lock held, so wake may only signal the host's loop
 * (write an eventfd, push to a queue, set a flag) and must not call into
 * libpgrest; wake also comes, under the same rule, when the cancel
 * request of a cancelled task has been delivered. The host then calls
 * pgrest_task_advance from its loop, which opens the connection if it
 * needs one (PQconnectStartParams / PQconnectPoll, bounded by db-uri's
 * connect_timeout; only the host name lookup, when db-uri names a host
 * without hostaddr, is libpq's blocking one), sends the pipeline and
 * reads results without ever blocking; the return value says what the
 * task waits for next:
 *
 *   PGREST_TASK_DONE        pgrest_task_response is the final response,
 *                           decorated like pgrest_handle's (CORS,
 *                           Server-Timing, Retry-After, trace header),
 *                           counted in the metrics and passed to the
 *                           query logger
 *   PGREST_TASK_WAIT_CONN   waits for the pool: advance again after wake
 *                           (a queued task finishes with 504 PGRST003 at
 *                           the acquisition timeout)
 *   PGREST_TASK_WAIT_READ   pgrest_task_socket readable
 *   PGREST_TASK_WAIT_WRITE  pgrest_task_socket writable (or readable)
 *   PGREST_TASK_WANTS_BODY  a following body (pgrest_request_body_follows):
 *                           pgrest_task_write_body, pgrest_task_end_body
 *
 * In every state, also advance once pgrest_task_timeout_ms (when not -1)
 * has passed. Advancing at any other moment is harmless. The task lives
 * in the arena; the arena must not be freed before the task is DONE (a
 * task that holds or waits for a connection would lose it):
 * pgrest_task_cancel first. A task belongs to one thread at a time; tasks
 * of one context may run on many threads. */
typedef enum pgrest_task_wait {
    PGREST_TASK_DONE = 0,
    PGREST_TASK_WAIT_CONN = 1,
    PGREST_TASK_WAIT_READ = 2,
    PGREST_TASK_WAIT_WRITE = 3,
    /* streaming only (pgrest_request_allow_streaming): the response head
     * is ready (pgrest_task_response, pgrest_response_streamed) and body
     * bytes wait in the task, which fetches no more rows until the host
     * has taken them with pgrest_task_read_body and advanced again */
    PGREST_TASK_BODY = 4,
    /* pgrest_request_body_follows only: authenticated, the task waits for
     * the request body (pgrest_task_write_body, pgrest_task_end_body);
     * nothing to watch, no timeout */
    PGREST_TASK_WANTS_BODY = 5
} pgrest_task_wait;
typedef void (*pgrest_task_wake)(void *arg);

/* Starts the task; wake may be NULL for a host that polls. NULL only when
 * the arena cannot hold the task or an argument is NULL. */
PGREST_API pgrest_task *pgrest_task_start(pgrest_ctx *ctx, pgrest_arena *arena,
                                          const pgrest_request *req,
                                          pgrest_task_wake wake, void *wake_arg);
/* Moves the task on without blocking; returns its pgrest_task_wait. */
PGREST_API int pgrest_task_advance(pgrest_task *task);
/* What the task waits for now (the last advance's answer). */
PGREST_API int pgrest_task_wait_state(const pgrest_task *task);
/* The database socket to watch while WAIT_READ / WAIT_WRITE, else -1
 * (while connecting it may change from one advance to the next). */
PGREST_API int pgrest_task_socket(const pgrest_task *task);
/* Milliseconds until the task needs an advance without any event (the
 * pool acquisition timeout, a connect_timeout, the grace a cancelled
 * statement gets), 0 when that moment has come, -1 when there is none. */
PGREST_API long pgrest_task_timeout_ms(const pgrest_task *task);
/* The response once DONE (in the arena), NULL before, or on OOM; for a
 * streamed response, its head as soon as the task first returned
 * PGREST_TASK_BODY (the body then comes from pgrest_task_read_body). */
PGREST_API pgrest_response *pgrest_task_response(const pgrest_task *task);

/* The body of a streamed response, in order: copies up to max bytes into
 * buf and returns how many (> 0); 0 when none are buffered now (advance
 * the task as its wait state says: more rows are coming);
 * PGREST_BODY_END once the whole body has been read (the task is DONE);
 * PGREST_BODY_FAILED when the response failed after its head was
 * committed (an error mid-stream, or a cancel): the host must end the
 * transfer abnormally (chunked: no terminating chunk) so the client sees
 * it incomplete. After reading, advance the task again: it resumes
 * fetching (backpressure: it holds at most about one threshold of body).
 * PGREST_BODY_FAILED also for a task whose response is not streamed. */
#define PGREST_BODY_END (-1L)
#define PGREST_BODY_FAILED (-2L)
PGREST_API long pgrest_task_read_body(pgrest_task *task, char *buf, size_t max);
/* 1 once the task writes its following body to PostgreSQL as it comes
 * (pgrest_request_allow_streamed_body): the body is no longer bounded by
 * server-max-body-size. */
PGREST_API int pgrest_task_body_streams(const pgrest_task *task);

/* Request bodies in chunks (pgrest_request_body_follows; docs/embedding.md
 * "Request bodies in chunks"). pgrest_task_start does what PostgREST does
 * before it reads a body -- a CORS preflight, the checks on the headers,
 * authentication, the schema cache's presence -- and answers their errors
 * at once (DONE: the body is never needed); otherwise the task waits in
 * PGREST_TASK_WANTS_BODY. The host then writes the body's bytes in order,
 * in chunks of any size (binary-safe; data is copied into the task's
 * arena), and ends it; the task then goes on exactly as if the whole body
 * had been set with pgrest_request_set_body (parse, plan, the pool ...):
 * advance it as its wait state says. The task collects the body in the
 * arena (at most server-max-body-size bytes, plus the buffer's growth)
 * before it parses it -- unless the request allows a streamed body
 * (pgrest_request_allow_streamed_body) and is a bulk write past the
 * threshold: its rows then go to PostgreSQL as they come
 * (docs/bulk-import.md).
 *
 * pgrest_task_write_body returns PGREST_OK when the chunk was taken, and
 * PGREST_AGAIN (a streamed body only: backpressure) when it was NOT:
 * advance the task as its wait state says until it is WANTS_BODY again
 * (or DONE), then write the same chunk again. Until PGREST_AGAIN, a task
 * whose body streams shows WANTS_BODY whatever it does meanwhile (taking
 * a connection, opening its COPY); pgrest_task_end_body never answers
 * PGREST_AGAIN (the task goes on by itself). A chunk that takes the body past
 * server-max-body-size finishes the task with the answer a whole body
 * that long gets (413 PGRST413; the task is DONE, its response is that
 * error) and returns PGREST_ERR_REQUEST with the error in *err; a chunk the
 * arena cannot hold finishes it with 500 PGRST500 (PGREST_ERR_INTERNAL).
 * After such a refusal, later writes and the end are ignored and return
 * the same error again, so a host may stop reading the client's body at
 * the first one or at any later one. Writing to (or ending) a task that
 * does not wait for a body -- it was not started with a following body,
 * was answered at start, was cancelled, or its body ended -- or passing
 * task NULL, or data NULL with len > 0, returns PGREST_ERR_INTERNAL, 500
 * PGRST500 "Invalid arguments", details naming the function. err may be
 * NULL; its strings live in the arena (or are static). A zero-length
 * write is allowed and takes nothing.
 *
 * pgrest_task_end_body: the body is complete; returns PGREST_OK once the
 * task has taken it and gone on -- a request its body makes invalid is
 * DONE at once with its error response, as with the whole body -- or an
 * error as pgrest_task_write_body's above.
 *
 * A streamed body's task holds a connection from the threshold on (a
 * cancel closes it: nothing is written). Otherwise a task in WANTS_BODY
 * holds no connection: the host may take its time (its own timeouts
 * apply), and pgrest_task_cancel finishes it at once. Not thread-safe:
 * the task's thread only. */
PGREST_API int pgrest_task_write_body(pgrest_task *task, const void *data, size_t len,
                                      pgrest_error *err);
PGREST_API int pgrest_task_end_body(pgrest_task *task, pgrest_error *err);
/* The client went away or the host's timeout struck: a task waiting for
 * its body (PGREST_TASK_WANTS_BODY), a queued or connecting task is DONE
 * at once (a half-open connection is closed); a
 * running one has its statement cancelled and finishes after the next
 * advances, once its pipeline has drained (the cancellation's 57014, or
 * whatever the statement gave if it ended first) and the cancel request
 * has been delivered, with its connection back in the pool clean -- or,
 * when that takes longer than 2 seconds, closed, to be reopened by its
 * next user. libpq 15 has no non-blocking cancel (PQcancelStart is
 * libpq 17's), so PQcancel runs on a short-lived thread of its own: this
 * call never blocks. The response of a cancelled task is not meant for
 * the client. Returns the task's wait state. */
PGREST_API int pgrest_task_cancel(pgrest_task *task);

/* One call for hosts: authenticate, parse, plan, emit, execute on a pooled
 * connection, with the engine's CORS, OPTIONS answers, Server-Timing,
 * metrics and query log -- a task driven to its end, waiting with poll().
 * Always produces a response (errors become PostgREST's JSON error
 * responses); returns NULL only on OOM. */
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
/* The reason phrase PostgREST's status line carries instead of the
 * status's usual one (http-types' statusMessage), or NULL: the message of
 * an error raised with SQLSTATE PTxyz, the status_text of RAISE SQLSTATE
 * 'PGRST'. Control characters (CR, LF ...) are replaced by spaces, so it
 * can be written into a status line as it is. */
PGREST_API const char *pgrest_response_reason(const pgrest_response *resp);
PGREST_API size_t pgrest_response_header_count(const pgrest_response *resp);
/* Header i; the record and its strings are owned by the arena. */
PGREST_API const pgrest_header *
pgrest_response_header(const pgrest_response *resp, size_t i);
/* The database role the request ran as (the JWT role or db-anon-role),
 * for access logs; NULL when authentication did not get that far. */
PGREST_API const char *pgrest_response_role(const pgrest_response *resp);
/* 1 when the response is streamed: its body is not in the response but
 * comes from pgrest_task_read_body, its length is unknown (no
 * Content-Length: chunked transfer encoding), and it has no Content-Range
 * (the row count is known only at the end). 0 otherwise. */
PGREST_API int pgrest_response_streamed(const pgrest_response *resp);
/* Body bytes (not NUL-terminated necessarily) and their length. */
PGREST_API const char *pgrest_response_body(const pgrest_response *resp,
                                            size_t *len);

/* ------------------------------------------------- replicas (docs/replicas.md) */

/* With db-replica-uris set, a write that commits answers with the WAL
 * position its commit is within (pg_current_wal_insert_lsn() after the
 * commit, "X/Y" as pg_lsn prints it) in this header; a read that sends
 * it back in PGREST_MIN_LSN_HEADER runs on a replica only once that
 * replica has replayed that far, else on the primary: it sees the write.
 * A PGREST_MIN_LSN_HEADER value that is no WAL position sends the read
 * to the primary. */
#define PGREST_COMMIT_LSN_HEADER "Pgrest-Commit-Lsn"
#define PGREST_MIN_LSN_HEADER "Pgrest-Min-Lsn"
/* The PGREST_COMMIT_LSN_HEADER value of resp, NULL when it has none. */
PGREST_API const char *pgrest_response_commit_lsn(const pgrest_response *resp);
/* Asks that req see every write up to lsn (a PGREST_COMMIT_LSN_HEADER
 * value): the same as adding PGREST_MIN_LSN_HEADER; lsn is copied. */
PGREST_API void pgrest_request_set_min_lsn(pgrest_request *req, const char *lsn);

/* Library version string, e.g. "0.1.0". */
PGREST_API const char *pgrest_version(void);

#ifdef __cplusplus
}
#endif
#endif /* PGREST_H */
