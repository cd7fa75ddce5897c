/* The background worker: PostgREST's listener (AppState/Reload.hs
 * runListener / retryingListen) and the retries of a failed schema cache
 * load (retryingSchemaCacheLoad), on one thread with a schedule each.
 *
 * The listener LISTENs on db-channel; a NOTIFY reloads the schema cache
 * or the configuration. When its connection breaks or cannot be made it
 * is off (/ready 503) and retried after 1, 2, 4 .. 32 s; a reconnection
 * after a retry reloads the schema cache (notifications may have been
 * missed). Requests that lose their connection change none of this: the
 * pool only replaces that connection (hasql-pool).
 *
 * A failed schema cache load (at start, on NOTIFY, SIGUSR1 or after the
 * listener came back) is retried after 1, 2, 4 .. 32 s while
 * db-pool-automatic-recovery is on; requests keep the cache in force. */
#include <libpq-fe.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "config/config_snapshot.h"
#include "engine/context.h"
#include "engine/db_events.h"
#include "exec/pool.h"
#include "engine/observe.h"
#include "util/error.h"
#include "util/hs_show.h"
#include "util/monotonic.h"
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
    bool first_connect_failed;
};

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
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

/* Observation.hs prints names with Haskell's show: the channel as Text
 * (DBListenStart, DBListenFail), the notification's channel and the
 * listener's host:port as ByteStrings. "" when out of memory. */
static const char *show_with(pgrest_arena *a, const char *s,
                             void (*show)(pgr_sb *, const char *))
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, strlen(s) + 8);
    show(&sb, s);
    const char *out = pgr_sb_finish(&sb);
    return out ? out : "\"\"";
}

static const char *show_text(pgrest_arena *a, const char *s)
{
    return show_with(a, s, pgr_hs_show_cstring);
}

static const char *show_bytes(pgrest_arena *a, const char *s)
{
    return show_with(a, s, pgr_hs_show_bytes);
}

/* DBListenFail: the reason the LISTEN connection could not be made or
 * was lost. */
static void observe_listen_fail(pgr_listener *l, const char *reason)
{
    pgrest_arena *a = pgrest_arena_new(0);
    if (a == NULL)
        return;
    pgr_observef(l->ctx, PGREST_EVENT_LISTEN_FAIL,
                 "Failed listening for database notifications on the %s channel. %s",
                 show_text(a, l->channel), reason ? single_line(a, reason) : "Connection error");
    pgrest_arena_free(a);
}

/* DBListenStart: server version, host:port and channel. */
/* The line PostgREST logs once LISTEN runs. version() is asked before
 * the LISTEN, as PostgREST does, so pg_stat_activity keeps showing it. */
static void observe_listen_start(pgr_listener *l, PGconn *pg, const char *version,
                                 pgrest_arena *a)
{
    const char *host = PQhost(pg), *port = PQport(pg);
    const char *address = pgr_asprintf(a, "%s%s%s", host ? host : "",
                                       port && *port ? ":" : "", port ? port : "");
    pgr_observef(l->ctx, PGREST_EVENT_LISTEN_START,
                 "Listener connected to %s on %s and listening for database "
                 "notifications on the %s channel",
                 version, show_bytes(a, address ? address : ""), show_text(a, l->channel));
}

/* Opens the LISTEN connection. *connect_failed tells a connection that
 * could not be made (PostgREST logs that failure twice: the connection
 * error, then the exitFailure its handler catches) from one that failed
 * afterwards. */
static PGconn *worker_connection(pgr_listener *l, bool *connect_failed)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_error err = {0};
    PGconn *pg = a == NULL ? NULL : pgr_connect_read_write(l->conninfo, a, &err);
    *connect_failed = pg == NULL;
    if (pg == NULL) {
        observe_listen_fail(l, a != NULL ? err.details : NULL);
        pgrest_arena_free(a);
        return NULL;
    }
    const char *version = pgr_db_version_for_log(l->ctx, pg, a);
    if (!run_listen(l, pg)) {
        observe_listen_fail(l, PQerrorMessage(pg));
        PQfinish(pg);
        pg = NULL;
    } else if (version != NULL)
        observe_listen_start(l, pg, version, a);
    pgrest_arena_free(a);
    return pg;
}

/* What a batch of notifications asks for. */
typedef struct pgr_wanted {
    bool schema, config;
} pgr_wanted;

