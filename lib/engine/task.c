/* The request engine (docs/ARCHITECTURE.md, "A request's way"): one
 * request as a state machine that never blocks on the database. start
 * runs the stages that need none (CORS preflight, authenticate, parse,
 * plan, emit); then a pooled connection comes through the pool's waiter
 * queue, the pipeline goes out and its results come in on PQsocket, and
 * the finished response gets its decoration. pgrest_handle drives the
 * same machine with poll(). */
#include <poll.h>
#include <string.h>
#include <time.h>

#include "auth/auth.h"
#include "auth/jwt.h"
#include "engine/batch.h"
#include "engine/body_collector.h"
#include "engine/context.h"
#include "engine/db_events.h"
#include "engine/decorate.h"
#include "engine/import.h"
#include "exec/cancel.h"
#include "exec/cors.h"
#include "exec/execute.h"
#include "exec/pool.h"
#include "exec/replicas.h"
#include "exec/response.h"
#include "exec/stream.h"
#include "parse/api_request.h"
#include "sql/emit_import.h"
#include "sql/emit_preamble.h"
#include "sql/emit_stream.h"
#include "engine/observe.h"
#include "schema/schema_cache.h"
#include "sql/statements.h"
#include "util/error.h"
#include "util/lsn.h"
#include "util/monotonic.h"

/* How long a cancelled statement may take to stop and its pipeline to
 * drain before its connection is closed instead (a statement deaf to
 * interrupts, a database gone silent). */
#define CANCEL_GRACE_MS 2000.0

/* Where the task is; the wait state tells the host what it waits for. */
typedef enum phase {
    PHASE_PREPARE,
    PHASE_BODY,        /* authenticated, waiting for the host's body chunks */
    PHASE_QUEUED,      /* in the pool's waiter queue */
    PHASE_CONNECTING,  /* its slot's connection is opening */
    PHASE_IMPORT_OPEN, /* a streamed body: its COPY is starting */
    PHASE_IMPORTING,   /* ... takes the rows as the body comes */
    PHASE_IMPORT_CLOSE,/* ... the body ended, the COPY's answer not yet in */
    PHASE_RUNNING,     /* the pipeline is out, results coming in */
    PHASE_CLEARING,    /* results in, the cancel request not yet delivered */
    PHASE_LSN,         /* a write committed: asking for its WAL position */
    PHASE_DONE
} phase;

struct pgrest_task {
    pgrest_ctx *ctx;
    pgrest_arena *arena;
    const pgrest_request *req;
    pgrest_request *body_req;      /* the copy of req that receives a chunked body */
    pgr_body_collector body;       /* ... its chunks so far */
    bool body_refused;             /* finished while taking its body (413, OOM) */
    pgr_import *import;            /* a body that may stream (engine/import.h), or NULL */
    const pgrest_auth *auth;       /* the identity, kept from start to the parse */
    double auth_end;               /* when authentication ended: parsing starts */
    int wait;                      /* pgrest_task_wait */
    phase phase;
    pgr_stage_timer tm;
    double tx_start;
    const pgrest_statements *st;   /* what runs; the query log's statements */
    const char *role;
    const char *legacy_warning;    /* Warning header value, or NULL */
    pgr_pool *pool;
    pgr_replica *replica;          /* the read's replica, NULL: the primary */
    bool wants_lsn;                /* a write whose response carries its LSN */
    const char *commit_lsn;        /* ... once it came */
    pgr_pool_waiter waiter;
    double deadline;               /* connection acquisition, monotonic ms */
    pgr_conn *conn;
    double connect_deadline;       /* 0: no connect_timeout */
    pgrest_pending *pending;
    bool cancelled;                /* by the host: the response is nobody's */
    pgr_cancel *cancel;            /* the cancel request for the statement */
    double cancel_deadline;        /* then the connection is closed instead */
    int rc;
    pgrest_response *resp;
    pgrest_error err;
    pgr_stream *stream;            /* a streamed read's body, or NULL */
    bool committed;                /* its head is out: resp is the head */
    bool stream_failed;            /* ... and its body ended abnormally */
    pgr_batch *batch;              /* a batch (docs/batch.md), or NULL */
};

static void consume(pgrest_task *t);
static void body_full(pgrest_task *t);
static void prepared(pgrest_task *t, int rc);
static void wait_for_body(pgrest_task *t);
static void cancel_running(pgrest_task *t);

static double now_ms(void)
{
    return pgr_monotonic_seconds() * 1e3;
}

/* A batch is one request, and its items' statements all ran. */
static void account(pgrest_task *t, pgrest_response *resp)
{
    if (t->batch == NULL) {
        pgr_account(t->ctx, resp, t->role, t->st);
        return;
    }
    pgr_account(t->ctx, resp, t->role, NULL);
    for (size_t i = 0; i < pgr_batch_count(t->batch); i++)
        pgr_log_queries(t->ctx, resp->status, pgr_batch_statements(t->batch, i));
}

/* The response as pgrest_handle always gave it: the stage's, or the
 * error's, decorated; an arena too small for that gets the out-of-memory
 * error, decorated if the error reserve allows, bare otherwise. */
static void finish_stream(pgrest_task *t, int rc);

static void finish(pgrest_task *t, int rc)
{
    pgrest_ctx *ctx = t->ctx;
    pgrest_arena *a = t->arena;
    if (t->committed) {
        finish_stream(t, rc);
        return;
    }
    /* a body that did not fit in memory is no body */
    if (rc == PGREST_OK && t->stream != NULL && t->stream->oom)
        rc = pgr_error_oom(&t->err);
    rc = pgr_stage_end(a, rc, &t->err);
    double start = now_ms();
    pgrest_response *resp = t->resp;
    /* whatever a stage left in an exhausted arena may be incomplete */
    if (pgr_arena_exhausted(a))
        resp = NULL;
    /* a failed call may still leave a response: RAISE SQLSTATE 'PGRST'
     * chooses the error's status and headers */
    if (rc != PGREST_OK || resp == NULL)
        resp = resp ? resp : pgrest_error_response(ctx, a, &t->err);
    /* PostgREST SchemaCacheEmptyObs: a request came before any schema cache */
    if (rc != PGREST_OK && t->err.code != NULL && strcmp(t->err.code, "PGRST002") == 0)
        pgr_observe_error(ctx, PGREST_EVENT_SCHEMA_CACHE_EMPTY, "", &t->err);
    t->tm.response = now_ms() - start;
    const pgr_stage_timer *timing = rc == PGREST_OK ? &t->tm : NULL;
    if (resp != NULL && !pgr_decorate_fits(ctx, a, t->req, resp, timing, t->legacy_warning)) {
        pgr_error_oom(&t->err);
        resp = pgrest_error_response(ctx, a, &t->err);
        if (resp != NULL && !pgr_decorate_fits(ctx, a, t->req, resp, NULL, NULL))
            resp = pgrest_error_response(ctx, a, &t->err);
    }
    if (resp != NULL)
        account(t, resp);
    t->rc = rc;
    t->resp = resp;
    t->phase = PHASE_DONE;
    t->wait = PGREST_TASK_DONE;
}

