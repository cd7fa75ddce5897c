/* The embeds built as text (lib/sql/emit_embed_text.c, bench/README.md
 * issue 34 item 4 candidate D) against the jsonb shape they replace: every
 * request runs twice on the same context, once with the internal switch
 * test_embeds_as_jsonb (the jsonb embeds and json_agg) and once without,
 * and the two bodies must be the same bytes. The main statement is
 * captured through the query logger to check which shape ran: the text
 * shape where it applies, the jsonb shape where it must fall back (else a
 * comparison of a shape with itself would pass for nothing).
 *
 * Data: tests/fixtures/test_schema.sql (schema api), a schema `et` this
 * test creates with a column of each type and hostile values (in four
 * sessions of different date, interval, float and bytea settings), and
 * Chinook when PGREST_TEST_CHINOOK_URI is set. */
#include <check.h>

#include "check_run.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/context_types.h"
#include "harness.h"

/* the text shape's to-many aggregate; the jsonb shape never writes it */
#define TEXT_MARK "'[' || string_agg("

static char *last_main;

static void logger(void *arg, int status, const char *sql)
{
    (void)arg;
    (void)status;
    if (strstr(sql, "pgrst_source") == NULL && strstr(sql, "_postgrest_t") == NULL)
        return;
    free(last_main);
    last_main = strdup(sql);
}

static bool main_is_text(void)
{
    return last_main != NULL &&
           (strstr(last_main, TEXT_MARK) != NULL || strstr(last_main, "pgrst_m") != NULL);
}

typedef enum { FALLS_BACK, TEXT } want_shape;

static void run(pgrest_ctx *c, bool as_jsonb, const char *method, const char *path,
                const char *query, const char *const *headers, const char *body,
                test_response *r)
{
    free(last_main);
    last_main = NULL;
    c->test_embeds_as_jsonb = as_jsonb;
    harness_request(c, method, path, query, headers, body, r);
    c->test_embeds_as_jsonb = false;
}

/* The body of the request with streaming allowed (a threshold no body
 * here reaches, so it comes whole): a streamed read runs its own main
 * statement, row by row, which builds its rows in the same shape. */
static char *streamed_body(pgrest_ctx *c, bool as_jsonb, const char *method, const char *path,
                           const char *query, const char *const *headers, const char *body)
{
    free(last_main);
    last_main = NULL;
    c->test_embeds_as_jsonb = as_jsonb;
    pgrest_arena *a = pgrest_arena_new(0);
    pgrest_request *req = harness_new_request(a, method, path, query, headers, body);
    pgrest_request_allow_streaming(req, 64u << 20);
    size_t len;
    const char *b = pgrest_response_body(pgrest_handle(c, a, req), &len);
    char *copy = strndup(b ? b : "", len);
    pgrest_arena_free(a);
    c->test_embeds_as_jsonb = false;
    return copy;
}

/* Runs the request in both shapes, buffered and streamed: the same status
 * (expect_status) and the same body bytes; want says which shape the
 * default must pick. */
