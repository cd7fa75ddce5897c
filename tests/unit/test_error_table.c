/* Every constructor of PostgREST's Error.hs (src/library/PostgREST/Error.hs
 * and Error/Types.hs) with the status, code, message, details and hint
 * PostgREST gives it, character for character, and what pgrest produces
 * for it through the function that produces it: requests planned against
 * the unit schema snapshot, the response builder on a made-up main row,
 * the RAISE 'PGRST' parser, the executor on a broken connection, the
 * SQLSTATE mapping (mapSQLtoHTTP). Expected texts are Error.hs's, not
 * pgrest's output. The constructors pgrest cannot produce are listed in
 * `gaps` with the reason. */
#include <check.h>

#include "check_run.h"
#include <libpq-fe.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "engine/context.h"
#include "exec/response.h"
#include "util/arena.h"
#include "util/error.h"

/* table rows leave their optional trailing fields out */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define SECRET "reallyreallyreallyreallyverysafe"
#define NONE NULL /* JSON null in the error body */

/* ------------------------------------------------------------ contexts */

typedef enum ctx_kind {
    CTX_DEFAULT,     /* api schema, anon role web_anon, jwt secret */
    CTX_NO_ANON,     /* no db-anon-role */
    CTX_NO_SECRET,   /* no jwt-secret */
    CTX_AUD,         /* jwt-aud = youraudience */
    CTX_NO_OPENAPI,  /* openapi-mode = disabled */
    CTX_NO_LEGACY,   /* url-use-legacy-target-names = false */
    CTX_AGGREGATES,  /* db-aggregates-enabled */
    CTX_OVERLOADED,  /* the snapshot plus an overload api.add(a text) */
    CTX_NO_SCHEMA,   /* no schema cache loaded */
    CTX_KINDS
} ctx_kind;

static pgrest_ctx *contexts[CTX_KINDS];

static void set(pgrest_ctx *ctx, const char *k, const char *v)
{
    pgrest_error err = {0};
    ck_assert_msg(pgrest_ctx_set(ctx, k, v, &err) == PGREST_OK, "%s=%s", k, v);
}

static const char *snapshot_path(void)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/schema_snapshot.json", getenv("PGREST_TEST_FIXTURES"));
    return path;
}

/* The snapshot with a second api.add taking (a text): GET /rpc/add?a=1
 * matches both (AmbiguousRpc). */
static const char *overloaded_snapshot(void)
{
    static char path[] = "/tmp/pgrest-error-table-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    json_object *doc = json_object_from_file(snapshot_path());
    ck_assert_ptr_nonnull(doc);
    json_object *routines = json_object_object_get(doc, "routines");
    json_object *add = NULL;
    for (size_t i = 0; i < json_object_array_length(routines); i++) {
        json_object *r = json_object_array_get_idx(routines, i);
        if (strcmp(json_object_get_string(json_object_object_get(r, "name")), "add") == 0)
            add = r;
    }
    ck_assert_ptr_nonnull(add);
    json_object *copy = NULL;
    ck_assert_int_eq(json_object_deep_copy(add, &copy, NULL), 0);
    json_object *params = json_object_new_array();
    json_object *p = json_tokener_parse(
        "{\"name\":\"a\",\"type\":\"text\",\"type_max_length\":-1,\"cast_type\":\"text\","
        "\"required\":true,\"variadic\":false}");
    json_object_array_add(params, p);
    json_object_object_add(copy, "params", params);
    json_object_array_add(routines, copy);
    ck_assert_int_eq(json_object_to_fd(fd, doc, JSON_C_TO_STRING_PLAIN), 0);
    close(fd);
    json_object_put(doc);
    return path;
}

static pgrest_ctx *make_ctx(ctx_kind kind)
{
    pgrest_ctx *ctx = pgrest_ctx_new();
    set(ctx, "db-schemas", "api");
    if (kind != CTX_NO_ANON)
        set(ctx, "db-anon-role", "web_anon");
    if (kind != CTX_NO_SECRET)
        set(ctx, "jwt-secret", SECRET);
    if (kind == CTX_AUD)
        set(ctx, "jwt-aud", "youraudience");
    if (kind == CTX_NO_OPENAPI)
        set(ctx, "openapi-mode", "disabled");
    if (kind == CTX_NO_LEGACY)
        set(ctx, "url-use-legacy-target-names", "false");
    if (kind == CTX_AGGREGATES)
        set(ctx, "db-aggregates-enabled", "true");
    if (kind == CTX_NO_SCHEMA)
        return ctx;
    pgrest_error err = {0};
    const char *snap = kind == CTX_OVERLOADED ? overloaded_snapshot() : snapshot_path();
    ck_assert_msg(pgrest_ctx_load_schema_file(ctx, snap, &err) == PGREST_OK, "%s", err.message);
    if (kind == CTX_OVERLOADED)
        unlink(snap);
    return ctx;
}

static void setup(void)
{
    for (int k = 0; k < CTX_KINDS; k++)
        contexts[k] = make_ctx((ctx_kind)k);
}

static void teardown(void)
{
    for (int k = 0; k < CTX_KINDS; k++)
        pgrest_ctx_free(contexts[k]);
}

/* ------------------------------------------------------------ tokens */

static char *b64url(const unsigned char *in, size_t n)
{
    static const char tbl[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    char *out = malloc(n * 4 / 3 + 4);
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16;
        if (i + 1 < n)
            v |= (unsigned)in[i + 1] << 8;
        if (i + 2 < n)
            v |= in[i + 2];
        out[o++] = tbl[(v >> 18) & 63];
        out[o++] = tbl[(v >> 12) & 63];
        if (i + 1 < n)
            out[o++] = tbl[(v >> 6) & 63];
        if (i + 2 < n)
            out[o++] = tbl[v & 63];
    }
    out[o] = '\0';
    return out;
}

/* "Authorization: Bearer <HS256 token of header/payload>\n" (any payload
 * text, so claims that are not an object can be signed too). */
static char *bearer(const char *header, const char *payload)
{
    char *h = b64url((const unsigned char *)header, strlen(header));
    char *p = b64url((const unsigned char *)payload, strlen(payload));
    char signing[2048];
    snprintf(signing, sizeof signing, "%s.%s", h, p);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    HMAC(EVP_sha256(), SECRET, (int)strlen(SECRET), (const unsigned char *)signing,
         strlen(signing), mac, &len);
    char *s = b64url(mac, len);
    size_t n = strlen(signing) + strlen(s) + 64;
    char *out = malloc(n);
    snprintf(out, n, "Authorization: Bearer %s.%s\n", signing, s);
    free(h);
    free(p);
    free(s);
    return out;
}

#define HS256 "{\"alg\":\"HS256\",\"typ\":\"JWT\"}"

/* ------------------------------------------------------------ checking */

typedef struct expected {
    const char *constructor; /* Error.hs constructor (and case) */
    int rc;                  /* pgrest_status */
    int status;
    const char *code, *message, *details, *hint; /* NONE = null */
    const char *www_authenticate;                /* NULL = header absent */
} expected;

