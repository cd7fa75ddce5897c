#include "db_events.h"

#include <string.h>

#include "exec/pool.h"
#include "util/error.h"
#include "util/strbuf.h"

void pgrest_ctx_set_db_observer(pgrest_ctx *ctx, pgrest_db_observer fn, void *arg)
{
    if (ctx == NULL)
        return;
    ctx->db_observer = fn;
    ctx->db_observer_arg = arg;
}

static void report(pgrest_ctx *ctx, pgrest_db_event ev, const char *message)
{
    if (ctx->db_observer != NULL && message != NULL)
        ctx->db_observer(ctx->db_observer_arg, ev, message);
}

/* prefix + the error as PostgREST's jsonMessage prints it (verbose). */
static const char *with_error(pgrest_arena *a, const char *prefix,
                              const pgrest_error *err)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, 256);
    pgr_sb_puts(&sb, prefix);
    pgr_sb_puts(&sb, pgr_error_json(a, err, false));
    return pgr_sb_finish(&sb);
}

void pgr_db_report_fatal(pgrest_ctx *ctx, const char *message)
{
    atomic_store(&ctx->db_fatal, true);
    report(ctx, PGREST_DB_FATAL, message);
}

/* AppState/Pool.hs: libpq's words for a rejected password. */
static bool auth_failure(const pgrest_error *err)
{
    const char *d = err != NULL ? err->details : NULL;
    return d != NULL && (strstr(d, "FATAL:  password authentication failed") != NULL ||
                         strstr(d, "no password supplied") != NULL);
}

static void report_auth_failure(pgrest_ctx *ctx, pgrest_arena *a,
                                const pgrest_error *err)
{
    pgr_db_report_fatal(ctx, with_error(a, "Failed to establish a connection. ", err));
}

/* What PostgREST's usePool deems fatal in a request's error, as the
 * prefix of its log line, or NULL: a rejected password, and the errors
 * of a connection pooler that cannot work with it. */
static const char *fatal_request_error(const pgrest_error *err)
{
    if (auth_failure(err))
        return "Failed to establish a connection. ";
    const char *code = err != NULL ? err->code : NULL;
    if (code == NULL)
        return NULL;
    if (strcmp(code, "42P05") == 0)
        return "If you are using connection poolers in transaction mode, try "
               "setting db-prepared-statements to false. ";
    if (strcmp(code, "08P01") == 0 && err->message != NULL &&
        strcmp(err->message, "transaction blocks not allowed in statement pooling mode") == 0)
        return "Connection poolers in statement mode are not supported.";
    return NULL;
}

void pgr_db_check_request_error(pgrest_ctx *ctx, const pgrest_error *err)
{
    const char *prefix = fatal_request_error(err);
    if (prefix == NULL)
        return;
    pgrest_arena *a = pgrest_arena_new(0);
    if (a != NULL)
        pgr_db_report_fatal(ctx, with_error(a, prefix, err));
    pgrest_arena_free(a);
}

/* The order of PostgREST's lines: the fatal password error (usePool),
 * the failed version query, then the recovery decision (qPgVersion). */
static void report_connect_failure(pgrest_ctx *ctx, pgrest_arena *a,
                                   const pgrest_error *err)
{
    if (auth_failure(err))
        report_auth_failure(ctx, a, err);
    report(ctx, PGREST_DB_FAILED,
           with_error(a, "Failed to query the PostgreSQL version. ", err));
    if (!ctx->cfg.db_pool_automatic_recovery)
        pgr_db_report_fatal(ctx, "Automatic recovery disabled, exiting.");
}

/* "15.4" from server_version_num 150004 (PostgreSQL 10+ numbering). */
static const char *version_name(pgrest_arena *a, int num)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, 16);
    pgr_sb_put_long(&sb, num / 10000);
    pgr_sb_putc(&sb, '.');
    pgr_sb_put_long(&sb, num % 10000);
    return pgr_sb_finish(&sb);
}

static bool supported_version(pgrest_ctx *ctx, pgrest_arena *a, PGconn *pg)
{
    int num = PQserverVersion(pg);
    if (num >= PGR_MIN_PG_VERSION)
        return true;
    pgr_sb sb;
    pgr_sb_init(&sb, a, 128);
    pgr_sb_puts(&sb, "Cannot run in this PostgreSQL version (");
    pgr_sb_puts(&sb, version_name(a, num));
    pgr_sb_puts(&sb, "), PostgREST needs at least ");
    pgr_sb_puts(&sb, version_name(a, PGR_MIN_PG_VERSION));
    pgr_db_report_fatal(ctx, pgr_sb_finish(&sb));
    return false;
}

const char *pgr_db_version_for_log(pgrest_ctx *ctx, PGconn *pg, pgrest_arena *a)
{
    if (ctx->db_observer == NULL)
        return NULL;
    PGresult *r = PQexec(pg, "SELECT version()");
    const char *v = NULL;
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
        v = pgr_strdup(a, PQgetvalue(r, 0, 0));
    PQclear(r);
    return v;
}

static void report_connected(pgrest_ctx *ctx, pgrest_arena *a, PGconn *pg)
{
    const char *version = pgr_db_version_for_log(ctx, pg, a);
    if (version == NULL)
        return;
    pgr_sb sb;
    pgr_sb_init(&sb, a, 160);
    pgr_sb_puts(&sb, "Successfully connected to ");
    pgr_sb_puts(&sb, version);
    report(ctx, PGREST_DB_CONNECTED, pgr_sb_finish(&sb));
    pgr_sb_init(&sb, a, 96);
    pgr_sb_puts(&sb, "Connection Pool initialized with a maximum size of ");
    pgr_sb_put_long(&sb, ctx->cfg.db_pool);
    pgr_sb_puts(&sb, " connections");
    report(ctx, PGREST_DB_CONNECTED, pgr_sb_finish(&sb));
}

