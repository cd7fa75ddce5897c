/* plan -> statements (PostgREST Query.hs mainQuery + Statements.hs). */
#include <string.h>

#include "engine/context_types.h"
#include "engine/stage_view.h"
#include "sql/emit_body.h"
#include "sql/emit_embed_text.h"
#include "sql/emit_filter.h"
#include "sql/emit_main.h"
#include "sql/emit_preamble.h"
#include "sql/emit_read.h"
#include "sql/statements.h"
#include "util/error.h"

/* Statements.hs mainRead: the read tree is pgrst_source; the body reads
 * it whole. */
static int emit_main_read(pgr_sql *q, const pgrest_query_plan *plan,
                          pgrest_error *err)
{
    pgr_sql_put(q, "WITH pgrst_source AS (");
    int rc = pgr_emit_read_node(q, plan->read, plan->max_rows, err);
    if (rc != PGREST_OK)
        return rc;
    pgr_sql_put(q, ")");
    rc = pgr_emit_count_total(q, plan, true, "pg_catalog.count(_postgrest_t)", err);
    if (rc != PGREST_OK)
        return rc;
    if (q->embed_text)
        pgr_emit_body_text(q, plan->read);
    else
        pgr_emit_body(q, plan);
    pgr_sql_put(q, BODY_FROM_SOURCE);
    return PGREST_OK;
}

static pgr_stmt *add_stmt(pgrest_statements *st, pgr_stmt_role role,
                          const pgr_sql *q, bool prepare)
{
    pgr_stmt *s = &st->items[st->n++];
    s->role = role;
    s->sql = pgr_sb_finish((pgr_sb *)&q->sb);
    s->params = q->params;
    s->n_params = q->n_params;
    s->prepare = prepare;
    return s;
}

static void add_text(pgrest_statements *st, pgrest_arena *a, pgr_stmt_role role,
                     const char *text, bool prepare)
{
    pgr_sql q;
    pgr_sql_init(&q, a);
    pgr_sql_put(&q, text);
    add_stmt(st, role, &q, prepare);
}

/* count=planned and count=estimated need the planner's row estimate of
 * the count query (Preferences.hs shouldExplainCount). */
static int add_explain_count(pgrest_statements *st, pgrest_arena *a,
                             const pgrest_query_plan *plan, bool prep,
                             pgrest_error *err)
{
    /* an EXPLAIN request answers with the plan alone (MainTx.hs
     * actionResult for DbCrud True runs only the main statement) */
    bool needed = plan->action == PGR_ACTION_READ && plan->read != NULL && !plan->explain &&
                  (plan->count == PGR_PREF_COUNT_PLANNED ||
                   plan->count == PGR_PREF_COUNT_ESTIMATED);
    if (!needed)
        return PGREST_OK;
    pgr_sql q;
    pgr_sql_init(&q, a);
    pgr_sql_put(&q, "EXPLAIN (FORMAT JSON) ");
    int rc = pgr_emit_count_node(&q, plan->read, err);
    if (rc != PGREST_OK)
        return rc;
    add_stmt(st, PGR_STMT_EXPLAIN_COUNT, &q, prep);
    return PGREST_OK;
}

static int emit_main(pgr_sql *q, const pgrest_ctx *ctx,
                     const pgrest_query_plan *plan, pgrest_statements *st,
                     pgrest_error *err)
{
    /* bench/README.md issue 34 item 4: embeds as text where that is exact */
    q->embed_text = !ctx->test_embeds_as_jsonb && pgr_embed_text_applies(q->arena, plan);
    switch (plan->action) {
    case PGR_ACTION_READ:
        return emit_main_read(q, plan, err);
    case PGR_ACTION_CREATE:
    case PGR_ACTION_UPDATE:
    case PGR_ACTION_UPSERT:
    case PGR_ACTION_DELETE:
        return pgr_emit_main_mutation(q, ctx, plan, st, err);
    case PGR_ACTION_CALL:
        return pgr_emit_main_call(q, ctx, plan, st, err);
    case PGR_ACTION_SCHEMA_READ:
        return pgr_emit_main_schema_read(q, ctx, plan, err);
    default:
        return pgr_error(err, 400, "PGRST127", "Feature not implemented", NULL, NULL);
    }
}

/* Statements.hs explainF: EXPLAIN (FORMAT JSON|TEXT[, ANALYZE, ...]) */
static void emit_explain(pgr_sql *q, const pgrest_query_plan *plan)
{
    pgr_sql_put(q, plan->explain_text ? "EXPLAIN (FORMAT TEXT" : "EXPLAIN (FORMAT JSON");
    pgr_sql_put(q, plan->explain_options ? plan->explain_options : "");
    pgr_sql_put(q, ") ");
}

/* A function's or role's default_transaction_isolation picks the
 * transaction's isolation level (PostgREST ref/transactions "Isolation
 * Level"); anything else is read committed (Config/Database.hs
 * toIsolationLevel). */
static const char *begin_command(pgrest_arena *a, const pgrest_query_plan *plan)
{
    const char *level = pgr_emit_isolation_level(plan);
    return pgr_asprintf(a, "BEGIN ISOLATION LEVEL %s%s",
                        level != NULL ? level : "READ COMMITTED",
                        plan->read_only ? " READ ONLY" : "");
}

/* A request that commits, with no isolation level of its own and no
 * post-check, needs no BEGIN/COMMIT: the pipeline runs as one implicit
 * transaction up to its Sync, committed there, rolled back by any error
 * (PostgreSQL protocol-flow "Pipelining"). Two statements fewer per
 * request; the READ ONLY of a read goes into the settings statement. */
