#include "exec/execute.h"

#include <stdlib.h>
#include <string.h>

#include "exec/response.h"
#include "util/error.h"

/* What was sent for one statement, to match results in order. */
typedef struct sent {
    const pgr_stmt *stmt;
    bool prepared_now;     /* a Parse result precedes the execution result */
} sent;

typedef struct run_state {
    pgrest_arena *arena;
    PGresult *main;
    PGresult *error;       /* first failing result */
    const pgr_stmt *error_stmt;
    bool connection_lost;
} run_state;

static void clear_result(void *r)
{
    PQclear(r);
}

static bool keep_result(run_state *rs, PGresult *r)
{
    if (!pgr_arena_on_free(rs->arena, clear_result, r)) {
        PQclear(r);
        return false;
    }
    return true;
}

static bool send_one(PGconn *pg, pgr_stmt_cache *cache, const pgr_stmt *s,
                     sent *out)
{
    out->stmt = s;
    out->prepared_now = false;
    if (s->prepare && cache != NULL) {
        const char *name = pgr_stmt_cache_lookup(cache, s->sql);
        if (name == NULL && (name = pgr_stmt_cache_add(cache, s->sql)) != NULL) {
            if (!PQsendPrepare(pg, name, s->sql, (int)s->n_params, NULL))
                return false;
            out->prepared_now = true;
        }
        if (name != NULL)
            return PQsendQueryPrepared(pg, name, (int)s->n_params, s->params,
                                       NULL, NULL, 0) == 1;
    }
    return PQsendQueryParams(pg, s->sql, (int)s->n_params, NULL, s->params,
                             NULL, NULL, 0) == 1;
}

/* Collects the results of one command (until the NULL separator). */
static void collect(PGconn *pg, run_state *rs, const sent *sn, bool is_exec,
                    pgr_stmt_cache *cache)
{
    PGresult *r;
    while ((r = PQgetResult(pg)) != NULL) {
        ExecStatusType t = PQresultStatus(r);
        /* A PREPARE that failed, or was skipped because an earlier
         * command of the pipeline failed, left no statement behind. */
        if ((t == PGRES_FATAL_ERROR || t == PGRES_PIPELINE_ABORTED) &&
            sn->prepared_now && !is_exec && cache != NULL)
            pgr_stmt_cache_forget(cache, sn->stmt->sql);
        if (t == PGRES_FATAL_ERROR) {
            if (rs->error == NULL && keep_result(rs, r)) {
                rs->error = r;
                rs->error_stmt = sn->stmt;
                continue;
            }
        } else if (is_exec && sn->stmt->role == PGR_STMT_MAIN &&
                   t == PGRES_TUPLES_OK && rs->main == NULL) {
            if (keep_result(rs, r))
                rs->main = r;
            continue;
        }
        PQclear(r);
    }
}

static bool wait_sync(PGconn *pg)
{
    PGresult *r;
    bool ok = false;
    while ((r = PQgetResult(pg)) != NULL) {
        if (PQresultStatus(r) == PGRES_PIPELINE_SYNC)
            ok = true;
        PQclear(r);
        if (ok)
            break;
    }
    return ok;
}

static int pg_error(pgrest_arena *a, const pgrest_api_request *api,
                    const PGresult *r, pgrest_error *err)
{
    const char *code = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    const char *msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    const char *detail = PQresultErrorField(r, PG_DIAG_MESSAGE_DETAIL);
    const char *hint = PQresultErrorField(r, PG_DIAG_MESSAGE_HINT);
    int status = pgr_sqlstate_http_status(code, msg, api && api->authenticated);
    pgr_error(err, status, pgr_strdup(a, code ? code : "PGRSTX00"),
              pgr_strdup(a, msg ? msg : ""), detail ? pgr_strdup(a, detail) : NULL,
              hint ? pgr_strdup(a, hint) : NULL);
    return PGREST_ERR_DATABASE;
}

static int connection_error(pgrest_arena *a, PGconn *pg, pgrest_error *err)
{
    pgr_error(err, 503, "PGRST001", "Database client error. Retrying the connection.",
              pgr_strdup(a, PQerrorMessage(pg)), NULL);
    return PGREST_ERR_CONNECTION;
}

static int send_all(PGconn *pg, pgr_stmt_cache *cache,
                    const pgrest_statements *st, sent *sn, size_t *n_sent)
{
    *n_sent = 0;
    for (size_t i = 0; i < st->n; i++) {
        if (st->items[i].role == PGR_STMT_END && st->end_after_check)
            continue;
        if (!send_one(pg, cache, &st->items[i], &sn[*n_sent]))
            return -1;
        (*n_sent)++;
    }
    return PQpipelineSync(pg) == 1 ? 0 : -1;
}