/* ------------------------------------------------------------ no database */

/* The authentication stage: after the HTTP layer's checks (which win over
 * JWT errors), the identity the host attached, or the bearer token's;
 * a failed outcome fails the request here, before the schema cache is
 * needed and before parsing (App.hs / Auth.hs middleware order). */
static int authenticate(pgrest_ctx *ctx, pgrest_arena *arena,
                        const pgrest_request *req, const pgrest_auth **auth,
                        pgrest_error *err)
{
    *auth = NULL;
    int rc = pgr_request_admissible(ctx, arena, req, err);
    if (rc != PGREST_OK)
        return rc;
    if (req->auth != NULL) {
        *auth = req->auth;
        return pgr_auth_outcome(req->auth, err);
    }
    pgrest_auth *verified;
    rc = pgr_authenticate(ctx, arena, req, &verified, err);
    *auth = verified;
    return rc;
}

/* App.hs postgrestResponse: a request that comes before any schema cache
 * is answered NoSchemaCacheError before its body is read or parsed (only
 * authentication, and CORS preflights, come first) */
static int require_schema_cache(pgrest_ctx *ctx, pgrest_error *err)
{
    pgr_schema_cache *sc = pgr_ctx_schema(ctx);
    if (sc == NULL)
        return pgr_error_no_schema_cache(err, NULL);
    pgr_schema_cache_release(sc);
    return PGREST_OK;
}

/* A batch's items are all parsed, planned and emitted before any runs:
 * an item the single request path refuses fails the batch here. */
static int prepare_batch(pgrest_task *t, const pgrest_auth *auth)
{
    int rc = pgr_batch_prepare(t->ctx, t->arena, t->req, auth, &t->batch, &t->err);
    if (rc != PGREST_OK)
        return rc;
    t->tx_start = now_ms();
    t->st = pgr_batch_statements(t->batch, 0);
    return PGREST_OK;
}

/* What PostgREST does before it reads the body: the HTTP layer's checks,
 * authentication, the schema cache (App.hs postgrestResponse). */
static int admit(pgrest_task *t)
{
    double t0 = now_ms();
    int rc = authenticate(t->ctx, t->arena, t->req, &t->auth, &t->err);
    if (rc != PGREST_OK)
        return rc;
    t->auth_end = now_ms();
    t->tm.jwt = t->auth_end - t0;
    /* the access log names the role from here on (App.hs tell authRole) */
    if (t->auth != NULL)
        t->role = t->auth->role;
    return require_schema_cache(t->ctx, &t->err);
}

/* prepare's answer for a streamed body whose write cannot stream: the
 * whole body will decide. */
#define NOT_STREAMED 3

/* A streamed body's rows: typed when they can be (engine/import.h), read
 * anew from the body so far. false: the body cannot stream after all. */
static bool type_rows(pgrest_task *t, pgrest_query_plan *plan)
{
    size_t n;
    const char *text = pgr_body_collector_text(&t->body, &n);
    return pgr_import_type_rows(t->import, t->arena, plan, text, n);
}

/* Parse, plan, emit, with the whole body (or, streamed, the first row's
 * body); OPTIONS answers here. */
static int prepare(pgrest_task *t, bool streamed)
{
    pgrest_ctx *ctx = t->ctx;
    pgrest_arena *arena = t->arena;
    pgrest_api_request *api;
    pgrest_query_plan *plan;
    pgrest_statements *st;
    const pgrest_auth *auth = t->auth;
    double t1 = t->auth_end;
    if (pgr_batch_requested(pgr_cfg(ctx, arena), t->req))
        return streamed ? NOT_STREAMED : prepare_batch(t, auth);
    int rc = pgr_parse_request_as(ctx, arena, t->req, auth, &api, &t->err);
    if (api != NULL)
        t->role = api->role;
    if (rc != PGREST_OK)
        return rc;
    double t2 = now_ms();
    t->tm.parse = t2 - t1;
    if (api->action == PGR_ACTION_INFO)
        return pgr_info_response(ctx, arena, api, &t->resp, &t->err);
    if ((rc = pgrest_plan(ctx, arena, api, &plan, &t->err)) != PGREST_OK)
        return rc;
    if (streamed && (!pgr_import_eligible(plan) || !type_rows(t, plan)))
        return NOT_STREAMED;
    plan->streamed_body = streamed;
    plan->streamed_representation = streamed && t->req->stream_threshold > 0 &&
                                    pgr_import_representation_streams(plan);
    if ((rc = pgrest_emit_sql(ctx, arena, plan, &st, &t->err)) != PGREST_OK)
        return rc;
    if (streamed) {
        /* the COPY's statements open the transaction; what runs after it
         * reads the rows */
        if ((rc = pgr_emit_import(arena, st, &t->import->sql, &t->err)) != PGREST_OK)
            return rc;
        st = t->import->sql.rest;
        if (plan->streamed_representation &&
            (t->stream = pgr_stream_new(arena, plan, t->req->stream_threshold)) == NULL)
            return pgr_error_oom(&t->err);
    } else if (t->req->stream_threshold > 0 && pgr_stream_eligible(plan)) {
        if ((rc = pgr_emit_stream_statements(arena, st, &st, &t->err)) != PGREST_OK)
            return rc;
        t->stream = pgr_stream_new(arena, plan, t->req->stream_threshold);
        if (t->stream == NULL)
            return pgr_error_oom(&t->err);
    }
    t->tx_start = now_ms();
    t->tm.plan = t->tx_start - t2;
    t->st = st;
    t->legacy_warning = pgr_legacy_warning(ctx, arena, t->req, plan);
    return PGREST_OK;
}

/* ------------------------------------------------------------ database */

