/* Arena exhaustion is sticky (issue #14): for every arena cap from 1 KiB
 * up to what a request needs uncapped, in 64-byte steps, every public
 * stage either succeeds with complete output -- the same output as the
 * uncapped run -- or fails with PGREST_ERR_INTERNAL and the 500 PGRST500
 * error; never a crash, never PGREST_OK with a NULL or shortened piece.
 * The requests are the benchmark scenarios (bench/, on a snapshot of the
 * chinook schema they run on) and the golden requests plus a sample of
 * varied ones on the unit snapshot. No database: the stages run are
 * authenticate, parse, plan, emit and pgrest_handle (which, without a
 * pool, answers 503 PGRST000 after emitting). */
#include <check.h>

#include "check_run.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "engine/context.h"
#include "sql/statements.h"
#include "util/arena.h"
#include "util/error.h"

#define SWEEP_FIRST 1024
#define SWEEP_STEP 64
#define JWT_SECRET "reallyreallyreallyreallyverysafe"
/* {"role":"web_anon","exp":9999999999} signed with JWT_SECRET (HS256) */
#define JWT_TOKEN                                                          \
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoid2ViX2Fub24iLCJleHAi" \
    "Ojk5OTk5OTk5OTl9.jMZx33a0rnto8OWVoLSgPAkL13tf1SqkGLQtDXTnQaE"

typedef struct req_spec {
    const char *method;
    const char *path;
    const char *query;
    const char *headers; /* "Name: value\n" lines, may be NULL */
    const char *body;    /* may be NULL */
} req_spec;

#define EMPLOYEE(id)                                                            \
    "{\"employee_id\":" id ",\"first_name\":\"Virtual\",\"last_name\":\"User\","   \
    "\"title\":\"Load Tester\",\"reports_to\":1,\"birth_date\":\"1920-01-01\","    \
    "\"hire_date\":\"2020-01-01\",\"address\":\"666 10 Street SW\",\"city\":"      \
    "\"Calgary\",\"state\":\"AB\",\"country\":\"Canada\",\"postal_code\":\"T2P 5G\"," \
    "\"phone\":\"(403) 246-9887\",\"fax\":\"+1 (403) 246-9899\",\"email\":"        \
    "\"vu@chinookcorp.com\"}"

/* bench/inproc.c and the scenarios in ../shared/bench/scenarios */
static const req_spec bench_requests[] = {
    {"GET", "/artist", "select=*&artist_id=eq.17", NULL, NULL},
    {"GET", "/album", "select=*,track(*,genre(*))&artist_id=eq.17", NULL, NULL},
    {"GET", "/album", "select=*,track(*,genre(*))", NULL, NULL},
    {"POST", "/employee", "", "Content-Type: application/json\n", EMPLOYEE("101")},
    {"POST", "/employee",
     "columns=employee_id,first_name,last_name,title,reports_to,birth_date,"
     "hire_date,address,city,state,country,postal_code,phone,fax,email",
     "Content-Type: application/json\n",
     "[" EMPLOYEE("102") "," EMPLOYEE("103") "," EMPLOYEE("104") "]"},
    {"PATCH", "/actor", "actor_id=eq.7", "Content-Type: application/json\n",
     "{\"last_update\":\"now\"}"},
    {"GET", "/rpc/add_them", "a=1&b=2&c=3&d=4&e=5", NULL, NULL},
    {"GET", "/rpc/ret_artists", "select=*&artist_id=eq.17", NULL, NULL},
    {"GET", "/rpc/ret_albums",
     "select=album_id,title,artist_id,track(*,genre(*))&artist_id=eq.17", NULL, NULL},
};

