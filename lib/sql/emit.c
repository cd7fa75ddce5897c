/* plan -> statements (PostgREST Query.hs mainQuery + Statements.hs). */
#include <string.h>

#include "context.h"
#include "sql/emit_filter.h"
#include "sql/emit_main.h"
#include "sql/emit_preamble.h"
#include "sql/emit_read.h"
#include "sql/statements.h"
#include "util/error.h"


/* SqlFragment.hs asJsonF / asJsonSingleF: nulls=stripped strips the
 * aggregate once (which also drops json_agg's separators). */
const char *pgr_body_expression(const pgrest_query_plan *plan)
{
    switch (plan->output) {
    case PGR_OUT_NONE:
        return "''::text";
    case PGR_OUT_OBJECT:
        return plan->nulls_stripped
                   ? "coalesce(json_strip_nulls(json_agg(_postgrest_t)->0), 'null')"
                   : "coalesce(json_agg(_postgrest_t)->0, 'null')";
    case PGR_OUT_GEOJSON:
        /* PostgREST SqlFragment asGeoJsonF */
        return "json_build_object('type', 'FeatureCollection', 'features',"
               " coalesce(json_agg(ST_AsGeoJSON(_postgrest_t)::json), '[]'))";
    case PGR_OUT_NDJSON:
        /* one JSON object per line, each line ended (docs/streaming.md) */
        return "coalesce(string_agg(to_json(_postgrest_t)::text, '\n') || '\n', '')";
    case PGR_OUT_CSV:
        /* SqlFragment.hs asCsvF: the header from the first row of
         * pgrst_source; the line ends are literals (constants to the
         * planner, as PostgREST's) */
        return "(SELECT coalesce(string_agg(a.k, ','), '') FROM (SELECT json_object_keys(r)::text AS k"
               " FROM (SELECT row_to_json(hh) AS r FROM pgrst_source AS hh LIMIT 1) s) a)"
               " || '\n' || coalesce(string_agg(substring(_postgrest_t::text, 2,"
               " length(_postgrest_t::text) - 2), '\n'), '')";
    default:
        return plan->nulls_stripped
                   ? "coalesce(json_strip_nulls(json_agg(_postgrest_t)), '[]')"
                   : "coalesce(json_agg(_postgrest_t), '[]')";
    }
}

/* SqlFragment.hs customFuncF: the handler over the rows cast to the
 * target's row type (the rows as they are for anyelement), or over the
 * single value of a scalar function; wrapped in the base type's send
 * function when the body is read as bytes (plan->body_bytes). */
static void emit_custom_body(pgr_sql *q, const pgrest_query_plan *plan)
{
    const pgr_media_handler *h = plan->handler;
    bool send = plan->body_bytes && h->send_fn != NULL &&
                (h->base_type == NULL || strcmp(h->base_type, "bytea") != 0);
    if (send) {
        /* introspection prints regproc with search_path '': unqualified
         * names are pg_catalog's */
        if (strchr(h->send_fn, '.') == NULL)
            pgr_sql_qualified(q, "pg_catalog", h->send_fn);
        else
            pgr_sql_qualified_text(q, h->send_fn);
        pgr_sql_put(q, "(");
    }
    pgr_sql_qualified(q, h->handler_schema, h->handler_name);
    if (plan->handler_on_scalar) {
        pgr_sql_put(q, "(_postgrest_t.pgrst_scalar)");
    } else if (h->any_element) {
        pgr_sql_put(q, "(_postgrest_t)");
    } else {
        pgr_sql_put(q, "(_postgrest_t::");
        pgr_sql_qualified(q, h->target_schema, h->target_name);
        pgr_sql_put(q, ")");
    }
    if (send)
        pgr_sql_put(q, ")");
}

void pgr_emit_body(pgr_sql *q, const pgrest_query_plan *plan)
{
    if (plan->output == PGR_OUT_CUSTOM && plan->handler != NULL)
        emit_custom_body(q, plan);
    else
        pgr_sql_put(q, pgr_body_expression(plan));
}

bool pgr_count_needs_cte(const pgrest_query_plan *plan)
{
    const pgr_read_node *root = plan->read;
    return plan->max_rows >= 0 || root->offset > 0 || root->limit >= 0;
}

int pgr_emit_count_total(pgr_sql *q, const pgrest_query_plan *plan,
                         bool cap_estimate, const char *page_count,
                         pgrest_error *err)
{
    bool count = plan->count == PGR_PREF_COUNT_EXACT ||
                 plan->count == PGR_PREF_COUNT_ESTIMATED;
    bool cte = count && pgr_count_needs_cte(plan);
    if (cte) {
        pgr_sql_put(q, ", pgrst_source_count AS (");
        int rc = pgr_emit_count_node(q, plan->read, err);
        if (rc != PGREST_OK)
            return rc;
        /* estimated: count exactly only up to db-max-rows + 1 */
        if (cap_estimate && plan->count == PGR_PREF_COUNT_ESTIMATED &&
            plan->max_rows >= 0)
            pgr_emit_range(q, 0, plan->max_rows + 1, -1);
        pgr_sql_put(q, ")");
    }
    pgr_sql_put(q, " SELECT ");
    pgr_sql_put(q, cte ? "(SELECT pg_catalog.count(*) FROM pgrst_source_count)"
                   : count ? page_count : "null::bigint");
    pgr_sql_put(q, " AS total_result_set, ");
    pgr_sql_put(q, page_count);
    pgr_sql_put(q, " AS page_total, ");
    return PGREST_OK;
}

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
           !st->end_after_check;
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
