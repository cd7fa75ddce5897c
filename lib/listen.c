/* The background worker: schema and config reloads on NOTIFY (PostgREST
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

#include "config_snapshot.h"
#include "context.h"
#include "db_events.h"
#include "exec/pool.h"
#include "observe.h"
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

/* A libpq message on one line (PostgREST showOnSingleLine): tabs dropped,
 * lines joined with spaces, trailing newlines trimmed. */
static char *single_line(pgrest_arena *a, const char *msg)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, 128);
    for (const char *p = msg ? msg : ""; *p; p++) {
        if (*p == '\t')
            continue;
        if (*p == '\n') {
            if (p[1] != '\0')
                pgr_sb_putc(&sb, ' ');
            continue;
        }
        pgr_sb_putc(&sb, *p);
    }
    return pgr_sb_finish(&sb);
}

/* DBListenFail: the reason the LISTEN connection could not be made or
 * was lost. */
static void observe_listen_fail(pgr_listener *l, const char *reason)
{
    pgrest_arena *a = pgrest_arena_new(0);
    if (a == NULL)
        return;
    pgr_observef(l->ctx, PGREST_EVENT_LISTEN_FAIL,
                 "Failed listening for database notifications on the \"%s\" channel. %s",
                 l->channel, reason ? single_line(a, reason) : "Connection error");
    pgrest_arena_free(a);
}

/* DBListenStart: server version, host:port and channel. */
/* The line PostgREST logs once LISTEN runs. version() is asked before
 * the LISTEN, as PostgREST does, so pg_stat_activity keeps showing it. */
static void observe_listen_start(pgr_listener *l, PGconn *pg, const char *version)
{
    const char *host = PQhost(pg), *port = PQport(pg);
    pgr_observef(l->ctx, PGREST_EVENT_LISTEN_START,
                 "Listener connected to %s on \"%s%s%s\" and listening for database "
                 "notifications on the \"%s\" channel",
                 version, host ? host : "", port && *port ? ":" : "", port ? port : "",
                 l->channel);
}

/* Opens the worker's connection (LISTENing when a channel is configured);
 * without a channel it only proves the database is reachable. */
static PGconn *worker_connection(pgr_listener *l)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_error err = {0};
    PGconn *pg = a == NULL ? NULL
                 : l->channel != NULL ? pgr_connect_read_write(l->conninfo, a, &err)
                                      : pgr_connect(l->conninfo, a, &err);
    if (pg == NULL && l->channel != NULL)
        observe_listen_fail(l, err.details);
    if (pg == NULL) {
        pgrest_arena_free(a);
        return NULL;
    }
    const char *version = l->channel != NULL ? pgr_db_version_for_log(l->ctx, pg, a) : NULL;
    if (l->channel != NULL && !run_listen(l, pg)) {
        observe_listen_fail(l, PQerrorMessage(pg));
        PQfinish(pg);
        pg = NULL;
    } else if (version != NULL)
        observe_listen_start(l, pg, version);
    pgrest_arena_free(a);
    return pg;
}

/* What a batch of notifications asks for. */
typedef struct pgr_wanted {
    bool schema, config;
} pgr_wanted;

static void classify(pgr_listener *l, const char *channel, const char *payload,
                     pgr_wanted *w)
{
    if (payload[0] == '\0' || strcasecmp(payload, "reload schema") == 0) {
        pgr_observef(l->ctx, PGREST_EVENT_LISTEN_SCHEMA_MSG,
                     "Received a schema cache reload message on the \"%s\" channel", channel);
        w->schema = true;
    } else if (strcasecmp(payload, "reload config") == 0) {
        pgr_observef(l->ctx, PGREST_EVENT_LISTEN_CONFIG_MSG,
                     "Received a config reload message on the \"%s\" channel", channel);
        w->config = true;
    }
}

static bool channel_enabled(const char *enabled)
{
    return enabled == NULL || !(strcasecmp(enabled, "false") == 0 || strcasecmp(enabled, "off") == 0 ||
                                strcasecmp(enabled, "no") == 0 || strcmp(enabled, "0") == 0);
}

/* The channel the current configuration asks for into *channel (strdup'd;
 * NULL when db-channel-enabled is false); false on out of memory. */