/* Varied shapes on the unit snapshot (the golden files add more). */
static const req_spec varied_requests[] = {
    {"GET", "/", "", NULL, NULL},
    {"GET", "/", "", "Accept: application/openapi+json\n", NULL},
    {"OPTIONS", "/artists", "", NULL, NULL},
    {"OPTIONS", "/artists", "", "Origin: http://example.com\n"
     "Access-Control-Request-Method: POST\n"
     "Access-Control-Request-Headers: content-type, prefer\n", NULL},
    {"GET", "/artists", "or=(id.eq.1,and(name.like.*a*,formed.gt.1990),not.and(id.lt.3,id.gt.9))",
     NULL, NULL},
    {"GET", "/artists",
     "select=id,name,albums(title,tracks(title,seconds)),artist_profiles(*)"
     "&albums.order=released.desc.nullslast&albums.limit=2&order=name.asc&limit=10&offset=5",
     "Prefer: count=exact\n", NULL},
    {"GET", "/albums", "select=id,cover->>url,cover->size->0,tags&cover->>kind=eq.jpg"
     "&tags=cs.{a,b}&title=fts(english).love", NULL, NULL},
    {"GET", "/albums", "select=artist:artists!albums_artist_id_fkey(name),title&artists.name=ilike.*x*",
     "Range: 0-9\nRange-Unit: items\n", NULL},
    {"GET", "/tracks", "select=title,albums(title)&id=in.(1,2,3)&seconds=not.is.null",
     "Authorization: Bearer " JWT_TOKEN "\nAccept: text/csv\n", NULL},
    {"GET", "/artists", "select=name,albums(count)&albums.released=gte.2000-01-01", NULL, NULL},
    {"GET", "/artists", "id=eq.1", "Accept: application/vnd.pgrst.object+json\n"
     "Prefer: timezone=UTC, handling=lenient\nX-Custom: v\nCookie: a=1; b=2\n", NULL},
    {"HEAD", "/tracks", "select=*", "Prefer: count=planned\n", NULL},
    {"POST", "/artists", "on_conflict=id&columns=id,name,formed",
     "Content-Type: application/json\nPrefer: resolution=merge-duplicates, return=representation\n",
     "[{\"id\":1,\"name\":\"A\",\"formed\":1990},{\"id\":2,\"name\":\"B\",\"formed\":null}]"},
    {"POST", "/artists", "", "Content-Type: application/x-www-form-urlencoded\n",
     "name=Some+One&formed=1999"},
    {"POST", "/artists", "", "Content-Type: text/csv\nPrefer: missing=default\n",
     "name,formed\nA,1990\nB,2000\n"},
    {"PUT", "/artists", "id=eq.4", "Content-Type: application/json\n",
     "{\"id\":4,\"name\":\"Four\",\"country\":\"NL\",\"formed\":1,\"genre\":null}"},
    {"PATCH", "/tracks", "album_id=eq.1&order=id&limit=1",
     "Content-Type: application/json\nPrefer: return=representation, max-affected=1, handling=strict\n",
     "{\"seconds\":100}"},
    {"DELETE", "/playlist_track", "playlist_id=eq.1&track_id=in.(1,2)",
     "Prefer: return=headers-only\n", NULL},
    {"POST", "/rpc/add", "", "Content-Type: application/json\n", "{\"a\":1,\"b\":2}"},
    {"GET", "/rpc/add", "a=1&b=2", NULL, NULL},
    {"POST", "/rpc/album_tracks", "select=title&order=position&limit=3",
     "Content-Type: application/json\nPrefer: params=single-object\n", "{\"album\":1}"},
    {"GET", "/rpc/sum_all", "v=1&v=2&v=3", NULL, NULL},
    {"POST", "/rpc/touch", "", "Prefer: tx=rollback\n", NULL},
    {"GET", "/artists", "select=*", "Accept: application/vnd.pgrst.plan+json; for=\"application/json\"; options=analyze|verbose\n",
     NULL},
    {"GET", "/nonexistent", "", NULL, NULL},
    {"GET", "/artists", "select=name,nope(*)", NULL, NULL},
    {"GET", "/artists", "id=gt.notanumber.x&order=name.sideways", NULL, NULL},
    {"GET", "/rpc/nope", "x=1", NULL, NULL},
    {"POST", "/artists", "", "Content-Type: application/json\n", "{\"name\":"},
    {"GET", "/artists", "", "Authorization: Bearer not.a.jwt\n", NULL},
};

static char *fixture(const char *name)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", getenv("PGREST_TEST_FIXTURES"), name);
    return path;
}

static void set(pgrest_ctx *ctx, const char *k, const char *v)
{
    pgrest_error err = {0};
    ck_assert_msg(pgrest_ctx_set(ctx, k, v, &err) == PGREST_OK, "%s", k);
}

static pgrest_ctx *make_ctx(const char *schemas, const char *snapshot)
{
    pgrest_ctx *ctx = pgrest_ctx_new();
    set(ctx, "db-schemas", schemas);
    set(ctx, "db-anon-role", "web_anon");
    set(ctx, "jwt-secret", JWT_SECRET);
    set(ctx, "db-aggregates-enabled", "true");
    set(ctx, "db-plan-enabled", "true");
    set(ctx, "db-max-rows", "1000");
    set(ctx, "server-cors-allowed-origins", "http://example.com");
    pgrest_error err = {0};
    ck_assert_msg(pgrest_ctx_load_schema_file(ctx, fixture(snapshot), &err) == PGREST_OK,
                  "%s: %s", snapshot, err.message);
    return ctx;
}

