/* The HTTP side of the reference server: libmicrohttpd in, a request
 * task (pgrest_task_*) driven by the engine loops, response out. No query
 * logic lives here. */
#ifndef PGRS_HTTP_H
#define PGRS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "pgrest/pgrest.h"

typedef struct http_server http_server;

typedef struct http_listen {
    const char *host;         /* server-host, PostgREST special values ok */
    int port;
    const char *unix_socket;  /* takes precedence over host/port */
    unsigned unix_mode;
    unsigned threads;         /* event loops: HTTP and PostgreSQL sockets */
    bool reuseport;           /* server-reuseport: SO_REUSEPORT + handover */
    /* server-cancel-on-disconnect (pgrest's own, default off): cancel a
     * request whose client goes away before its answer. Off, a request
     * outlives its client as under PostgREST (Warp does not watch the
     * socket while the application runs): the statement completes and a
     * write commits. A streamed body's reader leaving cancels either way. */
    bool cancel_on_disconnect;
    /* Resource limits (server-* options; see server/main.c for defaults):
     * bigger requests get a PostgREST-style JSON 413/414/431. */
    size_t max_body_size;     /* server-max-body-size, bytes */
    /* server-streamed-body-threshold: a bulk POST's body past it streams
     * into PostgreSQL (docs/bulk-import.md); 0: never */
    size_t streamed_body_threshold;
    size_t max_streamed_body_size; /* server-max-streamed-body-size, 0: none */
    size_t max_url_size;      /* server-max-url-size: path + query, bytes */
    size_t max_header_size;   /* server-max-header-size: all headers, bytes */
    unsigned timeout;         /* server-timeout: idle seconds per connection */
    unsigned max_connections; /* server-max-connections, whole server */
    unsigned max_connections_per_ip; /* server-max-connections-per-ip, 0 = off */
} http_listen;

http_server *http_start(pgrest_ctx *ctx, const http_listen *listen_cfg,
                        char *errbuf, size_t errlen);
/* Bound port (useful with port 0); -1 on a Unix socket. */
int http_port(const http_server *s);
/* The bound address as PostgREST logs it ("127.0.0.1:3000", a path). */
void http_address(const http_server *s, char *buf, size_t len);
/* Whether the API server is serving (admin /live). Thread-safe. */
bool http_is_live(const http_server *s);
/* Stops accepting, finishes in-flight requests, frees. */
void http_stop(http_server *s);

#endif
