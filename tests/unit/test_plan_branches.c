/* Branches of PostgREST's Plan.hs checked one by one.
 *
 * Which error the planner reports when a request has several problems:
 * the order of the checks in PostgREST's Plan.hs (readPlan's stages
 * addFilters .. addRels .. addRelatedOrders, validateAggFunctions,
 * addToManyOrderSelects; wrappedReadPlan / mutateReadPlan / callReadPlan:
 * findTable / findProc, readPlan, mutatePlan, negotiateContent, the strict
 * preferences, max-affected). Each row has two or more problems and the
 * error PostgREST's source reaches first; the texts are Error.hs's.
 * Planned against the unit snapshot, no database. */
#include <check.h>

#include "check_run.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/context.h"
#include "plan/plan.h"
#include "util/arena.h"

typedef enum cfg_kind { CFG_DEFAULT, CFG_AGGREGATES, CFG_KINDS } cfg_kind;

static pgrest_ctx *contexts[CFG_KINDS];

static void set(pgrest_ctx *ctx, const char *k, const char *v)
{
    pgrest_error err = {0};
    ck_assert_msg(pgrest_ctx_set(ctx, k, v, &err) == PGREST_OK, "%s=%s", k, v);
}

static void setup(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/schema_snapshot.json", getenv("PGREST_TEST_FIXTURES"));
    for (int k = 0; k < CFG_KINDS; k++) {
        pgrest_ctx *ctx = pgrest_ctx_new();
        set(ctx, "db-schemas", "api");
        set(ctx, "db-anon-role", "web_anon");
        if (k == CFG_AGGREGATES)
            set(ctx, "db-aggregates-enabled", "true");
        pgrest_error err = {0};
        ck_assert_msg(pgrest_ctx_load_schema_file(ctx, path, &err) == PGREST_OK, "%s",
                      err.message);
        contexts[k] = ctx;
    }
}

static void teardown(void)
{
    for (int k = 0; k < CFG_KINDS; k++)
        pgrest_ctx_free(contexts[k]);
}

typedef struct order_case {
    const char *why;            /* the problems, and the stage that wins */
    cfg_kind cfg;
    const char *method, *path, *query;
    const char *headers;        /* "Name: value\n"..., or NULL */
    const char *body;
    int status;
    const char *code, *message, *details, *hint; /* NULL: not checked */
} order_case;