static void same_req(pgrest_ctx *c, want_shape want, int expect_status, const char *method,
                     const char *path, const char *query, const char *const *headers,
                     const char *body)
{
    test_response a, d;
    run(c, true, method, path, query, headers, body, &a);
    ck_assert_msg(!main_is_text(), "%s?%s: the switch left the text shape on", path, query);
    run(c, false, method, path, query, headers, body, &d);
    ck_assert_msg(a.status == expect_status, "%s?%s: jsonb shape status %d: %s", path, query,
                  a.status, a.body);
    ck_assert_msg(d.status == a.status, "%s?%s: status %d (jsonb) vs %d (text): %s", path,
                  query, a.status, d.status, d.body);
    ck_assert_msg(main_is_text() == (want == TEXT), "%s?%s: expected the %s shape, ran %s",
                  path, query, want == TEXT ? "text" : "jsonb",
                  last_main ? last_main : "(no main statement)");
    ck_assert_msg(strcmp(a.body, d.body) == 0,
                  "%s?%s: bodies differ\njsonb: %s\ntext:  %s", path, query, a.body, d.body);
    char *sa = streamed_body(c, true, method, path, query, headers, body);
    ck_assert_msg(!main_is_text(), "%s?%s: streamed, the switch left the text shape on", path,
                  query);
    char *sd = streamed_body(c, false, method, path, query, headers, body);
    ck_assert_msg(main_is_text() == (want == TEXT), "%s?%s: streamed, expected the %s shape",
                  path, query, want == TEXT ? "text" : "jsonb");
    ck_assert_msg(strcmp(a.body, sa) == 0 && strcmp(a.body, sd) == 0,
                  "%s?%s: streamed bodies differ\nbuffered: %s\njsonb: %s\ntext:  %s", path,
                  query, a.body, sa, sd);
    free(sa);
    free(sd);
    harness_free(&a);
    harness_free(&d);
}

static void same(pgrest_ctx *c, want_shape want, const char *path, const char *query)
{
    same_req(c, want, 200, "GET", path, query, NULL, NULL);
}

/* ------------------------------------------------------------ fixture */

static pgrest_ctx *ctx;

static void setup(void)
{
    ctx = harness_ctx(NULL);
    pgrest_ctx_set_query_logger(ctx, logger, NULL);
}

static void teardown(void)
{
    pgrest_ctx_free(ctx);
}

START_TEST(fixture_embeds)
{
    same(ctx, TEXT, "/artists", "select=*,albums(id,artist_id,title,released,rating,tags)&order=id");
    /* a domain with a JSON representation (albums.cover) falls back */
    same(ctx, FALLS_BACK, "/artists", "select=*,albums(*)&order=id");
    same(ctx, TEXT, "/artists", "select=*,albums(id,artist_id,title,released,rating,tags,tracks(*))&order=id");
    same(ctx, TEXT, "/albums", "select=id,title,artists(*)&order=id");
    same(ctx, FALLS_BACK, "/albums", "select=id,title,cover,artists(*)&order=id");
    same(ctx, TEXT, "/albums", "select=title,artists(name),tracks(title)&id=eq.1");
    /* tracks -> albums is a computed relationship in the fixture */
    same(ctx, FALLS_BACK, "/tracks", "select=*,albums(id,artist_id,title,released,rating,tags,artists(*))&order=id");
    same(ctx, TEXT, "/artists", "select=name,albums(title)&albums.rating=gte.5&order=id");
    same(ctx, TEXT, "/artists",
         "select=name,albums(title,released)&albums.order=released.desc&albums.limit=1&order=id");
    same(ctx, TEXT, "/artists", "select=name,albums!inner(title)&albums.rating=gte.5&order=id");
    same(ctx, TEXT, "/artists", "select=id,albums(id)&albums=is.null&order=id");
    same(ctx, TEXT, "/artists", "select=id,albums(id)&albums=not.is.null&order=id");
    same(ctx, TEXT, "/albums", "select=id,title,artists(id,name)&order=artists(name).desc,id");
    same(ctx, TEXT, "/albums", "select=id,artists!inner(name)&artists.name=eq.Solo%20Pianist");
    same(ctx, TEXT, "/albums", "select=id,artists(name)&artists=is.null");
    same(ctx, TEXT, "/artists", "select=*,artist_profiles(*)&order=id");
    same(ctx, TEXT, "/playlists", "select=*,tracks(*)&order=id");
    same(ctx, TEXT, "/playlists", "select=*,playlist_track(*,tracks(*,track_notes(*)))&order=id");
    same(ctx, TEXT, "/tracks", "select=*,track_notes(*)&order=id");
    same(ctx, TEXT, "/labels", "select=*,artists(*)&order=id");
    same(ctx, TEXT, "/employees", "select=*,manager:employees!manager_id(*)&order=id");
    same(ctx, TEXT, "/artists",
         "select=nm:name,authored:track_notes!author_id(*),edited:track_notes!editor_id(*)&order=id");
    same(ctx, TEXT, "/artists", "select=name,albums(title)&limit=2&offset=1&order=id");
    same_req(ctx, TEXT, 200, "GET", "/artists", "select=*,albums(id,artist_id,title,released,rating,tags)&order=id",
             (const char *const[]){"Prefer", "count=exact", NULL}, NULL);
    same_req(ctx, TEXT, 206, "GET", "/artists", "select=*,albums(id,artist_id,title,released,rating,tags)&order=id&limit=1",
             (const char *const[]){"Prefer", "count=exact", NULL}, NULL);
    same_req(ctx, TEXT, 206, "GET", "/artists", "select=*,albums(id,artist_id,title,released,rating,tags)&order=id",
             (const char *const[]){"Range", "0-1", "Prefer", "count=exact", NULL}, NULL);
}
END_TEST