static void end_transaction(pgrest_task *t, int rc)
{
    t->tm.transaction = now_ms() - t->tx_start;
    finish(t, rc);
}

/* The connection goes back (pgr_pool_release keeps only a clean one: a
 * broken one is replaced, as hasql-pool does; nothing else learns of it).
 * A request a host cancelled is judged by nobody. */
static bool replica_lost(const pgrest_task *t, int rc);
static void retry_on_primary(pgrest_task *t);

static void executed(pgrest_task *t, int rc)
{
    pgr_cancel_forget(t->cancel);
    t->cancel = NULL;
    bool lost = replica_lost(t, rc);
    pgr_pool_release_after(t->pool, t->conn,
                           rc == PGREST_OK                      ? PGR_SESSION_OK
                           : rc == PGREST_ERR_CONNECTION || lost ? PGR_SESSION_CLIENT_ERROR
                                                                 : PGR_SESSION_FAILED);
    pgr_observe(t->ctx, PGREST_EVENT_POOL_REQUEST_FULFILLED, "Borrowed a connection from the pool");
    t->conn = NULL;
    if (lost) {
        retry_on_primary(t);
        return;
    }
    if (!t->cancelled) {
        if (rc != PGREST_OK)
            pgr_db_check_request_error(t->ctx, &t->err);
        pgr_observe_high_error(t->ctx, rc, t->resp, &t->err);
    }
    end_transaction(t, rc);
}

/* PostgREST's usePool observes PoolRequestFullfilled once hasql-pool's
 * use returned, with a session's result or an acquisition error alike. */
static void no_connection(pgrest_task *t)
{
    t->conn = NULL;
    pgr_observe(t->ctx, PGREST_EVENT_POOL_REQUEST_FULFILLED, "Borrowed a connection from the pool");
    /* a replica that refuses connections is the primary's job, not the
     * client's (a full replica pool, PGRST003, is not a lost replica) */
    if (replica_lost(t, PGREST_ERR_CONNECTION) &&
        (t->err.code == NULL || strcmp(t->err.code, "PGRST003") != 0)) {
        retry_on_primary(t);
        return;
    }
    /* usePool: a rejected password is fatal, a pool timeout logged */
    if (t->err.http_status == 503)
        pgr_db_check_request_error(t->ctx, &t->err);
    else
        pgr_observe_error(t->ctx, PGREST_EVENT_POOL_TIMEOUT, "", &t->err);
    end_transaction(t, PGREST_ERR_CONNECTION);
}

static void cancelled_error(pgrest_task *t)
{
    t->resp = NULL;
    pgr_error(&t->err, 500, "57014", "canceling statement due to user request",
              NULL, NULL);
}

/* A cancelled task whose connection cannot be cleaned in time: closed. */
static void give_up(pgrest_task *t)
{
    pgr_cancel_forget(t->cancel);
    t->cancel = NULL;
    pgr_pool_discard(t->pool, t->conn);
    t->conn = NULL;
    pgr_observe(t->ctx, PGREST_EVENT_POOL_REQUEST_FULFILLED, "Borrowed a connection from the pool");
    cancelled_error(t);
    end_transaction(t, PGREST_ERR_DATABASE);
}

static int io_wait(const pgrest_task *t)
{
    return pgrest_pending_wants_write(t->pending) ? PGREST_TASK_WAIT_WRITE
                                                 : PGREST_TASK_WAIT_READ;
}

/* The results are in; a cancelled statement's connection is only
 * released once the cancel request has reached the server, or a late one
 * could cancel the next user's statement. */
static void ask_commit_lsn(pgrest_task *t, int rc);

static void drained(pgrest_task *t, int rc)
{
    if (t->wants_lsn && rc == PGREST_OK && t->resp != NULL && t->cancel == NULL &&
        !t->cancelled) {
        ask_commit_lsn(t, rc);
        return;
    }
    if (t->cancel == NULL || pgr_cancel_delivered(t->cancel)) {
        executed(t, rc);
        return;
    }
    t->rc = rc;
    t->phase = PHASE_CLEARING;
    t->wait = PGREST_TASK_WAIT_CONN;
}

static void check_cleared(pgrest_task *t)
{
    if (pgr_cancel_delivered(t->cancel))
        executed(t, t->rc);
    else if (now_ms() >= t->cancel_deadline)
        give_up(t);
}

static void consume(pgrest_task *t)
{
    if (t->cancel != NULL && now_ms() >= t->cancel_deadline) {
        give_up(t);
        return;
    }
    pgrest_response *resp = NULL;
    int rc = pgrest_execute_consume(t->pending, &resp, &t->err);
    if (rc == PGREST_AGAIN) {
        t->wait = io_wait(t);
        return;
    }
    if (rc == PGR_PAUSED) {
        body_full(t);
        return;
    }
    t->resp = resp;
    if (rc == PGREST_ERR_DATABASE && t->import != NULL && t->import->copied)
        t->err.details = pgr_import_name_failed_row(
            t->import, t->arena, pgr_pending_failed_row(t->pending), t->err.details);
    drained(t, rc);
}

/* ------------------------------------------------------------ streaming */

/* The head of a streamed read: the response the buffered path builds
 * for the rows so far, without the Content-Range only the last row can
 * tell (docs/streaming.md), decorated and counted now. */
static bool commit_head(pgrest_task *t)
{
    pgrest_ctx *ctx = t->ctx;
    pgrest_arena *a = t->arena;
    pgr_main_row row = {.body = "", .page_total = t->stream->rows};
    /* a streamed body's representation: its head, count included, came
     * before its rows */
    bool head_known = pgr_pending_head(t->pending, &row);
    row.body = "";
    row.body_len = 0;
    pgrest_response *resp = NULL;
    pgrest_error err = {0};
    t->tm.transaction = now_ms() - t->tx_start;
    if (pgr_build_response(ctx, a, t->st->plan, &row, &resp, &err) != PGREST_OK ||
        resp == NULL || pgr_arena_exhausted(a))
        return false;
    if (!head_known)
        pgr_response_remove_header(resp, "Content-Range");
    resp->streamed = true;
    if (!pgr_decorate_fits(ctx, a, t->req, resp, &t->tm, t->legacy_warning))
        return false;
    account(t, resp);
    t->resp = resp;
    t->committed = true;
    return true;
}

/* The body buffer is full: the head goes out now (the body is longer
 * than the threshold), and the task waits for the host to read. A head
 * the arena cannot hold ends the request as the out-of-memory error. */
