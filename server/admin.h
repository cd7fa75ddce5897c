/* The admin server (PostgREST ref/admin_server): /live, /ready and
 * /metrics on admin-server-port. */
#ifndef PGRS_ADMIN_H
#define PGRS_ADMIN_H

#include <stddef.h>

#include "pgrest/pgrest.h"

typedef struct admin_server admin_server;

/* Starts on host:port; NULL with a message in errbuf on failure. */
admin_server *admin_start(pgrest_ctx *ctx, const char *host, int port,
                          char *errbuf, size_t errlen);
void admin_stop(admin_server *s);

#endif