static bool wanted_channel(pgrest_ctx *ctx, char **channel)
{
    pgr_conf *conf = pgr_ctx_conf(ctx);
    const char *name = pgr_conf_option(conf, "db-channel");
    bool listen = channel_enabled(pgr_conf_option(conf, "db-channel-enabled"));
    *channel = listen ? strdup(name != NULL ? name : "pgrst") : NULL;
    pgr_conf_release(conf);
    return !listen || *channel != NULL;
}

/* A reload changed db-channel or db-channel-enabled: PostgREST restarts
 * its listener (readInDbConfig); here the worker takes the new channel
 * and reconnects. Only the worker thread touches l->channel. */
static bool channel_changed(pgr_listener *l)
{
    char *want = NULL;
    if (!wanted_channel(l->ctx, &want))
        return false;
    bool same = want == NULL ? l->channel == NULL
                             : l->channel != NULL && strcmp(want, l->channel) == 0;
    if (same) {
        free(want);
        return false;
    }
    free(l->channel);
    l->channel = want;
    return true;
}


/* The host re-reads its sources (file, environment) and reloads; without
 * a host callback the options set before stay and the in-database
 * settings are read again (pgrest_ctx_reload_config). */
static void reload_config(pgr_listener *l)
{
    if (l->on_reload_config != NULL) {
        l->on_reload_config(l->arg);
        return;
    }
    pgrest_error err = {0};
    pgrest_ctx_reload_config(l->ctx, NULL, NULL, 0, &err);
}

static bool may_retry(pgr_listener *l);

/* A load failed while the database answers: retried with backoff
 * (Reload.hs retryingSchemaCacheLoad), unless retrying is over. */
static bool wants_schema_retry(pgr_listener *l)
{
    return atomic_load(&l->ctx->schema_pending) && may_retry(l);
}

/* Waits for notifications until the connection breaks or stop is set.
 * Everything that arrived together is drained first and answered once: a
 * burst of NOTIFYs (one per migration statement, say) costs one reload,
 * not one per message, and stop is not held up by a backlog. */
static void serve(pgr_listener *l, PGconn *pg)
{
    struct pollfd pfd = {.fd = PQsocket(pg), .events = POLLIN};
    while (!atomic_load(&l->stop) && !atomic_load(&l->ctx->db_down) && !wants_schema_retry(l)) {
        int n = poll(&pfd, 1, 200);
        if (n < 0 || (n > 0 && PQconsumeInput(pg) == 0))
            return;
        pgr_wanted w = {false, false};
        PGnotify *note;
        while ((note = PQnotifies(pg)) != NULL) {
            classify(l, note->relname ? note->relname : l->channel,
                     note->extra ? note->extra : "", &w);
            PQfreemem(note);
        }
        if (w.schema && !atomic_load(&l->stop)) {
            pgrest_error err = {0};
            pgrest_ctx_load_schema(l->ctx, &err);
        }
        if (w.config && !atomic_load(&l->stop))
            reload_config(l);
        if (PQstatus(pg) != CONNECTION_OK || channel_changed(l))
            return;
    }
}

/* Without a channel there is nothing to read: wait for a lost database. */
static void idle(pgr_listener *l)
{
    while (!atomic_load(&l->stop) && !atomic_load(&l->ctx->db_down) && !channel_changed(l) &&
           !wants_schema_retry(l))
        sleep_ms(100);
}

/* How a recovery attempt failed: the retry logs what PostgREST's two
 * loops would (the listener's DBListenRetry, the schema cache loader's
 * ConnectionRetryObs). */
typedef struct attempt_failure {
    bool listen;   /* the LISTEN connection could not be made */
    bool load;     /* a schema cache load ran and failed */
} attempt_failure;

/* PostgREST's loader runs on its own only while it has no cache yet or
 * its last load failed (Reload.hs retryingSchemaCacheLoad); a cache in
 * force is reloaded by the listener once it listens again (retryingListen
 * after a retry), not while the database is away. */
static bool loader_retrying(pgr_listener *l)
{
    return !pgr_ctx_schema_loaded(l->ctx) || atomic_load(&l->ctx->schema_pending);
}

/* One recovery attempt: connect (and LISTEN), then reload the schema
 * cache; notifications missed while away are covered by the reload. While
 * the LISTEN connection fails the cache in force stays and is not
 * reloaded, unless the loader is still retrying its own load. Without a
 * channel the connection only tells whether the database answers. */
