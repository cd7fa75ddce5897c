/* The statements of a streamed body (emit_import.h). */
#include "sql/emit_import.h"

#include <string.h>

#include "exec/stream.h"
#include "plan/mutate_plan.h"
#include "sql/emit_main.h"
#include "sql/emit_write.h"
#include "util/error.h"
#include "util/strbuf.h"

bool pgr_import_eligible(const pgrest_query_plan *plan)
{
    const pgr_mutate_plan *mp = plan->mutate;
    return plan->action == PGR_ACTION_CREATE && mp != NULL && mp->nested == NULL &&
           !plan->explain && !plan->in_batch &&
           plan->api != NULL && plan->api->target == PGR_TARGET_RELATION;
}

bool pgr_import_representation_streams(const pgrest_query_plan *plan)
{
    const pgr_mutate_plan *mp = plan->mutate;
    pgr_stream_format format;
    return mp->representation && !mp->singular && !mp->check_max_affected && !mp->location &&
           plan->action == PGR_ACTION_CREATE && plan->read != NULL &&
           pgr_stream_format_of(plan, &format) &&
           (plan->output == PGR_OUT_JSON || plan->output == PGR_OUT_NDJSON);
}

/* format_type's names of PostgreSQL's own types, modifiers left out */
static const char *const builtin_types[] = {
    "bigint", "bit", "bit varying", "boolean", "bytea", "character", "character varying",
    "cidr", "date", "double precision", "inet", "integer", "interval", "json", "jsonb",
    "macaddr", "macaddr8", "money", "numeric", "oid", "real", "smallint", "text",
    "time with time zone", "time without time zone", "timestamp with time zone",
    "timestamp without time zone", "tsquery", "tsvector", "uuid", "xml",
};

static bool builtin_type(const char *t)
{
    char name[64];
    size_t n = 0;
    int depth = 0;
    for (; *t != '\0'; t++) {
        if (*t == '(' || *t == ')') {
            depth += *t == '(' ? 1 : -1;
            continue;
        }
        if (depth > 0)
            continue;
        if (n + 1 == sizeof name)
            return false;
        name[n++] = *t;
    }
    while (n >= 2 && name[n - 2] == '[' && name[n - 1] == ']')
        n -= 2;
    name[n] = '\0';
    for (size_t i = 0; i < sizeof builtin_types / sizeof builtin_types[0]; i++)
        if (strcmp(name, builtin_types[i]) == 0)
            return true;
    return false;
}

const char *pgr_import_column_type(const pgr_schema_cache *sc, const pgr_column *c,
                                   bool *cast)
{
    const char *own = pgr_record_column_type(sc, c);
    *cast = !builtin_type(own);
    if (!*cast)
        return own;
    return pgr_record_column_is_json(sc, c) ? c->type : "text";
}

/* The table's columns: the body's own (pgr_import_column_type), or one
 * json object per row. */
static const char *create_table(pgrest_arena *a, const pgrest_query_plan *plan)
{
    pgr_sql q;
    pgr_sql_init(&q, a);
    pgr_sql_put(&q, "CREATE TEMPORARY TABLE pgrst_import (");
    for (size_t i = 0; i < plan->n_streamed_columns; i++) {
        const pgr_column *c = plan->streamed_columns[i];
        bool cast;
        pgr_sql_put(&q, i > 0 ? ", " : "");
        pgr_sql_ident(&q, c->name);
        pgr_sql_put(&q, " ");
        pgr_sql_put(&q, pgr_import_column_type(plan->schema, c, &cast));
    }
    if (plan->streamed_columns == NULL)
        pgr_sql_put(&q, "json_data json");
    pgr_sql_put(&q, ") ON COMMIT DROP");
    return pgr_sql_ok(&q) ? q.sb.data : NULL;
}

#define SAVED_TIMEOUT "'pgrst.import_statement_timeout'"

static const pgr_stmt lift_timeout = {
    PGR_STMT_SETTINGS,
    "SELECT pg_catalog.set_config(" SAVED_TIMEOUT ", "
    "pg_catalog.current_setting('statement_timeout'), true), "
    "pg_catalog.set_config('statement_timeout', '0', true)",
    NULL, 0, false};

static const pgr_stmt restore_timeout = {
    PGR_STMT_SETTINGS,
    "SELECT pg_catalog.set_config('statement_timeout', "
    "pg_catalog.current_setting(" SAVED_TIMEOUT "), true)",
    NULL, 0, false};

/* Finding the failed row (pgr_row_finder): the write runs after a
 * savepoint, so that its failure leaves the rows' table; run again with
 * each row numbered as it goes to the INSERT (a sequence's nextval, which
 * no rollback undoes), the failure leaves the failing row's number in the
 * sequence. An error raised once every row went (a foreign key's check,
 * an AFTER trigger's) finds the sequence at 0, set by the last branch,
 * which PostgreSQL only reaches after the rows: no row is named then. */