static pgrest_request *build(pgrest_arena *a, const req_spec *r)
{
    pgrest_request *req = pgrest_request_new(a, r->method, r->path, r->query);
    if (req == NULL)
        return NULL;
    for (const char *h = r->headers; h != NULL && *h != '\0';) {
        const char *nl = strchr(h, '\n');
        const char *colon = memchr(h, ':', (size_t)(nl - h));
        char name[128], value[1024];
        snprintf(name, sizeof name, "%.*s", (int)(colon - h), h);
        snprintf(value, sizeof value, "%.*s", (int)(nl - colon - 2), colon + 2);
        pgrest_request_add_header(req, name, value);
        h = nl + 1;
    }
    if (r->body != NULL)
        pgrest_request_set_body(req, r->body, strlen(r->body));
    return req;
}

/* What one run produced, rendered as text for comparison with the
 * uncapped run. */
typedef struct outcome {
    char *text;
    bool oom; /* a stage answered the out-of-memory error */
} outcome;

static void check_error(const char *what, int rc, const pgrest_error *err)
{
    ck_assert_msg(rc < 0, "%s: unexpected status %d", what, rc);
    ck_assert_msg(err->code != NULL && err->message != NULL &&
                      err->http_status >= 300 && err->http_status <= 599,
                  "%s: malformed error %d %s %s", what, err->http_status,
                  err->code ? err->code : "(null)", err->message ? err->message : "(null)");
    if (rc == PGREST_ERR_INTERNAL && strcmp(err->code, PGR_CODE_INTERNAL) == 0)
        ck_assert_int_eq(err->http_status, 500);
}

static bool is_oom(int rc, const pgrest_error *err)
{
    return rc == PGREST_ERR_INTERNAL && err->code != NULL &&
           strcmp(err->code, PGR_CODE_INTERNAL) == 0 &&
           strcmp(err->message, PGR_OOM_MESSAGE) == 0;
}

static void render_statements(FILE *f, const pgrest_statements *st)
{
    for (size_t i = 0; i < pgrest_statements_count(st); i++) {
        const char *sql = pgrest_statements_sql(st, i);
        ck_assert_msg(sql != NULL, "statement %zu has no SQL with PGREST_OK", i);
        fprintf(f, "%s\n", sql);
        for (size_t j = 0; j < pgrest_statements_param_count(st, i); j++) {
            const char *p = pgrest_statements_param(st, i, j);
            fprintf(f, "$%zu=%s\n", j + 1, p ? p : "NULL");
        }
    }
}

/* The whole response must be there: a JSON error body parses, headers
 * have names and values. */
static void render_response(FILE *f, const pgrest_response *resp)
{
    ck_assert_ptr_nonnull(resp);
    fprintf(f, "status %d\n", pgrest_response_status(resp));
    for (size_t i = 0; i < pgrest_response_header_count(resp); i++) {
        const pgrest_header *h = pgrest_response_header(resp, i);
        ck_assert_msg(h->name != NULL && h->value != NULL, "header %zu incomplete", i);
        if (strcmp(h->name, "Server-Timing") != 0)
            fprintf(f, "%s: %s\n", h->name, h->value);
    }
    size_t len = 0;
    const char *body = pgrest_response_body(resp, &len);
    ck_assert_ptr_nonnull(body);
    fprintf(f, "%.*s\n", (int)len, body);
}

static void run_stages(pgrest_ctx *ctx, pgrest_arena *a, pgrest_request *req,
                       FILE *f, outcome *o)
{
    pgrest_auth *auth = NULL;
    pgrest_api_request *api = NULL;
    pgrest_query_plan *plan = NULL;
    pgrest_statements *st = NULL;
    pgrest_error err = {0};
    int rc = pgrest_authenticate(ctx, a, req, &auth, &err);
    if (rc == PGREST_OK) {
        ck_assert_ptr_nonnull(auth);
        pgrest_request_set_auth(req, auth);
        rc = pgrest_parse_request(ctx, a, req, &api, &err);
    }
    if (rc == PGREST_OK) {
        ck_assert_ptr_nonnull(api);
        rc = pgrest_plan(ctx, a, api, &plan, &err);
    }
    if (rc == PGREST_OK) {
        ck_assert_ptr_nonnull(plan);
        rc = pgrest_emit_sql(ctx, a, plan, &st, &err);
    }
    if (rc == PGREST_OK) {
        ck_assert_ptr_nonnull(st);
        render_statements(f, st);
        return;
    }
    check_error("stage", rc, &err);
    o->oom |= is_oom(rc, &err);
    fprintf(f, "error %d %d %s %s\n", rc, err.http_status, err.code, err.message);
    pgrest_response *resp = pgrest_error_response(ctx, a, &err);
    ck_assert_msg(resp != NULL, "no error response");
    render_response(f, resp);
}