/* Shapes the text builder does not take: the jsonb shape, same bodies. */
START_TEST(fixture_fallbacks)
{
    /* no embed: the flat body stays json_agg */
    same(ctx, FALLS_BACK, "/artists", "select=*&order=id");
    /* repeated keys, at the top and inside an embed */
    same(ctx, FALLS_BACK, "/albums", "select=id,id:title,artists(name)&order=id");
    same(ctx, FALLS_BACK, "/albums", "select=id,artists(name,name:country)&order=id");
    /* casts, JSON paths, spreads, aggregates, hidden embeds */
    same(ctx, FALLS_BACK, "/albums", "select=id::text,artists(name)&order=id");
    same(ctx, FALLS_BACK, "/albums", "select=id,artists(formed::text)&order=id");
    same(ctx, FALLS_BACK, "/albums", "select=id,tags->0,artists(name)&order=id");
    same(ctx, FALLS_BACK, "/albums", "select=id,...artists(name)&order=id");
    same(ctx, FALLS_BACK, "/albums", "select=id,artists()&artists.name=eq.Solo%20Pianist");
    /* the object and stripped forms, CSV */
    same_req(ctx, FALLS_BACK, 200, "GET", "/albums", "select=id,artists(name)&id=eq.1",
             (const char *const[]){"Accept", "application/vnd.pgrst.object+json", NULL}, NULL);
    same_req(ctx, FALLS_BACK, 200, "GET", "/albums", "select=id,artists(*)&order=id",
             (const char *const[]){"Accept", "application/vnd.pgrst.array+json;nulls=stripped",
                                   NULL},
             NULL);
    same_req(ctx, FALLS_BACK, 200, "GET", "/albums", "select=id,artists(name)&order=id",
             (const char *const[]){"Accept", "text/csv", NULL}, NULL);
}
END_TEST

/* ------------------------------------------------------------ hostile values */

