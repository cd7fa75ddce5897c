#include "engine/db_events.h"

#include <string.h>

#include "config/db_config.h"
#include "exec/pool.h"
#include "engine/observe.h"
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

static bool supported_version(pgrest_ctx *ctx, pgrest_arena *a, int num)
{
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

static void report_connected(pgrest_ctx *ctx, pgrest_arena *a, const char *version)
{
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

/* hasql-pool's use tells a server's error (the connection goes back to
 * the pool) from libpq's own (the connection is lost, so closed). */
static pgr_session_outcome session_outcome(PGconn *pg, int rc)
{
    if (rc == PGREST_OK)
        return PGR_SESSION_OK;
    /* hasql-transaction aborts a failed transaction before it returns */
    PGTransactionStatusType tx = PQtransactionStatus(pg);
    if (PQstatus(pg) == CONNECTION_OK && (tx == PQTRANS_INERROR || tx == PQTRANS_INTRANS)) {
        PGresult *r = PQexec(pg, "ROLLBACK");
        PQclear(r);
    }
    return PQstatus(pg) == CONNECTION_OK ? PGR_SESSION_FAILED : PGR_SESSION_CLIENT_ERROR;
}

int pgr_ctx_use_pool(pgrest_ctx *ctx, pgr_pool_session fn, void *arg, pgrest_arena *a,
                     pgrest_error *err)
{
    int rc = pgr_ctx_ensure_pool(ctx, err);
    if (rc != PGREST_OK)
        return rc;
    pgr_pool *pool = pgr_ctx_pool(ctx);
    pgr_observe(ctx, PGREST_EVENT_POOL_REQUEST, "Trying to borrow a connection from pool");
    pgr_conn *c = pgr_pool_acquire(pool, a, err);
    if (c == NULL)
        rc = PGREST_ERR_CONNECTION;
    else {
        rc = fn(c->pg, arg, a, err);
        pgr_pool_release_after(pool, c, session_outcome(c->pg, rc));
    }
    pgr_observe(ctx, PGREST_EVENT_POOL_REQUEST_FULFILLED, "Borrowed a connection from the pool");
    /* usePool: PoolAcqTimeoutObs after the borrow */
    if (c == NULL && err != NULL && err->code != NULL && strcmp(err->code, "PGRST003") == 0)
        pgr_observe_error(ctx, PGREST_EVENT_POOL_TIMEOUT, "", err);
    return rc;
}

typedef struct version_result {
    int num;
    const char *full_name;
} version_result;

/* Config/Database.hs queryPgVersion: the number and version(). */
static int query_version(PGconn *pg, void *arg, pgrest_arena *a, pgrest_error *err)
{
    version_result *v = arg;
    v->num = PQserverVersion(pg);
    PGresult *r = PQexec(pg, "SELECT version()");
    int rc = PGREST_OK;
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
        v->full_name = pgr_strdup(a, PQgetvalue(r, 0, 0));
    else
        rc = pgr_db_query_error(a, pg, r, err);
    PQclear(r);
    return rc;
}

int pgr_db_query_version(pgrest_ctx *ctx, pgrest_arena *a, pgrest_error *err)
{
    version_result v = {0, NULL};
    int rc = pgr_ctx_use_pool(ctx, query_version, &v, a, err);
    if (rc != PGREST_OK) {
        report_connect_failure(ctx, a, err);
        return rc;
    }
    if (!supported_version(ctx, a, v.num))
        return pgr_error_connection(err, "unsupported PostgreSQL version");
    report_connected(ctx, a, v.full_name != NULL ? v.full_name : "");
    return PGREST_OK;
}
