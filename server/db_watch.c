#include "db_watch.h"

#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "log.h"

static atomic_bool fatal_seen;

/* PostgREST logs these observations whatever log-level says. */
static void on_db_event(void *arg, pgrest_db_event event, const char *message)
{
    (void)arg;
    log_msg(LOG_CRIT, "%s", message);
    if (event == PGREST_DB_FATAL && !atomic_exchange(&fatal_seen, true))
        kill(getpid(), SIGTERM);
}

void db_watch_install(pgrest_ctx *ctx)
{
    pgrest_ctx_set_db_observer(ctx, on_db_event, NULL);
}

bool db_watch_fatal(void)
{
    return atomic_load(&fatal_seen);
}