/* One run of the request at cap (0 = uncapped). */
static outcome run_once(pgrest_ctx *ctx, const req_spec *r, size_t cap, size_t *used)
{
    outcome o = {0};
    size_t len = 0;
    FILE *f = open_memstream(&o.text, &len);
    pgrest_arena *a = pgrest_arena_new(cap);
    pgrest_request *req = build(a, r);
    if (req == NULL) {
        /* the host's own request did not fit: nothing to run */
        ck_assert_msg(cap != 0, "request_new failed uncapped");
        o.oom = true;
        fprintf(f, "no request\n");
    } else {
        run_stages(ctx, a, req, f, &o);
        pgrest_response *resp = pgrest_handle(ctx, a, req);
        if (resp == NULL)
            ck_assert_msg(cap != 0, "pgrest_handle returned NULL uncapped");
        else {
            size_t blen = 0;
            const char *body = pgrest_response_body(resp, &blen);
            if (pgrest_response_status(resp) == 500 && strstr(body, PGR_CODE_INTERNAL) != NULL)
                o.oom = true;
            render_response(f, resp);
        }
    }
    if (used != NULL)
        *used = pgr_arena_used(a);
    pgrest_arena_free(a);
    fclose(f);
    return o;
}

/* Sweeps one request; returns the number of capped runs. */
static int total_runs, total_oom;

static int sweep(pgrest_ctx *ctx, const req_spec *r)
{
    size_t need = 0;
    outcome base = run_once(ctx, r, 0, &need);
    ck_assert_msg(!base.oom, "%s %s?%s: out of memory uncapped", r->method, r->path, r->query);
    int runs = 0;
    for (size_t cap = SWEEP_FIRST; cap <= need + SWEEP_STEP; cap += SWEEP_STEP) {
        outcome o = run_once(ctx, r, cap, NULL);
        /* a run either matches the uncapped one or reports exhaustion */
        ck_assert_msg(o.oom || strcmp(o.text, base.text) == 0,
                      "%s %s?%s at cap %zu:\nexpected\n%s\ngot\n%s", r->method, r->path,
                      r->query, cap, base.text, o.text);
        if (cap >= need)
            ck_assert_msg(!o.oom, "%s %s: out of memory at cap %zu >= %zu used uncapped",
                          r->method, r->path, cap, need);
        total_oom += o.oom;
        free(o.text);
        runs++;
    }
    total_runs += runs;
    free(base.text);
    return runs;
}

START_TEST(sweep_bench_scenarios)
{
    pgrest_ctx *ctx = make_ctx("public", "chinook_snapshot.json");
    int runs = 0;
    for (size_t i = 0; i < sizeof bench_requests / sizeof bench_requests[0]; i++)
        runs += sweep(ctx, &bench_requests[i]);
    ck_assert_int_gt(runs, 0);
    pgrest_ctx_free(ctx);
}
END_TEST

START_TEST(sweep_varied_requests)
{
    pgrest_ctx *ctx = make_ctx("api", "schema_snapshot.json");
    for (size_t i = 0; i < sizeof varied_requests / sizeof varied_requests[0]; i++)
        sweep(ctx, &varied_requests[i]);
    pgrest_ctx_free(ctx);
}
END_TEST

/* The golden files' requests: Config: lines (skipped), "METHOD
 * /path?query", header lines,
 * "Body: ..." or an empty line and the body, then "---". */
static bool golden_spec(char *text, req_spec *r)
{
    char *end = strstr(text, "\n---\n");
    if (end == NULL)
        return false;
    *end = '\0';
    /* a case's own options (Config: lines): the sweep's context already
     * enables what they do (plans) */
    while (strncmp(text, "Config: ", 8) == 0 && strchr(text, '\n') != NULL)
        text = strchr(text, '\n') + 1;
    char *body = strstr(text, "\n\n");
    if (body != NULL) {
        *body = '\0';
        body += 2;
    }
    char *nl = strchr(text, '\n');
    char *rest = nl ? nl + 1 : text + strlen(text);
    if (nl != NULL)
        *nl = '\0';
    char *sp = strchr(text, ' ');
    *sp = '\0';
    r->method = text;
    r->path = sp + 1;
    char *q = strchr(sp + 1, '?');
    r->query = "";
    if (q != NULL) {
        *q = '\0';
        r->query = q + 1;
    }
    char *b = strstr(rest, "Body: ");
    if (b != NULL) {
        *b = '\0';
        body = b + 6;
        char *bn = strchr(body, '\n');
        if (bn != NULL)
            *bn = '\0';
    }
    /* header lines need a trailing newline each */
    size_t n = strlen(rest);
    char *h = malloc(n + 2);
    memcpy(h, rest, n + 1);
    if (n > 0 && h[n - 1] != '\n')
        strcat(h, "\n");
    r->headers = h;
    r->body = body;
    return true;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = '\0';
    fclose(f);
    return buf;
}