static bool same(const char *want, const char *got)
{
    return want == NULL ? got == NULL : got != NULL && strcmp(want, got) == 0;
}

static const char *show(const char *s)
{
    return s ? s : "(null)";
}

static const char *json_field(json_object *o, const char *key)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, key, &v) || v == NULL)
        return NULL;
    return json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
}

/* Mismatches of one test, all reported at its end (a table test that
 * stopped at the first would hide the rest). */
static char failures[1 << 16];

#define EXPECT(cond, ...)                                                        \
    do {                                                                         \
        if (!(cond)) {                                                           \
            size_t used_ = strlen(failures);                                     \
            snprintf(failures + used_, sizeof failures - used_, __VA_ARGS__);    \
            used_ = strlen(failures);                                            \
            snprintf(failures + used_, sizeof failures - used_, "\n");           \
        }                                                                        \
    } while (0)

static void report(void)
{
    static char copy[sizeof failures];
    memcpy(copy, failures, sizeof copy);
    failures[0] = '\0';
    ck_assert_msg(copy[0] == '\0', "\n%s", copy);
}

/* The error itself, then the response a host sends for it: status,
 * Proxy-Status, WWW-Authenticate and the JSON body's four keys. */
static void check_error(pgrest_ctx *ctx, pgrest_arena *a, const expected *e, int rc,
                        const pgrest_error *err, pgrest_response *resp)
{
    const char *c = e->constructor;
    EXPECT(rc == e->rc, "%s: pgrest_status %d, want %d", c, rc, e->rc);
    EXPECT(err->http_status == e->status, "%s: status %d, want %d", c, err->http_status,
           e->status);
    EXPECT(same(e->code, err->code), "%s: code %s", c, show(err->code));
    EXPECT(same(e->message, err->message), "%s: message\n got %s\nwant %s", c,
           show(err->message), show(e->message));
    EXPECT(same(e->details, err->details), "%s: details\n got %s\nwant %s", c,
           show(err->details), show(e->details));
    EXPECT(same(e->hint, err->hint), "%s: hint\n got %s\nwant %s", c, show(err->hint),
           show(e->hint));
    if (resp == NULL)
        resp = pgrest_error_response(ctx, a, err);
    ck_assert_ptr_nonnull(resp);
    EXPECT(pgrest_response_status(resp) == e->status, "%s: response status %d", c,
           pgrest_response_status(resp));
    const char *proxy = pgr_response_get_header(resp, "Proxy-Status");
    char want_proxy[128];
    snprintf(want_proxy, sizeof want_proxy, "PostgREST; error=%s", show(e->code));
    EXPECT(same(want_proxy, proxy), "%s: Proxy-Status %s", c, show(proxy));
    const char *www = pgr_response_get_header(resp, "WWW-Authenticate");
    EXPECT(same(e->www_authenticate, www), "%s: WWW-Authenticate\n got %s\nwant %s", c,
           show(www), show(e->www_authenticate));
    size_t len = 0;
    json_object *body = json_tokener_parse(pgrest_response_body(resp, &len));
    EXPECT(body != NULL, "%s: body is not JSON", c);
    if (body == NULL)
        return;
    EXPECT(same(e->code, json_field(body, "code")), "%s: body code", c);
    EXPECT(same(e->message, json_field(body, "message")), "%s: body message", c);
    EXPECT(same(e->details, json_field(body, "details")), "%s: body details %s", c,
           show(json_field(body, "details")));
    EXPECT(same(e->hint, json_field(body, "hint")), "%s: body hint", c);
    json_object_put(body);
}

/* ------------------------------------------------------------ requests */

typedef struct request_row {
    expected e;
    ctx_kind ctx;
    const char *method, *path, *query;
    const char *headers; /* "Name: value\n" lines */
    const char *body;
    const char *jwt_payload; /* signed HS256 into an Authorization header */
} request_row;

static pgrest_request *build(pgrest_arena *a, const request_row *r)
{
    pgrest_request *req = pgrest_request_new(a, r->method, r->path, r->query ? r->query : "");
    char *auth = r->jwt_payload ? bearer(HS256, r->jwt_payload) : NULL;
    const char *lists[] = {r->headers, auth};
    for (int i = 0; i < 2; i++)
        for (const char *h = lists[i]; h != NULL && *h != '\0';) {
            const char *nl = strchr(h, '\n');
            const char *colon = memchr(h, ':', (size_t)(nl - h));
            char name[128], value[2048];
            snprintf(name, sizeof name, "%.*s", (int)(colon - h), h);
            snprintf(value, sizeof value, "%.*s", (int)(nl - colon - 2), colon + 2);
            pgrest_request_add_header(req, name, value);
            h = nl + 1;
        }
    free(auth);
    if (r->body != NULL)
        pgrest_request_set_body(req, r->body, strlen(r->body));
    return req;
}

/* authenticate, parse, plan, emit: the first failing stage's error */
static int run_request(pgrest_ctx *ctx, pgrest_arena *a, pgrest_request *req,
                       pgrest_query_plan **plan_out, pgrest_error *err)
{
    pgrest_auth *auth;
    pgrest_api_request *api;
    pgrest_query_plan *plan;
    pgrest_statements *st;
    int rc = pgrest_authenticate(ctx, a, req, &auth, err);
    if (rc == PGREST_OK) {
        pgrest_request_set_auth(req, auth);
        rc = pgrest_parse_request(ctx, a, req, &api, err);
    }
    if (rc == PGREST_OK)
        rc = pgrest_plan(ctx, a, api, &plan, err);
    if (rc == PGREST_OK && plan_out != NULL) {
        *plan_out = plan;
        return rc;
    }
    if (rc == PGREST_OK)
        rc = pgrest_emit_sql(ctx, a, plan, &st, err);
    return rc;
}

#define ANY_ROLE "{\"role\":\"web_anon\""
#define INVALID_TOKEN(m) "Bearer error=\"invalid_token\", error_description=\"" m "\""
#define REQ PGREST_ERR_REQUEST