#define ROW_SEQUENCE "pg_temp.pgrst_import_row"
#define ROWS_SAVEPOINT "pgrst_import_rows"
#define AGAIN_SAVEPOINT "pgrst_import_again"

static const pgr_stmt rows_savepoint = {PGR_STMT_BEGIN, "SAVEPOINT " ROWS_SAVEPOINT, NULL, 0,
                                        false};

#define TABLE_SOURCE " FROM " PGR_IMPORT_TABLE ")"
#define NUMBERED_SOURCE                                                                    \
    " FROM (SELECT pgrst_rows.*, pg_catalog.nextval('" ROW_SEQUENCE "') AS pgrst_import_row" \
    " FROM " PGR_IMPORT_TABLE " pgrst_rows UNION ALL (SELECT pgrst_rows.*, 0 FROM "        \
    PGR_IMPORT_TABLE " pgrst_rows LIMIT pg_catalog.setval('" ROW_SEQUENCE "', 0)))"        \
    " pgrst_import)"

/* The main statement reading its rows numbered: the one FROM of the rows'
 * table (sql/emit_mutate.c from_json_body) replaced; NULL when there is
 * none or the arena is exhausted. */
static const char *numbered_rows(pgrest_arena *a, const char *main)
{
    const char *at = strstr(main, TABLE_SOURCE);
    if (at == NULL || strstr(at + 1, TABLE_SOURCE) != NULL)
        return NULL;
    return pgr_asprintf(a, "%.*s" NUMBERED_SOURCE "%s", (int)(at - main), main,
                        at + strlen(TABLE_SOURCE));
}

static const pgr_stmt finder_ask[] = {
    {PGR_STMT_BEGIN, "ROLLBACK TO SAVEPOINT " AGAIN_SAVEPOINT, NULL, 0, false},
    {PGR_STMT_BEGIN, "SELECT last_value FROM " ROW_SEQUENCE " WHERE is_called", NULL, 0,
     false},
};

/* NULL when main cannot be numbered (the finder is a nicety: the error
 * stands without it) or the arena is exhausted. */
static const pgr_row_finder *row_finder(pgrest_arena *a, const pgr_stmt *main, size_t at)
{
    const char *numbered = numbered_rows(a, main->sql);
    pgr_stmt *again = PGR_NEW_ARRAY(a, pgr_stmt, 4);
    pgr_row_finder *f = PGR_NEW(a, pgr_row_finder);
    if (numbered == NULL || again == NULL || f == NULL)
        return NULL;
    again[0] = (pgr_stmt){PGR_STMT_BEGIN, "ROLLBACK TO SAVEPOINT " ROWS_SAVEPOINT, NULL, 0,
                          false};
    /* the request's role makes it: its transaction drops it */
    again[1] = (pgr_stmt){PGR_STMT_BEGIN,
                          "CREATE TEMPORARY SEQUENCE pgrst_import_row MINVALUE 0 START 1",
                          NULL, 0, false};
    again[2] = (pgr_stmt){PGR_STMT_BEGIN, "SAVEPOINT " AGAIN_SAVEPOINT, NULL, 0, false};
    again[3] = (pgr_stmt){PGR_STMT_MAIN, numbered, main->params, main->n_params, false};
    *f = (pgr_row_finder){at, again, 4, finder_ask, sizeof finder_ask / sizeof finder_ask[0]};
    return f;
}

/* A streamed representation, once written: what a commit would check
 * is checked now, then its rows come back in the order they went in (a
 * table written by one statement, never scanned from elsewhere) */
static const pgr_stmt constraints_now = {PGR_STMT_BEGIN, "SET CONSTRAINTS ALL IMMEDIATE", NULL,
                                         0, false};
static const pgr_stmt returned_rows = {PGR_STMT_MAIN, "SELECT line FROM " PGR_RETURNED_TABLE,
                                       NULL, 0, false};

/* Typed rows of a plain insert that returns nothing and answers no
 * Location, into a table where COPY does what the INSERT does
 * (pgr_table.copy_as_insert), each column its own type: COPY writes them
 * into the table itself, with no temporary table and no INSERT. */
static bool copies_into_table(const pgrest_query_plan *plan)
{
    const pgr_mutate_plan *mp = plan->mutate;
    /* resolution_applied: the INSERT has an ON CONFLICT (plan_conflict) */
    if (plan->streamed_columns == NULL || !mp->table->copy_as_insert || mp->representation ||
        mp->location || mp->count_inserted || mp->resolution_applied ||
        plan->action != PGR_ACTION_CREATE)
        return false;
    for (size_t i = 0; i < plan->n_streamed_columns; i++)
        if (pgr_record_column_transformed(plan->schema, plan->streamed_columns[i]))
            return false;
    return true;
}