static void body_full(pgrest_task *t)
{
    if (!t->committed && !commit_head(t)) {
        pgr_error_oom(&t->err);
        t->stream->discard = true;
        cancel_running(t);
        t->cancelled = false;
        consume(t);
        return;
    }
    t->wait = PGREST_TASK_BODY;
}

/* The end of a streamed response: its head is long out, so an error can
 * only cut the body short; it is observed and counted (a host's own
 * cancel is no error of the response). */
static void finish_stream(pgrest_task *t, int rc)
{
    t->stream_failed = rc != PGREST_OK || t->stream->oom || t->cancelled;
    if (t->stream_failed && !t->cancelled) {
        atomic_fetch_add(&t->ctx->metrics.stream_aborts, 1);
        if (rc == PGREST_OK)
            pgr_error_oom(&t->err);
        pgr_observe_error(t->ctx, PGREST_EVENT_STREAM_ABORTED, "Streamed response aborted: ",
                          &t->err);
    }
    t->rc = rc;
    t->phase = PHASE_DONE;
    t->wait = PGREST_TASK_DONE;
}

static bool batch_item_done(void *batch, size_t i, int *rc, pgrest_response **resp,
                            pgrest_error *err)
{
    return pgr_batch_item_done(batch, i, rc, resp, err);
}

static void open_import(pgrest_task *t);

/* The connection is open: put the pipeline on it (a batch's items all in
 * one, docs/batch.md), or, for a streamed body, the COPY before it. */
static void send_pipeline(pgrest_task *t)
{
    pgr_conn *c = t->conn;
    if (t->import != NULL && t->import->started && !t->import->copied) {
        open_import(t);
        return;
    }
    t->phase = PHASE_RUNNING;
    int rc = t->batch == NULL
                 ? pgr_execute_send_on(t->ctx, t->arena, t->st, c->pg, c->stmts, &t->pending,
                                       &t->err)
                 : pgr_execute_send_units_on(t->ctx, t->arena, pgr_batch_units(t->batch),
                                             pgr_batch_count(t->batch), batch_item_done,
                                             t->batch, c->pg, c->stmts, &t->pending, &t->err);
    rc = pgr_stage_end(t->arena, rc, &t->err);
    if (rc != PGREST_OK) {
        t->pending = NULL;
        executed(t, rc);
        return;
    }
    if (t->stream != NULL)
        pgr_pending_set_sink(t->pending, t->stream);
    consume(t);
}

static void connect_wait(pgrest_task *t)
{
    t->phase = PHASE_CONNECTING;
    t->wait = t->conn->connect_write ? PGREST_TASK_WAIT_WRITE : PGREST_TASK_WAIT_READ;
}

/* PQconnectPoll only when the socket is ready: asked early it takes a
 * connect() still in progress for a completed one. */
static bool connect_ready(const pgrest_task *t)
{
    struct pollfd pfd = {.fd = PQsocket(t->conn->pg),
                         .events = t->conn->connect_write ? POLLOUT : POLLIN};
    return poll(&pfd, 1, 0) != 0;
}

static void connect_step(pgrest_task *t)
{
    int rc;
    if (t->connect_deadline > 0 && now_ms() >= t->connect_deadline)
        rc = pgr_pool_open_expired(t->pool, t->conn, t->arena, &t->err);
    else if (!connect_ready(t))
        return;
    else
        rc = pgr_pool_open_poll(t->pool, t->conn, t->arena, &t->err);
    if (rc == PGREST_AGAIN)
        connect_wait(t);
    else if (rc == PGREST_OK)
        send_pipeline(t);
    else
        no_connection(t);
}

/* A connection slot is ours: open it without blocking if needed. */
static void run_on(pgrest_task *t, pgr_conn *c)
{
    t->conn = c;
    int rc = pgr_pool_open_start(t->pool, c, t->arena, &t->err);
    if (rc == PGREST_AGAIN) {
        t->connect_deadline = c->connect_timeout > 0 ? now_ms() + 1e3 * c->connect_timeout : 0;
        connect_wait(t);
    } else if (rc == PGREST_OK) {
        send_pipeline(t);
    } else {
        no_connection(t);
    }
}

/* ------------------------------------------------------------ replicas */

/* What PostgREST runs READ ONLY (Plan.hs txMode: reads, GET calls,
 * STABLE and IMMUTABLE calls, the OpenAPI root) may run on a replica,
 * except SERIALIZABLE, which a hot standby refuses. */
static bool replica_eligible(const pgrest_query_plan *plan)
{
    const char *level = pgr_emit_isolation_level(plan);
    return plan->read_only && (level == NULL || strcmp(level, "SERIALIZABLE") != 0);
}

/* The request's PGREST_MIN_LSN_HEADER: a position it must see. One that
 * is no WAL position asks for what no replica has: the primary serves. */
static bool min_lsn(const pgrest_request *req, uint64_t *lsn)
{
    const char *v = pgr_request_header(req, PGREST_MIN_LSN_HEADER);
    if (v == NULL)
        return false;
    if (!pgr_lsn_parse(v, strlen(v), lsn))
        *lsn = UINT64_MAX;
    return true;
}

/* A read goes to a usable replica, round robin, the rest to the primary
 * (docs/replicas.md); a committing write will carry its WAL position. */
static pgr_pool *route(pgrest_task *t)
{
    pgr_pool *primary = pgr_ctx_pool(t->ctx);
    pgr_replica_set *set = pgr_ctx_replicas(t->ctx);
    const pgrest_query_plan *plan = t->st->plan;
    t->replica = NULL;
    /* a batch writes, whatever its first item does */
    if (primary == NULL || set == NULL || t->batch != NULL)
        return primary;
    if (!replica_eligible(plan)) {
        t->wants_lsn = !plan->read_only && plan->commit;
        return primary;
    }
    uint64_t lsn = 0;
    bool has_lsn = min_lsn(t->req, &lsn);
    t->replica = pgr_replicas_pick(set, has_lsn, lsn);
    return t->replica != NULL ? pgr_replica_pool(t->replica) : primary;
}

/* The read's replica went away under it (the connection, or the server
 * saying it shuts down, starts up, or cancelled the read for a conflict
 * with recovery): the primary answers instead, unless a streamed head is
 * out already or the host cancelled. */