static const request_row request_rows[] = {
    /* ---------------------------------------------- ApiRequestError */
    {{"AggregatesNotAllowed", REQ, 400, "PGRST123", "Use of aggregate functions is not allowed",
      NONE, NONE, NULL}, CTX_DEFAULT, "GET", "/artists", "select=id.count()"},
    {{"MediaTypeError", REQ, 406, "PGRST107",
      "None of these media types are available: text/unknown", NONE, NONE, NULL},
     CTX_DEFAULT, "GET", "/artists", "", "Accept: text/unknown\n"},
    {{"InvalidBody", REQ, 400, "PGRST102", "Empty or invalid json", NONE, NONE, NULL},
     CTX_DEFAULT, "POST", "/artists", "", "Content-Type: application/json\n", "{\"name\":"},
    {{"InvalidFilters", REQ, 405, "PGRST105",
      "Filters must include all and only primary key columns with 'eq' operators", NONE, NONE,
      NULL}, CTX_DEFAULT, "PUT", "/artists", "name=eq.x", "Content-Type: application/json\n",
     "{\"id\":1,\"name\":\"x\"}"},
    {{"InvalidPreferences", REQ, 400, "PGRST122", "Invalid preferences given with handling=strict",
      "Invalid preferences: foo=bar", NONE, NULL},
     CTX_DEFAULT, "GET", "/artists", "", "Prefer: handling=strict, foo=bar\n"},
    {{"InvalidRange NegativeLimit", REQ, 416, "PGRST103", "Requested range not satisfiable",
      "Limit should be greater than or equal to zero.", NONE, NULL},
     CTX_DEFAULT, "GET", "/artists", "limit=-1"},
    {{"InvalidRange LowerGTUpper", REQ, 416, "PGRST103", "Requested range not satisfiable",
      "The lower boundary must be lower than or equal to the upper boundary in the Range header.",
      NONE, NULL}, CTX_DEFAULT, "GET", "/artists", "", "Range: 5-1\nRange-Unit: items\n"},
    {{"InvalidRpcMethod", REQ, 405, "PGRST101", "Cannot use the PATCH method on RPC", NONE, NONE,
      NULL}, CTX_DEFAULT, "PATCH", "/rpc/add", "", "Content-Type: application/json\n", "{}"},
    {{"NotEmbedded (no alias)", REQ, 400, "PGRST108",
      "'albums' is not an embedded resource in this request", NONE,
      "Verify that 'albums' is included in the 'select' query parameter.", NULL},
     CTX_DEFAULT, "GET", "/artists", "albums.title=eq.x"},
    {{"NotEmbedded (target name of an aliased embed)", REQ, 400, "PGRST108",
      "'albums' is not an embedded resource in this request",
      "Target names are not allowed in filters if they have an alias",
      "Change 'albums' to 'a' in filters, orders or limits.", NULL},
     CTX_NO_LEGACY, "GET", "/artists", "select=id,a:albums(title)&albums.title=eq.x"},
    {{"NotImplemented (aggregate in a to-many spread)", REQ, 400, "PGRST127",
      "Feature not implemented",
      "Aggregates are not implemented for one-to-many or many-to-many spreads.", NONE, NULL},
     CTX_AGGREGATES, "GET", "/artists", "select=name,...albums(title.count())"},
    {{"PutLimitNotAllowedError", REQ, 400, "PGRST114",
      "limit/offset querystring parameters are not allowed for PUT", NONE, NONE, NULL},
     CTX_DEFAULT, "PUT", "/artists", "id=eq.1&limit=1", "Content-Type: application/json\n",
     "{\"id\":1,\"name\":\"x\"}"},
    {{"QueryParamError", REQ, 400, "PGRST100", "\"failed to parse filter (0)\" (line 1, column 1)",
      "unexpected \"0\" expecting \"not\" or operator (eq, gt, ...)", NONE, NULL},
     CTX_DEFAULT, "GET", "/artists", "id=0"},
    {{"RelatedOrderNotToOne", REQ, 400, "PGRST118", "A related order on 'albums' is not possible",
      "'artists' and 'albums' do not form a many-to-one or one-to-one relationship", NONE, NULL},
     CTX_DEFAULT, "GET", "/artists", "select=id,albums(title)&order=albums(title)"},
    {{"UnacceptableSchema", REQ, 406, "PGRST106", "Invalid schema: nope", NONE,
      "Only the following schemas are exposed: api", NULL},
     CTX_DEFAULT, "GET", "/artists", "", "Accept-Profile: nope\n"},
    {{"UnsupportedMethod", REQ, 405, "PGRST117", "Unsupported HTTP method: FOO", NONE, NONE, NULL},
     CTX_DEFAULT, "FOO", "/artists", ""},
    {{"InvalidResourcePath", REQ, 404, "PGRST125", "Invalid path specified in request URL", NONE,
      NONE, NULL}, CTX_DEFAULT, "GET", "/a/b/c", ""},
    {{"OpenAPIDisabled", REQ, 404, "PGRST126", "Root endpoint metadata is disabled", NONE, NONE,
      NULL}, CTX_NO_OPENAPI, "GET", "/", ""},
    {{"MaxAffectedRpcViolation", REQ, 400, "PGRST128",
      "Function must return SETOF or TABLE when max-affected preference is used with handling=strict",
      NONE, NONE, NULL}, CTX_DEFAULT, "POST", "/rpc/add", "",
     "Content-Type: application/json\nPrefer: handling=strict, max-affected=1\n", "{\"a\":1}"},
    /* ---------------------------------------------- SchemaCacheError */
    {{"NoRelBetween", REQ, 400, "PGRST200",
      "Could not find a relationship between 'artists' and 'nope' in the schema cache",
      "Searched for a foreign key relationship between 'artists' and 'nope' in the schema 'api', "
      "but no matches were found.", NONE, NULL},
     CTX_DEFAULT, "GET", "/artists", "select=nope(*)"},
    {{"NoRelBetween (embed hint, suggestion)", REQ, 400, "PGRST200",
      "Could not find a relationship between 'artists' and 'album' in the schema cache",
      "Searched for a foreign key relationship between 'artists' and 'album' using the hint "
      "'nope' in the schema 'api', but no matches were found.",
      "Perhaps you meant 'albums' instead of 'album'.", NULL},
     CTX_DEFAULT, "GET", "/artists", "select=album!nope(*)"},
    {{"NoRpc (GET, parameters)", REQ, 404, "PGRST202",
      "Could not find the function api.nope(x) in the schema cache",
      "Searched for the function api.nope with parameter x, but no matches were found in the "
      "schema cache.", NONE, NULL},
     CTX_DEFAULT, "GET", "/rpc/nope", "x=1"},
    {{"NoRpc (no parameters)", REQ, 404, "PGRST202",
      "Could not find the function api.nope without parameters in the schema cache",
      "Searched for the function api.nope without parameters, but no matches were found in the "
      "schema cache.", NONE, NULL},
     CTX_DEFAULT, "GET", "/rpc/nope", ""},
    {{"NoRpc (POST json, two parameters)", REQ, 404, "PGRST202",
      "Could not find the function api.nope(x, y) in the schema cache",
      "Searched for the function api.nope with parameters x, y or with a single unnamed "
      "json/jsonb parameter, but no matches were found in the schema cache.", NONE, NULL},
     CTX_DEFAULT, "POST", "/rpc/nope", "", "Content-Type: application/json\n",
     "{\"x\":1,\"y\":2}"},
    {{"NoRpc (POST text/plain)", REQ, 404, "PGRST202",
      "Could not find the function api.nope in the schema cache",
      "Searched for the function api.nope with a single unnamed text parameter, but no matches "
      "were found in the schema cache.", NONE, NULL},
     CTX_DEFAULT, "POST", "/rpc/nope", "", "Content-Type: text/plain\n", "hello"},
    {{"NoRpc (function name hint, score >= 0.75)", REQ, 404, "PGRST202",
      "Could not find the function api.addd(a) in the schema cache",
      "Searched for the function api.addd with parameter a, but no matches were found in the "
      "schema cache.", "Perhaps you meant to call the function api.add", NULL},
     CTX_DEFAULT, "GET", "/rpc/addd", "a=1"},
    {{"NoRpc (no hint below 0.75)", REQ, 404, "PGRST202",
      "Could not find the function api.ad(a) in the schema cache",
      "Searched for the function api.ad with parameter a, but no matches were found in the "
      "schema cache.", NONE, NULL},
     CTX_DEFAULT, "GET", "/rpc/ad", "a=1"},
    {{"NoRpc (parameter hint over the overloads)", REQ, 404, "PGRST202",
      "Could not find the function api.add(aa, b) in the schema cache",
      "Searched for the function api.add with parameters aa, b, but no matches were found in "
      "the schema cache.", "Perhaps you meant to call the function api.add(a, b)", NULL},
     CTX_DEFAULT, "GET", "/rpc/add", "aa=1&b=2"},
    {{"ColumnNotFound", REQ, 400, "PGRST204",
      "Could not find the 'nope' column of 'artists' in the schema cache", NONE, NONE, NULL},
     CTX_DEFAULT, "POST", "/artists", "", "Content-Type: application/json\n", "{\"nope\":1}"},
    {{"TableNotFound", REQ, 404, "PGRST205",
      "Could not find the table 'api.nope' in the schema cache", NONE, NONE, NULL},
     CTX_DEFAULT, "GET", "/nope", ""},
    {{"TableNotFound (hint)", REQ, 404, "PGRST205",
      "Could not find the table 'api.artist' in the schema cache", NONE,
      "Perhaps you meant the table 'api.artists'", NULL},
     CTX_DEFAULT, "GET", "/artist", ""},
    /* ---------------------------------------------- JwtError */
    {{"JwtSecretMissing", PGREST_ERR_CONFIG, 500, "PGRST300", "Server lacks JWT secret", NONE,
      NONE, NULL}, CTX_NO_SECRET, "GET", "/artists", "", "Authorization: Bearer a.b.c\n"},
    {{"JwtDecodeErr EmptyAuthHeader", REQ, 401, "PGRST301",
      "Empty JWT is sent in Authorization header", NONE, NONE,
      INVALID_TOKEN("Empty JWT is sent in Authorization header")},
     CTX_DEFAULT, "GET", "/artists", "", "Authorization: Bearer \n"},
    {{"JwtDecodeErr UnexpectedParts", REQ, 401, "PGRST301", "Expected 3 parts in JWT; got 5",
      NONE, NONE, INVALID_TOKEN("Expected 3 parts in JWT; got 5")},
     CTX_DEFAULT, "GET", "/artists", "", "Authorization: Bearer a.b.c.d.e\n"},
    {{"JwtDecodeErr BadAlgorithm (alg none)", REQ, 401, "PGRST301",
      "Wrong or unsupported encoding algorithm",
      "JWT is unsecured but expected 'alg' was not 'none'", NONE,
      INVALID_TOKEN("Wrong or unsupported encoding algorithm")},
     CTX_DEFAULT, "GET", "/artists", "",
     "Authorization: Bearer eyJ0eXAiOiJKV1QiLCJhbGciOiJub25lIn0.e30.\n"},
    {{"JwtDecodeErr BadCrypto", REQ, 401, "PGRST301", "JWT cryptographic operation failed", NONE,
      NONE, INVALID_TOKEN("JWT cryptographic operation failed")},
     CTX_DEFAULT, "GET", "/artists", "",
     "Authorization: Bearer quifquirndsjagnrgniur.fonvoienqhhdj.iuqvnvhojah\n"},
    /* details: jose's KeyError text for a signature no key verifies */
    {{"JwtDecodeErr KeyError", REQ, 401, "PGRST301", "No suitable key or wrong key type",
      "None of the keys was able to decode the JWT", NONE,
      INVALID_TOKEN("No suitable key or wrong key type")},
     CTX_DEFAULT, "GET", "/artists", "",
     "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.e30."
     "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n"},
    {{"JwtTokenRequired", REQ, 401, "PGRST302", "Anonymous access is disabled", NONE, NONE,
      "Bearer"}, CTX_NO_ANON, "GET", "/artists", ""},
    {{"JwtClaimsErr JWTExpired", REQ, 401, "PGRST303", "JWT expired", NONE, NONE,
      INVALID_TOKEN("JWT expired")},
     CTX_DEFAULT, "GET", "/artists", NULL, NULL, NULL, ANY_ROLE ",\"exp\":1}"},
    {{"JwtClaimsErr JWTNotYetValid", REQ, 401, "PGRST303", "JWT not yet valid", NONE, NONE,
      INVALID_TOKEN("JWT not yet valid")},
     CTX_DEFAULT, "GET", "/artists", NULL, NULL, NULL, ANY_ROLE ",\"nbf\":9999999999}"},
    {{"JwtClaimsErr JWTIssuedAtFuture", REQ, 401, "PGRST303", "JWT issued at future", NONE, NONE,
      INVALID_TOKEN("JWT issued at future")},
     CTX_DEFAULT, "GET", "/artists", NULL, NULL, NULL, ANY_ROLE ",\"iat\":9999999999}"},
    {{"JwtClaimsErr JWTNotInAudience", REQ, 401, "PGRST303", "JWT not in audience", NONE, NONE,
      INVALID_TOKEN("JWT not in audience")},
     CTX_AUD, "GET", "/artists", NULL, NULL, NULL, ANY_ROLE ",\"aud\":\"other\"}"},
    {{"JwtClaimsErr ParsingClaimsFailed", REQ, 401, "PGRST303", "Parsing claims failed", NONE,
      NONE, INVALID_TOKEN("Parsing claims failed")},
     CTX_DEFAULT, "GET", "/artists", NULL, NULL, NULL, "[1,2]"},
    {{"JwtClaimsErr ExpClaimNotNumber", REQ, 401, "PGRST303",
      "The JWT 'exp' claim must be a number", NONE, NONE,
      INVALID_TOKEN("The JWT 'exp' claim must be a number")},
     CTX_DEFAULT, "GET", "/artists", NULL, NULL, NULL, ANY_ROLE ",\"exp\":\"x\"}"},
    {{"JwtClaimsErr NbfClaimNotNumber", REQ, 401, "PGRST303",
      "The JWT 'nbf' claim must be a number", NONE, NONE,
      INVALID_TOKEN("The JWT 'nbf' claim must be a number")},
     CTX_DEFAULT, "GET", "/artists", NULL, NULL, NULL, ANY_ROLE ",\"nbf\":\"x\"}"},
    {{"JwtClaimsErr IatClaimNotNumber", REQ, 401, "PGRST303",
      "The JWT 'iat' claim must be a number", NONE, NONE,
      INVALID_TOKEN("The JWT 'iat' claim must be a number")},
     CTX_DEFAULT, "GET", "/artists", NULL, NULL, NULL, ANY_ROLE ",\"iat\":\"x\"}"},
    {{"JwtClaimsErr AudClaimNotStringOrArray", REQ, 401, "PGRST303",
      "The JWT 'aud' claim must be a string or an array of strings", NONE, NONE,
      INVALID_TOKEN("The JWT 'aud' claim must be a string or an array of strings")},
     CTX_AUD, "GET", "/artists", NULL, NULL, NULL, ANY_ROLE ",\"aud\":1}"},
    /* ---------------------------------------------- NoSchemaCacheError */
    {{"NoSchemaCacheError", PGREST_ERR_SCHEMA, 503, "PGRST002",
      "Could not query the database for the schema cache. Retrying.", NONE, NONE, NULL},
     CTX_NO_SCHEMA, "GET", "/artists", ""},
};