static const order_case cases[] = {
    /* readPlan: addRelatedOrders (PGRST118) runs before
     * validateAggFunctions (PGRST123) */
    {"related order on a to-many embed + aggregates disabled", CFG_DEFAULT,
     "GET", "/artists", "select=id,albums(id),count()&order=albums(id)", NULL, NULL,
     400, "PGRST118", "A related order on 'albums' is not possible",
     "'artists' and 'albums' do not form a many-to-one or one-to-one relationship", NULL},
    {"related order on a relation not embedded + aggregates disabled", CFG_DEFAULT,
     "GET", "/artists", "select=id,count()&order=albums(id)", NULL, NULL,
     400, "PGRST108", "'albums' is not an embedded resource in this request", NULL,
     "Verify that 'albums' is included in the 'select' query parameter."},
    /* ... and validateAggFunctions before addToManyOrderSelects (PGRST127) */
    {"aggregate in a to-many spread + aggregates disabled", CFG_DEFAULT,
     "GET", "/artists", "select=id,...albums(rating.sum())", NULL, NULL,
     400, "PGRST123", "Use of aggregate functions is not allowed", NULL, NULL},
    {"aggregate in a to-many spread, aggregates enabled", CFG_AGGREGATES,
     "GET", "/artists", "select=id,...albums(rating.sum())", NULL, NULL,
     400, "PGRST127", "Feature not implemented",
     "Aggregates are not implemented for one-to-many or many-to-many spreads.", NULL},
    /* addRels (PGRST200) before validateAggFunctions */
    {"unknown embed + aggregates disabled", CFG_DEFAULT,
     "GET", "/artists", "select=count(),nope(*)", NULL, NULL,
     400, "PGRST200", "Could not find a relationship between 'artists' and 'nope' in the schema cache",
     NULL, NULL},
    /* a mutation's or call's root reads pgrst_source (addRels), which the
     * RelatedOrderNotToOne details name */
    {"related order on a to-many embed of an insert", CFG_DEFAULT,
     "POST", "/artists", "select=id,albums(id)&order=albums(id)",
     "Prefer: return=representation\n", "{\"id\":1}",
     400, "PGRST118", "A related order on 'albums' is not possible",
     "'pgrst_source' and 'albums' do not form a many-to-one or one-to-one relationship", NULL},
    {"related order on a to-many embed of a call", CFG_DEFAULT,
     "GET", "/rpc/album_tracks", "album=1&select=id,playlist_track(*)&order=playlist_track(added_at)",
     NULL, NULL,
     400, "PGRST118", "A related order on 'playlist_track' is not possible",
     "'pgrst_source' and 'playlist_track' do not form a many-to-one or one-to-one relationship",
     NULL},
    /* callReadPlan: readPlan before negotiateContent (PGRST107) */
    {"call: unknown embed + unacceptable Accept", CFG_DEFAULT,
     "GET", "/rpc/album_tracks", "album=1&select=*,nope(*)", "Accept: application/xml\n", NULL,
     400, "PGRST200", "Could not find a relationship between 'tracks' and 'nope' in the schema cache",
     NULL, NULL},
    {"call: aggregates disabled + unacceptable Accept", CFG_DEFAULT,
     "GET", "/rpc/album_tracks", "album=1&select=count()", "Accept: application/xml\n", NULL,
     400, "PGRST123", "Use of aggregate functions is not allowed", NULL, NULL},
    /* ... and findProc (PGRST202) before readPlan */
    {"call: no such overload + unknown embed", CFG_DEFAULT,
     "GET", "/rpc/album_tracks", "nope=1&select=*,nope(*)", NULL, NULL,
     404, "PGRST202", "Could not find the function api.album_tracks(nope) in the schema cache",
     NULL, NULL},
    /* a call's rows that are no table's are named by the relIdentifier;
     * the parameters' paths are checked before any relationship */
    {"call of a scalar function: unknown embed + filter on a path not embedded", CFG_DEFAULT,
     "GET", "/rpc/add", "a=1&b=2&select=*,nope(*)&other.x=eq.1", NULL, NULL,
     400, "PGRST108", "'other' is not an embedded resource in this request", NULL,
     "Verify that 'other' is included in the 'select' query parameter."},
    {"call of a scalar function: unknown embed", CFG_DEFAULT,
     "GET", "/rpc/add", "a=1&b=2&select=*,nope(*)", NULL, NULL,
     400, "PGRST200", "Could not find a relationship between 'add' and 'nope' in the schema cache",
     "Searched for a foreign key relationship between 'add' and 'nope' in the schema 'api', but no matches were found.",
     NULL},
    {"call returning a record: unknown embed", CFG_DEFAULT,
     "GET", "/rpc/track_meta", "select=*,nope(*)", NULL, NULL,
     400, "PGRST200", "Could not find a relationship between 'record' and 'nope' in the schema cache",
     NULL, NULL},
    /* readPlan: addFilters before addRels */
    {"read: unknown embed + filter on a path not embedded", CFG_DEFAULT,
     "GET", "/artists", "select=*,nope(*)&other.x=eq.1", NULL, NULL,
     400, "PGRST108", "'other' is not an embedded resource in this request", NULL, NULL},
    /* wrappedReadPlan: negotiation before the strict preferences */
    {"read: unacceptable Accept + invalid strict preference", CFG_DEFAULT,
     "GET", "/artists", "", "Accept: application/xml\nPrefer: handling=strict, nope\n", NULL,
     406, "PGRST107", "None of these media types are available: application/xml", NULL, NULL},
    /* mutateReadPlan: the strict preferences before negotiation */
    {"insert: unacceptable Accept + invalid strict preference", CFG_DEFAULT,
     "POST", "/artists", "", "Accept: application/xml\nPrefer: handling=strict, nope\n",
     "{\"id\":1}",
     400, "PGRST122", "Invalid preferences given with handling=strict", "Invalid preferences: nope",
     NULL},
    /* ... and mutatePlan (PGRST204) before both */
    {"insert: unknown column + unacceptable Accept", CFG_DEFAULT,
     "POST", "/artists", "", "Accept: application/xml\n", "{\"nope\":1}",
     400, "PGRST204", "Could not find the 'nope' column of 'artists' in the schema cache", NULL,
     NULL},
    /* ... after readPlan */
    {"insert: unknown column + unknown embed", CFG_DEFAULT,
     "POST", "/artists", "select=*,nope(*)", NULL, "{\"nope\":1}",
     400, "PGRST200", "Could not find a relationship between 'artists' and 'nope' in the schema cache",
     NULL, NULL},
    /* callReadPlan: negotiation before the strict preferences, which come
     * before max-affected on a function returning one row */
    {"call: unacceptable Accept + invalid strict preference", CFG_DEFAULT,
     "GET", "/rpc/add", "a=1&b=2", "Accept: application/xml\nPrefer: handling=strict, nope\n",
     NULL,
     406, "PGRST107", "None of these media types are available: application/xml", NULL, NULL},
    {"call: invalid strict preference + max-affected on a single row", CFG_DEFAULT,
     "GET", "/rpc/add", "a=1&b=2", "Prefer: handling=strict, max-affected=1, nope\n", NULL,
     400, "PGRST122", "Invalid preferences given with handling=strict", "Invalid preferences: nope",
     NULL},
    {"call: max-affected on a single row", CFG_DEFAULT,
     "GET", "/rpc/add", "a=1&b=2", "Prefer: handling=strict, max-affected=1\n", NULL,
     400, "PGRST128",
     "Function must return SETOF or TABLE when max-affected preference is used with handling=strict",
     NULL, NULL},
};

