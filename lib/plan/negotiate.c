/* Output media type from Accept (PostgREST Plan.hs negotiateContent and
 * MediaType.hs): the first acceptable type in q order wins; nothing
 * acceptable is 406 PGRST107.
 *
 * The vendored types (vnd.pgrst.object, vnd.pgrst.array;nulls=stripped)
 * are builtin and cannot be overridden. Every other type is looked up as
 * lookupHandler does: with the default select, a "*" "/" "*" handler of the
 * target, then a handler of the target for that type; then an anyelement
 * handler for that type; then the builtins (application/json and "*" "/"
 * "*", text/csv, application/geo+json), which the anyelement handlers of
 * the database override. vnd.pgrst.plan looks up its `for` type, and only
 * when db-plan-enabled. */
#include <string.h>

#include "engine/stage_view.h"
#include "parse/media_type.h"
#include "plan/plan.h"
#include "util/error.h"
#include "util/strbuf.h"

/* What one Accept entry resolves to. */
typedef struct pick {
    pgr_output output;
    const char *mime;              /* media type, without charset */
    const pgr_media_handler *handler;
    bool nulls_stripped;
} pick;

/* A missing Accept is "*" "/" "*" (ApiRequest iAcceptMediaType). */
static const pgr_media_type accept_any = {
    .kind = PGR_MEDIA_ANY, .text = "*/*", .q = 1.0,
};

bool pgr_default_select(const pgr_read_node *root)
{
    /* Plan.hs hasDefaultSelect over the read plan: no embeds (not even an
     * empty one) and one select field named "*" -- `select=*`, no select,
     * or `select=count()` (a "*" field with an aggregate). A star expanded
     * into the columns for their data representations is no longer one. */
    if (root == NULL || root->embeds != NULL)
        return false;
    if (root->select_star)
        return root->fields == NULL;
    const pgr_plan_field *f = root->fields;
    return f != NULL && f->next == NULL && f->item->field.name != NULL &&
           strcmp(f->item->field.name, "*") == 0;
}

/* MediaType.toMime for the types the builtins answer with. */
static bool builtin(const pgr_media_type *m, pick *p)
{
    switch (m->kind) {
    case PGR_MEDIA_ANY:
    case PGR_MEDIA_JSON:
        p->output = PGR_OUT_JSON;
        p->mime = "application/json";
        return true;
    case PGR_MEDIA_CSV:
        p->output = PGR_OUT_CSV;
        p->mime = "text/csv";
        return true;
    case PGR_MEDIA_GEOJSON:
        p->output = PGR_OUT_GEOJSON;
        p->mime = "application/geo+json";
        return true;
    case PGR_MEDIA_NDJSON:
        /* not PostgREST's (MTOther there, 406 without a handler): pgrest's
         * newline-delimited JSON (docs/streaming.md); a database handler
         * for the type still wins, as for the other builtins */
        p->output = PGR_OUT_NDJSON;
        p->mime = "application/x-ndjson";
        return true;
    default:
        return false;
    }
}

/* The vendored JSON types (never overridden). */
static bool vendored(const pgr_media_type *m, pick *p)
{
    if (m->kind == PGR_MEDIA_OBJECT) {
        p->output = PGR_OUT_OBJECT;
        p->mime = m->nulls_stripped ? "application/vnd.pgrst.object+json;nulls=stripped"
                                    : "application/vnd.pgrst.object+json";
    } else if (m->kind == PGR_MEDIA_ARRAY) {
        p->output = PGR_OUT_JSON;
        p->mime = "application/vnd.pgrst.array+json;nulls=stripped";
    } else {
        return false;
    }
    p->nulls_stripped = m->nulls_stripped;
    return true;
}

/* lookupHandler */
static bool lookup(const pgr_schema_cache *sc, const pgr_negotiation_target *t,
                   const pgr_media_type *m, pick *p)
{
    const pgr_media_handler *h = NULL;
    if (t->default_select && t->name != NULL) {
        h = pgr_find_media_handler(sc, t->schema, t->name, "*/*");
        if (h == NULL)
            h = pgr_find_media_handler(sc, t->schema, t->name, m->text);
    }
    if (h == NULL)
        h = pgr_find_media_handler(sc, NULL, NULL, m->text);
    if (h != NULL) {
        p->output = PGR_OUT_CUSTOM;
        p->handler = h;
        p->mime = h->resolved_media_type;
        return true;
    }
    return builtin(m, p);
}

/* EXPLAIN options of a vnd.pgrst.plan type, in MediaType.hs's order. */
static const char *explain_options(pgrest_arena *a, const char *mime_opts)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, 32);
    for (const char *p = mime_opts; p != NULL && *p;) {
        size_t k = strcspn(p, "|");
        pgr_sb_puts(&sb, ", ");
        for (size_t i = 0; i < k; i++)
            pgr_sb_putc(&sb, (char)(p[i] - 'a' + 'A'));
        p += k + (p[k] == '|');
    }
    return pgr_sb_finish(&sb);
}