static bool replica_lost(const pgrest_task *t, int rc)
{
    if (t->replica == NULL || t->cancelled || t->committed)
        return false;
    if (rc == PGREST_ERR_CONNECTION)
        return true;
    static const char *const gone[] = {"57P01", "57P02", "57P03", "40001", "40P01"};
    for (size_t i = 0; rc == PGREST_ERR_DATABASE && t->err.code != NULL &&
                       i < sizeof gone / sizeof gone[0]; i++)
        if (strcmp(t->err.code, gone[i]) == 0)
            return true;
    return false;
}

static void acquire_from(pgrest_task *t, pgr_pool *pool);

static void retry_on_primary(pgrest_task *t)
{
    pgr_replica_lost(t->replica);
    t->replica = NULL;
    t->resp = NULL;
    t->pending = NULL;
    t->err = (pgrest_error){0};
    if (t->stream != NULL &&
        (t->stream = pgr_stream_new(t->arena, t->st->plan, t->req->stream_threshold)) == NULL) {
        end_transaction(t, pgr_error_oom(&t->err));
        return;
    }
    acquire_from(t, pgr_ctx_pool(t->ctx));
}

/* After a committed write, on its connection: pg_current_wal_insert_lsn()
 * is at or past the end of every record inserted so far, its commit
 * record included, whether that was flushed yet or not
 * (synchronous_commit = off); pg_current_wal_lsn() (written) could be
 * short of it. */
#define COMMIT_LSN_QUERY "SELECT pg_current_wal_insert_lsn()::text"

static void commit_lsn_step(pgrest_task *t);

static void commit_lsn_done(pgrest_task *t, const char *lsn)
{
    PGconn *pg = t->conn->pg;
    if (PQstatus(pg) == CONNECTION_OK)
        PQsetnonblocking(pg, 0);
    if (lsn != NULL && t->resp != NULL)
        pgr_response_add_header(t->arena, t->resp, PGREST_COMMIT_LSN_HEADER, lsn);
    executed(t, t->rc);
}

static void ask_commit_lsn(pgrest_task *t, int rc)
{
    PGconn *pg = t->conn->pg;
    t->rc = rc;
    t->phase = PHASE_LSN;
    if (PQsetnonblocking(pg, 1) != 0 ||
        PQsendQueryParams(pg, COMMIT_LSN_QUERY, 0, NULL, NULL, NULL, NULL, 0) != 1) {
        commit_lsn_done(t, NULL);
        return;
    }
    commit_lsn_step(t);
}

/* Without the position the write still succeeded: no header, then. */
static void commit_lsn_step(pgrest_task *t)
{
    PGconn *pg = t->conn->pg;
    int flushed = PQflush(pg);
    if (flushed == 1) {
        t->wait = PGREST_TASK_WAIT_WRITE;
        return;
    }
    if (flushed < 0 || PQconsumeInput(pg) == 0) {
        commit_lsn_done(t, NULL);
        return;
    }
    for (;;) {
        if (PQisBusy(pg)) {
            t->wait = PGREST_TASK_WAIT_READ;
            return;
        }
        PGresult *r = PQgetResult(pg);
        if (r == NULL)
            break;
        if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
            t->commit_lsn = pgr_strdup(t->arena, PQgetvalue(r, 0, 0));
        PQclear(r);
    }
    commit_lsn_done(t, t->commit_lsn);
}

/* ------------------------------------------------------------ the pool */

static void acquire(pgrest_task *t)
{
    acquire_from(t, route(t));
}

static void acquire_from(pgrest_task *t, pgr_pool *pool)
{
    t->pool = pool;
    if (t->pool == NULL) {
        end_transaction(t, pgr_error_connection(&t->err, NULL));
        return;
    }
    pgr_observe(t->ctx, PGREST_EVENT_POOL_REQUEST, "Trying to borrow a connection from pool");
    t->deadline = now_ms() + 1e3 * pgr_pool_timeout_seconds(t->pool);
    pgr_conn *c = pgr_pool_take(t->pool, &t->waiter);
    if (c != NULL) {
        run_on(t, c);
    } else {
        t->phase = PHASE_QUEUED;
        t->wait = PGREST_TASK_WAIT_CONN;
    }
}

static void timed_out(pgrest_task *t)
{
    pgr_error_pool_timeout(&t->err);
    no_connection(t);
}

static void check_queue(pgrest_task *t)
{
    pgr_conn *c = pgr_pool_handed(t->pool, &t->waiter);
    if (c == NULL && now_ms() < t->deadline)
        return;
    if (c == NULL)
        c = pgr_pool_leave(t->pool, &t->waiter, true);
    if (c != NULL)
        run_on(t, c);
    else
        timed_out(t);
}

/* The host gave up on a running statement: a cancel request goes out
 * (off this thread) and the task drains the pipeline as usual. */
static void cancel_running(pgrest_task *t)
{
    if (t->cancel != NULL)
        return;
    t->cancel = pgr_cancel_start(t->conn->pg, t->waiter.notify, t->waiter.arg);
    if (t->cancel == NULL)
        give_up(t);
    else
        t->cancel_deadline = now_ms() + CANCEL_GRACE_MS;
}

/* ------------------------------------------------------------ the body */

/* The stages ran: what needs no database is answered, the rest goes to
 * the pool. */
static void prepared(pgrest_task *t, int rc)
{
    if (rc != PGREST_OK || t->st == NULL)
        finish(t, rc);
    else
        acquire(t);
}

/* The body comes in chunks (pgrest_request_body_follows): the task waits
 * for it with a copy of the request of its own, which receives the body
 * at the end, so the host's request stays as the host built it. */
static void wait_for_body(pgrest_task *t)
{
    pgrest_request *copy = PGR_NEW(t->arena, pgrest_request);
    if (copy == NULL) {
        finish(t, pgr_error_oom(&t->err));
        return;
    }
    *copy = *t->req;
    t->req = copy;
    t->body_req = copy;
    pgr_body_collector_init(&t->body, t->arena,
                            pgr_cfg(t->ctx, t->arena)->limits.max_body_size);
    t->import = pgr_import_new(t->ctx, t->arena, t->req);
    t->phase = PHASE_BODY;
    t->wait = PGREST_TASK_WANTS_BODY;
}

/* The body is complete in the collector: the task goes on as if it had
 * been set whole. */
static void prepare_whole_body(pgrest_task *t)
{
    size_t len;
    const char *text = pgr_body_collector_end(&t->body, &len);
    t->body_req->body = text;
    t->body_req->body_len = len;
    t->body_req->body_follows = false;
    /* the wait for the body is the host's, not the parse's */
    t->auth_end = now_ms();
    t->phase = PHASE_PREPARE;
    prepared(t, pgr_stage_end(t->arena, prepare(t, false), &t->err));
}