START_TEST(request_constructors)
{
    for (size_t i = 0; i < sizeof request_rows / sizeof request_rows[0]; i++) {
        const request_row *r = &request_rows[i];
        pgrest_ctx *ctx = contexts[r->ctx];
        pgrest_arena *a = pgrest_arena_new(0);
        pgrest_error err = {0};
        int rc = run_request(ctx, a, build(a, r), NULL, &err);
        check_error(ctx, a, &r->e, rc, &err, NULL);
        pgrest_arena_free(a);
    }
    report();
}
END_TEST

/* AmbiguousRelBetween: api.track_notes has two foreign keys to
 * api.artists; details is compressedRel of each (Aeson sorts the keys),
 * hint relHint, in the same order. */
START_TEST(ambiguous_relationship)
{
    pgrest_arena *a = pgrest_arena_new(0);
    request_row r = {{0}, CTX_DEFAULT, "GET", "/artists", "select=track_notes(*)"};
    pgrest_error err = {0};
    int rc = run_request(contexts[CTX_DEFAULT], a, build(a, &r), NULL, &err);
    const char *author = "{\"cardinality\":\"one-to-many\",\"embedding\":\"artists with track_notes\","
                         "\"relationship\":\"track_notes_author_id_fkey using artists(id) and "
                         "track_notes(author_id)\"}";
    const char *editor = "{\"cardinality\":\"one-to-many\",\"embedding\":\"artists with track_notes\","
                         "\"relationship\":\"track_notes_editor_fkey using artists(id) and "
                         "track_notes(editor_id)\"}";
    char details[1024], hint[512];
    bool author_first = err.details != NULL && strstr(err.details, "author") != NULL &&
                        strstr(err.details, "author") < strstr(err.details, "editor");
    snprintf(details, sizeof details, "[%s,%s]", author_first ? author : editor,
             author_first ? editor : author);
    snprintf(hint, sizeof hint,
             "Try changing 'track_notes' to one of the following: 'track_notes!%s', "
             "'track_notes!%s'. Find the desired relationship in the 'details' key.",
             author_first ? "track_notes_author_id_fkey" : "track_notes_editor_fkey",
             author_first ? "track_notes_editor_fkey" : "track_notes_author_id_fkey");
    expected e = {"AmbiguousRelBetween", REQ, 300, "PGRST201",
                  "Could not embed because more than one relationship was found for 'artists' "
                  "and 'track_notes'", details, hint, NULL};
    check_error(contexts[CTX_DEFAULT], a, &e, rc, &err, NULL);
    pgrest_arena_free(a);
    report();
}
END_TEST

