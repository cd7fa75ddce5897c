#include "db_events.h"

#include <string.h>

#include "exec/pool.h"
#include "observe.h"
#include "util/error.h"
#include "util/strbuf.h"


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
    pgr_observe(ctx, PGREST_EVENT_DB_FATAL, message);
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
    pgr_observe_error(ctx, PGREST_EVENT_PG_VERSION_ERROR,
                      "Failed to query the PostgreSQL version. ", err);
    if (!pgr_cfg(ctx, a)->db_pool_automatic_recovery)
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
    if (ctx->observer == NULL)
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
    pgr_observe(ctx, PGREST_EVENT_DB_CONNECTED, pgr_sb_finish(&sb));
    pgr_sb_init(&sb, a, 96);
    pgr_sb_puts(&sb, "Connection Pool initialized with a maximum size of ");
    pgr_sb_put_long(&sb, pgr_cfg(ctx, a)->db_pool);
    pgr_sb_puts(&sb, " connections");
    pgr_observe(ctx, PGREST_EVENT_POOL_INIT, pgr_sb_finish(&sb));
}

PGconn *pgr_db_connect(pgrest_ctx *ctx, pgrest_arena *a, pgrest_error *err)
{
    PGconn *pg = pgr_connect(pgr_cfg(ctx, a)->db_uri, a, err);
    if (pg == NULL) {
        report_connect_failure(ctx, a, err);
        return NULL;
    }
    if (!supported_version(ctx, a, pg)) {
        PQfinish(pg);
        pgr_error_connection(err, "unsupported PostgreSQL version");
        return NULL;
    }
    report_connected(ctx, a, pg);
    return pg;
}