static int copy_error(const pgrest_task *t, int rc, pgrest_error *err)
{
    if (err != NULL)
        *err = t->err;
    return rc;
}

/* The body cannot be taken: the task is DONE with the error's answer.
 * Past server-max-body-size that is the answer the whole body gets
 * (pgr_request_admissible), which comes before authentication there: no
 * role, as there. */
static int refuse_body(pgrest_task *t, int rc, pgrest_error *err)
{
    if (t->err.code != NULL && strcmp(t->err.code, "PGRST413") == 0)
        t->role = NULL;
    t->body_refused = true;
    finish(t, rc);
    return copy_error(t, t->rc, err);
}

/* A task that does not wait for a body: one that refused its body
 * repeats why (the host may still be sending the rest); any other is the
 * host's mistake. */
static int not_waiting(const pgrest_task *t, const char *misuse, pgrest_error *err)
{
    if (t->body_refused)
        return copy_error(t, t->rc, err);
    return pgr_error_misuse(err, misuse);
}

/* ------------------------------------------------------------ a streamed body */

/* What the host sees the task wait for: until it has been told to wait
 * (PGREST_AGAIN), a task whose body streams wants the body, whatever it
 * does meanwhile (taking a connection, opening the COPY); the host's next
 * chunk finds out whether it can be taken. */
static int shown_wait(const pgrest_task *t)
{
    const pgr_import *imp = t->import;
    if (imp != NULL && imp->started && !imp->body_ended && !imp->host_waits &&
        t->phase != PHASE_DONE)
        return PGREST_TASK_WANTS_BODY;
    return t->wait;
}

/* No connection is in use yet, or it is given up: a queued task leaves
 * the queue, a half-open connection is closed. true when it was so. */
static bool leave_before_running(pgrest_task *t)
{
    if (t->phase == PHASE_QUEUED) {
        pgr_conn *c = pgr_pool_leave(t->pool, &t->waiter, false);
        if (c != NULL)
            pgr_pool_release(t->pool, c);
        return true;
    }
    if (t->phase == PHASE_CONNECTING || t->phase == PHASE_IMPORT_OPEN ||
        t->phase == PHASE_IMPORTING || t->phase == PHASE_IMPORT_CLOSE) {
        /* a half-open connection, or one in the middle of a COPY, is of
         * no use to anybody */
        pgr_pool_discard(t->pool, t->conn);
        t->conn = NULL;
        pgr_observe(t->ctx, PGREST_EVENT_POOL_REQUEST_FULFILLED,
                    "Borrowed a connection from the pool");
        return true;
    }
    return false;
}

/* The streamed body cannot go on (a bad row, the COPY failed): the
 * transaction is abandoned with its connection, nothing written. */
static void abandon_import(pgrest_task *t, int rc)
{
    if (leave_before_running(t))
        end_transaction(t, rc);
    else if (t->phase != PHASE_DONE)
        finish(t, rc);
}

/* The body will not stream after all: what was planned on its first row
 * goes, and the whole body decides. */
static void forget_streaming(pgrest_task *t)
{
    t->import = NULL;
    t->st = NULL;
    t->resp = NULL;
    t->legacy_warning = NULL;
    t->err = (pgrest_error){0};
}

/* The COPY could not start (the connection's role may not create
 * temporary tables, say): the body is taken whole after all, as if it had
 * never streamed. Every chunk so far is in the collector: none is taken
 * until the COPY is open. */
static bool take_whole_instead(pgrest_task *t)
{
    const pgr_copy_in *copy = &t->import->copy;
    if (t->phase != PHASE_IMPORT_OPEN || t->cancelled)
        return false;
    /* the request's own statements (settings, pre-request) answer; so
     * does a COPY into the table itself, refused as its INSERT would be
     * (no privilege, say) */
    const pgr_import_sql *sql = &t->import->sql;
    if (copy->error != NULL && copy->failed_at >= sql->n_setup &&
        (copy->failed_at < sql->n_open || sql->copied_rows != NULL))
        return false;
    bool ended = t->import->body_ended;
    pgr_copy_in_clear(&t->import->copy);
    pgr_pool_release_after(t->pool, t->conn, PGR_SESSION_FAILED);
    pgr_observe(t->ctx, PGREST_EVENT_POOL_REQUEST_FULFILLED, "Borrowed a connection from the pool");
    t->conn = NULL;
    forget_streaming(t);
    if (ended) {
        prepare_whole_body(t);
        return true;
    }
    t->phase = PHASE_BODY;
    t->wait = PGREST_TASK_WANTS_BODY;
    return true;
}

static void import_failed(pgrest_task *t)
{
    if (take_whole_instead(t))
        return;
    pgr_copy_in *copy = &t->import->copy;
    int rc;
    if (copy->error != NULL) {
        rc = pgr_result_error(t->ctx, t->arena, t->st->plan, copy->error, &t->resp, &t->err);
        if (rc == PGREST_ERR_DATABASE && copy->failed_at == t->import->sql.n_open)
            t->err.details = pgr_import_name_row(t->import, t->arena, copy->error,
                                                 t->err.details);
    } else {
        pgr_error(&t->err, 503, "PGRST001", "Database client error. Retrying the connection.",
                  pgr_strdup(t->arena, PQerrorMessage(copy->pg)), NULL);
        rc = PGREST_ERR_CONNECTION;
    }
    pgr_copy_in_clear(copy);
    if (!t->cancelled)
        pgr_db_check_request_error(t->ctx, &t->err);
    abandon_import(t, rc);
}

/* A step of the COPY that is not complete: its wait, or its failure. */
static void copy_wait(pgrest_task *t, pgr_copy_step s)
{
    if (s == PGR_COPY_FAILED)
        import_failed(t);
    else
        t->wait = s == PGR_COPY_WAIT_WRITE ? PGREST_TASK_WAIT_WRITE : PGREST_TASK_WAIT_READ;
}

static void import_closing(pgrest_task *t)
{
    pgr_copy_step s = pgr_copy_in_closing(&t->import->copy);
    if (s != PGR_COPY_READY) {
        copy_wait(t, s);
        return;
    }
    t->import->copied = true;
    const char **rows = t->import->sql.copied_rows;
    /* rows the COPY wrote into the table itself: its count answers */
    if (rows != NULL && (*rows = pgr_strdup(t->arena, t->import->copy.copied)) == NULL) {
        abandon_import(t, pgr_error_oom(&t->err));
        return;
    }
    send_pipeline(t);
}