static void add_headers(pgrest_request *req, const char *headers)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", headers ? headers : "");
    for (char *line = buf, *nl; *line != '\0'; line = nl + 1) {
        nl = strchr(line, '\n');
        *nl = '\0';
        char *colon = strchr(line, ':');
        *colon = '\0';
        pgrest_request_add_header(req, line, colon + 2);
    }
}

static void check_field(const order_case *c, const char *what, const char *want,
                        const char *got)
{
    if (want == NULL)
        return;
    ck_assert_msg(got != NULL && strcmp(want, got) == 0, "%s: %s\n  want %s\n  got  %s",
                  c->why, what, want, got ? got : "(null)");
}

START_TEST(test_order)
{
    const order_case *c = &cases[_i];
    pgrest_ctx *ctx = contexts[c->cfg];
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = pgrest_request_new(a, c->method, c->path, c->query);
    add_headers(req, c->headers);
    if (c->body != NULL) {
        pgrest_request_add_header(req, "Content-Type", "application/json");
        pgrest_request_set_body(req, c->body, strlen(c->body));
    }
    pgrest_api_request *api;
    pgrest_query_plan *plan;
    pgrest_error err = {0};
    int rc = pgrest_parse_request(ctx, a, req, &api, &err);
    ck_assert_msg(rc == PGREST_OK, "%s: parse failed: %s %s", c->why, err.code, err.message);
    rc = pgrest_plan(ctx, a, api, &plan, &err);
    ck_assert_msg(rc != PGREST_OK, "%s: planned", c->why);
    ck_assert_msg(err.http_status == c->status, "%s: status %d (%s %s)", c->why,
                  err.http_status, err.code, err.message);
    check_field(c, "code", c->code, err.code);
    check_field(c, "message", c->message, err.message);
    check_field(c, "details", c->details, err.details);
    check_field(c, "hint", c->hint, err.hint);
    pgrest_arena_free(a);
}
END_TEST

