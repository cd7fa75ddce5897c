#include "db_watch.h"

#include <signal.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <unistd.h>

#include "log.h"

static atomic_bool fatal_seen;

/* PostgREST's readInDbConfig puts the new configuration, then reports
 * its deprecated jwt-role-claim-key syntax (DeprecatedJSPathSyntaxObs),
 * then "Config reloaded": on every reload and at startup with db-config. */
void db_watch_warn_deprecations(pgrest_ctx *ctx)
{
    char *line1, *line2;
    if (pgrest_config_role_claim_deprecation(pgrest_ctx_get(ctx, "jwt-role-claim-key"), &line1,
                                             &line2) == 1) {
        log_msg(LOG_CRIT, "%s", line1);
        log_msg(LOG_CRIT, "%s", line2);
        free(line1);
        free(line2);
    }
}

/* Every observation is logged at PostgREST's level for it; a fatal one
 * ends the server with status 1, as PostgREST's killApp does. */
static void on_event(void *arg, pgrest_event event, const char *message)
{
    if (event == PGREST_EVENT_CONFIG_RELOADED)
        db_watch_warn_deprecations(arg);
    log_observation(arg, event, message);
    if (event == PGREST_EVENT_DB_FATAL && !atomic_exchange(&fatal_seen, true))
        kill(getpid(), SIGTERM);
}

void db_watch_install(pgrest_ctx *ctx)
{
    pgrest_ctx_set_observer(ctx, on_event, ctx);
}

bool db_watch_fatal(void)
{
    return atomic_load(&fatal_seen);
}