static const char *const hostile_sql[] = {
    "DROP SCHEMA IF EXISTS et CASCADE",
    "CREATE SCHEMA et",
    "CREATE TYPE et.kind AS ENUM ('pl\"ain', 'b\\ack', 'é')",
    "CREATE DOMAIN et.small AS smallint",
    "CREATE DOMAIN et.word AS text",
    "CREATE DOMAIN et.lucky AS integer DEFAULT 7",
    "CREATE TYPE et.pt AS (x integer, y float8, label text)",
    "CREATE TABLE et.grp (id integer PRIMARY KEY, name text)",
    "CREATE TABLE et.vals (id integer PRIMARY KEY, grp_id integer REFERENCES et.grp,"
    " i2 smallint, i4 integer, i8 bigint, f4 real, f8 double precision, num numeric,"
    " num4 numeric(12,4), t text, vc varchar(10), ch character(4), nm name, ba bytea,"
    " b boolean, d date, ts timestamp, tstz timestamptz, tm time, tmtz timetz,"
    " iv interval, u uuid, m money, j json, jb jsonb, ta text[], fa float8[],"
    " na numeric[], ja json[], k et.kind, sm et.small, w et.word, l et.lucky,"
    " p et.pt, pa et.pt[], \"we\"\"ird\\key\" text, \"é\" integer, \"a\tb\" text, ab integer)",
    "CREATE TABLE et.more (id integer PRIMARY KEY, val_id integer REFERENCES et.vals, note text)",
    "INSERT INTO et.grp VALUES (1, 'one'), (2, 'two'), (3, 'empty')",
    "INSERT INTO et.vals (id, grp_id, i2, i4, i8, f4, f8, num, num4, t, vc, ch, nm, ba, b, d,"
    " ts, tstz, tm, tmtz, iv, u, m, j, jb, ta, fa, na, ja, k, sm, w, p, pa,"
    " \"we\"\"ird\\key\", \"é\", \"a\tb\", ab) VALUES"
    " (1, 1, 32767, -2147483648, 9223372036854775807, 'NaN', 'Infinity', 'NaN', -0.0000,"
    "  E'tab\\there \"q\" back\\\\slash \\u2028 \\U0001F600 é \\u0001 \\\\u0000', 'null', 'ab', 'x',"
    "  '\\x00ff', true, '4713-01-01 BC', 'infinity', '2024-02-29 12:00:00+05:45', '24:00',"
    "  '10:00-15:59', '-1 year +2 mons -3 days 04:05:06.789',"
    "  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 12.34,"
    "  '{\"a\":1, \"a\":2,  \"b\" : [1,2 ], \"\\u00e9\": -0, \"n\": 1E400}',"
    "  '{\"a\":1,\"a\":2,\"\":0,\"\\u00e9\":1, \"bb\": {\"b\": 1, \"b\": 2}}',"
    "  '{a,NULL,\"q\\\"x\"}', '{NaN,-0,Infinity,NULL}', '{1.50,NaN,-0.0,NULL}',"
    "  ARRAY['{\"x\":  1}'::json, NULL], 'pl\"ain', -1, 'w', ROW(1, '-0', 'a\"b'),"
    "  ARRAY[ROW(1, 1.5, 'x')::et.pt, NULL], 'k1', 1, 'tab', 2),"
    " (2, 1, -32768, 2147483647, -9223372036854775808, '-Infinity', '-0', 'Infinity',"
    "  99999999.9999, '{\"a\":1}', '', NULL, '', '', false, 'infinity',"
    "  '294276-12-31 23:59:59', '-infinity', '00:00', '00:00+14', '-178000000 years',"
    "  NULL, -0.5, '\"\\ud83d\\ude00\"', '[1e+20, 0.0000001, 2.50, -0, 1.0e-130]',"
    "  '{}', '{}', '{}', '{}', 'b\\ack', 0, '', NULL, NULL, '', NULL, NULL, NULL),"
    " (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
    "  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'null', 'null', NULL, NULL,"
    "  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),"
    " (4, 2, 0, 0, 0, 1e-45, 5e-324, -1e-21, 1.5000, 'null', 'x', 'abcd', 'n', NULL,"
    "  NULL, '2024-02-29', '0001-01-01 00:00:00 BC', '2024-02-29 00:00:00-03:30', NULL,"
    "  NULL, '1 day -1 second', NULL, NULL, '123456789012345678901234567890123456789012345678e-5',"
    "   '[\"\\u00e9\", 12345678901234567890123456789012345678901234567890e10]',"
    "  '{NULL}', '{1e22,123456789012345678,0.1}', '{1e+20,-1e-21}', NULL, 'é', NULL, NULL,"
    "  ROW(NULL, NULL, NULL), '{}', NULL, NULL, NULL, NULL)",
    "INSERT INTO et.more VALUES (1, 1, 'm1'), (2, 1, 'm2'), (3, 2, NULL), (4, 4, E'\\u2028')",
    "CREATE FUNCTION et.vals_of(g integer) RETURNS SETOF et.vals STABLE LANGUAGE sql"
    " AS 'SELECT * FROM et.vals WHERE g IS NULL OR grp_id = g ORDER BY id'",
    "GRANT USAGE ON SCHEMA et TO web_anon, web_user",
    "GRANT SELECT ON ALL TABLES IN SCHEMA et TO web_anon, web_user",
    "GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA et TO web_anon, web_user",
};

