/* What pgrest-server calls itself. It answers like PostgREST of this
 * version (the snapshot its behaviour follows), so scripts that read
 * `--version` or the Server header keep working; the comment names the
 * implementation. */
#ifndef PGRS_VERSION_H
#define PGRS_VERSION_H

#include "pgrest/pgrest.h"

#define PGRS_POSTGREST_VERSION PGREST_POSTGREST_VERSION
/* PostgREST's prettyVersion, followed by pgrest's own version */
#define PGRS_PRETTY_VERSION PGREST_PRETTY_VERSION
/* App.hs: setServerName ("postgrest/" <> prettyVersion) */
#define PGRS_SERVER_HEADER "postgrest/" PGREST_PRETTY_VERSION

#endif