/* AmbiguousRpc: api.add(a integer, b integer) and api.add(a text) both
 * take a=1. */
START_TEST(ambiguous_function)
{
    pgrest_arena *a = pgrest_arena_new(0);
    request_row r = {{0}, CTX_OVERLOADED, "GET", "/rpc/add", "a=1"};
    pgrest_error err = {0};
    int rc = run_request(contexts[CTX_OVERLOADED], a, build(a, &r), NULL, &err);
    const char *ints = "api.add(a => integer, b => integer)", *text = "api.add(a => text)";
    bool ints_first = err.message != NULL && strstr(err.message, ints) != NULL &&
                      strstr(err.message, ints) < strstr(err.message, text);
    char msg[256];
    snprintf(msg, sizeof msg, "Could not choose the best candidate function between: %s, %s",
             ints_first ? ints : text, ints_first ? text : ints);
    expected e = {"AmbiguousRpc", REQ, 300, "PGRST203", msg, NONE,
                  "Try renaming the parameters or the function itself in the database so "
                  "function overloading can be resolved", NULL};
    check_error(contexts[CTX_OVERLOADED], a, &e, rc, &err, NULL);
    pgrest_arena_free(a);
    report();
}
END_TEST

/* ------------------------------------------------------------ responses */

/* Errors PostgREST finds in what the main statement returned: a plan for
 * the request and a made-up row through pgr_build_response. */
typedef struct response_row {
    expected e;
    request_row req;
    pgr_main_row row;
} response_row;

static const response_row response_rows[] = {
    {{"SingularityError", REQ, 406, "PGRST116", "Cannot coerce the result to a single JSON object",
      "The result contains 5 rows", NONE, NULL},
     {{0}, CTX_DEFAULT, "GET", "/artists", "", "Accept: application/vnd.pgrst.object+json\n"},
     {.page_total = 5, .body = "[]"}},
    {{"GucHeadersError", PGREST_ERR_DATABASE, 500, "PGRST111",
      "response.headers guc must be a JSON array composed of objects with a single key and a "
      "string value", NONE, NONE, NULL},
     {{0}, CTX_DEFAULT, "GET", "/artists", ""},
     {.page_total = 0, .body = "[]", .guc_headers = "{\"a\":1}"}},
    {{"GucHeadersError", PGREST_ERR_DATABASE, 500, "PGRST111",
      "response.headers guc must be a JSON array composed of objects with a single key and a "
      "string value", NONE, NONE, NULL},
     {{0}, CTX_DEFAULT, "GET", "/artists", ""},
     {.page_total = 0, .body = "[]", .guc_headers = "[{\"X-A\":\"1\",\"X-B\":\"2\"}]"}},
    {{"GucHeadersError", PGREST_ERR_DATABASE, 500, "PGRST111",
      "response.headers guc must be a JSON array composed of objects with a single key and a "
      "string value", NONE, NONE, NULL},
     {{0}, CTX_DEFAULT, "GET", "/artists", ""},
     {.page_total = 0, .body = "[]", .guc_headers = "[{}]"}},
    {{"GucStatusError", PGREST_ERR_DATABASE, 500, "PGRST112",
      "response.status guc must be a valid status code", NONE, NONE, NULL},
     {{0}, CTX_DEFAULT, "GET", "/artists", ""},
     {.page_total = 0, .body = "[]", .guc_status = "abc"}},
    {{"PutMatchingPkError", REQ, 400, "PGRST115",
      "Payload values do not match URL in primary key column(s)", NONE, NONE, NULL},
     {{0}, CTX_DEFAULT, "PUT", "/artists", "id=eq.1", "Content-Type: application/json\n",
      "{\"id\":2,\"name\":\"x\",\"country\":null,\"formed\":null,\"genre\":null}"},
     {.page_total = 0, .body = ""}},
    {{"MaxAffectedViolationError", REQ, 400, "PGRST124",
      "Query result exceeds max-affected preference constraint", "The query affects 5 rows", NONE,
      NULL},
     {{0}, CTX_DEFAULT, "PATCH", "/tracks", "id=gt.0",
      "Content-Type: application/json\nPrefer: handling=strict, max-affected=1\n",
      "{\"seconds\":1}"},
     {.page_total = 5, .body = ""}},
};