static void create_hostile(void)
{
    PGconn *admin = harness_admin_connect();
    for (size_t i = 0; i < sizeof hostile_sql / sizeof hostile_sql[0]; i++)
        harness_admin_exec(admin, hostile_sql[i]);
    PQfinish(admin);
}

static void drop_hostile(void)
{
    PGconn *admin = harness_admin_connect();
    harness_admin_exec(admin, "DROP SCHEMA IF EXISTS et CASCADE");
    PQfinish(admin);
}

/* The test database's URI with session settings (libpq's options). */
static char *uri_with(const char *options)
{
    const char *uri = harness_db_uri();
    size_t n = strlen(uri) + strlen(options) * 3 + 16;
    char *out = malloc(n);
    ck_assert_ptr_nonnull(out);
    size_t k = (size_t)snprintf(out, n, "%s%soptions=", uri, strchr(uri, '?') ? "&" : "?");
    for (const char *p = options; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '_' || ch == '.')
            out[k++] = (char)ch;
        else
            k += (size_t)snprintf(out + k, n - k, "%%%02X", ch);
    }
    out[k] = '\0';
    return out;
}

static pgrest_ctx *hostile_ctx(const char *options)
{
    char *uri = uri_with(options);
    const char *const opts[] = {"db-uri", uri, "db-schemas", "et", NULL};
    pgrest_ctx *c = harness_ctx(opts);
    free(uri);
    pgrest_ctx_set_query_logger(c, logger, NULL);
    return c;
}

static void hostile_requests(pgrest_ctx *c)
{
    same(c, TEXT, "/grp", "select=*,vals(*)&order=id");
    same(c, TEXT, "/vals", "select=*,grp(*)&order=id");
    same(c, TEXT, "/grp", "select=*,vals(*,grp(*),more(*))&order=id");
    same(c, TEXT, "/vals", "select=*,grp(*,vals(*,more(*)))&order=id");
    same(c, TEXT, "/more", "select=*,vals(*,grp(*))&order=id");
    same(c, TEXT, "/vals", "select=id,a:t,b:j,bb:jb,grp(id,\"the name\":name)&order=id");
    same(c, TEXT, "/grp", "select=name,vals(id,f4,f8,num)&vals.order=id.desc&order=id");
    same(c, TEXT, "/grp", "select=name,vals!inner(id,t)&vals.id=gt.1&order=id");
    same(c, TEXT, "/vals", "select=id,grp!inner(name)&order=id");
    same(c, TEXT, "/vals", "select=id,grp(name)&grp=is.null&order=id");
    same(c, TEXT, "/vals", "select=id,more(*)&more=is.null&order=id");
    same(c, TEXT, "/rpc/vals_of", "select=*,grp(*),more(*)&g=1");
    same(c, TEXT, "/rpc/vals_of", "select=id,t,grp(name),more(note)&g=2");
    same_req(c, TEXT, 200, "POST", "/rpc/vals_of", "select=*,grp(*),more(*)", NULL, "{\"g\": null}");
    /* no embed, or an embed under a fallback, stay jsonb */
    same(c, FALLS_BACK, "/vals", "select=*&order=id");
    same(c, FALLS_BACK, "/rpc/vals_of", "select=*&g=1");
    same(c, FALLS_BACK, "/vals", "select=id,jb->a,grp(name)&order=id");
}

START_TEST(hostile_default)
{
    create_hostile();
    pgrest_ctx *c = hostile_ctx("-c TimeZone=UTC");
    hostile_requests(c);
    pgrest_ctx_free(c);
    drop_hostile();
}
END_TEST

