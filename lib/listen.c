/* The background worker: schema reloads on NOTIFY (PostgREST
 * AppState/Reload.hs runListener) and connection recovery (PostgREST
 * AppState connectionWorker). A dedicated connection LISTENs on db-channel;
 * requests in flight keep the cache they started with because the swap is
 * reference counted. When the database is lost (the LISTEN connection
 * breaks or a request gets PGRST000/001) or no schema cache is loaded yet,
 * the worker retries with exponential backoff up to 32 s; once connected it
 * reloads the schema cache (which flushes the pool) and the context is
 * ready again. */
#include <libpq-fe.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "context.h"
#include "db_events.h"
#include "exec/pool.h"
#include "util/error.h"
#include "util/strbuf.h"

#define MAX_BACKOFF 32u

struct pgr_listener {
    pthread_t thread;
    atomic_bool stop;
    pgrest_ctx *ctx;
    char *conninfo;
    char *channel;   /* NULL when db-channel-enabled = false: recovery only */
    void (*on_reload_config)(void *arg);
    void *arg;
    PGconn *first;   /* connection made by start, handed to the thread */
};

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Sleeps up to seconds in small steps so stop is honoured quickly. */
static void backoff(pgr_listener *l, unsigned seconds)
{
    for (unsigned i = 0; i < seconds * 10 && !atomic_load(&l->stop); i++)
        sleep_ms(100);
}

static bool run_listen(pgr_listener *l, PGconn *pg)
{
    char *ident = PQescapeIdentifier(pg, l->channel, strlen(l->channel));
    pgrest_arena *qa = pgrest_arena_new(0);
    if (ident == NULL || qa == NULL) {
        PQfreemem(ident);
        pgrest_arena_free(qa);
        return false;
    }
    pgr_sb sb;
    pgr_sb_init(&sb, qa, 64);
    pgr_sb_puts(&sb, "LISTEN ");
    pgr_sb_puts(&sb, ident);
    PQfreemem(ident);
    PGresult *r = PQexec(pg, pgr_sb_finish(&sb));
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    pgrest_arena_free(qa);
    return ok;
}

/* Opens the worker's connection (LISTENing when a channel is configured);
 * without a channel it only proves the database is reachable. */
static PGconn *worker_connection(pgr_listener *l)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_error err = {0};
    PGconn *pg = a ? pgr_connect(l->conninfo, a, &err) : NULL;
    if (pg != NULL && l->channel != NULL) {
        const char *version = pgr_db_version_for_log(l->ctx, pg, a);
        if (run_listen(l, pg))
            pgr_db_report_listening(l->ctx, pg, l->channel, version);
        else {
            PQfinish(pg);
            pg = NULL;
        }
    }
    pgrest_arena_free(a);
    return pg;
}

/* What a batch of notifications asks for. */
typedef struct pgr_wanted {
    bool schema, config;
} pgr_wanted;

static void classify(const char *payload, pgr_wanted *w)
{
    if (payload[0] == '\0' || strcasecmp(payload, "reload schema") == 0)
        w->schema = true;
    else if (strcasecmp(payload, "reload config") == 0)
        w->config = true;
}

/* Waits for notifications until the connection breaks or stop is set.
 * Everything that arrived together is drained first and answered once: a
 * burst of NOTIFYs (one per migration statement, say) costs one reload,
 * not one per message, and stop is not held up by a backlog. */
static void serve(pgr_listener *l, PGconn *pg)
{
    struct pollfd pfd = {.fd = PQsocket(pg), .events = POLLIN};
    while (!atomic_load(&l->stop) && !atomic_load(&l->ctx->db_down)) {
        int n = poll(&pfd, 1, 200);
        if (n < 0 || (n > 0 && PQconsumeInput(pg) == 0))
            return;
        pgr_wanted w = {false, false};
        PGnotify *note;
        while ((note = PQnotifies(pg)) != NULL) {
            classify(note->extra ? note->extra : "", &w);
            PQfreemem(note);
        }
        if (w.schema)
            pgr_db_report_notification(l->ctx, l->channel, false);
        if (w.config)
            pgr_db_report_notification(l->ctx, l->channel, true);
        if (w.schema && !atomic_load(&l->stop)) {
            pgrest_error err = {0};
            pgrest_ctx_load_schema(l->ctx, &err);
        }
        if (w.config && l->on_reload_config != NULL)
            l->on_reload_config(l->arg);
        if (PQstatus(pg) != CONNECTION_OK)
            return;
    }
}

/* Without a channel there is nothing to read: wait for a lost database. */
static void idle(pgr_listener *l)
{
    while (!atomic_load(&l->stop) && !atomic_load(&l->ctx->db_down))
        sleep_ms(100);
}

/* One recovery attempt: connect (and LISTEN), then reload the schema
 * cache; notifications missed while away are covered by the reload
 * (PostgREST reloads after listener and connection recovery alike). */
static PGconn *recover(pgr_listener *l)
{
    pgrest_error err = {0};
    if (pgrest_ctx_load_schema(l->ctx, &err) != PGREST_OK)
        return NULL;
    return worker_connection(l);
}

/* PostgREST stops retrying after a fatal error (the process exits) and
 * with db-pool-automatic-recovery = false (Reload.hs shouldRetry). */
static bool may_retry(pgr_listener *l)
{
    return !atomic_load(&l->ctx->db_fatal) &&
           l->ctx->cfg.db_pool_automatic_recovery;
}

/* Waits, without retrying, until stopped. */
static void give_up(pgr_listener *l)
{
    while (!atomic_load(&l->stop))
        sleep_ms(100);
}

/* After a failed attempt: logs the retry and sleeps delay seconds, or,
 * when retrying is over, waits for stop. Returns the next delay. */