/* MTVndPlan: the handler of the `for` type, the plan as Content-Type. */
static bool plan_pick(pgrest_ctx *ctx, pgrest_arena *a, const pgr_schema_cache *sc,
                      const pgr_negotiation_target *t, const pgr_media_type *m,
                      pick *p, pgrest_query_plan *plan)
{
    if (!pgr_cfg(ctx, a)->db_plan_enabled)
        return false;
    const pgr_media_type *inner = pgr_parse_media_type(a, m->plan_for ? m->plan_for
                                                                      : "application/json");
    if (inner == NULL || !(vendored(inner, p) || lookup(sc, t, inner, p)))
        return false;
    plan->explain_options = explain_options(a, pgr_media_plan_options(a, m));
    plan->explain = true;
    plan->explain_text = m->plan_text;
    p->mime = pgr_media_type_mime(a, m);
    return true;
}

/* MediaType.toContentType: charset except for octet-stream and the types
 * PostgREST does not know (MTOther). */
static const char *content_type(pgrest_arena *a, const char *mime)
{
    /* nearly every request's answer: no parse, no copy */
    if (mime != NULL && strcmp(mime, "application/json") == 0)
        return "application/json; charset=utf-8";
    const pgr_media_type *m = pgr_parse_media_type(a, mime);
    if (m == NULL || m->kind == PGR_MEDIA_OCTET || m->kind == PGR_MEDIA_OTHER)
        return mime;
    pgr_sb sb;
    pgr_sb_init(&sb, a, strlen(mime) + 16);
    pgr_sb_puts(&sb, mime);
    pgr_sb_puts(&sb, "; charset=utf-8");
    return pgr_sb_finish(&sb);
}

/* PostgREST reads the body in binary format: bytea is the bytes, text,
 * json and xml their text; any other base type (jsonb's version byte
 * included) goes through its send function. */
static bool text_like(const char *base)
{
    static const char *const types[] = {"text", "json", "xml", "character varying",
                                        "character", "name"};
    for (size_t i = 0; base != NULL && i < sizeof types / sizeof types[0]; i++)
        if (strcmp(base, types[i]) == 0)
            return true;
    return false;
}

static void apply(pgrest_arena *a, const pick *p, pgrest_query_plan *plan)
{
    plan->output = p->output;
    plan->content_type = content_type(a, p->mime);
    plan->nulls_stripped = p->nulls_stripped;
    plan->handler = p->handler;
    /* an EXPLAIN returns no body: the handler's call stays as PostgREST
     * writes it (SqlFragment.hs customFuncF), so the plan and its cost
     * are the same */
    plan->body_bytes = !plan->explain && p->handler != NULL &&
                       !text_like(p->handler->base_type);
}

int pgr_not_acceptable(pgrest_arena *a, const pgr_media_type *accept, pgrest_error *err)
{
    pgr_sb sb;
    pgr_sb_init(&sb, a, 64);
    pgr_sb_puts(&sb, "None of these media types are available: ");
    for (const pgr_media_type *m = accept; m != NULL; m = m->next) {
        if (m != accept)
            pgr_sb_puts(&sb, ", ");
        pgr_sb_puts(&sb, pgr_media_type_mime(a, m));
    }
    return pgr_error(err, 406, "PGRST107", pgr_sb_finish(&sb), NULL, NULL);
}

int pgr_negotiate_for(pgrest_ctx *ctx, pgrest_arena *a,
                      const pgrest_api_request *api,
                      const pgr_negotiation_target *target,
                      pgrest_query_plan *plan, pgrest_error *err)
{
    const pgr_media_type *accept = api->accept ? api->accept : &accept_any;
    for (const pgr_media_type *m = accept; m != NULL; m = m->next) {
        pick p = {0};
        bool ok = m->kind == PGR_MEDIA_PLAN
                      ? plan_pick(ctx, a, plan->schema, target, m, &p, plan)
                      : vendored(m, &p) || lookup(plan->schema, target, m, &p);
        if (ok) {
            apply(a, &p, plan);
            return PGREST_OK;
        }
    }
    return pgr_not_acceptable(a, accept, err);
}

int pgr_negotiate(pgrest_ctx *ctx, pgrest_arena *a,
                  const pgrest_api_request *api, pgrest_query_plan *plan,
                  pgrest_error *err)
{
    plan->output = PGR_OUT_JSON;
    plan->content_type = "application/json; charset=utf-8";
    /* Routines negotiate in plan/call_plan.c, knowing the result type. */
    if (api->action == PGR_ACTION_CALL)
        return PGREST_OK;
    pgr_negotiation_target t = {
        .schema = api->schema,
        .name = api->name,
        .default_select = pgr_default_select(plan->read),
    };
    return pgr_negotiate_for(ctx, a, api, &t, plan, err);
}