/* The rows read so far go to the COPY; once the body has ended and all
 * left, the COPY ends. Until then the host may send more when nothing
 * is held back. */
static void import_put(pgrest_task *t)
{
    pgr_import *imp = t->import;
    pgr_copy_step s = pgr_import_put(imp);
    if (s == PGR_COPY_REFUSED) {
        /* the rest of the body is not read: the answer is the error */
        t->phase = PHASE_IMPORT_CLOSE;
        import_closing(t);
        return;
    }
    if (s != PGR_COPY_READY) {
        copy_wait(t, s);
        return;
    }
    if (!imp->body_ended) {
        imp->host_waits = false;
        t->wait = PGREST_TASK_WANTS_BODY;
        return;
    }
    if (!pgr_copy_in_end(&imp->copy, NULL)) {
        import_failed(t);
        return;
    }
    t->phase = PHASE_IMPORT_CLOSE;
    import_closing(t);
}

static void import_opening(pgrest_task *t)
{
    pgr_copy_step s = pgr_copy_in_opening(&t->import->copy);
    if (s != PGR_COPY_READY) {
        copy_wait(t, s);
        return;
    }
    t->phase = PHASE_IMPORTING;
    import_put(t);
}

/* The connection is open: the COPY starts (docs/bulk-import.md). */
static void open_import(pgrest_task *t)
{
    t->phase = PHASE_IMPORT_OPEN;
    const pgr_import_sql *sql = &t->import->sql;
    if (!pgr_copy_in_send(&t->import->copy, t->conn->pg, sql->open, sql->n_open, sql->copy)) {
        import_failed(t);
        return;
    }
    import_opening(t);
}

/* The body has reached the threshold: once its first row is read, the
 * write is planned on that row alone and, when it can stream, the task
 * takes a connection while the body goes on. A body that cannot stream
 * (not rows, a write that returns them, a first row the planner refuses)
 * is collected whole, and the whole body gets the answer. */
static void consider_streaming(pgrest_task *t, const char *data, size_t len)
{
    pgr_import *imp = t->import;
    if (!imp->reading && t->body.len < t->req->import_threshold)
        return;
    pgrest_error ignored = {0};
    size_t n;
    const char *text = imp->reading ? data : pgr_body_collector_text(&t->body, &n);
    int rc = pgr_import_read(imp, text, imp->reading ? len : n, &ignored);
    imp->reading = true;
    if (rc != PGREST_OK) {
        t->import = NULL;
        return;
    }
    const char *first = pgr_import_rows_first(imp->rows, &n);
    if (first == NULL)
        return;
    t->body_req->body = first;
    t->body_req->body_len = n;
    t->auth_end = now_ms();
    rc = pgr_stage_end(t->arena, prepare(t, true), &t->err);
    t->body_req->body = "";
    t->body_req->body_len = 0;
    if (rc != PGREST_OK || t->st == NULL) {
        forget_streaming(t);
        return;
    }
    imp->started = true;
    imp->bytes = t->body.len;
    pgr_import_rows_set_target(imp->rows, t->st->plan->api->name, false);
    acquire(t);
}

/* The next piece of a streamed body: taken when the COPY is open and has
 * sent what it had; otherwise PGREST_AGAIN, and the task waits for what
 * it needs (its wait state) until it wants the body again. */
static void step(pgrest_task *t);

/* The reader refused a row once the body streamed: the task is DONE
 * with its error (a body that turned out not to be rows, which the reader
 * tells only at the start, is an invalid one). */
static int reader_failed(pgrest_task *t, int rc, pgrest_error *err)
{
    if (rc > 0)
        rc = pgr_error(&t->err, 400, "PGRST102", "Empty or invalid json", NULL, NULL);
    abandon_import(t, rc);
    return copy_error(t, t->rc, err);
}

static int stream_chunk(pgrest_task *t, const char *data, size_t len, pgrest_error *err)
{
    pgr_import *imp = t->import;
    step(t);
    if (t->phase == PHASE_DONE)
        return copy_error(t, t->rc, err);
    long long max = pgr_cfg(t->ctx, t->arena)->limits.max_streamed_body_size;
    if (max > 0 && (unsigned long long)max - imp->bytes < len) {
        abandon_import(t, pgr_error_body_over(t->arena, max, "server-max-streamed-body-size",
                                              &t->err));
        return copy_error(t, t->rc, err);
    }
    if (t->phase != PHASE_IMPORTING || imp->backlog) {
        imp->host_waits = true;
        return PGREST_AGAIN;
    }
    imp->bytes += len;
    int rc = pgr_import_read(imp, data, len, &t->err);
    if (rc != PGREST_OK)
        return reader_failed(t, rc, err);
    /* data held back makes the next chunk wait */
    import_put(t);
    if (t->phase == PHASE_DONE)
        return copy_error(t, t->rc, err);
    return PGREST_OK;
}

static int end_streamed_body(pgrest_task *t, pgrest_error *err)
{
    pgr_import *imp = t->import;
    if (t->phase == PHASE_DONE)
        return copy_error(t, t->rc, err);
    int rc = pgr_import_read_end(imp, &t->err);
    if (rc != PGREST_OK)
        return reader_failed(t, rc, err);
    imp->body_ended = true;
    step(t);
    return PGREST_OK;
}

/* ------------------------------------------------------------ public API */

pgrest_task *pgrest_task_start(pgrest_ctx *ctx, pgrest_arena *arena,
                               const pgrest_request *req,
                               pgrest_task_wake wake, void *wake_arg)
{
    if (ctx == NULL || arena == NULL || req == NULL)
        return NULL;
    /* the task itself may use the error reserve: a request that filled
     * the arena still gets its out-of-memory response */
    pgrest_task *t = PGR_NEW(arena, pgrest_task);
    if (t == NULL) {
        pgr_arena_reserve(arena, sizeof *t + 1024);
        t = PGR_NEW(arena, pgrest_task);
    }
    if (t == NULL)
        return NULL;
    *t = (pgrest_task){.ctx = ctx, .arena = arena, .req = req,
                       .waiter = {.notify = wake, .arg = wake_arg}};
    pgrest_response *preflight = pgr_cors_preflight(ctx, arena, req);
    if (preflight != NULL && !pgr_arena_exhausted(arena)) {
        pgr_add_trace_header(ctx, arena, req, preflight);
        t->resp = preflight;
        t->phase = PHASE_DONE;
        t->wait = PGREST_TASK_DONE;
        return t;
    }
    int rc = pgr_stage_end(arena, admit(t), &t->err);
    if (rc == PGREST_OK && req->body_follows)
        wait_for_body(t);
    else
        prepared(t, rc == PGREST_OK ? pgr_stage_end(arena, prepare(t, false), &t->err) : rc);
    return t;
}