PGconn *pgr_db_connect(pgrest_ctx *ctx, pgrest_arena *a, pgrest_error *err)
{
    PGconn *pg = pgr_connect(ctx->cfg.db_uri, a, err);
    if (pg == NULL) {
        report_connect_failure(ctx, a, err);
        return NULL;
    }
    if (!supported_version(ctx, a, pg)) {
        PQfinish(pg);
        pgr_error(err, 503, "PGRST000", "Database connection error.",
                  "unsupported PostgreSQL version", NULL);
        return NULL;
    }
    report_connected(ctx, a, pg);
    return pg;
}

static void put_list(pgr_sb *sb, const char *const *items)
{
    for (size_t i = 0; items != NULL && items[i] != NULL; i++) {
        if (i > 0)
            pgr_sb_putc(sb, ',');
        pgr_sb_puts(sb, items[i]);
    }
}

void pgr_db_report_schema_error(pgrest_ctx *ctx, const pgrest_error *err)
{
    if (ctx->db_observer == NULL || err == NULL)
        return;
    pgrest_arena *a = pgrest_arena_new(0);
    if (a == NULL)
        return;
    pgr_sb sb;
    pgr_sb_init(&sb, a, 256);
    pgr_sb_puts(&sb, "Failed to load the schema cache using db-schemas=");
    put_list(&sb, ctx->cfg.db_schemas);
    pgr_sb_puts(&sb, " and db-extra-search-path=");
    put_list(&sb, ctx->cfg.db_extra_search_path);
    pgr_sb_puts(&sb, ". ");
    pgr_sb_puts(&sb, pgr_error_json(a, err, false));
    report(ctx, PGREST_DB_FAILED, pgr_sb_finish(&sb));
    pgrest_arena_free(a);
}

void pgr_db_report_retry(pgrest_ctx *ctx, unsigned seconds)
{
    if (ctx->db_observer == NULL)
        return;
    pgrest_arena *a = pgrest_arena_new(0);
    if (a == NULL)
        return;
    pgr_sb sb;
    pgr_sb_init(&sb, a, 80);
    pgr_sb_puts(&sb, "Attempting to reconnect to the database in ");
    pgr_sb_put_long(&sb, seconds);
    pgr_sb_puts(&sb, " seconds...");
    report(ctx, PGREST_DB_RETRY, pgr_sb_finish(&sb));
    pgrest_arena_free(a);
}

/* Haskell's show of a Text: the channel in double quotes. */
static void put_shown(pgr_sb *sb, const char *s)
{
    pgr_sb_putc(sb, '"');
    for (const char *p = s; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\')
            pgr_sb_putc(sb, '\\');
        pgr_sb_putc(sb, *p);
    }
    pgr_sb_putc(sb, '"');
}

void pgr_db_report_listening(pgrest_ctx *ctx, PGconn *pg, const char *channel,
                             const char *version)
{
    if (ctx->db_observer == NULL || version == NULL)
        return;
    pgrest_arena *a = pgrest_arena_new(0);
    if (a == NULL)
        return;
    pgr_sb sb;
    pgr_sb_init(&sb, a, 256);
    pgr_sb_puts(&sb, "Listener connected to ");
    pgr_sb_puts(&sb, version);
    pgr_sb_puts(&sb, " on \"");
    pgr_sb_puts(&sb, PQhost(pg) ? PQhost(pg) : "");
    pgr_sb_putc(&sb, ':');
    pgr_sb_puts(&sb, PQport(pg) ? PQport(pg) : "");
    pgr_sb_puts(&sb, "\" and listening for database notifications on the ");
    put_shown(&sb, channel);
    pgr_sb_puts(&sb, " channel");
    report(ctx, PGREST_DB_LISTENER, pgr_sb_finish(&sb));
    pgrest_arena_free(a);
}

void pgr_db_report_notification(pgrest_ctx *ctx, const char *channel, bool config)
{
    if (ctx->db_observer == NULL)
        return;
    pgrest_arena *a = pgrest_arena_new(0);
    if (a == NULL)
        return;
    pgr_sb sb;
    pgr_sb_init(&sb, a, 96);
    pgr_sb_puts(&sb, config ? "Received a config reload message on the "
                            : "Received a schema cache reload message on the ");
    put_shown(&sb, channel);
    pgr_sb_puts(&sb, " channel");
    report(ctx, PGREST_DB_LISTENER, pgr_sb_finish(&sb));
    pgrest_arena_free(a);
}

void pgr_db_report_listen_failure(pgrest_ctx *ctx, PGconn *pg, const char *channel,
                                  bool fatal)
{
    pgrest_arena *a = pgrest_arena_new(0);
    if (a == NULL)
        return;
    pgr_sb sb;
    pgr_sb_init(&sb, a, 160);
    pgr_sb_puts(&sb, "Failed listening for database notifications on the ");
    put_shown(&sb, channel);
    pgr_sb_puts(&sb, " channel. ");
    pgr_sb_puts(&sb, PQerrorMessage(pg));
    char *msg = pgr_sb_finish(&sb);
    /* one line, as PostgREST's showOnSingleLine */
    for (char *p = msg; p != NULL && *p != '\0'; p++)
        if (*p == '\n')
            *p = ' ';
    size_t n = msg != NULL ? strlen(msg) : 0;
    while (n > 0 && msg[n - 1] == ' ')
        msg[--n] = '\0';
    if (fatal)
        pgr_db_report_fatal(ctx, msg);
    else
        report(ctx, PGREST_DB_FAILED, msg);
    pgrest_arena_free(a);
}
