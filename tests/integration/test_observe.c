/* What a host needs to log and serve the admin endpoints as PostgREST
 * does: observations with PostgREST's texts (Observation.hs / Logger.hs),
 * the request's role (Logger/Apache.hs access log), the schema cache as
 * admin /schema_cache prints it and the connection check behind /ready
 * (AppState.isConnEstablished). */
#include <check.h>
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "harness.h"

#define MAX_SEEN 64
#define LOADS_HEAD                                                                          \
    "# HELP pgrst_schema_cache_loads_total The total number of times the schema cache was " \
    "loaded\n# TYPE pgrst_schema_cache_loads_total counter\n"


typedef struct seen {
    pthread_mutex_t lock;
    pgrest_event events[MAX_SEEN];
    char *messages[MAX_SEEN];
    size_t n;
} seen;

static void record(void *arg, pgrest_event event, const char *message)
{
    seen *s = arg;
    pthread_mutex_lock(&s->lock);
    if (s->n < MAX_SEEN) {
        s->events[s->n] = event;
        s->messages[s->n++] = strdup(message);
    }
    pthread_mutex_unlock(&s->lock);
}

static void seen_free(seen *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->messages[i]);
}

/* The first message of the event matching the extended regex, or NULL. */
static const char *find(seen *s, pgrest_event event, const char *pattern)
{
    regex_t rx;
    ck_assert_int_eq(regcomp(&rx, pattern, REG_EXTENDED | REG_NOSUB), 0);
    const char *hit = NULL;
    for (size_t i = 0; i < s->n && hit == NULL; i++)
        if (s->events[i] == event && regexec(&rx, s->messages[i], 0, NULL, 0) == 0)
            hit = s->messages[i];
    regfree(&rx);
    return hit;
}

static pgrest_ctx *observed_ctx(seen *s, const char *uri)
{
    pgrest_ctx *ctx = pgrest_ctx_new();
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-uri", uri, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-schemas", "api", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-anon-role", "web_anon", &err), PGREST_OK);
    ck_assert_int_eq(pgrest_ctx_set(ctx, "db-pool", "3", &err), PGREST_OK);
    pthread_mutex_init(&s->lock, NULL);
    pgrest_ctx_set_observer(ctx, record, s);
    return ctx;
}

/* The schema cache loads vector of admin /metrics (Metrics.hs): a label
 * is printed once it was counted, FAIL before SUCCESS (prometheus-client
 * keeps a vector's labels in a Map). */
static void assert_loads_metric(pgrest_ctx *ctx, const char *expected)
{
    pgrest_arena *a = pgrest_arena_new(0);
    const char *text = pgrest_ctx_metrics(ctx, a);
    ck_assert_ptr_nonnull(text);
    const char *at = strstr(text, "# HELP pgrst_schema_cache_loads_total ");
    ck_assert_ptr_nonnull(at);
    const char *next = strstr(at, "# HELP pgrst_schema_cache_query_time_seconds ");
    ck_assert_ptr_nonnull(next);
    ck_assert_uint_eq((size_t)(next - at), strlen(expected));
    ck_assert_int_eq(memcmp(at, expected, strlen(expected)), 0);
    pgrest_arena_free(a);
}

/* pgrst_schema_cache_query_time_seconds as a number (-1 when absent). */
static double query_time_metric(pgrest_ctx *ctx)
{
    pgrest_arena *a = pgrest_arena_new(0);
    const char *text = pgrest_ctx_metrics(ctx, a);
    const char *at = text ? strstr(text, "\npgrst_schema_cache_query_time_seconds ") : NULL;
    double v = at ? strtod(at + strlen("\npgrst_schema_cache_query_time_seconds "), NULL) : -1;
    pgrest_arena_free(a);
    return v;
}

