/* `--ready` (PostgREST Client.hs): GET http://<admin-server-host>:<admin-
 * server-port>/ready; "OK: <url>" on stdout and exit 0 for a 2xx, an
 * "ERROR: ..." line on stderr and exit 1 otherwise. */
#ifndef PGRS_READY_H
#define PGRS_READY_H

#include "app_config.h"

int ready_check(const app_config *cfg);

#endif