static void read_all(PGconn *pg, pgr_stmt_cache *cache, run_state *rs,
                     const sent *sn, size_t n_sent)
{
    for (size_t i = 0; i < n_sent; i++) {
        if (sn[i].prepared_now)
            collect(pg, rs, &sn[i], false, cache);
        collect(pg, rs, &sn[i], true, cache);
    }
    if (!wait_sync(pg))
        rs->connection_lost = true;
}

static void finish_tx(PGconn *pg, const char *command)
{
    PGresult *r = PQexec(pg, command);
    PQclear(r);
}

static void read_main_row(const PGresult *r, pgr_main_row *row)
{
    memset(row, 0, sizeof *row);
    row->body = "";
    if (r == NULL || PQntuples(r) < 1)
        return;
    int c_total = PQfnumber(r, "total_result_set");
    int c_page = PQfnumber(r, "page_total");
    int c_body = PQfnumber(r, "body");
    int c_hdr = PQfnumber(r, "response_headers");
    int c_status = PQfnumber(r, "response_status");
    int c_loc = PQfnumber(r, "response_location");
    int c_ins = PQfnumber(r, "response_inserted");
    if (c_loc >= 0 && !PQgetisnull(r, 0, c_loc))
        row->location = PQgetvalue(r, 0, c_loc);
    if (c_ins >= 0 && !PQgetisnull(r, 0, c_ins)) {
        row->has_inserted = true;
        row->inserted = strtoll(PQgetvalue(r, 0, c_ins), NULL, 10);
    }
    if (c_total >= 0 && !PQgetisnull(r, 0, c_total)) {
        row->has_total = true;
        row->total = strtoll(PQgetvalue(r, 0, c_total), NULL, 10);
    }
    if (c_page >= 0 && !PQgetisnull(r, 0, c_page))
        row->page_total = strtoll(PQgetvalue(r, 0, c_page), NULL, 10);
    if (c_body >= 0 && !PQgetisnull(r, 0, c_body)) {
        row->body = PQgetvalue(r, 0, c_body);
        row->body_len = (size_t)PQgetlength(r, 0, c_body);
    }
    if (c_hdr >= 0 && !PQgetisnull(r, 0, c_hdr))
        row->guc_headers = PQgetvalue(r, 0, c_hdr);
    if (c_status >= 0 && !PQgetisnull(r, 0, c_status))
        row->guc_status = PQgetvalue(r, 0, c_status);
}

static const char *end_command(const pgrest_statements *st)
{
    for (size_t i = 0; i < st->n; i++)
        if (st->items[i].role == PGR_STMT_END)
            return st->items[i].sql;
    return "COMMIT";
}

int pgr_execute_on(pgrest_ctx *ctx, pgrest_arena *a,
                   const pgrest_statements *st, PGconn *pg,
                   pgr_stmt_cache *cache, pgrest_response **out,
                   pgrest_error *err)
{
    sent *sn = PGR_NEW_ARRAY(a, sent, st->n);
    run_state rs = {.arena = a};
    size_t n_sent;
    if (sn == NULL)
        return pgr_error_oom(err);
    if (PQenterPipelineMode(pg) != 1)
        return connection_error(a, pg, err);
    if (send_all(pg, cache, st, sn, &n_sent) != 0) {
        PQexitPipelineMode(pg);
        if (cache != NULL)
            pgr_stmt_cache_clear(cache);
        return connection_error(a, pg, err);
    }
    read_all(pg, cache, &rs, sn, n_sent);
    PQexitPipelineMode(pg);
    if (rs.connection_lost || PQstatus(pg) != CONNECTION_OK)
        return connection_error(a, pg, err);
    if (rs.error != NULL) {
        if (PQtransactionStatus(pg) != PQTRANS_IDLE)
            finish_tx(pg, "ROLLBACK");
        return pg_error(a, st->plan->api, rs.error, err);
    }
    pgr_main_row row;
    read_main_row(rs.main, &row);
    int rc = pgr_build_response(ctx, a, st->plan, &row, out, err);
    if (st->end_after_check)
        finish_tx(pg, rc == PGREST_OK ? end_command(st) : "ROLLBACK");
    return rc;
}

int pgrest_execute(pgrest_ctx *ctx, pgrest_arena *arena,
                   const pgrest_statements *st, void *conn,
                   pgrest_response **out, pgrest_error *err)
{
    if (ctx == NULL || arena == NULL || st == NULL || conn == NULL || out == NULL)
        return pgr_error(err, 500, "PGRSTX00", "invalid arguments", NULL, NULL);
    return pgr_execute_on(ctx, arena, st, conn, NULL, out, err);
}
