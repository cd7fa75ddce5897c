#include "sql/emit_preamble.h"

#include <ctype.h>
#include <strings.h>
#include <string.h>

#include "plan/call_plan.h"
#include "util/strbuf.h"

static void set_config(pgr_sql *q, const char *name, const char *value,
                       bool *first)
{
    pgr_sql_put(q, *first ? "SELECT " : ", ");
    *first = false;
    pgr_sql_put(q, "set_config(");
    pgr_sb_put_literal(&q->sb, name);
    pgr_sql_put(q, ", ");
    pgr_sql_param(q, value);
    pgr_sql_put(q, ", true)");
}

/* "test", "public": the value PostgREST gives search_path. */
static const char *search_path(pgrest_arena *a, const pgr_config *cfg,
                               const char *schema)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, 64);
    pgr_sb_put_ident(&sb, schema);
    for (size_t i = 0; i < cfg->n_db_extra_search_path; i++) {
        pgr_sb_puts(&sb, ", ");
        pgr_sb_put_ident(&sb, cfg->db_extra_search_path[i]);
    }
    return pgr_sb_finish(&sb);
}

static char *lowercase(pgrest_arena *a, const char *s)
{
    char *r = pgr_strdup(a, s);
    for (char *p = r; p && *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return r;
}

/* Whether a later entry has kv's name: HashMap.fromList keeps the last. */
static bool repeated_later(const pgr_kv *kv, bool ignore_case)
{
    for (const pgr_kv *p = kv->next; p != NULL; p = p->next)
        if ((ignore_case ? strcasecmp(p->name, kv->name) : strcmp(p->name, kv->name)) == 0)
            return true;
    return false;
}

/* request.headers: header names lower-cased; of repeated headers the last
 * one wins, like the HashMap.fromList PostgREST encodes them from. */
static const char *headers_json(pgrest_arena *a, const pgrest_request *req)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, 256);
    pgr_sb_putc(&sb, '{');
    bool first = true;
    for (const pgr_kv *h = req->headers; h; h = h->next) {
        if (repeated_later(h, true) || strcasecmp(h->name, "Cookie") == 0)
            continue;
        if (!first)
            pgr_sb_putc(&sb, ',');
        first = false;
        pgr_sb_put_json_string(&sb, lowercase(a, h->name));
        pgr_sb_putc(&sb, ':');
        pgr_sb_put_json_string(&sb, h->value);
    }
    pgr_sb_putc(&sb, '}');
    return pgr_sb_finish(&sb);
}

/* request.cookies: as request.headers, a repeated name keeps its last value
 * (names are case-sensitive here). */
static const char *cookies_json(pgrest_arena *a, const pgr_kv *cookies)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, 64);
    pgr_sb_putc(&sb, '{');
    bool first = true;
    for (const pgr_kv *c = cookies; c; c = c->next) {
        if (repeated_later(c, false))
            continue;
        if (!first)
            pgr_sb_putc(&sb, ',');
        first = false;
        pgr_sb_put_json_string(&sb, c->name);
        pgr_sb_putc(&sb, ':');
        pgr_sb_put_json_string(&sb, c->value);
    }
    pgr_sb_putc(&sb, '}');
    return pgr_sb_finish(&sb);
}

/* A called function's SET options that introspection kept (those matching
 * db-hoisted-tx-settings) apply to the whole transaction (PostgREST
 * ref/transactions "Hoisted Function Settings"). */
static void emit_function_settings(pgr_sql *q, const pgrest_query_plan *plan,
                                   bool *first)
{
    const pgr_routine *r = plan->call ? plan->call->routine : NULL;
    for (size_t i = 0; r != NULL && i < r->n_settings; i++)
        set_config(q, r->setting_names[i], r->setting_values[i], first);
}

static const pgr_role_settings *role_settings(const pgrest_query_plan *plan)
{
    return pgr_find_role_settings(plan->schema, plan->api->role);
}

/* ALTER ROLE ... SET of the impersonated role (PostgREST PreQuery.hs
 * roleSettingsSql). They go before the role switch, so a GRANT SET ON
 * PARAMETER given to the authenticator is enough (PostgREST #3045). */
static void emit_role_settings(pgr_sql *q, const pgrest_query_plan *plan,
                               bool *first)
{
    const pgr_role_settings *rs = role_settings(plan);
    for (size_t i = 0; rs != NULL && i < rs->n_settings; i++)
        set_config(q, rs->setting_names[i], rs->setting_values[i], first);
}

/* Config/Database.hs toIsolationLevel: any other value is read committed. */
const char *pgr_emit_isolation_level(const pgrest_query_plan *plan)
{
    const char *level = plan->isolation_level;
    if (level == NULL) {
        const pgr_role_settings *rs = role_settings(plan);
        level = rs != NULL ? rs->isolation_level : NULL;
    }
    if (level != NULL && strcmp(level, "repeatable read") == 0)
        return "REPEATABLE READ";
    if (level != NULL && strcmp(level, "serializable") == 0)
        return "SERIALIZABLE";
    return NULL;
}

/* PostgREST txVarQuery's order: search_path, role settings, role, claims,
 * method, path, headers, cookies, timezone, function settings, app
 * settings. */
int pgr_emit_settings(pgr_sql *q, const pgrest_ctx *ctx,
                      const pgrest_query_plan *plan, pgrest_error *err)
{
    (void)err;
    const pgrest_api_request *api = plan->api;
    pgrest_arena *a = q->arena;
    bool first = true;
    set_config(q, "search_path", search_path(a, pgr_cfg(ctx, a), api->schema), &first);
    emit_role_settings(q, plan, &first);
    set_config(q, "role", api->role, &first);
    set_config(q, "request.jwt.claims", api->jwt_claims, &first);
    set_config(q, "request.method", api->method, &first);
    set_config(q, "request.path", api->path, &first);
    set_config(q, "request.headers", headers_json(a, api->raw), &first);
    set_config(q, "request.cookies", cookies_json(a, api->cookies), &first);
    if (api->prefs.timezone != NULL)
        set_config(q, "timezone", api->prefs.timezone, &first);
    emit_function_settings(q, plan, &first);
    for (const pgr_kv *s = pgr_cfg(ctx, a)->app_settings; s; s = s->next)
        set_config(q, s->name, s->value, &first);
    return PGREST_OK;
}

bool pgr_emit_pre_request(pgr_sql *q, const pgrest_ctx *ctx)
{
    const char *fn = pgr_cfg(ctx, q->arena)->db_pre_request;
    if (fn == NULL)
        return false;
    pgr_sql_put(q, "SELECT ");
    pgr_sql_qualified_text(q, fn);
    pgr_sql_put(q, "()");
    return true;
}
