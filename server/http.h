/* The HTTP side of the reference server: libmicrohttpd in, pgrest_handle,
 * response out. No query logic lives here. */
#ifndef PGRS_HTTP_H
#define PGRS_HTTP_H

#include <stdbool.h>

#include "pgrest/pgrest.h"

typedef struct http_server http_server;

typedef struct http_listen {
    const char *host;         /* server-host, PostgREST special values ok */
    int port;
    const char *unix_socket;  /* takes precedence over host/port */
    unsigned unix_mode;
    unsigned threads;
} http_listen;

http_server *http_start(pgrest_ctx *ctx, const http_listen *listen_cfg,
                        char *errbuf, size_t errlen);
/* Bound port (useful with port 0). */
int http_port(const http_server *s);
/* Stops accepting, finishes in-flight requests, frees. */
void http_stop(http_server *s);

#endif