START_TEST(schema_load_is_observed)
{
    seen s = {.n = 0};
    pgrest_ctx *ctx = observed_ctx(&s, harness_db_uri());
    pgrest_error err = {0};
    ck_assert_int_eq(pgrest_ctx_load_schema(ctx, &err), PGREST_OK);
    ck_assert_ptr_nonnull(find(&s, PGREST_EVENT_DB_CONNECTED,
                               "^Successfully connected to PostgreSQL [0-9]+"));
    ck_assert_ptr_nonnull(find(&s, PGREST_EVENT_POOL_INIT,
                               "^Connection Pool initialized with a maximum size of 3 connections$"));
    ck_assert_ptr_nonnull(find(&s, PGREST_EVENT_SCHEMA_CACHE_QUERIED,
                               "^Schema cache queried in [0-9]+\\.[0-9] milliseconds $"));
    ck_assert_ptr_nonnull(find(&s, PGREST_EVENT_SCHEMA_CACHE_LOADED,
                               "^Schema cache loaded [0-9]+ Relations, [0-9]+ Relationships, "
                               "[0-9]+ RPCs, [0-9]+ Domain Representations, [0-9]+ Media Type "
                               "Handlers$"));
    ck_assert_ptr_nonnull(find(&s, PGREST_EVENT_SCHEMA_CACHE_LOADED,
                               "^Schema cache loaded in [0-9]+\\.[0-9] milliseconds$"));
    /* Metrics.hs: the gauge is SchemaCacheLoadedObs's time, the number
     * that line shows (milliseconds, whatever the metric's name says) */
    const char *loaded = find(&s, PGREST_EVENT_SCHEMA_CACHE_LOADED, "^Schema cache loaded in ");
    double logged = strtod(loaded + strlen("Schema cache loaded in "), NULL);
    double gauge = query_time_metric(ctx);
    ck_assert_msg(gauge >= 0 && gauge >= logged - 0.051 && gauge <= logged + 0.051,
                  "gauge %f, logged %f", gauge, logged);
    ck_assert_ptr_null(find(&s, PGREST_EVENT_SCHEMA_CACHE_ERROR, ""));
    assert_loads_metric(ctx, LOADS_HEAD "pgrst_schema_cache_loads_total{status=\"SUCCESS\"} 1.0\n");
    pgrest_ctx_free(ctx);
    seen_free(&s);
}
END_TEST

START_TEST(unreachable_database_is_observed)
{
    seen s = {.n = 0};
    /* port 1 on loopback: refused at once */
    pgrest_ctx *ctx = observed_ctx(&s, "postgresql://authenticator@127.0.0.1:1/x");
    pgrest_error err = {0};
    ck_assert_int_ne(pgrest_ctx_load_schema(ctx, &err), PGREST_OK);
    ck_assert_ptr_nonnull(find(&s, PGREST_EVENT_PG_VERSION_ERROR,
                               "^Failed to query the PostgreSQL version\\. \\{\"code\":\"PGRST000\","
                               "\"details\":\".+\",\"hint\":null,\"message\":\"Database connection "
                               "error\\.\"\\}$"));
    ck_assert_ptr_nonnull(find(&s, PGREST_EVENT_SCHEMA_CACHE_ERROR,
                               "^Failed to load the schema cache using db-schemas=api and "
                               "db-extra-search-path=public\\. \\{\"code\":\"PGRST000\""));
    ck_assert_ptr_null(find(&s, PGREST_EVENT_DB_CONNECTED, ""));
    assert_loads_metric(ctx, LOADS_HEAD "pgrst_schema_cache_loads_total{status=\"FAIL\"} 1.0\n");
    ck_assert_int_ne(pgrest_ctx_load_schema(ctx, &err), PGREST_OK);
    assert_loads_metric(ctx, LOADS_HEAD "pgrst_schema_cache_loads_total{status=\"FAIL\"} 2.0\n");
    /* a failed load is no SchemaCacheLoadedObs: the gauge keeps its value */
    ck_assert(query_time_metric(ctx) == 0.0);
    /* a request without a schema cache: SchemaCacheEmptyObs */
    test_response r;
    harness_request(ctx, "GET", "/artists", "", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 503);
    harness_free(&r);
    ck_assert_ptr_nonnull(find(&s, PGREST_EVENT_SCHEMA_CACHE_EMPTY,
                               "^\\{\"code\":\"PGRST002\",\"details\":null,\"hint\":null,"
                               "\"message\":\"Could not query the database for the schema "
                               "cache\\. Retrying\\.\"\\}$"));
    pgrest_arena *a = pgrest_arena_new(0);
    ck_assert_ptr_null(pgrest_ctx_schema_cache_json(ctx, a));   /* none loaded */
    pgrest_arena_free(a);
    pgrest_ctx_free(ctx);
    seen_free(&s);
}
END_TEST