static PGconn *recover(pgr_listener *l, attempt_failure *failed)
{
    PGconn *pg = worker_connection(l);
    failed->listen = pg == NULL;
    failed->load = false;
    if (pg == NULL && l->channel != NULL && !loader_retrying(l))
        return NULL;
    pgrest_error err = {0};
    failed->load = pgrest_ctx_load_schema(l->ctx, &err) != PGREST_OK;
    if (failed->load || pg == NULL) {
        if (pg != NULL)
            PQfinish(pg);
        return NULL;
    }
    return pg;
}

static bool recovery_enabled(pgrest_ctx *ctx)
{
    pgr_conf *conf = pgr_ctx_conf(ctx);
    bool on = conf->cfg.db_pool_automatic_recovery;
    pgr_conf_release(conf);
    return on;
}

/* PostgREST stops retrying after a fatal error (the process exits) and
 * with db-pool-automatic-recovery = false (Reload.hs shouldRetry). */
static bool may_retry(pgr_listener *l)
{
    return !atomic_load(&l->ctx->db_fatal) && recovery_enabled(l->ctx);
}

/* Waits, without retrying, until stopped. */
static void give_up(pgr_listener *l)
{
    while (!atomic_load(&l->stop))
        sleep_ms(100);
}

/* After a failed attempt: logs the retry and sleeps delay seconds, or,
 * when retrying is over, waits for stop. Returns the next delay. */
static unsigned retry_pause(pgr_listener *l, unsigned delay, attempt_failure failed)
{
    if (!may_retry(l)) {
        give_up(l);
        return delay;
    }
    if (l->channel != NULL && failed.listen)
        pgr_observef(l->ctx, PGREST_EVENT_LISTEN_RETRY,
                     "Retrying listening for database notifications in %u seconds...", delay);
    if (failed.load)
        pgr_observef(l->ctx, PGREST_EVENT_CONNECTION_RETRY,
                     "Attempting to reconnect to the database in %u seconds...", delay);
    backoff(l, delay);
    return delay < MAX_BACKOFF ? delay * 2 : MAX_BACKOFF;
}

static const attempt_failure LOAD_FAILED = {false, true};

/* The host's own first load failed: that was attempt one, the next comes
 * after the first backoff step (PostgREST's retry policy). */
static bool host_load_failed(pgr_listener *l)
{
    return !pgr_ctx_schema_loaded(l->ctx) &&
           atomic_load(&l->ctx->metrics.schema_loads_error) > 0;
}

/* The schema cache in force stays while its reload is retried: the
 * listener keeps its connection (PostgREST's loader retries apart). */
static unsigned retry_schema_load(pgr_listener *l, unsigned delay)
{
    delay = retry_pause(l, delay, LOAD_FAILED);
    pgrest_error err = {0};
    if (!atomic_load(&l->stop) && pgrest_ctx_load_schema(l->ctx, &err) == PGREST_OK)
        delay = 1;
    return delay;
}

static bool needs_reload(pgr_listener *l)
{
    return atomic_load(&l->ctx->db_down) || !pgr_ctx_schema_loaded(l->ctx);
}

/* The worker's connection, or without a channel only the knowledge that
 * the last check reached the database: PostgREST holds no connection
 * beside its pool when it does not LISTEN. */
typedef struct worker_link {
    PGconn *pg;
    bool reached;
} worker_link;

static bool link_open(const worker_link *w)
{
    return w->pg != NULL || w->reached;
}

static bool link_ok(const worker_link *w)
{
    return w->reached || (w->pg != NULL && PQstatus(w->pg) == CONNECTION_OK);
}

static void link_drop(worker_link *w)
{
    if (w->pg != NULL)
        PQfinish(w->pg);
    w->pg = NULL;
    w->reached = false;
}

/* Without a channel the connection has served its purpose. */
static void link_settle(pgr_listener *l, worker_link *w)
{
    if (l->channel == NULL && w->pg != NULL) {
        PQfinish(w->pg);
        w->pg = NULL;
        w->reached = true;
    }
}