/* Reload.hs handleNotification: an empty payload or "reload schema"
 * reloads the schema cache, "reload config" the configuration, compared
 * exactly ("RELOAD SCHEMA" does nothing); anything else is ignored. */
static void classify(pgr_listener *l, const char *channel, const char *payload,
                     pgr_wanted *w)
{
    pgrest_arena *a = pgrest_arena_new(0);
    const char *shown = a != NULL ? show_bytes(a, channel) : "\"\"";
    if (payload[0] == '\0' || strcmp(payload, "reload schema") == 0) {
        pgr_observef(l->ctx, PGREST_EVENT_LISTEN_SCHEMA_MSG,
                     "Received a schema cache reload message on the %s channel", shown);
        w->schema = true;
    } else if (strcmp(payload, "reload config") == 0) {
        pgr_observef(l->ctx, PGREST_EVENT_LISTEN_CONFIG_MSG,
                     "Received a config reload message on the %s channel", shown);
        w->config = true;
    }
    pgrest_arena_free(a);
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

/* A retry schedule: waits of 1, 2, 4 .. 32 s (PostgREST's
 * exponentialBackoff capped at 32 s, and retryingListen's nextDelay). */
typedef struct retry_schedule {
    unsigned next;      /* the wait the next failure asks for */
    unsigned waiting;   /* the wait in progress */
    double due;         /* when it ends; 0: nothing scheduled */
} retry_schedule;

static void schedule_reset(retry_schedule *r)
{
    r->next = 1;
    r->waiting = 0;
    r->due = 0;
}

/* Starts the next wait; returns its length. */
static unsigned schedule_arm(retry_schedule *r)
{
    r->waiting = r->next;
    r->due = pgr_monotonic_seconds() + r->waiting;
    if (r->next < MAX_BACKOFF)
        r->next *= 2;
    return r->waiting;
}

static bool schedule_due(const retry_schedule *r)
{
    return r->due != 0 && pgr_monotonic_seconds() >= r->due;
}

/* retryingSchemaCacheLoad: a failed load is tried again once its wait is
 * over, each attempt announced with the wait that preceded it (the
 * retry status' previous delay); a load that succeeded meanwhile
 * (SIGUSR1, NOTIFY) ends the retries. */
static void retry_schema_load(pgr_listener *l, retry_schedule *load)
{
    if (!atomic_load(&l->ctx->schema_pending) || !may_retry(l)) {
        schedule_reset(load);
        return;
    }
    if (load->due == 0) {
        schedule_arm(load);
        return;
    }
    if (!schedule_due(load))
        return;
    pgr_observef(l->ctx, PGREST_EVENT_CONNECTION_RETRY,
                 "Attempting to reconnect to the database in %u seconds...", load->waiting);
    load->due = 0;
    pgrest_error err = {0};
    if (pgrest_ctx_load_schema(l->ctx, &err) == PGREST_OK)
        schedule_reset(load);
}

/* The listener's connection and, while it is off, its retry schedule. */
typedef struct listener_link {
    PGconn *pg;
    retry_schedule retry;
} listener_link;

/* retryingListen's onError: the listener is off (/ready 503) and the
 * next attempt comes after nextDelay. Without automatic recovery
 * PostgREST is killed (killApp, with no line of its own: the failure
 * said why), the retry still announced as the handler goes on. A
 * connection that could not be made is also reported as the
 * exitFailure the handler caught. */
static void listener_failed(pgr_listener *l, listener_link *link, bool connect_failed)
{
    if (connect_failed)
        observe_listen_fail(l, "ExitFailure 1");
    atomic_store(&l->ctx->listener_on, false);
    bool recovering = recovery_enabled(l->ctx);
    if (!recovering)
        pgr_db_report_fatal(l->ctx, "");
    else if (atomic_load(&l->ctx->db_fatal)) {
        link->retry.due = 0;    /* exiting for another reason */
        return;
    }
    pgr_observef(l->ctx, PGREST_EVENT_LISTEN_RETRY,
                 "Retrying listening for database notifications in %u seconds...",
                 schedule_arm(&link->retry));
    if (!recovering)
        link->retry.due = 0;
}

/* A LISTEN connection up: after a retry the schema cache is reloaded,
 * as notifications may have been missed meanwhile. PostgREST turns the
 * listener on and starts that load on a thread of its own; here the load
 * comes first, so /ready is not 200 on the cache from before the loss. */
static void listener_up(pgr_listener *l, listener_link *link)
{
    bool retried = link->retry.next > 1;
    schedule_reset(&link->retry);
    if (retried) {
        pgrest_error err = {0};
        pgrest_ctx_load_schema(l->ctx, &err);
    }
    atomic_store(&l->ctx->listener_on, true);
}

static void listener_attempt(pgr_listener *l, listener_link *link)
{
    bool connect_failed;
    link->pg = worker_connection(l, &connect_failed);
    if (link->pg == NULL)
        listener_failed(l, link, connect_failed);
    else
        listener_up(l, link);
}

static void listener_drop(listener_link *link)
{
    if (link->pg != NULL)
        PQfinish(link->pg);
    link->pg = NULL;
}

/* Waits up to 100 ms for notifications. Everything that arrived together
 * is drained first and answered once: a burst of NOTIFYs (one per
 * migration statement, say) costs one reload, not one per message. A
 * broken connection turns the listener off. */
static void serve(pgr_listener *l, listener_link *link)
{
    PGconn *pg = link->pg;
    struct pollfd pfd = {.fd = PQsocket(pg), .events = POLLIN};
    int n = poll(&pfd, 1, 100);
    bool broken = n < 0 || (n > 0 && PQconsumeInput(pg) == 0);
    pgr_wanted w = {false, false};
    PGnotify *note;
    while (!broken && (note = PQnotifies(pg)) != NULL) {
        classify(l, note->relname ? note->relname : l->channel, note->extra ? note->extra : "",
                 &w);
        PQfreemem(note);
    }
    if (w.schema && !atomic_load(&l->stop)) {
        pgrest_error err = {0};
        pgrest_ctx_load_schema(l->ctx, &err);
    }
    if (w.config && !atomic_load(&l->stop))
        reload_config(l);
    if (broken || PQstatus(pg) != CONNECTION_OK) {
        observe_listen_fail(l, PQerrorMessage(pg));
        listener_drop(link);
        listener_failed(l, link, false);
    }
}

/* A reload changed db-channel or db-channel-enabled: PostgREST kills the
 * listener and runs a new one (nextDelay from 1, so no schema reload). */
static void restart_listener(pgr_listener *l, listener_link *link)
{
    listener_drop(link);
    atomic_store(&l->ctx->listener_on, false);
    schedule_reset(&link->retry);
    if (l->channel != NULL)
        listener_attempt(l, link);
}

static void *run(void *arg)
{
    pgr_listener *l = arg;
    retry_schedule load;
    schedule_reset(&load);
    listener_link link = {l->first, {0}};
    schedule_reset(&link.retry);
    l->first = NULL;
    if (l->channel != NULL && link.pg == NULL)
        listener_failed(l, &link, l->first_connect_failed);
    else if (link.pg != NULL)
        atomic_store(&l->ctx->listener_on, true);
    while (!atomic_load(&l->stop)) {
        retry_schema_load(l, &load);
        if (link.pg != NULL)
            serve(l, &link);
        else if (l->channel != NULL && schedule_due(&link.retry))
            listener_attempt(l, &link);
        else
            sleep_ms(100);
        if (channel_changed(l))
            restart_listener(l, &link);
    }
    listener_drop(&link);
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
    /* LISTEN needs a session of its own: through a transaction pooler
     * (PgBouncer pool_mode = transaction) it would be lost, so the
     * listener may connect elsewhere than the pool */
    l->conninfo = strdup(pgr_config_channel_uri(&conf->cfg));
    pgr_conf_release(conf);
    bool ok = wanted_channel(ctx, &l->channel) && l->conninfo != NULL;
    l->on_reload_config = on_reload_config;
    l->arg = arg;
    /* Known before it connects: until it listens the connection counts
     * as not established (Reload.hs isListenerOn, false until then), and
     * /ready borrows no pooled connection meanwhile, which the next schema
     * cache load would reuse. */
    ctx->listener = l;
    /* LISTEN before returning, so a NOTIFY sent after this call is seen;
     * if the database is down the thread keeps trying. */
    if (ok && l->channel != NULL)
        l->first = worker_connection(l, &l->first_connect_failed);
    if (!ok || pthread_create(&l->thread, NULL, run, l) != 0) {
        ctx->listener = NULL;
        free_listener(l);
        return pgr_error_oom(err);
    }
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

/* The listener LISTENs (db-channel-enabled), not only retries loads. */
bool pgr_listener_has_channel(const pgr_listener *l)
{
    return l->channel != NULL;
}