static void step(pgrest_task *t)
{
    switch (t->phase) {
    case PHASE_QUEUED:
        check_queue(t);
        break;
    case PHASE_CONNECTING:
        connect_step(t);
        break;
    case PHASE_RUNNING:
        consume(t);
        break;
    case PHASE_CLEARING:
        check_cleared(t);
        break;
    case PHASE_LSN:
        commit_lsn_step(t);
        break;
    case PHASE_IMPORT_OPEN:
        import_opening(t);
        break;
    case PHASE_IMPORTING:
        import_put(t);
        break;
    case PHASE_IMPORT_CLOSE:
        import_closing(t);
        break;
    default:
        break;
    }
}

int pgrest_task_advance(pgrest_task *t)
{
    if (t == NULL)
        return PGREST_TASK_DONE;
    step(t);
    return shown_wait(t);
}

int pgrest_task_wait_state(const pgrest_task *t)
{
    return t != NULL ? shown_wait(t) : PGREST_TASK_DONE;
}

int pgrest_task_socket(const pgrest_task *t)
{
    int w = t != NULL ? shown_wait(t) : PGREST_TASK_DONE;
    if (w != PGREST_TASK_WAIT_READ && w != PGREST_TASK_WAIT_WRITE)
        return -1;
    return PQsocket(t->conn->pg);
}

/* The moment the task needs an advance without an event, 0 for none. */
static double due(const pgrest_task *t)
{
    if (shown_wait(t) == PGREST_TASK_WANTS_BODY)
        return 0;
    switch (t->phase) {
    case PHASE_QUEUED:
        return t->deadline;
    case PHASE_CONNECTING:
        return t->connect_deadline;
    case PHASE_RUNNING:
        return t->cancel != NULL ? t->cancel_deadline : 0;
    case PHASE_CLEARING:
        return t->cancel_deadline;
    default:
        return 0;
    }
}

long pgrest_task_timeout_ms(const pgrest_task *t)
{
    double at = t != NULL ? due(t) : 0;
    if (at == 0)
        return -1;
    double left = at - now_ms();
    return left > 0 ? (long)left + 1 : 0;
}

pgrest_response *pgrest_task_response(const pgrest_task *t)
{
    return t != NULL && (t->wait == PGREST_TASK_DONE || t->committed) ? t->resp : NULL;
}

long pgrest_task_read_body(pgrest_task *t, char *buf, size_t max)
{
    if (t == NULL || !t->committed || t->stream_failed)
        return PGREST_BODY_FAILED;
    size_t n = buf != NULL ? pgr_stream_take(t->stream, buf, max) : 0;
    if (n > 0)
        return (long)n;
    return t->phase == PHASE_DONE ? PGREST_BODY_END : 0;
}

int pgrest_task_body_streams(const pgrest_task *t)
{
    return t != NULL && t->import != NULL && t->import->started;
}

void pgrest_request_allow_streaming(pgrest_request *req, size_t threshold_bytes)
{
    if (req != NULL)
        req->stream_threshold = threshold_bytes > 0 ? threshold_bytes
                                                    : PGR_STREAM_DEFAULT_THRESHOLD;
}

int pgrest_task_cancel(pgrest_task *t)
{
    if (t == NULL)
        return PGREST_TASK_DONE;
    if (t->phase != PHASE_DONE)
        t->cancelled = true;
    switch (t->phase) {
    case PHASE_BODY:
        /* no connection yet: nothing to give back */
        cancelled_error(t);
        finish(t, PGREST_ERR_DATABASE);
        break;
    case PHASE_QUEUED:
    case PHASE_CONNECTING:
    case PHASE_IMPORT_OPEN:
    case PHASE_IMPORTING:
    case PHASE_IMPORT_CLOSE:
        /* nothing written: a streamed body's transaction goes with its
         * connection */
        leave_before_running(t);
        cancelled_error(t);
        end_transaction(t, PGREST_ERR_DATABASE);
        break;
    case PHASE_RUNNING:
        cancel_running(t);
        /* a paused stream reads on, dropping the rows, to drain */
        if (t->stream != NULL && t->phase == PHASE_RUNNING) {
            t->stream->discard = true;
            consume(t);
        }
        break;
    default:
        break;
    }
    return t->wait;
}

int pgrest_task_write_body(pgrest_task *t, const void *data, size_t len, pgrest_error *err)
{
    if (t == NULL || (data == NULL && len > 0))
        return pgr_error_misuse(err, "pgrest_task_write_body");
    if (t->import != NULL && t->import->started && !t->import->body_ended)
        return stream_chunk(t, data, len, err);
    if (t->phase != PHASE_BODY)
        return not_waiting(t, "pgrest_task_write_body: the task does not wait for a body", err);
    switch (pgr_body_collector_append(&t->body, data, len)) {
    case PGR_BODY_APPENDED:
        if (t->import != NULL)
            consider_streaming(t, data, len);
        return t->phase == PHASE_DONE ? copy_error(t, t->rc, err) : PGREST_OK;
    case PGR_BODY_TOO_LARGE: {
        long long max = pgr_cfg(t->ctx, t->arena)->limits.max_body_size;
        return refuse_body(t, pgr_error_body_too_large(t->arena, max, &t->err), err);
    }
    case PGR_BODY_NO_MEMORY:
    default:
        return refuse_body(t, pgr_error_oom(&t->err), err);
    }
}

int pgrest_task_end_body(pgrest_task *t, pgrest_error *err)
{
    if (t == NULL)
        return pgr_error_misuse(err, "pgrest_task_end_body");
    if (t->import != NULL && t->import->started && !t->import->body_ended)
        return end_streamed_body(t, err);
    if (t->phase != PHASE_BODY)
        return not_waiting(t, "pgrest_task_end_body: the task does not wait for a body", err);
    prepare_whole_body(t);
    return PGREST_OK;
}
