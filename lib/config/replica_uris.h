/* db-replica-uris: libpq URIs separated by blanks or commas. A comma only
 * separates when a new URI follows it, since a multi-host URI has commas
 * of its own (postgresql://a:5432,b:5433/db). */
#ifndef PGR_REPLICA_URIS_H
#define PGR_REPLICA_URIS_H

#include <stddef.h>

#include "pgrest/pgrest.h"
#include "util/arena.h"

/* The URIs of value, NULL-terminated, in *out (count in *n; none for a
 * blank value). PGREST_ERR_CONFIG when an item is no postgresql:// or
 * postgres:// URI (the key=value form has blanks of its own). */
int pgr_replica_uris_split(pgrest_arena *a, const char *value, const char ***out, size_t *n,
                           pgrest_error *err);

#endif