static bool implicit_transaction(const pgrest_query_plan *plan,
                                 const pgrest_statements *st)
{
    return plan->commit && pgr_emit_isolation_level(plan) == NULL && !plan->explain &&
           !st->end_after_check && !plan->in_batch && !plan->streamed_body;
}

static int emit_sql(pgrest_ctx *ctx, pgrest_arena *arena,
                    const pgrest_query_plan *plan, pgrest_statements **out,
                    pgrest_error *err)
{
    if (ctx == NULL || arena == NULL || plan == NULL || out == NULL)
        return pgr_error_misuse(err, "pgrest_emit_sql");
    bool prep = pgr_cfg(ctx, arena)->db_prepared_statements;
    pgrest_statements *st = PGR_NEW(arena, pgrest_statements);
    if (st == NULL || (st->items = PGR_NEW_ARRAY(arena, pgr_stmt, 10)) == NULL)
        return pgr_error_oom(err);
    st->plan = plan;
    pgr_sql main_q, settings_q, pre_q;
    pgr_sql_init(&main_q, arena);
    if (plan->explain)
        emit_explain(&main_q, plan);
    int rc = emit_main(&main_q, ctx, plan, st, err);
    if (rc != PGREST_OK)
        return rc;
    st->embed_text = main_q.embed_text;
    /* the plan is the answer: no post-check reads the row */
    if (plan->explain)
        st->end_after_check = false;
    if (!pgr_sql_ok(&main_q))
        return pgr_error_oom(err);
    bool implicit = implicit_transaction(plan, st);
    pgr_sql_init(&settings_q, arena);
    if ((rc = pgr_emit_settings(&settings_q, ctx, plan, err)) != PGREST_OK)
        return rc;
    if (implicit && plan->read_only)
        pgr_sql_put(&settings_q, ", set_config('transaction_read_only', 'on', true)");
    if (!implicit)
        add_text(st, arena, PGR_STMT_BEGIN, begin_command(arena, plan), prep);
    add_stmt(st, PGR_STMT_SETTINGS, &settings_q, prep);
    pgr_sql_init(&pre_q, arena);
    if (pgr_emit_pre_request(&pre_q, ctx))
        add_stmt(st, PGR_STMT_PRE_REQUEST, &pre_q, prep);
    add_stmt(st, PGR_STMT_MAIN, &main_q, prep);
    if ((rc = add_explain_count(st, arena, plan, prep, err)) != PGREST_OK)
        return rc;
    if (implicit) {
        *out = st;
        return PGREST_OK;
    }
    /* PostgREST checks deferred constraints before a rollback, so a
     * violation is still reported (MainTx.hs optionalRollback). */
    if (!plan->commit)
        add_text(st, arena, PGR_STMT_CHECK_CONSTRAINTS, "SET CONSTRAINTS ALL IMMEDIATE", prep);
    add_text(st, arena, PGR_STMT_END, plan->commit ? "COMMIT" : "ROLLBACK", prep);
    *out = st;
    return PGREST_OK;
}

/* Every statement's text must be there: a builder that ran out of memory
 * left NULL (pgr_sb_finish), which the arena's sticky flag also shows. */
static int check_statements(const pgrest_statements *st, pgrest_error *err)
{
    for (size_t i = 0; i < st->n; i++)
        if (st->items[i].sql == NULL)
            return pgr_error_oom(err);
    return PGREST_OK;
}

int pgrest_emit_sql(pgrest_ctx *ctx, pgrest_arena *arena,
                    const pgrest_query_plan *plan, pgrest_statements **out,
                    pgrest_error *err)
{
    if (ctx == NULL || arena == NULL || plan == NULL || out == NULL)
        return pgr_error_misuse(err, "pgrest_emit_sql");
    *out = NULL;
    /* parsing does not authenticate: statements without a role would run
     * as the authenticator */
    if (plan->api == NULL || plan->api->role == NULL)
        return pgr_error_misuse(err, "pgrest_emit_sql: the request has no identity "
                                     "(pgrest_authenticate or pgrest_auth_supply, then "
                                     "pgrest_request_set_auth, before pgrest_parse_request)");
    int rc = pgr_stage_end(arena, PGREST_OK, err);
    if (rc == PGREST_OK)
        rc = emit_sql(ctx, arena, plan, out, err);
    if (rc == PGREST_OK)
        rc = check_statements(*out, err);
    rc = pgr_stage_end(arena, rc, err);
    if (rc != PGREST_OK)
        *out = NULL;
    return rc;
}

pgrest_statements *pgr_statements_rewrite(pgrest_arena *a, const pgrest_statements *st,
                                          size_t extra)
{
    pgrest_statements *copy = PGR_NEW(a, pgrest_statements);
    pgr_stmt *items = PGR_NEW_ARRAY(a, pgr_stmt, st->n + extra);
    if (copy == NULL || items == NULL)
        return NULL;
    *copy = *st;
    copy->items = items;
    copy->n = 0;
    return copy;
}

size_t pgrest_statements_count(const pgrest_statements *st)
{
    return st ? st->n : 0;
}

const char *pgrest_statements_sql(const pgrest_statements *st, size_t i)
{
    return st && i < st->n ? st->items[i].sql : NULL;
}

size_t pgrest_statements_param_count(const pgrest_statements *st, size_t i)
{
    return st && i < st->n ? st->items[i].n_params : 0;
}

const char *pgrest_statements_param(const pgrest_statements *st, size_t i,
                                    size_t j)
{
    if (st == NULL || i >= st->n || j >= st->items[i].n_params)
        return NULL;
    return st->items[i].params[j];
}