/* Plans GET path?query on cfg; fails the test on an error. */
static const pgrest_query_plan *plan_ok(pgrest_arena *a, cfg_kind cfg, const char *path,
                                        const char *query)
{
    pgrest_request *req = pgrest_request_new(a, "GET", path, query);
    pgrest_api_request *api;
    pgrest_query_plan *plan;
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_parse_request(contexts[cfg], a, req, &api, &err), PGREST_OK);
    ck_assert_msg(pgrest_plan(contexts[cfg], a, api, &plan, &err) == PGREST_OK, "%s?%s: %s %s",
                  path, query, err.code, err.message);
    return plan;
}

/* "id,name,...|" of a node's fields; "*|" first for a kept star */
static const char *field_names(const pgr_read_node *n, char *buf, size_t cap)
{
    size_t k = (size_t)snprintf(buf, cap, "%s", n->select_star ? "*|" : "");
    for (const pgr_plan_field *f = n->fields; f != NULL && k < cap; f = f->next)
        k += (size_t)snprintf(buf + k, cap - k, "%s|", f->output_name);
    return buf;
}

/* Plan.hs expandStars: "*" becomes the relation's columns when the node
 * or an ancestor aggregates, so GROUP BY can name them; otherwise, and in
 * a node without aggregates below none, the star stays. */
START_TEST(test_expand_stars)
{
    pgrest_arena *a = pgrest_arena_new(0);
    char buf[256];
    const pgrest_query_plan *p = plan_ok(a, CFG_AGGREGATES, "/labels", "select=*,count()");
    ck_assert_str_eq(field_names(p->read, buf, sizeof buf), "id|name|count|");
    p = plan_ok(a, CFG_AGGREGATES, "/labels", "select=*,label_artists(*),count()");
    ck_assert_str_eq(field_names(p->read->embeds->node, buf, sizeof buf), "label_id|artist_id|");
    p = plan_ok(a, CFG_AGGREGATES, "/labels", "select=*,label_artists(*)");
    ck_assert_str_eq(field_names(p->read, buf, sizeof buf), "*|");
    ck_assert_str_eq(field_names(p->read->embeds->node, buf, sizeof buf), "*|");
    p = plan_ok(a, CFG_AGGREGATES, "/labels", "select=*,label_artists(*,count())");
    ck_assert_str_eq(field_names(p->read, buf, sizeof buf), "*|");
    ck_assert_str_eq(field_names(p->read->embeds->node, buf, sizeof buf),
                     "label_id|artist_id|count|");
    pgrest_arena_free(a);
}
END_TEST

/* Plan.hs hasDefaultSelect, which lets a relation's own media handlers
 * apply, looks at the read plan: one "*" field and no embeds at all; a
 * star expanded for data representations (albums.cover is a represented
 * domain) is not one. */
START_TEST(test_default_select)
{
    pgrest_arena *a = pgrest_arena_new(0);
    ck_assert(pgr_default_select(plan_ok(a, CFG_DEFAULT, "/artists", "")->read));
    ck_assert(pgr_default_select(plan_ok(a, CFG_DEFAULT, "/artists", "select=*")->read));
    ck_assert(pgr_default_select(plan_ok(a, CFG_AGGREGATES, "/artists", "select=count()")->read));
    ck_assert(!pgr_default_select(plan_ok(a, CFG_DEFAULT, "/artists", "select=*,albums()")->read));
    ck_assert(!pgr_default_select(plan_ok(a, CFG_DEFAULT, "/artists", "select=id")->read));
    ck_assert(!pgr_default_select(plan_ok(a, CFG_DEFAULT, "/albums", "")->read));
    ck_assert(pgr_default_select(plan_ok(a, CFG_DEFAULT, "/rpc/add", "a=1&b=2")->read));
    pgrest_arena_free(a);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("plan_branches");
    TCase *tc = tcase_create("order");
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, test_order, 0, (int)(sizeof cases / sizeof cases[0]));
    suite_add_tcase(s, tc);
    TCase *stars = tcase_create("expand_stars");
    tcase_add_unchecked_fixture(stars, setup, teardown);
    tcase_add_test(stars, test_expand_stars);
    tcase_add_test(stars, test_default_select);
    suite_add_tcase(s, stars);
    return s;
}

int main(void)
{
    return check_run(suite());
}
