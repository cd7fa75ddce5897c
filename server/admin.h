/* The admin server (PostgREST Admin.hs, ref/admin_server): /live, /ready,
 * /metrics and /schema_cache on admin-server-port (bound per
 * admin-server-host) or on admin-server-unix-socket. */
#ifndef PGRS_ADMIN_H
#define PGRS_ADMIN_H

#include <stdbool.h>
#include <stddef.h>

#include "pgrest/pgrest.h"

typedef struct admin_server admin_server;

typedef struct admin_listen {
    const char *host;         /* admin-server-host, server-host forms */
    int port;
    const char *unix_socket;  /* admin-server-unix-socket: wins over the port */
    unsigned unix_mode;       /* admin-server-unix-socket-mode */
} admin_listen;

/* Whether the API server is up (PostgREST checkMainAppLive). */
typedef bool (*admin_live_fn)(void *arg);

/* Binds and starts serving; logs "Admin server listening on ADDRESS".
 * NULL with a message in errbuf on failure. */
admin_server *admin_start(pgrest_ctx *ctx, const admin_listen *cfg, admin_live_fn live,
                          void *live_arg, char *errbuf, size_t errlen);
/* Graceful shutdown has begun: /ready answers 503 and /live 500 from now
 * on, and the live function is no longer called (the API server it looks
 * at may be freed once this returns). NULL is ignored. */
void admin_set_draining(admin_server *s);
void admin_stop(admin_server *s);

#endif