static void *run(void *arg)
{
    pgr_listener *l = arg;
    unsigned delay = 1;
    worker_link w = {l->first, false};
    l->first = NULL;
    if (host_load_failed(l))
        delay = retry_pause(l, delay, LOAD_FAILED);
    while (!atomic_load(&l->stop)) {
        if (link_ok(&w) && !needs_reload(l) && wants_schema_retry(l)) {
            delay = retry_schema_load(l, delay);
            continue;
        }
        if (!link_open(&w) || needs_reload(l)) {
            unsigned losses = atomic_load(&l->ctx->db_losses);
            link_drop(&w);
            attempt_failure failed;
            w.pg = recover(l, &failed);
            if (w.pg == NULL) {
                delay = retry_pause(l, delay, failed);
                continue;
            }
            delay = 1;
            /* a loss reported during this attempt needs another round */
            if (atomic_load(&l->ctx->db_losses) == losses)
                atomic_store(&l->ctx->db_down, false);
        }
        link_settle(l, &w);
        atomic_store(&l->ctx->listener_on, true);
        const char *before = l->channel;
        if (l->channel != NULL)
            serve(l, w.pg);
        else
            idle(l);
        atomic_store(&l->ctx->listener_on, false);
        if (before == NULL) {
            /* a new channel needs a LISTEN connection; a loss that a
             * request reported is checked by connecting again */
            if (l->channel != NULL || atomic_load(&l->ctx->db_down))
                link_drop(&w);
            continue;
        }
        if (l->channel != before && PQstatus(w.pg) == CONNECTION_OK) {
            /* new channel: LISTEN again on a new connection (and reload
             * the schema cache, as after any listener restart) */
            link_drop(&w);
            continue;
        }
        if (PQstatus(w.pg) != CONNECTION_OK) {
            /* the LISTEN connection broke: the database is unreachable
             * until proven otherwise (/ready 503); without automatic
             * recovery this ends PostgREST (Reload.hs retryingListen:
             * DBListenFail, then killApp) */
            if (l->channel != NULL)
                observe_listen_fail(l, PQerrorMessage(w.pg));
            if (!recovery_enabled(l->ctx))
                pgr_db_report_fatal(l->ctx, "Automatic recovery disabled, exiting.");
            atomic_store(&l->ctx->db_down, true);
            if (pgr_ctx_pool(l->ctx) != NULL)
                pgr_pool_flush(pgr_ctx_pool(l->ctx));
            link_drop(&w);
        }
    }
    link_drop(&w);
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
    pgr_listener *l = calloc(1, sizeof *l);
    if (l == NULL)
        return pgr_error_oom(err);
    l->ctx = ctx;
    pgr_conf *conf = pgr_ctx_conf(ctx);
    l->conninfo = strdup(conf->cfg.db_uri);
    pgr_conf_release(conf);
    bool ok = wanted_channel(ctx, &l->channel) && l->conninfo != NULL;
    l->on_reload_config = on_reload_config;
    l->arg = arg;
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
    return pgr_ctx_schema_loaded(ctx) && !atomic_load(&ctx->db_down) &&
           !atomic_load(&ctx->schema_pending);
}

/* With a LISTEN connection its state is the answer (PostgREST trusts the
 * listener); otherwise one pooled round trip decides. */
int pgrest_ctx_connection_established(pgrest_ctx *ctx)
{
    pgr_listener *l = ctx->listener;
    if (l != NULL && l->channel != NULL)
        return atomic_load(&ctx->listener_on) && !atomic_load(&ctx->db_down);
    pgr_pool *pool = pgr_ctx_pool(ctx);
    pgrest_arena *a = pool != NULL ? pgrest_arena_new(0) : NULL;
    if (a == NULL)
        return 0;
    pgrest_error err = {0};
    /* AppState.isConnEstablished: a SELECT 1 through usePool */
    pgr_observe(ctx, PGREST_EVENT_POOL_REQUEST, "Trying to borrow a connection from pool");
    pgr_conn *c = pgr_pool_acquire(pool, a, &err);
    bool ok = false;
    if (c != NULL) {
        PGresult *r = PQexec(c->pg, "SELECT 1");
        ok = PQresultStatus(r) == PGRES_TUPLES_OK;
        PQclear(r);
        pgr_pool_release_after(pool, c, ok);
    }
    pgr_observe(ctx, PGREST_EVENT_POOL_REQUEST_FULFILLED, "Borrowed a connection from the pool");
    pgrest_arena_free(a);
    /* a timeout waiting for a busy pool (PGRST003) is no lost database */
    if (!ok && (c != NULL || err.http_status == 503))
        pgr_ctx_connection_lost(ctx);
    else if (ok)
        pgr_ctx_connection_ok(ctx);
    return ok;
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