static const char *role_of(pgrest_ctx *ctx, const char *path, const char *query,
                           const char *token, int *status)
{
    static char role[64];
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = pgrest_request_new(a, "GET", path, query);
    if (token != NULL)
        pgrest_request_add_header(req, "Authorization", token);
    pgrest_response *resp = pgrest_handle(ctx, a, req);
    *status = pgrest_response_status(resp);
    const char *r = pgrest_response_role(resp);
    const char *out = NULL;
    if (r != NULL) {
        strncpy(role, r, sizeof role - 1);
        out = role;
    }
    pgrest_arena_free(a);
    return out;
}

START_TEST(response_carries_the_role)
{
    pgrest_ctx *ctx = harness_ctx(NULL);
    int status;
    ck_assert_str_eq(role_of(ctx, "/artists", "select=id", NULL, &status), "web_anon");
    ck_assert_int_eq(status, 200);
    /* errors after authentication keep it (PostgREST tells the role first) */
    ck_assert_str_eq(role_of(ctx, "/artists", "select=nope(", NULL, &status), "web_anon");
    ck_assert_int_eq(status, 400);
    ck_assert_str_eq(role_of(ctx, "/nope", "", NULL, &status), "web_anon");
    ck_assert_int_eq(status, 404);
    const char *user = "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoid2ViX3VzZXIifQ."
                       "6wrCou4-1o3Bp-OORQWhFf6FJwmF255Bv1kepHf4-BU";
    ck_assert_str_eq(role_of(ctx, "/private_notes", "", user, &status), "web_user");
    ck_assert_int_eq(status, 200);
    /* a JWT that fails verification: no role */
    ck_assert_ptr_null(role_of(ctx, "/artists", "", "Bearer a.b.c", &status));
    ck_assert_int_eq(status, 401);
    pgrest_ctx_free(ctx);
}
END_TEST

START_TEST(schema_cache_json_and_connection_check)
{
    pgrest_ctx *ctx = harness_ctx(NULL);
    pgrest_arena *a = pgrest_arena_new(0);
    const char *json = pgrest_ctx_schema_cache_json(ctx, a);
    ck_assert_ptr_nonnull(json);
    /* an aeson Value: object keys in order (KeyMap), at every level */
    const char *prefix = "{\"dbMediaHandlers\":[";
    ck_assert_msg(strncmp(json, prefix, strlen(prefix)) == 0, "%.80s", json);
    const char *order[] = {"\"dbRelationships\":", "\"dbRepresentations\":",
                           "\"dbRoutines\":", "\"dbTables\":[[{\"qiName\":"};
    const char *prev = json;
    for (size_t i = 0; i < 4; i++) {
        const char *at = strstr(json, order[i]);
        ck_assert_msg(at != NULL && at > prev, "%s", order[i]);
        prev = at;
    }
    ck_assert_ptr_nonnull(strstr(json, "[{\"qiName\":\"artists\",\"qiSchema\":\"api\"},"
                                       "{\"tableColumns\":{"));
    pgrest_arena_free(a);
    /* no listener: one pooled "SELECT 1" decides */
    ck_assert_int_eq(pgrest_ctx_connection_established(ctx), 1);
    pgrest_ctx_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("observe");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, schema_load_is_observed);
    tcase_add_test(tc, unreachable_database_is_observed);
    tcase_add_test(tc, response_carries_the_role);
    tcase_add_test(tc, schema_cache_json_and_connection_check);
    suite_add_tcase(s, tc);
    return check_run(s);
}
