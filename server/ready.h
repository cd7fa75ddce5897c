/* `--ready` (PostgREST Client.hs): GET http://<admin-server-host>:<admin-
 * server-port>/ready; "OK: <url>" on stdout and exit 0 for a 2xx, an
 * "ERROR: ..." line on stderr and exit 1 otherwise. */
#ifndef PGRS_READY_H
#define PGRS_READY_H

#include "pgrest/pgrest.h"

/* Reads admin-server-host and admin-server-port from the resolved cfg. */
int ready_check(const pgrest_config_sources *cfg);

#endif
