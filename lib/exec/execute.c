#include "exec/execute.h"

#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/context.h"
#include "exec/response.h"
#include "exec/stream.h"
#include "plan/nested_insert.h"
#include "util/error.h"
#include "util/strbuf.h"

/* What was sent for one statement, to match results in order. */
typedef struct sent {
    const pgr_stmt *stmt;
    bool prepared_now;     /* a Parse result precedes the execution result */
} sent;

typedef struct run_state {
    pgrest_arena *arena;
    PGresult *main;
    PGresult *explain;     /* count=planned/estimated */
    PGresult *gucs;        /* streamed reads: the response GUCs */
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



/* A nested insert's error names the nested row it is about before
 * PostgreSQL's details (docs/nested-inserts.md). */
static const char *nested_details(pgrest_arena *a, const pgrest_query_plan *plan,
                                  const PGresult *r, const char *code, const char *detail)
{
    const char *path = pgr_nested_error_path(
        a, plan, PQresultErrorField(r, PG_DIAG_SCHEMA_NAME),
        PQresultErrorField(r, PG_DIAG_TABLE_NAME), code,
        PQresultErrorField(r, PG_DIAG_COLUMN_NAME), detail);
    if (path == NULL)
        return detail ? pgr_strdup(a, detail) : NULL;
    return detail ? pgr_asprintf(a, "%s: %s", path, detail) : path;
}

int pgr_result_error(pgrest_ctx *ctx, pgrest_arena *a,
                     const pgrest_query_plan *plan, const PGresult *r,
                     pgrest_response **out, pgrest_error *err)
{
    const pgrest_api_request *api = plan->api;
    const char *code = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    const char *msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    const char *detail = PQresultErrorField(r, PG_DIAG_MESSAGE_DETAIL);
    const char *hint = PQresultErrorField(r, PG_DIAG_MESSAGE_HINT);
    if (code != NULL && strcmp(code, "PGRST") == 0)
        return pgr_raise_response(ctx, a, msg, detail, out, err);
    /* no SQLSTATE: libpq made the error itself (connection lost, ...):
     * PostgREST's ClientError, PGRST001 */
    if (code == NULL) {
        pgr_error(err, 503, "PGRST001", "Database client error. Retrying the connection.",
                  pgr_strdup(a, PQresultErrorMessage(r)), NULL);
        return PGREST_ERR_CONNECTION;
    }
    int status = pgr_sqlstate_http_status(code, msg, api && api->authenticated);
    pgr_error(err, status, pgr_strdup(a, code), pgr_strdup(a, msg ? msg : ""),
              nested_details(a, plan, r, code, detail), hint ? pgr_strdup(a, hint) : NULL);
    return PGREST_ERR_DATABASE;
}

static int connection_error(pgrest_arena *a, PGconn *pg, pgrest_error *err)
{
    pgr_error(err, 503, "PGRST001", "Database client error. Retrying the connection.",
              pgr_strdup(a, PQerrorMessage(pg)), NULL);
    return PGREST_ERR_CONNECTION;
}

/* After a schema reload the statements a connection prepared may no
 * longer fit their result types: they go (DEALLOCATE ALL ahead of the
 * pipeline) and are prepared again under the new generation. */
static const pgr_stmt deallocate_all = {PGR_STMT_BEGIN, "DEALLOCATE ALL", NULL, 0, false};

static bool stale_statements(pgrest_ctx *ctx, pgr_stmt_cache *cache)
{
    if (cache == NULL)
        return false;
    unsigned gen = atomic_load(&ctx->schema_generation);
    if (pgr_stmt_cache_generation(cache) == gen)
        return false;
    bool any = pgr_stmt_cache_count(cache) > 0;
    pgr_stmt_cache_clear(cache);
    pgr_stmt_cache_set_generation(cache, gen);
    return any;
}


/* A count column: NULL or '' (Statements.hs writes '' where it has no
 * count) is absent. */
static bool has_count(const PGresult *r, int col)
{
    return col >= 0 && !PQgetisnull(r, 0, col) && PQgetvalue(r, 0, col)[0] != '\0';
}

typedef struct main_column {
    const char *name;
    int *col;
} main_column;

/* What PQfnumber gives for these all-lowercase names (the first column of
 * exactly that name, -1 for none) in one pass over the columns: PQfnumber
 * copies and case-folds its argument whenever the name is missing, which
 * most of them are on every request. */
static void find_main_columns(const PGresult *r, main_column *want)
{
    int n = PQnfields(r);
    for (int i = 0; i < n; i++) {
        const char *name = PQfname(r, i);
        for (main_column *w = want; w->name != NULL; w++)
            if (*w->col < 0 && strcmp(name, w->name) == 0) {
                *w->col = i;
                break;
            }
    }
}

static void read_main_row(const PGresult *r, pgr_main_row *row)
{
    memset(row, 0, sizeof *row);
    row->body = "";
    if (r == NULL || PQntuples(r) < 1)
        return;
    int c_total = -1, c_page = -1, c_body = -1, c_hdr = -1, c_status = -1, c_loc = -1,
        c_ins = -1;
    find_main_columns(r, (main_column[]){{"total_result_set", &c_total},
                                         {"page_total", &c_page},
                                         {"body", &c_body},
                                         {"response_headers", &c_hdr},
                                         {"response_status", &c_status},
                                         {"response_location", &c_loc},
                                         {"response_inserted", &c_ins},
                                         {NULL, NULL}});
    if (c_loc >= 0 && !PQgetisnull(r, 0, c_loc))
        row->location = PQgetvalue(r, 0, c_loc);
    if (has_count(r, c_ins)) {
        row->has_inserted = true;
        row->inserted = strtoll(PQgetvalue(r, 0, c_ins), NULL, 10);
    }
    if (has_count(r, c_total)) {
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

/* A streamed read's row: the rows counted and encoded by the sink (what
 * it still holds is the whole body unless the host has taken some), the
 * GUCs from their own statement. */
static void read_stream_row(const pgr_stream *sink, const PGresult *gucs, pgr_main_row *row)
{
    read_main_row(gucs, row);
    row->page_total = sink->rows;
    row->body = pgr_stream_pending(sink, &row->body_len);
}

/* EXPLAIN of the main statement: one JSON document, or one row per line
 * of text (PostgREST MainTx.hs planRow: BS.unlines of the rows, so every
 * row, the last too, ends with a line feed). */
static void read_explain(pgrest_arena *a, const PGresult *r, pgr_main_row *row)
{
    memset(row, 0, sizeof *row);
    row->body = "";
    if (r == NULL)
        return;
    pgr_sb sb;
    pgr_sb_init(&sb, a, 1024);
    for (int i = 0; i < PQntuples(r); i++) {
        pgr_sb_putn(&sb, PQgetvalue(r, i, 0), (size_t)PQgetlength(r, i, 0));
        pgr_sb_putc(&sb, '\n');
    }
    const char *body = pgr_sb_finish(&sb);
    if (body != NULL) {
        row->body = body;
        row->body_len = strlen(body);
    }
}

/* "Plan Rows" of the EXPLAIN (FORMAT JSON) of the count query
 * (PostgREST Statements: planned and estimated counts). */
static bool plan_rows(const PGresult *r, long long *out)
{
    if (r == NULL || PQntuples(r) < 1)
        return false;
    json_object *doc = json_tokener_parse(PQgetvalue(r, 0, 0));
    json_object *first = doc ? json_object_array_get_idx(doc, 0) : NULL;
    json_object *plan = NULL, *rows = NULL;
    bool ok = first && json_object_object_get_ex(first, "Plan", &plan) &&
              json_object_object_get_ex(plan, "Plan Rows", &rows);
    if (ok)
        *out = (long long)json_object_get_double(rows);
    json_object_put(doc);
    return ok;
}

static void apply_planned_count(const pgrest_query_plan *plan,
                                const PGresult *explain, pgr_main_row *row)
{
    long long planned;
    if (!plan_rows(explain, &planned))
        return;
    if (plan->count == PGR_PREF_COUNT_PLANNED) {
        row->has_total = true;
        row->total = planned;
    } else if (plan->count == PGR_PREF_COUNT_ESTIMATED && row->has_total &&
               (plan->max_rows < 0 || row->total > plan->max_rows)) {
        /* MainTx.hs: tableTotal > (fromIntegral <$> configDbMaxRows);
         * without db-max-rows that compares with Nothing, which every
         * Just exceeds, so the planner's guess wins when it is larger */
        row->total = planned > row->total ? planned : row->total;
    }
}

static const char *end_command(const pgrest_statements *st)
{
    for (size_t i = 0; i < st->n; i++)
        if (st->items[i].role == PGR_STMT_END)
            return st->items[i].sql;
    return "COMMIT";
}

/* One request's execution as a state machine over the results libpq
 * returns, so the same code serves the blocking call and the
 * send/consume pair an event loop drives. */
typedef enum stage {
    STAGE_RESULTS,   /* results of the pipelined statements */
    STAGE_SYNC,      /* waiting for the pipeline's sync */
    STAGE_FIND_ROW,  /* a streamed body's failed row sought (pgr_row_finder) */
    STAGE_END,       /* results of a COMMIT/ROLLBACK sent afterwards */
    STAGE_END_SYNC,
    STAGE_DONE
} stage;

struct pgrest_pending {
    pgrest_ctx *ctx;
    pgrest_arena *arena;
    const pgrest_statements *st;
    PGconn *pg;
    pgr_stmt_cache *cache;
    bool blocking;
    bool was_nonblocking;
    sent *sn;
    size_t n_sent;
    size_t cur;            /* command whose results are being read */
    bool in_prepare;       /* reading the Parse result of sn[cur] */
    bool prepared;         /* that Parse succeeded */
    stage stage;
    pgr_stream *sink;      /* streamed read: the main statement's rows go here */
    /* A batch's items are units of one pipeline, a Sync after each; a
     * single request is one unit. st is units[unit]. */
    const pgrest_statements *const *units;
    size_t n_units;
    size_t unit;           /* the unit whose results are being read */
    size_t *unit_end;      /* index in sn past each unit's statements */
    size_t single_end;     /* ... a single request's: no allocation for it */
    pgr_unit_done unit_done;
    void *unit_data;
    bool failed;           /* a unit failed: the rest is read and ignored */
    bool unit_reported;    /* unit_done has seen the last unit */
    int finder_syncs;      /* STAGE_FIND_ROW: the Syncs read */
    char again_code[6];    /* ... the SQLSTATE the write failed with again */
    size_t failed_row;     /* the row it failed on, from 1; 0: not known */
    run_state rs;
    int rc;
    pgrest_response *resp;
    pgrest_error err;
};

/* Every unit's statements, each unit followed by a Sync: PostgreSQL runs
 * them back to back while the results come in. An END the post-check
 * decides is held back (send_end). */
static int send_all(pgrest_pending *p, bool deallocate)
{
    p->n_sent = 0;
    if (deallocate) {
        if (!send_one(p->pg, NULL, &deallocate_all, &p->sn[0]))
            return -1;
        p->n_sent++;
    }
    for (size_t u = 0; u < p->n_units; u++) {
        const pgrest_statements *st = p->units[u];
        for (size_t i = 0; i < st->n; i++) {
            if (st->items[i].role == PGR_STMT_END && st->end_after_check)
                continue;
            if (!send_one(p->pg, p->cache, &st->items[i], &p->sn[p->n_sent]))
                return -1;
            p->n_sent++;
        }
        if (PQpipelineSync(p->pg) != 1)
            return -1;
        p->unit_end[u] = p->n_sent;
    }
    return 0;
}

/* A streamed main statement comes row by row: single-row mode is set
 * for it once it heads libpq's queue, before any of its results is
 * parsed. Should libpq refuse, the rows come in one result, which the
 * sink takes as well. */
static void stream_rows(pgrest_pending *p)
{
    if (p->sink != NULL && !p->in_prepare && p->cur < p->n_sent &&
        p->sn[p->cur].stmt->role == PGR_STMT_MAIN)
        PQsetSingleRowMode(p->pg);
}

static void begin_command(pgrest_pending *p)
{
    p->in_prepare = p->cur < p->n_sent && p->sn[p->cur].prepared_now;
    p->prepared = false;
    stream_rows(p);
}

/* A NULL from PQgetResult ends the current command's results. */
static void end_of_command(pgrest_pending *p)
{
    const sent *sn = &p->sn[p->cur];
    if (p->in_prepare) {
        if (!p->prepared && p->cache != NULL)
            pgr_stmt_cache_forget(p->cache, sn->stmt->sql);
        p->in_prepare = false;
        stream_rows(p);
        return;
    }
    p->cur++;
    if (p->cur >= p->unit_end[p->unit])
        p->stage = STAGE_SYNC;
    else
        begin_command(p);
}

/* The streamed main statement's rows go to the sink, never into the
 * arena (a million results would fill it with cleanups). */
static bool sink_result(pgrest_pending *p, PGresult *r, ExecStatusType t)
{
    if (p->sink == NULL || p->in_prepare || p->sn[p->cur].stmt->role != PGR_STMT_MAIN ||
        (t != PGRES_SINGLE_TUPLE && t != PGRES_TUPLES_OK))
        return false;
    for (int i = 0; i < PQntuples(r); i++)
        pgr_stream_row(p->sink, r, i);
    if (t == PGRES_TUPLES_OK)
        pgr_stream_end(p->sink);
    PQclear(r);
    return true;
}

static void take_result(pgrest_pending *p, PGresult *r)
{
    run_state *rs = &p->rs;
    const sent *sn = &p->sn[p->cur];
    ExecStatusType t = PQresultStatus(r);
    if (sink_result(p, r, t))
        return;
    if (p->in_prepare && t == PGRES_COMMAND_OK)
        p->prepared = true;
    if (p->failed) {
        PQclear(r);
        return;
    }
    if (t == PGRES_FATAL_ERROR && rs->error == NULL) {
        if (keep_result(rs, r)) {
            rs->error = r;
            rs->error_stmt = sn->stmt;
        }
        return;
    }
    if (!p->in_prepare && t == PGRES_TUPLES_OK) {
        PGresult **slot = sn->stmt->role == PGR_STMT_MAIN ? &rs->main
                        : sn->stmt->role == PGR_STMT_EXPLAIN_COUNT ? &rs->explain
                        : sn->stmt->role == PGR_STMT_GUCS ? &rs->gucs
                        : NULL;
        if (slot != NULL && *slot == NULL) {
            /* keep_result clears r itself when the arena cannot hold it
             * (the exhausted arena then fails the call) */
            if (keep_result(rs, r))
                *slot = r;
            return;
        }
    }
    PQclear(r);
}

static void finish(pgrest_pending *p, int rc)
{
    p->rc = rc;
    p->stage = STAGE_DONE;
}

/* Sends a transaction end after the pipeline (post-check or error). */
static void send_end(pgrest_pending *p, const char *command)
{
    if (PQsendQueryParams(p->pg, command, 0, NULL, NULL, NULL, NULL, 0) != 1 ||
        PQpipelineSync(p->pg) != 1) {
        finish(p, connection_error(p->arena, p->pg, &p->err));
        return;
    }
    p->stage = STAGE_END;
}

/* Errors a row raises as it is written (a value, a constraint, a policy's
 * check, a trigger's RAISE): those worth finding the row of. A timeout,
 * a lock or a lost connection says nothing about a row. */
static bool row_error(const char *code)
{
    static const char *const classes[] = {"09", "21", "22", "23", "2F", "38", "39", "44",
                                          "P0"};
    if (code == NULL || strlen(code) != 5)
        return false;
    if (strcmp(code, "42501") == 0)
        return true;
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if (strncmp(code, classes[i], 2) == 0)
            return true;
    return false;
}

/* The write failed on a row: the statements that find which
 * go before the rollback (pgr_row_finder). false: no finding. */
static bool find_row(pgrest_pending *p)
{
    const pgr_row_finder *f = p->st->find_row;
    if (f == NULL || p->rs.error_stmt != &p->st->items[f->write] ||
        !row_error(PQresultErrorField(p->rs.error, PG_DIAG_SQLSTATE)) ||
        PQtransactionStatus(p->pg) != PQTRANS_INERROR)
        return false;
    sent ignored;          /* the finder's results are read by stage */
    bool ok = true;
    for (size_t i = 0; i < f->n_again && ok; i++)
        ok = send_one(p->pg, NULL, &f->again[i], &ignored);
    ok = ok && PQpipelineSync(p->pg) == 1;
    for (size_t i = 0; i < f->n_ask && ok; i++)
        ok = send_one(p->pg, NULL, &f->ask[i], &ignored);
    if (ok && PQpipelineSync(p->pg) == 1)
        p->stage = STAGE_FIND_ROW;
    else
        finish(p, p->rc);  /* the error stands; the pool drops the connection */
    return true;
}

/* The finder's results: the row counts when the write failed again
 * with the same SQLSTATE (anything else, its own failure included, finds
 * no row); after its second Sync, the rollback. */
static void finder_result(pgrest_pending *p, PGresult *r)
{
    ExecStatusType t = PQresultStatus(r);
    const char *code = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    if (t == PGRES_FATAL_ERROR && p->finder_syncs == 0 && p->again_code[0] == '\0' &&
        code != NULL && strlen(code) == 5)
        memcpy(p->again_code, code, 6);
    if (t == PGRES_TUPLES_OK && p->finder_syncs == 1 && PQntuples(r) == 1 &&
        strcmp(p->again_code, PQresultErrorField(p->rs.error, PG_DIAG_SQLSTATE)) == 0) {
        char *end;
        unsigned long long n = strtoull(PQgetvalue(r, 0, 0), &end, 10);
        if (*end == '\0' && n > 0 && n <= SIZE_MAX)
            p->failed_row = (size_t)n;
    }
    bool synced = t == PGRES_PIPELINE_SYNC && ++p->finder_syncs == 2;
    PQclear(r);
    if (!synced)
        return;
    if (PQtransactionStatus(p->pg) != PQTRANS_IDLE)
        send_end(p, "ROLLBACK");
    else
        finish(p, p->rc);
}

bool pgr_pending_head(const pgrest_pending *p, pgr_main_row *row)
{
    if (p == NULL || p->rs.gucs == NULL)
        return false;
    read_main_row(p->rs.gucs, row);
    return true;
}

size_t pgr_pending_failed_row(const pgrest_pending *p)
{
    return p != NULL ? p->failed_row : 0;
}

/* The unit's results are all in: its response, or its error. */
static int unit_outcome(pgrest_pending *p)
{
    if (p->rs.error != NULL)
        return pgr_result_error(p->ctx, p->arena, p->st->plan, p->rs.error, &p->resp, &p->err);
    pgr_main_row row;
    if (p->sink != NULL)
        read_stream_row(p->sink, p->rs.gucs, &row);
    else if (p->st->plan->explain)
        read_explain(p->arena, p->rs.main, &row);
    else
        read_main_row(p->rs.main, &row);
    apply_planned_count(p->st->plan, p->rs.explain, &row);
    int rc = pgr_build_response(p->ctx, p->arena, p->st->plan, &row, &p->resp, &p->err);
    /* a response the arena could not hold must not commit a post-checked
     * write it cannot report */
    return pgr_stage_end(p->arena, rc, &p->err);
}

/* The last unit is complete: build the response or the error, and decide
 * whether the transaction still needs an end. */
static void after_pipeline(pgrest_pending *p)
{
    bool db_error = p->rs.error != NULL;
    int rc = p->rc = unit_outcome(p);
    if (db_error) {
        if (find_row(p))
            return;
        if (PQtransactionStatus(p->pg) != PQTRANS_IDLE)
            send_end(p, "ROLLBACK");
        else
            finish(p, rc);
        return;
    }
    if (p->st->end_after_check)
        send_end(p, rc == PGREST_OK ? end_command(p->st) : "ROLLBACK");
    else
        finish(p, rc);
}

/* A unit before the last is complete: its answer goes to unit_done,
 * which may end the batch (the unit failed: its answer is the batch's,
 * the later units' results are read and ignored). */
static void unit_answered(pgrest_pending *p)
{
    int rc = unit_outcome(p);
    if (p->unit_done(p->unit_data, p->unit, &rc, &p->resp, &p->err)) {
        p->resp = NULL;
        p->rs = (run_state){.arena = p->arena};
        return;
    }
    p->failed = true;
    p->rc = rc != PGREST_OK ? rc : pgr_error_internal(&p->err, "batch ended early");
}

static void next_unit(pgrest_pending *p)
{
    p->unit++;
    p->st = p->units[p->unit];
    p->stage = p->cur < p->unit_end[p->unit] ? STAGE_RESULTS : STAGE_SYNC;
    begin_command(p);
}

/* A unit's Sync: the next unit's results follow; after the last, a
 * failed batch rolls back what the later units did. */
static void unit_synced(pgrest_pending *p)
{
    bool last = p->unit + 1 == p->n_units;
    if (!last) {
        if (!p->failed)
            unit_answered(p);
        next_unit(p);
    } else if (!p->failed) {
        after_pipeline(p);
    } else if (PQtransactionStatus(p->pg) != PQTRANS_IDLE) {
        send_end(p, "ROLLBACK");
    } else {
        finish(p, p->rc);
    }
}

/* The COMMIT after a post-check failed (a deferred constraint): the
 * write did not happen, so the response is that error, not the 2xx. */
static void end_failed(pgrest_pending *p, PGresult *r)
{
    if (!keep_result(&p->rs, r))
        return;
    p->resp = NULL;
    p->rc = pgr_result_error(p->ctx, p->arena, p->st->plan, r, &p->resp, &p->err);
}

static void feed(pgrest_pending *p, PGresult *r)
{
    switch (p->stage) {
    case STAGE_RESULTS:
        if (r == NULL)
            end_of_command(p);
        else
            take_result(p, r);
        return;
    case STAGE_SYNC:
    case STAGE_END_SYNC:
        /* the implicit transaction commits at the Sync: a deferred
         * constraint fails there, and that error is the answer */
        if (r != NULL && PQresultStatus(r) == PGRES_FATAL_ERROR &&
            p->rs.error == NULL && !p->failed) {
            if (keep_result(&p->rs, r))
                p->rs.error = r;
            return;
        }
        if (r != NULL && PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
            bool end = p->stage == STAGE_END_SYNC;
            PQclear(r);
            if (end)
                finish(p, p->rc);
            else
                unit_synced(p);
            return;
        }
        PQclear(r);
        return;
    case STAGE_FIND_ROW:
        if (r != NULL)
            finder_result(p, r);
        return;
    case STAGE_END:
        if (r == NULL)
            p->stage = STAGE_END_SYNC;
        else if (PQresultStatus(r) == PGRES_FATAL_ERROR && p->rc == PGREST_OK)
            end_failed(p, r);
        else
            PQclear(r);
        return;
    case STAGE_DONE:
        PQclear(r);
        return;
    }
}

static void leave_pipeline(pgrest_pending *p)
{
    PQexitPipelineMode(p->pg);
    if (!p->blocking && !p->was_nonblocking)
        PQsetnonblocking(p->pg, 0);
}

static int start(pgrest_ctx *ctx, pgrest_arena *a, const pgrest_statements *const *units,
                 size_t n_units, PGconn *pg, pgr_stmt_cache *cache, bool blocking,
                 pgrest_pending **out, pgrest_error *err)
{
    size_t n = 1;
    for (size_t u = 0; u < n_units; u++)
        n += units[u]->n;
    pgrest_pending *p = PGR_NEW(a, pgrest_pending);
    sent *sn = PGR_NEW_ARRAY(a, sent, n);
    if (p == NULL || sn == NULL)
        return pgr_error_oom(err);
    *p = (pgrest_pending){.ctx = ctx, .arena = a, .st = units[0], .pg = pg,
                          .cache = cache, .blocking = blocking, .sn = sn,
                          .n_units = n_units, .rs = {.arena = a}};
    /* a single request's units are the caller's (its own statements'
     * address): the pending keeps pointers of its own, which never move */
    p->units = n_units == 1 ? &p->st : units;
    p->unit_end = n_units == 1 ? &p->single_end : PGR_NEW_ARRAY(a, size_t, n_units);
    if (p->unit_end == NULL)
        return pgr_error_oom(err);
    /* a connection returned lost after a server error (hasql-pool keeps
     * it): its session fails at the first send, in libpq's words for
     * that (PQsendQueryStart), with nothing older in them */
    if (PQstatus(pg) != CONNECTION_OK) {
        pgr_error(err, 503, "PGRST001", "Database client error. Retrying the connection.",
                  "no connection to the server\n", NULL);
        return PGREST_ERR_CONNECTION;
    }
    p->was_nonblocking = PQisnonblocking(pg) == 1;
    if ((!blocking && PQsetnonblocking(pg, 1) != 0) || PQenterPipelineMode(pg) != 1)
        return connection_error(a, pg, err);
    bool deallocate = stale_statements(ctx, cache);
    if (send_all(p, deallocate) != 0) {
        leave_pipeline(p);
        if (cache != NULL)
            pgr_stmt_cache_clear(cache);
        return connection_error(a, pg, err);
    }
    begin_command(p);
    p->stage = p->unit_end[0] > 0 ? STAGE_RESULTS : STAGE_SYNC;
    *out = p;
    return PGREST_OK;
}

/* The connection is gone. A server that said why before closing (57P01
 * from pg_terminate_backend or a shutdown, 57P02 after a crash) left that
 * error in libpq's buffer: hasql reports it as the statement's ServerError,
 * so PostgREST answers with its SQLSTATE (mapSQLtoHTTP: 503). Only a silent
 * loss is PostgREST's ClientError, PGRST001. */
static int connection_lost(pgrest_pending *p)
{
    /* results left to read are bounded by what was sent; a dead
     * connection yields one error result and then NULLs */
    for (size_t i = 0; i < 2 * p->n_sent + 4 && p->rs.error == NULL; i++) {
        PGresult *r = PQgetResult(p->pg);
        if (r == NULL)
            continue;
        if (PQresultStatus(r) == PGRES_FATAL_ERROR &&
            PQresultErrorField(r, PG_DIAG_SQLSTATE) != NULL && keep_result(&p->rs, r))
            p->rs.error = r;
        else
            PQclear(r);
    }
    leave_pipeline(p);
    if (p->rs.error != NULL && PQresultErrorField(p->rs.error, PG_DIAG_SQLSTATE) != NULL)
        return pgr_result_error(p->ctx, p->arena, p->st->plan, p->rs.error, &p->resp, &p->err);
    return connection_error(p->arena, p->pg, &p->err);
}

/* A streamed body's buffer is full: nothing more is read from the socket
 * (libpq would grow its buffer for every read it cannot parse away), so
 * PostgreSQL blocks on its send once the socket buffers fill. */
static bool paused(const pgrest_pending *p)
{
    return p->sink != NULL && p->stage == STAGE_RESULTS && !p->sink->ended &&
           pgr_stream_full(p->sink);
}

/* Reads what is available (everything, when blocking) and advances. */
static int advance(pgrest_pending *p)
{
    if (paused(p))
        return PGR_PAUSED;
    if (!p->blocking) {
        if (PQflush(p->pg) == 1)
            return PGREST_AGAIN;
        if (PQconsumeInput(p->pg) == 0)
            return connection_lost(p);
    }
    while (p->stage != STAGE_DONE) {
        if (PQstatus(p->pg) != CONNECTION_OK)
            return connection_lost(p);
        if (paused(p))
            return PGR_PAUSED;
        if (!p->blocking && PQisBusy(p->pg))
            return PGREST_AGAIN;
        feed(p, PQgetResult(p->pg));
        if (!p->blocking && PQflush(p->pg) == 1)
            return PGREST_AGAIN;
    }
    leave_pipeline(p);
    return p->rc;
}

/* The response is complete, or the arena ran out while reading it: then
 * the whole call fails with the out-of-memory error and no response (the
 * pipeline was still read to its end, so the connection stays usable). */
static int complete(pgrest_pending *p, int rc, pgrest_response **out,
                  pgrest_error *err)
{
    if (pgr_arena_exhausted(p->arena)) {
        *out = NULL;
        return pgr_error_oom(err);
    }
    if (p->unit_done != NULL && !p->failed && !p->unit_reported) {
        p->unit_reported = true;
        p->unit_done(p->unit_data, p->unit, &rc, &p->resp, &p->err);
    }
    *out = p->resp;
    if (err != NULL && rc != PGREST_OK)
        *err = p->err;
    if (rc == PGREST_OK && p->resp == NULL)
        return pgr_error_internal(err, "execution finished without a response");
    return rc;
}

int pgr_execute_on(pgrest_ctx *ctx, pgrest_arena *a,
                   const pgrest_statements *st, PGconn *pg,
                   pgrest_response **out, pgrest_error *err)
{
    pgrest_pending *p;
    int rc = start(ctx, a, &st, 1, pg, pgr_conn_stmt_cache(pg), true, &p, err);
    if (rc != PGREST_OK)
        return rc;
    return complete(p, advance(p), out, err);
}

int pgr_execute_send_on(pgrest_ctx *ctx, pgrest_arena *a,
                        const pgrest_statements *st, PGconn *pg,
                        pgr_stmt_cache *cache, pgrest_pending **out,
                        pgrest_error *err)
{
    return start(ctx, a, &st, 1, pg, cache, false, out, err);
}

int pgr_execute_send_units_on(pgrest_ctx *ctx, pgrest_arena *a,
                              const pgrest_statements *const *units, size_t n_units,
                              pgr_unit_done done, void *data, PGconn *pg,
                              pgr_stmt_cache *cache, pgrest_pending **out,
                              pgrest_error *err)
{
    int rc = start(ctx, a, units, n_units, pg, cache, false, out, err);
    if (rc == PGREST_OK) {
        (*out)->unit_done = done;
        (*out)->unit_data = data;
    }
    return rc;
}

bool pgr_pending_done(const pgrest_pending *p)
{
    return p->stage == STAGE_DONE;
}

int pgrest_execute_send(pgrest_ctx *ctx, pgrest_arena *arena,
                        const pgrest_statements *st, void *conn,
                        pgrest_pending **out, pgrest_error *err)
{
    if (ctx == NULL || arena == NULL || st == NULL || conn == NULL || out == NULL)
        return pgr_error_misuse(err, "pgrest_execute_send");
    int rc = pgr_stage_end(arena, PGREST_OK, err);
    return rc == PGREST_OK ? start(ctx, arena, &st, 1, conn, pgr_conn_stmt_cache(conn), false,
                                   out, err)
                           : rc;
}

int pgrest_pending_wants_write(const pgrest_pending *p)
{
    return p != NULL && p->stage != STAGE_DONE && PQflush(p->pg) == 1;
}

int pgrest_execute_consume(pgrest_pending *p, pgrest_response **out,
                           pgrest_error *err)
{
    if (p == NULL || out == NULL)
        return pgr_error_misuse(err, "pgrest_execute_consume");
    int rc = advance(p);
    if (rc == PGREST_AGAIN || rc == PGR_PAUSED)
        return rc;
    return complete(p, rc, out, err);
}

void pgr_pending_set_sink(pgrest_pending *p, pgr_stream *sink)
{
    p->sink = sink;
    stream_rows(p);
}

int pgrest_execute(pgrest_ctx *ctx, pgrest_arena *arena,
                   const pgrest_statements *st, void *conn,
                   pgrest_response **out, pgrest_error *err)
{
    if (ctx == NULL || arena == NULL || st == NULL || conn == NULL || out == NULL)
        return pgr_error_misuse(err, "pgrest_execute");
    int rc = pgr_stage_end(arena, PGREST_OK, err);
    return rc == PGREST_OK ? pgr_execute_on(ctx, arena, st, conn, out, err) : rc;
}
