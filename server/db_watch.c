#include "db_watch.h"

#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "log.h"

static atomic_bool fatal_seen;

/* Every observation is logged at PostgREST's level for it; a fatal one
 * ends the server with status 1, as PostgREST's killApp does. */
static void on_event(void *arg, pgrest_event event, const char *message)
{
    log_observation(arg, event, message);
    if (event == PGREST_EVENT_DB_FATAL && !atomic_exchange(&fatal_seen, true))
        kill(getpid(), SIGTERM);
}

void db_watch_install(pgrest_ctx *ctx)
{
    pgrest_ctx_set_observer(ctx, on_event, NULL);
}

bool db_watch_fatal(void)
{
    return atomic_load(&fatal_seen);
}