START_TEST(sweep_golden_requests)
{
    pgrest_ctx *ctx = make_ctx("api", "schema_snapshot.json");
    const char *dir = getenv("PGREST_GOLDEN_DIR");
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int swept = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strstr(e->d_name, ".test") == NULL)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *text = slurp(path);
        req_spec r;
        ck_assert_msg(golden_spec(text, &r), "%s", path);
        sweep(ctx, &r);
        free((char *)r.headers);
        free(text);
        swept++;
    }
    closedir(d);
    ck_assert_int_gt(swept, 30);
    pgrest_ctx_free(ctx);
}
END_TEST

/* The error response itself must survive an exhausted arena: a long
 * message that no longer fits becomes the out-of-memory response. */
START_TEST(error_response_on_exhausted_arena)
{
    pgrest_ctx *ctx = make_ctx("api", "schema_snapshot.json");
    pgrest_arena *a = pgrest_arena_new(2048);
    ck_assert_ptr_null(pgr_alloc(a, 4096));
    ck_assert(pgr_arena_exhausted(a));
    static char huge[64 * 1024];
    memset(huge, 'x', sizeof huge - 1);
    pgrest_error err = {.http_status = 400, .code = "PGRST100", .message = huge};
    pgrest_response *resp = pgrest_error_response(ctx, a, &err);
    ck_assert_ptr_nonnull(resp);
    ck_assert_int_eq(pgrest_response_status(resp), 500);
    size_t len;
    const char *body = pgrest_response_body(resp, &len);
    json_object *j = json_tokener_parse(body);
    ck_assert_ptr_nonnull(j);
    json_object *code;
    ck_assert(json_object_object_get_ex(j, "code", &code));
    ck_assert_str_eq(json_object_get_string(code), PGR_CODE_INTERNAL);
    json_object_put(j);
    /* a small error still fits in the reserve and is kept as it is */
    pgrest_error small = {.http_status = 404, .code = "PGRST205", .message = "m"};
    resp = pgrest_error_response(ctx, a, &small);
    ck_assert_ptr_nonnull(resp);
    ck_assert_int_eq(pgrest_response_status(resp), 404);
    /* and every stage refuses to run on it */
    pgrest_api_request *api = NULL;
    pgrest_request *req = pgrest_request_new(a, "GET", "/artists", "");
    if (req != NULL) {
        ck_assert_int_eq(pgrest_parse_request(ctx, a, req, &api, &err), PGREST_ERR_INTERNAL);
        ck_assert_ptr_null(api);
        ck_assert_str_eq(err.code, PGR_CODE_INTERNAL);
    }
    pgrest_arena_free(a);
    pgrest_ctx_free(ctx);
}
END_TEST

/* A request whose header the host's arena dropped is not parsed as if
 * the header had never been sent. */
START_TEST(dropped_header_is_not_ignored)
{
    pgrest_ctx *ctx = make_ctx("api", "schema_snapshot.json");
    pgrest_arena *host = pgrest_arena_new(1024);
    pgrest_request *req = pgrest_request_new(host, "GET", "/artists", "");
    ck_assert_ptr_nonnull(req);
    static char value[4096];
    memset(value, 'a', sizeof value - 1);
    pgrest_request_add_header(req, "Authorization", value);
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_api_request *api = NULL;
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_parse_request(ctx, a, req, &api, &err), PGREST_ERR_INTERNAL);
    ck_assert_str_eq(err.code, PGR_CODE_INTERNAL);
    pgrest_arena_free(a);
    pgrest_arena_free(host);
    pgrest_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("arena_sweep");
    TCase *tc = tcase_create("sweep");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, error_response_on_exhausted_arena);
    tcase_add_test(tc, dropped_header_is_not_ignored);
    tcase_add_test(tc, sweep_bench_scenarios);
    tcase_add_test(tc, sweep_varied_requests);
    tcase_add_test(tc, sweep_golden_requests);
    suite_add_tcase(s, tc);
    int rc = check_run(s);
    /* (with CK_FORK=no the counts cover every sweep) */
    fprintf(stderr, "arena sweep: %d capped runs, %d ended in the out-of-memory error\n",
            total_runs, total_oom);
    return rc;
}