static unsigned retry_pause(pgr_listener *l, unsigned delay)
{
    if (!may_retry(l)) {
        give_up(l);
        return delay;
    }
    pgr_db_report_retry(l->ctx, delay);
    atomic_store(&l->ctx->retry_delay, delay);
    backoff(l, delay);
    return delay < MAX_BACKOFF ? delay * 2 : MAX_BACKOFF;
}

/* The host's own first load failed: that was attempt one, the next comes
 * after the first backoff step (PostgREST's retry policy). */
static bool host_load_failed(pgr_listener *l)
{
    return !pgr_ctx_schema_loaded(l->ctx) &&
           atomic_load(&l->ctx->metrics.schema_loads_error) > 0;
}

static bool needs_reload(pgr_listener *l)
{
    return atomic_load(&l->ctx->db_down) || !pgr_ctx_schema_loaded(l->ctx);
}

static void *run(void *arg)
{
    pgr_listener *l = arg;
    unsigned delay = 1;
    PGconn *pg = l->first;
    l->first = NULL;
    if (host_load_failed(l))
        delay = retry_pause(l, delay);
    while (!atomic_load(&l->stop)) {
        if (pg == NULL || needs_reload(l)) {
            unsigned losses = atomic_load(&l->ctx->db_losses);
            if (pg != NULL)
                PQfinish(pg);
            pg = recover(l);
            if (pg == NULL) {
                delay = retry_pause(l, delay);
                continue;
            }
            delay = 1;
            atomic_store(&l->ctx->retry_delay, delay);
            /* a loss reported during this attempt needs another round */
            if (atomic_load(&l->ctx->db_losses) == losses)
                atomic_store(&l->ctx->db_down, false);
        }
        if (l->channel != NULL)
            serve(l, pg);
        else
            idle(l);
        if (PQstatus(pg) != CONNECTION_OK) {
            /* without automatic recovery this ends PostgREST
             * (Reload.hs retryingListen: DBListenFail, then killApp) */
            if (l->channel != NULL)
                pgr_db_report_listen_failure(l->ctx, pg, l->channel,
                                             !l->ctx->cfg.db_pool_automatic_recovery);
            else if (!l->ctx->cfg.db_pool_automatic_recovery)
                pgr_db_report_fatal(l->ctx, "Automatic recovery disabled, exiting.");
            /* the LISTEN connection broke: the database is unreachable
             * until proven otherwise (/ready 503) */
            atomic_store(&l->ctx->db_down, true);
            if (pgr_ctx_pool(l->ctx) != NULL)
                pgr_pool_flush(pgr_ctx_pool(l->ctx));
            PQfinish(pg);
            pg = NULL;
        }
    }
    if (pg != NULL)
        PQfinish(pg);
    return NULL;
}

static void free_listener(pgr_listener *l)
{
    if (l->first != NULL)
        PQfinish(l->first);
    free(l->conninfo);
    free(l->channel);
    free(l);
}

int pgrest_ctx_start_listener(pgrest_ctx *ctx, void (*on_reload_config)(void *),
                              void *arg, pgrest_error *err)
{
    if (ctx->listener != NULL)
        return PGREST_OK;
    const char *enabled = pgrest_ctx_get(ctx, "db-channel-enabled");
    bool listen = enabled == NULL || strcasecmp(enabled, "false") != 0;
    const char *channel = pgrest_ctx_get(ctx, "db-channel");
    pgr_listener *l = calloc(1, sizeof *l);
    if (l == NULL)
        return pgr_error_oom(err);
    l->ctx = ctx;
    l->conninfo = strdup(ctx->cfg.db_uri);
    l->channel = listen ? strdup(channel ? channel : "pgrst") : NULL;
    l->on_reload_config = on_reload_config;
    l->arg = arg;
    bool ok = l->conninfo != NULL && (!listen || l->channel != NULL);
    /* LISTEN before returning, so a NOTIFY sent after this call is seen;
     * if the database is down the thread keeps trying. */
    if (ok)
        l->first = worker_connection(l);
    if (!ok || pthread_create(&l->thread, NULL, run, l) != 0) {
        free_listener(l);
        return pgr_error_oom(err);
    }
    ctx->listener = l;
    return PGREST_OK;
}

void pgrest_ctx_stop_listener(pgrest_ctx *ctx)
{
    pgr_listener *l = ctx ? ctx->listener : NULL;
    if (l == NULL)
        return;
    atomic_store(&l->stop, true);
    pthread_join(l->thread, NULL);
    free_listener(l);
    ctx->listener = NULL;
}

bool pgr_ctx_schema_loaded(pgrest_ctx *ctx)
{
    pgr_schema_cache *sc = pgr_ctx_schema(ctx);
    if (sc == NULL)
        return false;
    pgr_schema_cache_release(sc);
    return true;
}

/* PostgREST admin /ready: 503 while the schema cache is pending or the
 * connection is being recovered. */
int pgrest_ctx_ready(pgrest_ctx *ctx)
{
    return pgr_ctx_schema_loaded(ctx) && !atomic_load(&ctx->db_down);
}

void pgr_ctx_connection_lost(pgrest_ctx *ctx)
{
    atomic_fetch_add(&ctx->db_losses, 1);
    atomic_store(&ctx->db_down, true);
    /* idle pooled connections to a restarted server look healthy until
     * used: replace them all (PostgREST releases the hasql pool) */
    if (pgr_ctx_pool(ctx) != NULL)
        pgr_pool_flush(pgr_ctx_pool(ctx));
}

void pgr_ctx_connection_ok(pgrest_ctx *ctx)
{
    if (ctx->listener == NULL && atomic_load(&ctx->db_down))
        atomic_store(&ctx->db_down, false);
}