static const char *copy_into_table(pgrest_arena *a, const pgrest_query_plan *plan)
{
    const pgr_table *t = plan->mutate->table;
    pgr_sql q;
    pgr_sql_init(&q, a);
    pgr_sql_put(&q, "COPY ");
    pgr_sql_qualified(&q, t->schema, t->name);
    pgr_sql_put(&q, " (");
    for (size_t i = 0; i < plan->n_streamed_columns; i++) {
        pgr_sql_put(&q, i > 0 ? ", " : "");
        pgr_sql_ident(&q, plan->streamed_columns[i]->name);
    }
    pgr_sql_put(&q, ") FROM STDIN");
    return pgr_sql_ok(&q) ? q.sb.data : NULL;
}

/* In the INSERT's place after a COPY into the table: what mainWrite
 * answers for it, the count being the COPY's ($1), the response GUCs
 * those its triggers set. */
static pgr_stmt copied_answer(pgrest_arena *a)
{
    const char **params = PGR_NEW_ARRAY(a, const char *, 1);
    if (params != NULL)
        params[0] = "0";
    return (pgr_stmt){PGR_STMT_MAIN,
                      "SELECT '' AS total_result_set, $1::bigint AS page_total, " NO_LOCATION
                      " AS response_location, '' AS body, " RESPONSE_GUCS ", " NOT_INSERTED,
                      params, 1, false};
}

static bool runs_before_copy(pgr_stmt_role role)
{
    return role == PGR_STMT_BEGIN || role == PGR_STMT_SETTINGS || role == PGR_STMT_PRE_REQUEST;
}

/* The tables the rows go through, made and granted by the connection's
 * role: none when COPY writes into the table itself. */
static size_t setup_tables(pgr_stmt *open, size_t n, const char *create,
                           const pgrest_query_plan *plan, bool direct)
{
    if (direct)
        return n;
    open[n++] = (pgr_stmt){PGR_STMT_BEGIN, create, NULL, 0, false};
    open[n++] = (pgr_stmt){PGR_STMT_BEGIN,
                           "GRANT INSERT, SELECT ON " PGR_IMPORT_TABLE " TO PUBLIC", NULL, 0,
                           false};
    if (plan->streamed_representation) {
        open[n++] = (pgr_stmt){PGR_STMT_BEGIN, "CREATE TEMPORARY TABLE pgrst_returned (line text)"
                                               " ON COMMIT DROP", NULL, 0, false};
        open[n++] = (pgr_stmt){PGR_STMT_BEGIN,
                               "GRANT INSERT, SELECT ON " PGR_RETURNED_TABLE " TO PUBLIC", NULL,
                               0, false};
    }
    return n;
}

/* The write after the COPY, in rest: the INSERT after its savepoint, with
 * its row finder (and, a streamed representation, its rows read back);
 * or, the COPY having written into the table, the answer in its place. */
static void place_write(pgrest_arena *a, pgrest_statements *rest, pgr_stmt s,
                        pgr_import_sql *out, bool direct)
{
    if (direct) {
        pgr_stmt answer = copied_answer(a);
        out->copied_rows = answer.params;
        rest->items[rest->n++] = answer;
        return;
    }
    rest->items[rest->n++] = rows_savepoint;
    rest->find_row = row_finder(a, &s, rest->n);
    if (!rest->plan->streamed_representation) {
        rest->items[rest->n++] = s;
        return;
    }
    s.role = PGR_STMT_GUCS;
    rest->items[rest->n++] = s;
    rest->items[rest->n++] = constraints_now;
    rest->items[rest->n++] = returned_rows;
}

int pgr_emit_import(pgrest_arena *a, const pgrest_statements *st, pgr_import_sql *out,
                    pgrest_error *err)
{
    *out = (pgr_import_sql){0};
    const pgrest_query_plan *plan = st->plan;
    bool direct = copies_into_table(plan);
    pgr_stmt *open = PGR_NEW_ARRAY(a, pgr_stmt, st->n + 5);
    pgrest_statements *rest = pgr_statements_rewrite(a, st, 4);
    const char *create = create_table(a, plan);
    out->copy = direct ? copy_into_table(a, plan) : "COPY " PGR_IMPORT_TABLE " FROM STDIN";
    out->copy_table = direct ? plan->mutate->table->name : "pgrst_import";
    if (st->n == 0 || st->items[0].role != PGR_STMT_BEGIN)
        return pgr_error_internal(err, "a streamed body's statements have no BEGIN");
    if (open == NULL || rest == NULL || create == NULL || out->copy == NULL)
        return pgr_error_oom(err);
    open[0] = st->items[0];
    size_t n = out->n_setup = setup_tables(open, 1, create, plan, direct);
    rest->items[rest->n++] = restore_timeout;
    for (size_t i = 1; i < st->n; i++) {
        pgr_stmt s = st->items[i];
        s.prepare = false;
        if (runs_before_copy(s.role))
            open[n++] = s;
        else if (s.role != PGR_STMT_MAIN)
            rest->items[rest->n++] = s;
        else
            place_write(a, rest, s, out, direct);
    }
    if (direct && out->copied_rows == NULL)
        return pgr_error_oom(err);
    open[n++] = lift_timeout;
    out->open = open;
    out->n_open = n;
    out->rest = rest;
    return PGREST_OK;
}