START_TEST(hostile_settings)
{
    static const char *const sessions[] = {
        "-c TimeZone=America/St_Johns -c DateStyle=SQL,DMY -c IntervalStyle=iso_8601",
        "-c extra_float_digits=0 -c bytea_output=escape -c TimeZone=Asia/Kathmandu",
        "-c extra_float_digits=3 -c IntervalStyle=postgres_verbose -c DateStyle=German",
        "-c extra_float_digits=-15 -c lc_monetary=C",
    };
    create_hostile();
    for (size_t i = 0; i < sizeof sessions / sizeof sessions[0]; i++) {
        pgrest_ctx *c = hostile_ctx(sessions[i]);
        hostile_requests(c);
        pgrest_ctx_free(c);
    }
    drop_hostile();
}
END_TEST

/* ------------------------------------------------------------ Chinook */

static pgrest_ctx *chinook_ctx(void)
{
    const char *uri = getenv("PGREST_TEST_CHINOOK_URI");
    if (uri == NULL || *uri == '\0')
        return NULL;
    const char *const opts[] = {"db-uri", uri, "db-schemas", "public", "db-anon-role", "postgres",
                                NULL};
    pgrest_ctx *c = harness_ctx(opts);
    pgrest_ctx_set_query_logger(c, logger, NULL);
    return c;
}

START_TEST(chinook)
{
    pgrest_ctx *c = chinook_ctx();
    if (c == NULL) {
        fprintf(stderr, "PGREST_TEST_CHINOOK_URI not set: Chinook comparisons skipped\n");
        return;
    }
    /* the benchmark's three embed scenarios */
    for (int id = 0; id <= 350; id += 7) {
        char q[128];
        snprintf(q, sizeof q, "select=*,track(*,genre(*))&artist_id=eq.%d", id);
        same(c, TEXT, "/album", q);
        snprintf(q, sizeof q, "select=album_id,title,artist_id,track(*,genre(*))&artist_id=eq.%d", id);
        same(c, TEXT, "/rpc/ret_albums", q);
    }
    same(c, TEXT, "/album", "select=*,track(*,genre(*))");
    same(c, TEXT, "/album",
         "select=*,artist(*),track(*,genre(*),media_type(*),invoice_line(*))&album_id=lt.120");
    for (int g = 0; g <= 26; g += 3) {
        char q[128];
        snprintf(q, sizeof q, "select=*,album(*,artist(*)),invoice_line(*)&genre_id=eq.%d", g);
        same(c, TEXT, "/track", q);
    }
    same(c, TEXT, "/artist", "select=*,album(*,track(*))&artist_id=lt.60");
    same(c, TEXT, "/customer", "select=*,invoice(*,invoice_line(*,track(*)))&customer_id=lt.30");
    same(c, TEXT, "/invoice", "select=*,customer(*),invoice_line(*)&invoice_id=lt.200");
    same(c, TEXT, "/playlist", "select=*,playlist_track(*,track(*,album(*)))&playlist_id=lt.6");
    same(c, TEXT, "/playlist", "select=*,track(*)&playlist_id=lt.4");
    same(c, TEXT, "/album", "select=title,track(name,milliseconds)&track.order=milliseconds.desc"
                            "&track.limit=2&artist_id=lt.30&order=title");
    pgrest_ctx_free(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("embed_text");
    TCase *tc = tcase_create("fixture");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, fixture_embeds);
    tcase_add_test(tc, fixture_fallbacks);
    suite_add_tcase(s, tc);
    TCase *th = tcase_create("hostile");
    tcase_set_timeout(th, 120);
    tcase_add_test(th, hostile_default);
    tcase_add_test(th, hostile_settings);
    tcase_add_test(th, chinook);
    suite_add_tcase(s, th);
    return s;
}

int main(void)
{
    harness_db_uri();
    int rc = check_run(suite());
    free(last_main);
    return rc;
}
