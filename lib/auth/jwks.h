/* Signing keys from a JWKS URL (jwt-jwks-uri, docs/operations.md): a
 * thread of the library fetches the JSON Web Key Set at start, again when
 * its Cache-Control max-age runs out, and when a request names a kid no
 * key has (at most once per jwt-jwks-min-refresh). Requests read the last
 * set that parsed -- an immutable, reference-counted snapshot swapped under
 * a mutex, as the schema cache is -- so they never wait on a fetch, except
 * a request whose kid is unknown, which waits at most jwt-jwks-timeout.
 * A failed fetch keeps the set in force. Thread-safe. */
#ifndef PGR_AUTH_JWKS_H
#define PGR_AUTH_JWKS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* One fetched key set. Read-only once published. generation changes only
 * when a key of the previous set is gone, so a JWT cache entry that
 * remembers the generation it was verified under stops matching exactly
 * when its key may have left. */
typedef struct pgr_jwks_set {
    atomic_uint refs;
    char *body;                 /* the JWK Set as served, NUL-terminated */
    size_t len;
    unsigned long generation;
} pgr_jwks_set;

/* How a fetch went, for the host's log and /metrics: ok, and a message
 * in PostgREST's style. Called on the fetch thread, outside any lock. */
typedef void (*pgr_jwks_report)(void *arg, bool ok, const char *message);

typedef struct pgr_jwks_settings {
    const char *uri;            /* checked by pgr_jwks_uri_check */
    const char *cafile;         /* NULL: libcurl's CA bundle */
    int timeout_seconds;        /* jwt-jwks-timeout */
    int min_refresh_seconds;    /* jwt-jwks-min-refresh */
    pgr_jwks_report report;     /* may be NULL */
    void *report_arg;
} pgr_jwks_settings;

typedef struct pgr_jwks pgr_jwks;

/* Copies s and starts the fetch thread, which fetches at once. NULL when
 * out of memory or the thread does not start. Reference counted: the
 * last pgr_jwks_release stops the thread (a fetch in progress is
 * aborted) and frees everything. */
pgr_jwks *pgr_jwks_new(const pgr_jwks_settings *s);
void pgr_jwks_retain(pgr_jwks *j);
void pgr_jwks_release(pgr_jwks *j);   /* accepts NULL */

/* Whether j fetches uri with cafile (NULL equals NULL). */
bool pgr_jwks_same_source(const pgr_jwks *j, const char *uri, const char *cafile);
/* New timings for the fetches to come (a reload that kept the URI). */
void pgr_jwks_configure(pgr_jwks *j, int timeout_seconds, int min_refresh_seconds);

/* The current set with a reference taken, NULL before a fetch succeeded. */
pgr_jwks_set *pgr_jwks_current(pgr_jwks *j);
void pgr_jwks_set_release(pgr_jwks_set *s); /* accepts NULL */

/* For a token no key fits: asks for a fetch unless one started less than
 * jwt-jwks-min-refresh ago, waits for the fetch in progress (if any) at
 * most jwt-jwks-timeout, then returns the current set as
 * pgr_jwks_current does. */
pgr_jwks_set *pgr_jwks_refresh_wait(pgr_jwks *j);

/* ------------------------------------------------------------ jwks_uri.c */

/* NULL when uri is one jwt-jwks-uri accepts: https, or http to a loopback
 * host (localhost, 127.0.0.0/8, ::1); else why not. */
const char *pgr_jwks_uri_problem(const char *uri);

/* ------------------------------------------------------------ jwks_fetch.c */

typedef struct pgr_jwks_fetched {
    char *body;                 /* malloc'd, NUL-terminated; NULL on failure */
    size_t len;
    long max_age;               /* Cache-Control max-age; -1 when absent */
    char error[512];            /* why it failed */
} pgr_jwks_fetched;

/* GET uri with libcurl: no redirects, https (or http) only, the whole
 * transfer within timeout_seconds, at most 1 MiB, status 200. stop (may
 * be NULL) is polled during the transfer; true aborts it. Returns true
 * with out->body set, or false with out->error. */
bool pgr_jwks_fetch(const char *uri, const char *cafile, int timeout_seconds,
                    const atomic_bool *stop, pgr_jwks_fetched *out);

/* The max-age of one Cache-Control header value (RFC 9111 5.2.2.1), -1
 * when it has none; no-store and no-cache read as 0. */
long pgr_jwks_max_age(const char *value, size_t len);

#endif
