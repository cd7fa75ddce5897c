/* Schema reloads on NOTIFY (PostgREST AppState/Reload.hs runListener): a
 * dedicated connection LISTENs on db-channel; requests in flight keep the
 * cache they started with because the swap is reference counted. */
#include <libpq-fe.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "context.h"
#include "exec/pool.h"
#include "util/error.h"
#include "util/strbuf.h"

struct pgr_listener {
    pthread_t thread;
    atomic_bool stop;
    pgrest_ctx *ctx;
    char *conninfo;
    char *channel;
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

static PGconn *listen_connection(pgr_listener *l)
{
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_error err = {0};
    PGconn *pg = a ? pgr_connect(l->conninfo, a, &err) : NULL;
    pgrest_arena_free(a);
    if (pg == NULL)
        return NULL;
    char *ident = PQescapeIdentifier(pg, l->channel, strlen(l->channel));
    pgr_sb sb;
    pgrest_arena *qa = pgrest_arena_new(0);
    pgr_sb_init(&sb, qa, 64);
    pgr_sb_puts(&sb, "LISTEN ");
    pgr_sb_puts(&sb, ident ? ident : "\"pgrst\"");
    PQfreemem(ident);
    PGresult *r = PQexec(pg, pgr_sb_finish(&sb));
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    pgrest_arena_free(qa);
    if (!ok) {
        PQfinish(pg);
        return NULL;
    }
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
    while (!atomic_load(&l->stop)) {
        int n = poll(&pfd, 1, 200);
        if (n < 0 || (n > 0 && PQconsumeInput(pg) == 0))
            return;
        pgr_wanted w = {false, false};
        PGnotify *note;
        while ((note = PQnotifies(pg)) != NULL) {
            classify(note->extra ? note->extra : "", &w);
            PQfreemem(note);
        }
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

static void *run(void *arg)
{
    pgr_listener *l = arg;
    unsigned delay = 1;
    while (!atomic_load(&l->stop)) {
        PGconn *pg = l->first ? l->first : listen_connection(l);
        l->first = NULL;
        if (pg == NULL) {
            backoff(l, delay);
            delay = delay < 32 ? delay * 2 : 32;
            continue;
        }
        /* notifications sent while we were away may have been missed */
        if (delay > 1) {
            pgrest_error err = {0};
            pgrest_ctx_load_schema(l->ctx, &err);
        }
        delay = 1;
        serve(l, pg);
        PQfinish(pg);
    }
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
    const char *enabled = pgrest_ctx_get(ctx, "db-channel-enabled");
    if (enabled != NULL && strcasecmp(enabled, "false") == 0)
        return PGREST_OK;
    if (ctx->listener != NULL)
        return PGREST_OK;
    const char *channel = pgrest_ctx_get(ctx, "db-channel");
    pgr_listener *l = calloc(1, sizeof *l);
    if (l == NULL)
        return pgr_error_oom(err);
    l->ctx = ctx;
    l->conninfo = strdup(ctx->cfg.db_uri);
    l->channel = strdup(channel ? channel : "pgrst");
    l->on_reload_config = on_reload_config;
    l->arg = arg;
    /* LISTEN before returning, so a NOTIFY sent after this call is seen;
     * if the database is down the thread keeps trying. */
    if (l->conninfo != NULL && l->channel != NULL)
        l->first = listen_connection(l);
    if (l->conninfo == NULL || l->channel == NULL ||
        pthread_create(&l->thread, NULL, run, l) != 0) {
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

int pgrest_ctx_ready(pgrest_ctx *ctx)
{
    pgr_schema_cache *sc = pgr_ctx_schema(ctx);
    if (sc == NULL)
        return 0;
    pgr_schema_cache_release(sc);
    return 1;
}
