/* Main statement of GET/HEAD / (PostgREST Query/Statements.hs and
 * SchemaCache.hs accessibleTables / accessibleFuncs / schemaDescription).
 * The schema COMMENT and, with openapi-mode=follow-privileges, the
 * relations and functions the request role may use are read inside the
 * request transaction, after the role and search path are set, so the
 * whole request stays one round trip. The document is built from those
 * and the schema cache in openapi/openapi.c. */
#include "engine/stage_view.h"
#include "sql/emit_main.h"
#include "util/error.h"

#define ROOT_HEAD "SELECT null::bigint AS total_result_set, 1::bigint AS page_total, "

/* PostgREST accessibleTables: any privilege on the relation or one of its
 * columns, or membership in the owner role. */
static const char accessible_tables[] =
    ", 'tables', (SELECT coalesce(pg_catalog.json_agg(c.relname), '[]')"
    " FROM pg_catalog.pg_class c JOIN pgrst_ns ns ON c.relnamespace = ns.oid"
    " WHERE c.relkind IN ('v','r','m','f','p') AND NOT c.relispartition"
    " AND (pg_catalog.pg_has_role(c.relowner, 'USAGE')"
    " OR pg_catalog.has_table_privilege(c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')"
    " OR pg_catalog.has_any_column_privilege(c.oid, 'SELECT, INSERT, UPDATE, REFERENCES')))";

/* PostgREST accessibleFuncs (SqlFragment.hs baseFuncSqlQuery): the
 * functions the role may EXECUTE, read live with the request's search path
 * so argument types print as type::regtype::text does there. Arguments
 * come from unnest(proargnames, proargtypes, proargmodes) exactly as
 * PostgREST pairs them; functions with unnamed arguments are kept only
 * when callable (one unnamed bytea/json/jsonb/text/xml argument), and
 * trigger functions, procedures and aggregates are left out. Ordered by
 * oid: PostgREST's path map keeps the first overload. (The multi-array
 * unnest is FROM-clause syntax and cannot be schema-qualified.) */
static const char accessible_functions[] =
    ", 'functions', (SELECT coalesce(pg_catalog.json_agg(pg_catalog.json_build_object("
    "'name', p.proname, 'description', d.description, 'volatility', p.provolatile,"
    " 'params', coalesce(a.args, '[]')) ORDER BY p.oid), '[]')"
    " FROM pg_catalog.pg_proc p JOIN pgrst_ns ns ON p.pronamespace = ns.oid"
    " LEFT JOIN LATERAL (SELECT pg_catalog.json_agg(pg_catalog.json_build_object("
    "'name', coalesce(x.name, ''), 'type', x.type::pg_catalog.regtype::text,"
    " 'required', x.idx <= (p.pronargs - p.pronargdefaults),"
    " 'variadic', coalesce(x.mode = 'v', false)) ORDER BY x.idx) AS args,"
    " CASE pg_catalog.count(*) - pg_catalog.count(x.name) WHEN 0 THEN true"
    " WHEN 1 THEN (pg_catalog.array_agg(x.type))[1] IN ('pg_catalog.bytea'::pg_catalog.regtype,"
    " 'pg_catalog.json'::pg_catalog.regtype, 'pg_catalog.jsonb'::pg_catalog.regtype,"
    " 'pg_catalog.text'::pg_catalog.regtype, 'pg_catalog.xml'::pg_catalog.regtype)"
    " ELSE false END AS callable"
    " FROM unnest(p.proargnames, p.proargtypes, p.proargmodes)"
    " WITH ORDINALITY AS x(name, type, mode, idx) WHERE x.type IS NOT NULL) a ON true"
    " LEFT JOIN pg_catalog.pg_description d ON d.objoid = p.oid"
    " AND d.classoid = 'pg_catalog.pg_proc'::pg_catalog.regclass"
    " WHERE p.prorettype <> 'pg_catalog.trigger'::pg_catalog.regtype"
    " AND coalesce(a.callable, true) AND p.prokind = 'f'"
    " AND pg_catalog.has_function_privilege(p.oid, 'execute'))";

static void emit_inspect(pgr_sql *q, const pgrest_ctx *ctx,
                         const pgrest_query_plan *plan)
{
    pgr_sql_put(q, "WITH pgrst_ns AS (SELECT n.oid FROM pg_catalog.pg_namespace n"
                   " WHERE n.nspname = ");
    pgr_sql_param_cast(q, plan->api->schema, "text");
    pgr_sql_put(q, ") " ROOT_HEAD "pg_catalog.json_build_object('description',"
                   " (SELECT pg_catalog.obj_description(ns.oid, 'pg_namespace') FROM pgrst_ns ns)");
    if (pgr_cfg(ctx, q->arena)->openapi_mode == PGR_OPENAPI_FOLLOW_PRIVILEGES) {
        pgr_sql_put(q, accessible_tables);
        pgr_sql_put(q, accessible_functions);
    }
    pgr_sql_put(q, ")::text AS body, " RESPONSE_GUCS);
}

int pgr_emit_main_schema_read(pgr_sql *q, const pgrest_ctx *ctx,
                              const pgrest_query_plan *plan, pgrest_error *err)
{
    (void)err;
    emit_inspect(q, ctx, plan);
    return PGREST_OK;
}