/* InvalidRange OutOfBounds: Response.hs answers it as a read whose status
 * is 416 and whose body is the error (errorPayload), so it has the
 * negotiated Content-Type and no Proxy-Status (that is errorResponseFor's). */
START_TEST(range_not_satisfiable_is_a_response)
{
    pgrest_ctx *ctx = contexts[CTX_DEFAULT];
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_error err = {0};
    pgrest_query_plan *plan = NULL;
    const request_row req = {{0}, CTX_DEFAULT, "GET", "/artists", "offset=10",
                              "Prefer: count=exact\nAccept: text/csv\n"};
    ck_assert_int_eq(run_request(ctx, a, build(a, &req), &plan, &err), PGREST_OK);
    const pgr_main_row row = {.has_total = true, .total = 5, .page_total = 0, .body = ""};
    pgrest_response *resp = NULL;
    ck_assert_int_eq(pgr_build_response(ctx, a, plan, &row, &resp, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_response_status(resp), 416);
    ck_assert_ptr_null(pgr_response_get_header(resp, "Proxy-Status"));
    ck_assert_str_eq(pgr_response_get_header(resp, "Content-Range"), "*/5");
    ck_assert_str_eq(pgr_response_get_header(resp, "Content-Type"), "text/csv; charset=utf-8");
    ck_assert_str_eq(pgr_response_get_header(resp, "Preference-Applied"), "count=exact");
    ck_assert_str_eq(pgrest_response_body(resp, NULL),
                     "{\"code\":\"PGRST103\",\"details\":\"An offset of 10 was requested, but there are only 5 rows.\","
                     "\"hint\":null,\"message\":\"Requested range not satisfiable\"}");
    pgrest_arena_free(a);
}
END_TEST

/* Response.hs decodeGucStatus reads response.status with Text.Read
 * decimal: leading digits, the rest ignored; no sign or space first. */
START_TEST(guc_status_reads_leading_digits)
{
    pgrest_ctx *ctx = contexts[CTX_DEFAULT];
    const struct {
        const char *guc;
        int status;
    } rows[] = {{"201abc", 201}, {"0202", 202}, {"418", 418}, {"720", 720},
                {" 201", 500}, {"+201", 500}, {"abc", 500}, {"1000", 500}, {"99", 500}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        pgrest_arena *a = pgrest_arena_new(0);
        pgrest_error err = {0};
        pgrest_query_plan *plan = NULL;
        const request_row req = {{0}, CTX_DEFAULT, "GET", "/artists", ""};
        ck_assert_int_eq(run_request(ctx, a, build(a, &req), &plan, &err), PGREST_OK);
        const pgr_main_row row = {.page_total = 0, .body = "[]", .guc_status = rows[i].guc};
        pgrest_response *resp = NULL;
        int rc = pgr_build_response(ctx, a, plan, &row, &resp, &err);
        if (rows[i].status == 500) {
            ck_assert_msg(rc != PGREST_OK && err.code != NULL && strcmp(err.code, "PGRST112") == 0,
                          "%s: expected PGRST112", rows[i].guc);
        } else {
            ck_assert_msg(rc == PGREST_OK, "%s: %s", rows[i].guc, show(err.message));
            ck_assert_int_eq(pgrest_response_status(resp), rows[i].status);
        }
        pgrest_arena_free(a);
    }
}
END_TEST

START_TEST(response_constructors)
{
    for (size_t i = 0; i < sizeof response_rows / sizeof response_rows[0]; i++) {
        const response_row *r = &response_rows[i];
        pgrest_ctx *ctx = contexts[r->req.ctx];
        pgrest_arena *a = pgrest_arena_new(0);
        pgrest_error err = {0};
        pgrest_query_plan *plan = NULL;
        int rc = run_request(ctx, a, build(a, &r->req), &plan, &err);
        ck_assert_msg(rc == PGREST_OK, "%s: planning failed: %s", r->e.constructor,
                      show(err.message));
        pgrest_response *resp = NULL;
        rc = pgr_build_response(ctx, a, plan, &r->row, &resp, &err);
        check_error(ctx, a, &r->e, rc, &err, NULL);
        pgrest_arena_free(a);
    }
    report();
}
END_TEST

/* ------------------------------------------------------------ RAISE 'PGRST' */

#define RAISE_DETAIL_HINT                                                             \
    "DETAIL must be a JSON object with obligatory keys: 'status', 'headers' and optional " \
    "key: 'status_text'."

START_TEST(raise_pgrst)
{
    pgrest_ctx *ctx = contexts[CTX_DEFAULT];
    struct {
        expected e;
        const char *message, *detail;
    } rows[] = {
        {{"PGRSTParseError MsgParseError", PGREST_ERR_DATABASE, 500, "PGRST121",
          "Could not parse JSON in the \"RAISE SQLSTATE 'PGRST'\" error",
          "Invalid JSON value for MESSAGE: 'not json'",
          "MESSAGE must be a JSON object with obligatory keys: 'code', 'message' and optional "
          "keys: 'details', 'hint'.", NULL},
         "not json", "{\"status\":400,\"headers\":{}}"},
        {{"PGRSTParseError NoDetail", PGREST_ERR_DATABASE, 500, "PGRST121",
          "Could not parse JSON in the \"RAISE SQLSTATE 'PGRST'\" error",
          "DETAIL is missing in the RAISE statement", RAISE_DETAIL_HINT, NULL},
         "{\"code\":\"123\",\"message\":\"m\"}", NULL},
        {{"PGRSTParseError DetParseError", PGREST_ERR_DATABASE, 500, "PGRST121",
          "Could not parse JSON in the \"RAISE SQLSTATE 'PGRST'\" error",
          "Invalid JSON value for DETAIL: '{\"status\":400}'", RAISE_DETAIL_HINT, NULL},
         "{\"code\":\"123\",\"message\":\"m\"}", "{\"status\":400}"},
        /* a raised 401 carries only the headers it names (Error.hs PgError
         * headers), no WWW-Authenticate */
        {{"PgError RAISE 'PGRST' (full control)", PGREST_ERR_DATABASE, 401, "123", "m", "d",
          "h", NULL},
         "{\"code\":\"123\",\"message\":\"m\",\"details\":\"d\",\"hint\":\"h\"}",
         "{\"status\":401,\"headers\":{\"X-Raised\":\"yes\"}}"},
        /* status is an aeson Int: an integral number, written 402.0 too,
         * and not limited to the registered codes */
        {{"PgError RAISE 'PGRST' (integral status)", PGREST_ERR_DATABASE, 402, "123", "m", NONE,
          NONE, NULL},
         "{\"code\":\"123\",\"message\":\"m\"}",
         "{\"status\":402.0,\"headers\":{\"X-Raised\":\"yes\"}}"},
        {{"PgError RAISE 'PGRST' (unregistered status)", PGREST_ERR_DATABASE, 720, "123", "m",
          NONE, NONE, NULL},
         "{\"code\":\"123\",\"message\":\"m\"}",
         "{\"status\":720,\"status_text\":null,\"headers\":{\"X-Raised\":\"yes\"}}"},
        /* status_text, when given, is text (Maybe Text) */
        {{"PGRSTParseError DetParseError (status_text)", PGREST_ERR_DATABASE, 500, "PGRST121",
          "Could not parse JSON in the \"RAISE SQLSTATE 'PGRST'\" error",
          "Invalid JSON value for DETAIL: '{\"status\":400,\"status_text\":1,\"headers\":{}}'",
          RAISE_DETAIL_HINT, NULL},
         "{\"code\":\"123\",\"message\":\"m\"}",
         "{\"status\":400,\"status_text\":1,\"headers\":{}}"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        pgrest_arena *a = pgrest_arena_new(0);
        pgrest_error err = {0};
        pgrest_response *resp = NULL;
        int rc = pgr_raise_response(ctx, a, rows[i].message, rows[i].detail, &resp, &err);
        check_error(ctx, a, &rows[i].e, rc, &err, resp);
        if (resp != NULL)
            EXPECT(same("yes", pgr_response_get_header(resp, "X-Raised")), "X-Raised header");
        pgrest_arena_free(a);
    }
    report();
}
END_TEST

/* ------------------------------------------------------------ PgError */

/* ConnectionUsageError: no connection at all (no pool configured). */
START_TEST(connection_usage_error)
{
    pgrest_ctx *ctx = contexts[CTX_DEFAULT];
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = pgrest_request_new(a, "GET", "/artists", "");
    pgrest_response *resp = pgrest_handle(ctx, a, req);
    ck_assert_ptr_nonnull(resp);
    ck_assert_int_eq(pgrest_response_status(resp), 503);
    size_t len;
    json_object *body = json_tokener_parse(pgrest_response_body(resp, &len));
    ck_assert_str_eq(json_field(body, "code"), "PGRST000");
    ck_assert_str_eq(json_field(body, "message"), "Database connection error.");
    ck_assert_ptr_null(json_field(body, "hint"));
    json_object_put(body);
    ck_assert_str_eq(pgr_response_get_header(resp, "Proxy-Status"), "PostgREST; error=PGRST000");
    pgrest_arena_free(a);
}
END_TEST

/* ClientError: libpq fails on the connection (PGRST001, details the libpq
 * message), through pgrest_execute on a connection that never opened. */
START_TEST(client_error)
{
    pgrest_ctx *ctx = contexts[CTX_DEFAULT];
    pgrest_arena *a = pgrest_arena_new(0);
    request_row r = {{0}, CTX_DEFAULT, "GET", "/artists", ""};
    pgrest_api_request *api;
    pgrest_query_plan *plan;
    pgrest_statements *st;
    pgrest_error err = {0};
    pgrest_request *req = build(a, &r);
    pgrest_auth *auth;
    ck_assert_int_eq(pgrest_authenticate(ctx, a, req, &auth, &err), PGREST_OK);
    pgrest_request_set_auth(req, auth);
    ck_assert_int_eq(pgrest_parse_request(ctx, a, req, &api, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_plan(ctx, a, api, &plan, &err), PGREST_OK);
    ck_assert_int_eq(pgrest_emit_sql(ctx, a, plan, &st, &err), PGREST_OK);
    PGconn *pg = PQconnectdb("host=/nonexistent/pgrest-error-table port=1 connect_timeout=1");
    ck_assert_int_eq(PQstatus(pg), CONNECTION_BAD);
    pgrest_response *resp = NULL;
    int rc = pgrest_execute(ctx, a, st, pg, &resp, &err);
    ck_assert_int_eq(rc, PGREST_ERR_CONNECTION);
    ck_assert_int_eq(err.http_status, 503);
    ck_assert_str_eq(err.code, "PGRST001");
    ck_assert_str_eq(err.message, "Database client error. Retrying the connection.");
    ck_assert_ptr_nonnull(err.details);
    ck_assert_ptr_null(err.hint);
    PQfinish(pg);
    pgrest_arena_free(a);
}
END_TEST

/* mapSQLtoHTTP, every branch in its order (exact codes before classes). */
START_TEST(sqlstate_to_http_status)
{
    static const struct {
        const char *code, *message;
        bool authed;
        int status;
    } rows[] = {
        {"08000", "", false, 503}, {"08006", "", true, 503},
        {"09000", "", false, 500},
        {"0L000", "", false, 403}, {"0LP01", "", false, 403},
        {"0P000", "", false, 403},
        {"23503", "", false, 409}, {"23505", "", false, 409},
        {"25006", "", false, 405},
        {"21000", "UPDATE requires a WHERE clause", false, 400},
        {"21000", "DELETE requires a WHERE clause", true, 400},
        {"21000", "more than one row returned by a subquery used as an expression", false, 500},
        {"22023", "role \"nope\" does not exist", false, 401},
        {"22023", "invalid value for parameter", false, 400},
        {"22023", "role does not exist here", true, 400},
        {"22023", "rolex does not exist", true, 401},
        {"25000", "", false, 500}, {"25P02", "", false, 500},
        {"28000", "", false, 403}, {"28P01", "", false, 403},
        {"2D000", "", false, 500},
        {"38000", "", false, 500}, {"38001", "", false, 500},
        {"39000", "", false, 500}, {"39P01", "", false, 500},
        {"3B000", "", false, 500},
        {"40001", "", false, 500}, {"40P01", "", false, 500},
        {"53400", "", false, 500},
        {"53000", "", false, 503}, {"53100", "", false, 503}, {"53300", "", false, 503},
        {"54000", "", false, 500}, {"54001", "", false, 500},
        {"55000", "", false, 500}, {"55P03", "", false, 500},
        {"57P01", "", false, 503},
        {"57000", "", false, 500}, {"57014", "", false, 500}, {"57P02", "", false, 500},
        {"58000", "", false, 500}, {"58030", "", false, 500},
        {"F0000", "", false, 500},
        {"HV000", "", false, 500},
        {"P0001", "", false, 400},
        {"P0000", "", false, 500}, {"P0002", "", false, 500}, {"P0004", "", false, 500},
        {"XX000", "", false, 500}, {"XX001", "", false, 500},
        {"42883", "function xmlagg(integer) does not exist", false, 406},
        {"42883", "function api.nope() does not exist", false, 404},
        {"42P01", "", false, 404},
        {"42P17", "", false, 500},
        {"42501", "permission denied for table t", false, 401},
        {"42501", "permission denied for table t", true, 403},
        /* RAISE SQLSTATE 'PTxyz': the status is xyz (HTTP.mkStatus) */
        {"PT402", "", false, 402}, {"PT418", "", true, 418}, {"PT200", "", false, 200},
        {"PTabc", "", false, 500}, {"PT720", "", false, 720}, {"PT099", "", false, 500},
        /* anything else: 400 */
        {"22P02", "", false, 400}, {"23502", "", false, 400}, {"42703", "", false, 400},
        {"42P10", "", false, 400}, {"2201W", "", false, 400}, {"0A000", "", false, 400},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        ck_assert_msg(pgr_sqlstate_http_status(rows[i].code, rows[i].message, rows[i].authed) ==
                          rows[i].status,
                      "%s \"%s\" authed=%d: got %d, want %d", rows[i].code, rows[i].message,
                      rows[i].authed,
                      pgr_sqlstate_http_status(rows[i].code, rows[i].message, rows[i].authed),
                      rows[i].status);
}
END_TEST

/* PgError's headers: a 401 gets WWW-Authenticate: Bearer; the body is
 * PostgreSQL's code/message/details/hint. */
START_TEST(pg_error_response)
{
    pgrest_ctx *ctx = contexts[CTX_DEFAULT];
    pgrest_arena *a = pgrest_arena_new(0);
    int status = pgr_sqlstate_http_status("42501", "permission denied for table artists", false);
    pgrest_error err = {0};
    pgr_error(&err, status, "42501", "permission denied for table artists", NULL, NULL);
    expected e = {"PgError 42501 anonymous", PGREST_ERR_REQUEST, 401, "42501",
                  "permission denied for table artists", NONE, NONE, "Bearer"};
    check_error(ctx, a, &e, pgr_error_status(status, "42501"), &err, NULL);
    pgr_error(&err, 403, "42501", "permission denied for table artists", "d", "h");
    expected e403 = {"PgError 42501 authenticated", PGREST_ERR_REQUEST, 403, "42501",
                     "permission denied for table artists", "d", "h", NULL};
    check_error(ctx, a, &e403, pgr_error_status(403, "42501"), &err, NULL);
    pgrest_arena_free(a);
    report();
}
END_TEST

/* pgrest_status follows the code (pgrest.h), not the HTTP class. */
START_TEST(status_follows_code)
{
    ck_assert_int_eq(pgr_error_status(503, "PGRST000"), PGREST_ERR_CONNECTION);
    ck_assert_int_eq(pgr_error_status(503, "PGRST001"), PGREST_ERR_CONNECTION);
    ck_assert_int_eq(pgr_error_status(503, "PGRST002"), PGREST_ERR_SCHEMA);
    ck_assert_int_eq(pgr_error_status(504, "PGRST003"), PGREST_ERR_CONNECTION);
    ck_assert_int_eq(pgr_error_status(500, "PGRST300"), PGREST_ERR_CONFIG);
    ck_assert_int_eq(pgr_error_status(500, "PGRST111"), PGREST_ERR_DATABASE);
    ck_assert_int_eq(pgr_error_status(500, "PGRST112"), PGREST_ERR_DATABASE);
    ck_assert_int_eq(pgr_error_status(500, "PGRST121"), PGREST_ERR_DATABASE);
    ck_assert_int_eq(pgr_error_status(300, "PGRST201"), PGREST_ERR_REQUEST);
    ck_assert_int_eq(pgr_error_status(404, "PGRST205"), PGREST_ERR_REQUEST);
    ck_assert_int_eq(pgr_error_status(500, PGR_CODE_INTERNAL), PGREST_ERR_INTERNAL);
    pgrest_error err = {0};
    ck_assert_int_eq(pgr_error_oom(&err), PGREST_ERR_INTERNAL);
    ck_assert_int_eq(err.http_status, 500);
    ck_assert_str_eq(err.code, PGR_CODE_INTERNAL);
    /* API misuse is the host's bug, reported without touching memory */
    ck_assert_int_eq(pgrest_parse_request(NULL, NULL, NULL, NULL, &err), PGREST_ERR_INTERNAL);
    ck_assert_str_eq(err.code, PGR_CODE_INTERNAL);
    ck_assert_str_eq(err.message, "Invalid arguments");
    ck_assert_str_eq(err.details, "pgrest_parse_request");
}
END_TEST

/* Constructors pgrest does not produce, and why. The test keeps the list
 * honest: every Error.hs constructor is either a row above or here. */
static const struct {
    const char *constructor, *reason;
} gaps[] = {
    {"JwtDecodeErr UnsupportedTokenType",
     "jose's decode of a three-part token with a JwkSet only returns a JWS or an error; "
     "unreachable in PostgREST too"},
    {"JwtDecodeErr UnreachableDecodeError", "unreachable by construction (Auth/Jwt.hs)"},
    {"UnacceptableFilter (PGRST120)",
     "never constructed in PostgREST's source: a filter on an embed's name other than "
     "[not.]is.null is a plain column filter (PostgreSQL's 42703)"},
    {"PgError AcquisitionTimeoutUsageError (PGRST003, 504)",
     "needs a pool with every connection busy on a live database; exec/pool.c produces it"},
    {"PgError ResultError (non-server, PGRSTX00)",
     "hasql's own result-decoding errors; libpq has no equivalent, and an error result "
     "without SQLSTATE is the ClientError PGRST001"},
};

START_TEST(documented_gaps)
{
    for (size_t i = 0; i < sizeof gaps / sizeof gaps[0]; i++)
        ck_assert(gaps[i].constructor != NULL && gaps[i].reason != NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("error_table");
    TCase *tc = tcase_create("error_hs");
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_add_test(tc, request_constructors);
    tcase_add_test(tc, ambiguous_relationship);
    tcase_add_test(tc, ambiguous_function);
    tcase_add_test(tc, response_constructors);
    tcase_add_test(tc, guc_status_reads_leading_digits);
    tcase_add_test(tc, range_not_satisfiable_is_a_response);
    tcase_add_test(tc, raise_pgrst);
    tcase_add_test(tc, connection_usage_error);
    tcase_add_test(tc, client_error);
    tcase_add_test(tc, sqlstate_to_http_status);
    tcase_add_test(tc, pg_error_response);
    tcase_add_test(tc, status_follows_code);
    tcase_add_test(tc, documented_gaps);
    suite_add_tcase(s, tc);
    return check_run(s);
}
