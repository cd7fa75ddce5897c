/* Filters, logic trees, orders and selects on every operator and column
 * type, each request compared with the same question asked of PostgreSQL
 * directly: the SQL written by hand the way PostgREST's SqlFragment
 * (pgFmtFilter, pgFmtLogicTree, pgFmtOrderTerm, pgFmtField) phrases it,
 * with the values as untyped literals like its unknown-typed parameters.
 * Rows are compared as a multiset unless the request orders them; a
 * request PostgreSQL refuses must fail with PostgreSQL's code and message.
 * The tables live in a schema of their own (fsql), made by setup. */
#include <check.h>
#include <json-c/json.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "harness.h"

static const char schema_sql[] =
    "DROP SCHEMA IF EXISTS fsql CASCADE;"
    "CREATE SCHEMA fsql;"
    "CREATE TYPE fsql.mood AS ENUM ('sad', 'ok', 'happy');"
    "CREATE DOMAIN fsql.short_text AS text CHECK (length(VALUE) < 50);"
    "CREATE DOMAIN fsql.doc AS tsvector;"
    "CREATE DOMAIN fsql.deep_doc AS fsql.doc;"
    "CREATE DOMAIN fsql.blob AS jsonb;"
    "CREATE TABLE fsql.owners (id int PRIMARY KEY, name text);"
    "CREATE TABLE fsql.things ("
    "  id int PRIMARY KEY, name text, amount numeric, flag boolean,"
    "  mood fsql.mood, label fsql.short_text, tags text[], nums int[],"
    "  span int4range, info json, data jsonb, doc tsvector,"
    "  ddoc fsql.deep_doc, extra fsql.blob,"
    "  owner_id int REFERENCES fsql.owners (id));"
    "CREATE TABLE fsql.parts (id int PRIMARY KEY,"
    "  thing_id int REFERENCES fsql.things (id), name text);"
    "INSERT INTO fsql.owners VALUES (1, 'Ann'), (2, NULL), (3, 'Bob');"
    "INSERT INTO fsql.things VALUES"
    " (1, 'Alpha, Inc.', 1.5, true, 'happy', 'a\"q', '{red,\"blue sky\"}', '{1,2,3}',"
    "  '[1,5)', '{\"a\":{\"b\":1},\"arr\":[1,2,3]}',"
    "  '{\"a\":{\"b\":\"x\"},\"k y\":2,\"arr\":[10,20,30]}',"
    "  to_tsvector('english', 'the fat cats'), to_tsvector('english', 'fat'),"
    "  '{\"e\":1}', 1),"
    " (2, 'beta\\slash', 20, false, 'sad', 'plain', '{green}', '{4}', '[5,10)',"
    "  '{\"a\":{\"b\":2}}', '{\"a\":{\"b\":\"y\"},\"arr\":[40]}',"
    "  to_tsvector('english', 'rats ate'), NULL, NULL, 2),"
    " (3, 'Gamma (x)', NULL, NULL, 'ok', NULL, '{}', NULL, 'empty', NULL,"
    "  '[{\"d\":\"v\"}]', NULL, NULL, '[1,2]', NULL),"
    " (4, '*star*', -3, true, NULL, 'x', NULL, '{7,8}', NULL, '{\"a\":null}',"
    "  '{\"a\":{\"b\":null}}', to_tsvector('simple', 'fat'), NULL, NULL, 1);"
    "INSERT INTO fsql.parts VALUES (1, 1, 'bolt'), (2, 1, 'nut'), (3, 2, 'gear');"
    "CREATE FUNCTION fsql.thing_rows() RETURNS TABLE (id int, info json, name text)"
    "  LANGUAGE sql STABLE AS 'SELECT id, info, name FROM fsql.things';"
    "GRANT USAGE ON SCHEMA fsql TO web_anon;"
    "GRANT SELECT ON ALL TABLES IN SCHEMA fsql TO web_anon;";

typedef struct sql_case {
    const char *path;
    const char *query;
    const char *sql;  /* the rows PostgREST's statement yields */
    bool ordered;
} sql_case;

#define T "\"fsql\".\"things\""
#define ALL "SELECT " T ".* FROM " T

static const sql_case cases[] = {
    /* simple operators */
    {"/things", "id=eq.2", ALL " WHERE " T ".\"id\" = '2'", false},
    {"/things", "id=neq.2", ALL " WHERE " T ".\"id\" <> '2'", false},
    {"/things", "amount=gt.1.5", ALL " WHERE " T ".\"amount\" > '1.5'", false},
    {"/things", "amount=gte.1.5", ALL " WHERE " T ".\"amount\" >= '1.5'", false},
    {"/things", "amount=lt.1.5", ALL " WHERE " T ".\"amount\" < '1.5'", false},
    {"/things", "amount=not.lte.1.5", ALL " WHERE NOT " T ".\"amount\" <= '1.5'", false},
    {"/things", "id=eq.abc", ALL " WHERE " T ".\"id\" = 'abc'", false},
    /* like/ilike: every * is %, backslash escapes stay PostgreSQL's */
    {"/things", "name=like.*a*", ALL " WHERE " T ".\"name\" like '%a%'", false},
    {"/things", "name=ilike.A*", ALL " WHERE " T ".\"name\" ilike 'A%'", false},
    {"/things", "name=like.\\**", ALL " WHERE " T ".\"name\" like '\\%%'", false},
    {"/things", "name=like.*\\\\*", ALL " WHERE " T ".\"name\" like '%\\\\%'", false},
    {"/things", "name=not.ilike.*A*", ALL " WHERE NOT " T ".\"name\" ilike '%A%'", false},
    {"/things", "name=match.^[AG]", ALL " WHERE " T ".\"name\" ~ '^[AG]'", false},
    {"/things", "name=imatch.^b", ALL " WHERE " T ".\"name\" ~* '^b'", false},
    {"/things", "name=match.(", ALL " WHERE " T ".\"name\" ~ '('", false},
    /* any/all: the value is PostgreSQL's array literal */
    {"/things", "id=eq(any).{1,3}", ALL " WHERE " T ".\"id\" = ANY('{1,3}')", false},
    {"/things", "id=gt(all).{1,2}", ALL " WHERE " T ".\"id\" > ALL('{1,2}')", false},
    {"/things", "name=like(any).{A*,*x)}", ALL " WHERE " T ".\"name\" like ANY('{A%,%x)}')", false},
    {"/things", "name=ilike(all).{*A*,*P*}", ALL " WHERE " T ".\"name\" ilike ALL('{%A%,%P%}')", false},
    {"/things", "name=match(any).{^b,^G}", ALL " WHERE " T ".\"name\" ~ ANY('{^b,^G}')", false},
    {"/things", "name=eq(any).{\"Alpha, Inc.\",x}",
     ALL " WHERE " T ".\"name\" = ANY('{\"Alpha, Inc.\",x}')", false},
    {"/things", "id=not.eq(any).{1,3}", ALL " WHERE NOT " T ".\"id\" = ANY('{1,3}')", false},
    {"/things", "id=eq(any).1", ALL " WHERE " T ".\"id\" = ANY('1')", false},
    /* in: quoted elements keep commas, parens, quotes and backslashes */
    {"/things", "name=in.(\"Alpha, Inc.\",\"Gamma (x)\")",
     ALL " WHERE " T ".\"name\" = ANY ('{\"Alpha, Inc.\",\"Gamma (x)\"}')", false},
    {"/things", "name=in.(\"beta\\\\slash\")",
     ALL " WHERE " T ".\"name\" = ANY ('{\"beta\\\\slash\"}')", false},
    {"/things", "name=in.(beta\\slash)",
     ALL " WHERE " T ".\"name\" = ANY ('{\"beta\\\\slash\"}')", false},
    {"/things", "label=in.(\"a\\\"q\",x)", ALL " WHERE " T ".\"label\" = ANY ('{\"a\\\"q\",\"x\"}')", false},
    {"/things", "name=in.()", ALL " WHERE " T ".\"name\" = ANY('{}')", false},
    {"/things", "name=not.in.()", ALL " WHERE NOT " T ".\"name\" = ANY('{}')", false},
    {"/things", "id=in.( 1 , 2 )", ALL " WHERE " T ".\"id\" = ANY ('{\"1 \",\" 2 \"}')", false},
    {"/things", "mood=in.(ok,happy)", ALL " WHERE " T ".\"mood\" = ANY ('{\"ok\",\"happy\"}')", false},
    {"/things", "mood=in.(ok,angry)", ALL " WHERE " T ".\"mood\" = ANY ('{\"ok\",\"angry\"}')", false},
    {"/things", "nums=in.(\"{4}\",\"{7,8}\")", ALL " WHERE " T ".\"nums\" = ANY ('{\"{4}\",\"{7,8}\"}')", false},
    /* is */
    {"/things", "amount=is.null", ALL " WHERE " T ".\"amount\" IS NULL", false},
    {"/things", "amount=not.is.null", ALL " WHERE NOT " T ".\"amount\" IS NULL", false},
    {"/things", "flag=is.not_null", ALL " WHERE " T ".\"flag\" IS NOT NULL", false},
    {"/things", "flag=is.TRUE", ALL " WHERE " T ".\"flag\" IS TRUE", false},
    {"/things", "flag=is.false", ALL " WHERE " T ".\"flag\" IS FALSE", false},
    {"/things", "flag=is.Unknown", ALL " WHERE " T ".\"flag\" IS UNKNOWN", false},
    {"/things", "flag=not.is.true", ALL " WHERE NOT " T ".\"flag\" IS TRUE", false},
    {"/things", "span=is.true", ALL " WHERE " T ".\"span\" IS TRUE", false},
    {"/things", "flag=eq.true", ALL " WHERE " T ".\"flag\" = 'true'", false},
    /* isdistinct */
    {"/things", "flag=isdistinct.true", ALL " WHERE " T ".\"flag\" IS DISTINCT FROM 'true'", false},
    {"/things", "mood=not.isdistinct.ok", ALL " WHERE NOT " T ".\"mood\" IS DISTINCT FROM 'ok'", false},
    /* arrays */
    {"/things", "tags=cs.{red}", ALL " WHERE " T ".\"tags\" @> '{red}'", false},
    {"/things", "tags=cd.{red,\"blue sky\",green}", ALL " WHERE " T ".\"tags\" <@ '{red,\"blue sky\",green}'", false},
    {"/things", "nums=ov.{3,7}", ALL " WHERE " T ".\"nums\" && '{3,7}'", false},
    {"/things", "nums=eq.{4}", ALL " WHERE " T ".\"nums\" = '{4}'", false},
    {"/things", "nums=cs.[1]", ALL " WHERE " T ".\"nums\" @> '[1]'", false},
    {"/things", "nums=not.cs.{1}", ALL " WHERE NOT " T ".\"nums\" @> '{1}'", false},
    /* ranges */
    {"/things", "span=cs.3", ALL " WHERE " T ".\"span\" @> '3'", false},
    {"/things", "span=cs.[2,3]", ALL " WHERE " T ".\"span\" @> '[2,3]'", false},
    {"/things", "span=cd.[0,20]", ALL " WHERE " T ".\"span\" <@ '[0,20]'", false},
    {"/things", "span=ov.(4,6)", ALL " WHERE " T ".\"span\" && '(4,6)'", false},
    {"/things", "span=sl.[6,7]", ALL " WHERE " T ".\"span\" << '[6,7]'", false},
    {"/things", "span=sr.[1,2]", ALL " WHERE " T ".\"span\" >> '[1,2]'", false},
    {"/things", "span=nxr.[1,6]", ALL " WHERE " T ".\"span\" &< '[1,6]'", false},
    {"/things", "span=nxl.[4,6]", ALL " WHERE " T ".\"span\" &> '[4,6]'", false},
    {"/things", "span=adj.[10,12]", ALL " WHERE " T ".\"span\" -|- '[10,12]'", false},
    {"/things", "span=not.adj.[10,12]", ALL " WHERE NOT " T ".\"span\" -|- '[10,12]'", false},
    {"/things", "span=eq.empty", ALL " WHERE " T ".\"span\" = 'empty'", false},
    {"/things", "span=in.(\"[1,5)\",empty)", ALL " WHERE " T ".\"span\" = ANY ('{\"[1,5)\",\"empty\"}')", false},
    {"/things", "span=cs.x", ALL " WHERE " T ".\"span\" @> 'x'", false},
    /* json and jsonb: json/jsonb columns directly, others through to_jsonb */
    {"/things", "data=cs.{\"a\":{\"b\":\"x\"}}", ALL " WHERE " T ".\"data\" @> '{\"a\":{\"b\":\"x\"}}'", false},
    {"/things", "data=cd.{\"a\":{\"b\":\"y\"},\"arr\":[40],\"z\":1}",
     ALL " WHERE " T ".\"data\" <@ '{\"a\":{\"b\":\"y\"},\"arr\":[40],\"z\":1}'", false},
    {"/things", "data->a->>b=eq.x", ALL " WHERE " T ".\"data\"->'a'->>'b' = 'x'", false},
    {"/things", "data->a->b=eq.\"y\"", ALL " WHERE " T ".\"data\"->'a'->'b' = '\"y\"'", false},
    {"/things", "data->arr->0=eq.10", ALL " WHERE " T ".\"data\"->'arr'->'0'::int = '10'", false},
    {"/things", "data->arr->>-1=eq.40", ALL " WHERE " T ".\"data\"->'arr'->>'-1'::int = '40'", false},
    {"/things", "data->0->>d=eq.v", ALL " WHERE " T ".\"data\"->'0'::int->>'d' = 'v'", false},
    {"/things", "data->\"k y\"=eq.2", ALL " WHERE " T ".\"data\"->'k y' = '2'", false},
    {"/things", "data->arr=cs.[20]", ALL " WHERE " T ".\"data\"->'arr' @> '[20]'", false},
    {"/things", "data->a->b=is.null", ALL " WHERE " T ".\"data\"->'a'->'b' IS NULL", false},
    {"/things", "data->a=isdistinct.{\"b\":\"x\"}", ALL " WHERE " T ".\"data\"->'a' IS DISTINCT FROM '{\"b\":\"x\"}'", false},
    {"/things", "data->>arr=in.(\"[40]\")", ALL " WHERE " T ".\"data\"->>'arr' = ANY ('{\"[40]\"}')", false},
    {"/things", "data->a->>b=like(any).{x*,y*}", ALL " WHERE " T ".\"data\"->'a'->>'b' like ANY('{x%,y%}')", false},
    {"/things", "info->a->>b=eq.2", ALL " WHERE " T ".\"info\"->'a'->>'b' = '2'", false},
    {"/things", "info->a->b=eq.2", ALL " WHERE " T ".\"info\"->'a'->'b' = '2'", false},
    {"/things", "info->arr->>1=gt.1", ALL " WHERE " T ".\"info\"->'arr'->>'1'::int > '1'", false},
    {"/things", "extra->>e=eq.1", ALL " WHERE to_jsonb(" T ".\"extra\")->>'e' = '1'", false},
    {"/things", "extra->0=eq.1", ALL " WHERE to_jsonb(" T ".\"extra\")->'0'::int = '1'", false},
    {"/things", "nums->0=eq.1", ALL " WHERE to_jsonb(" T ".\"nums\")->'0'::int = '1'", false},
    {"/things", "nums->>-1=eq.8", ALL " WHERE to_jsonb(" T ".\"nums\")->>'-1'::int = '8'", false},
    {"/things", "name->>0=eq.x", ALL " WHERE to_jsonb(" T ".\"name\")->>'0'::int = 'x'", false},
    {"/things", "tags->>0=eq.red", ALL " WHERE to_jsonb(" T ".\"tags\")->>'0'::int = 'red'", false},
    /* full text search: to_tsvector on anything but a tsvector (domains
     * included); the language an untyped literal */
    {"/things", "doc=fts.cat", ALL " WHERE " T ".\"doc\" @@ to_tsquery('cat')", false},
    {"/things", "doc=fts(english).cats", ALL " WHERE " T ".\"doc\" @@ to_tsquery('english', 'cats')", false},
    {"/things", "doc=plfts.fat cat", ALL " WHERE " T ".\"doc\" @@ plainto_tsquery('fat cat')", false},
    {"/things", "doc=phfts(english).fat cats", ALL " WHERE " T ".\"doc\" @@ phraseto_tsquery('english', 'fat cats')", false},
    {"/things", "doc=wfts(simple).fat -cats", ALL " WHERE " T ".\"doc\" @@ websearch_to_tsquery('simple', 'fat -cats')", false},
    {"/things", "doc=not.fts.fat", ALL " WHERE NOT " T ".\"doc\" @@ to_tsquery('fat')", false},
    {"/things", "ddoc=fts.fat", ALL " WHERE " T ".\"ddoc\" @@ to_tsquery('fat')", false},
    {"/things", "name=fts(english).gamma", ALL " WHERE to_tsvector('english', " T ".\"name\") @@ to_tsquery('english', 'gamma')", false},
    {"/things", "data=wfts.x", ALL " WHERE to_tsvector(" T ".\"data\") @@ websearch_to_tsquery('x')", false},
    {"/things", "data->a=fts(simple).y", ALL " WHERE to_tsvector('simple', " T ".\"data\"->'a') @@ to_tsquery('simple', 'y')", false},
    {"/things", "amount=fts(english).x", ALL " WHERE to_tsvector('english', " T ".\"amount\") @@ to_tsquery('english', 'x')", false},
    {"/things", "doc=fts(nope).x", ALL " WHERE " T ".\"doc\" @@ to_tsquery('nope', 'x')", false},
    /* enum, domain, bool */
    {"/things", "mood=gt.sad", ALL " WHERE " T ".\"mood\" > 'sad'", false},
    {"/things", "mood=like.h*", ALL " WHERE " T ".\"mood\" like 'h%'", false},
    {"/things", "label=like.a*", ALL " WHERE " T ".\"label\" like 'a%'", false},
    {"/things", "label=eq.plain", ALL " WHERE " T ".\"label\" = 'plain'", false},
    {"/things", "flag=neq.true", ALL " WHERE " T ".\"flag\" <> 'true'", false},
    /* logic trees */
    {"/things", "or=(id.eq.1,amount.is.null)", ALL " WHERE ( " T ".\"id\" = '1' OR " T ".\"amount\" IS NULL)", false},
    {"/things", "not.or=(id.eq.1,id.eq.2)", ALL " WHERE NOT ( " T ".\"id\" = '1' OR " T ".\"id\" = '2')", false},
    {"/things", "and=(id.gt.1,or(name.like.*a*,not.and(flag.is.true,amount.lt.0)))",
     ALL " WHERE ( " T ".\"id\" > '1' AND ( " T ".\"name\" like '%a%' OR NOT ( " T ".\"flag\" IS TRUE AND " T ".\"amount\" < '0')))", false},
    {"/things", "or=(name.eq.\"Alpha, Inc.\",name.in.(\"Gamma (x)\",x))",
     ALL " WHERE ( " T ".\"name\" = 'Alpha, Inc.' OR " T ".\"name\" = ANY ('{\"Gamma (x)\",\"x\"}'))", false},
    {"/things", "or=(nums.cs.{1,2},nums.cd.{4,5},tags.ov.{green})",
     ALL " WHERE ( " T ".\"nums\" @> '{1,2}' OR " T ".\"nums\" <@ '{4,5}' OR " T ".\"tags\" && '{green}')", false},
    {"/things", "or=(data->a->>b.eq.x,info->a->>b.eq.2)",
     ALL " WHERE ( " T ".\"data\"->'a'->>'b' = 'x' OR " T ".\"info\"->'a'->>'b' = '2')", false},
    {"/things", "or=(id.eq(any).{1,4},name.like(all).{*a*,*l*})",
     ALL " WHERE ( " T ".\"id\" = ANY('{1,4}') OR " T ".\"name\" like ALL('{%a%,%l%}'))", false},
    {"/things", "or=(doc.fts(english).cats,name.fts(english).gamma)",
     ALL " WHERE ( " T ".\"doc\" @@ to_tsquery('english', 'cats') OR to_tsvector('english', " T ".\"name\") @@ to_tsquery('english', 'gamma'))", false},
    {"/things", "or=(span.adj.\"[10,12]\",flag.not.isdistinct.false)",
     ALL " WHERE ( " T ".\"span\" -|- '[10,12]' OR NOT " T ".\"flag\" IS DISTINCT FROM 'false')", false},
    /* where_: the logic trees before the filters, so PostgreSQL reports
     * the tree's bad value when both are wrong */
    {"/things", "id=eq.abc&or=(amount.eq.xyz)", ALL " WHERE ( " T ".\"amount\" = 'xyz') AND " T ".\"id\" = 'abc'", false},
    {"/things", "nope1=eq.1&and=(nope2.eq.1)", ALL " WHERE ( " T ".\"nope2\" = '1') AND " T ".\"nope1\" = '1'", false},
    {"/things", "not.and=(id.gte.2,flag.is.true)", ALL " WHERE NOT ( " T ".\"id\" >= '2' AND " T ".\"flag\" IS TRUE)", false},
    /* embeds, in QueryBuilder's shape: a to-one is a lateral row, a
     * to-many a lateral json_agg; [not.]is.null on an embed tests that
     * lateral row (IS [NOT] DISTINCT FROM NULL), so a matched owner whose
     * selected columns are all null counts as null */
    {"/things", "select=id,owners(name)&owners=is.null",
     "SELECT t.id, row_to_json(o.*)::jsonb AS owners FROM " T " t LEFT JOIN LATERAL"
     " (SELECT o1.name FROM fsql.owners o1 WHERE o1.id = t.owner_id) o ON TRUE"
     " WHERE o IS NOT DISTINCT FROM NULL", false},
    {"/things", "select=id,owners(id,name)&owners=is.null",
     "SELECT t.id, row_to_json(o.*)::jsonb AS owners FROM " T " t LEFT JOIN LATERAL"
     " (SELECT o1.id, o1.name FROM fsql.owners o1 WHERE o1.id = t.owner_id) o ON TRUE"
     " WHERE o IS NOT DISTINCT FROM NULL", false},
    {"/things", "select=id,owners()&owners=not.is.null",
     "SELECT t.id FROM " T " t LEFT JOIN LATERAL"
     " (SELECT o1.* FROM fsql.owners o1 WHERE o1.id = t.owner_id) o ON TRUE"
     " WHERE o IS DISTINCT FROM NULL", false},
    {"/things", "select=id,parts(name)&parts=is.null",
     "SELECT t.id, COALESCE(p.p, '[]') AS parts FROM " T " t LEFT JOIN LATERAL"
     " (SELECT json_agg(p)::jsonb AS p FROM (SELECT p1.name FROM fsql.parts p1"
     " WHERE p1.thing_id = t.id) p) p ON TRUE WHERE p IS NOT DISTINCT FROM NULL", false},
    {"/things", "select=id,parts()&or=(parts.not.is.null,id.eq.3)",
     "SELECT t.id FROM " T " t LEFT JOIN LATERAL"
     " (SELECT json_agg(p)::jsonb AS p FROM (SELECT p1.* FROM fsql.parts p1"
     " WHERE p1.thing_id = t.id) p) p ON TRUE WHERE (p IS DISTINCT FROM NULL OR t.id = '3')", false},
    {"/things", "select=id,p:parts(name)&p=is.null&not.or=(id.eq.4)",
     "SELECT t.id, COALESCE(p.p, '[]') AS p FROM " T " t LEFT JOIN LATERAL"
     " (SELECT json_agg(p)::jsonb AS p FROM (SELECT p1.name FROM fsql.parts p1"
     " WHERE p1.thing_id = t.id) p) p ON TRUE"
     " WHERE p IS NOT DISTINCT FROM NULL AND NOT (t.id = '4')", false},
    {"/things", "select=id,parts!inner(name)&parts.name=like.*t",
     "SELECT t.id, COALESCE(p.p, '[]') AS parts FROM " T " t INNER JOIN LATERAL"
     " (SELECT json_agg(p)::jsonb AS p FROM (SELECT p1.name FROM fsql.parts p1"
     " WHERE p1.name like '%t' AND p1.thing_id = t.id) p) p ON p IS NOT NULL", false},
    {"/things", "select=id,owners!inner(name)&owners.or=(name.eq.Ann,name.is.null)",
     "SELECT t.id, row_to_json(o.*)::jsonb AS owners FROM " T " t INNER JOIN LATERAL"
     " (SELECT o1.name FROM fsql.owners o1 WHERE (o1.name = 'Ann' OR o1.name IS NULL)"
     " AND o1.id = t.owner_id) o ON TRUE", false},
    {"/things", "select=id,owners(name)&order=owners(name).desc.nullslast,id",
     "SELECT t.id, row_to_json(o.*)::jsonb AS owners FROM " T " t LEFT JOIN LATERAL"
     " (SELECT o1.name FROM fsql.owners o1 WHERE o1.id = t.owner_id) o ON TRUE"
     " ORDER BY o.name DESC NULLS LAST, t.id", true},
    {"/things", "select=id,parts(id)&parts.order=id.desc&parts.limit=1&parts.offset=1&order=id",
     "SELECT t.id, COALESCE(p.p, '[]') AS parts FROM " T " t LEFT JOIN LATERAL"
     " (SELECT json_agg(p)::jsonb AS p FROM (SELECT p1.id FROM fsql.parts p1"
     " WHERE p1.thing_id = t.id ORDER BY p1.id DESC LIMIT 1 OFFSET 1) p) p ON TRUE"
     " ORDER BY t.id", true},
    {"/things", "select=id,...owners(oname:name)&owners.name=eq.Ann",
     "SELECT t.id, o.oname FROM " T " t LEFT JOIN LATERAL"
     " (SELECT o1.name AS oname FROM fsql.owners o1 WHERE o1.name = 'Ann'"
     " AND o1.id = t.owner_id) o ON TRUE", false},
    {"/things", "select=id,...owners(oname:name)&owners=is.null",
     "SELECT t.id, o.oname FROM " T " t LEFT JOIN LATERAL"
     " (SELECT o1.name AS oname FROM fsql.owners o1 WHERE o1.id = t.owner_id) o ON TRUE"
     " WHERE o IS NOT DISTINCT FROM NULL", false},
    {"/things", "select=id,...parts(name)&parts.order=name.desc&order=id",
     "SELECT t.id, COALESCE(p.name, '[]') AS name FROM " T " t LEFT JOIN LATERAL"
     " (SELECT json_agg(p.name ORDER BY p.name DESC)::jsonb AS name FROM (SELECT p1.name"
     " FROM fsql.parts p1 WHERE p1.thing_id = t.id) p) p ON TRUE ORDER BY t.id", true},
    {"/things", "select=id,owners(name)&owners.name=fts(simple).ann&owners=not.is.null",
     "SELECT t.id, row_to_json(o.*)::jsonb AS owners FROM " T " t LEFT JOIN LATERAL"
     " (SELECT o1.name FROM fsql.owners o1 WHERE to_tsvector('simple', o1.name) @@"
     " to_tsquery('simple', 'ann') AND o1.id = t.owner_id) o ON TRUE"
     " WHERE o IS DISTINCT FROM NULL", false},
    /* a function's TABLE columns are no table's: their types are unknown
     * to PostgREST, so a json path reads to_jsonb() of even a json column
     * and fts adds no to_tsvector */
    {"/rpc/thing_rows", "select=id&info->a->b=eq.2",
     "SELECT r.id FROM fsql.thing_rows() r WHERE to_jsonb(r.info)->'a'->'b' = '2'", false},
    {"/rpc/thing_rows", "select=id,info->a&order=info->a->b.desc.nullslast",
     "SELECT r.id, to_jsonb(r.info)->'a' AS a FROM fsql.thing_rows() r"
     " ORDER BY to_jsonb(r.info)->'a'->'b' DESC NULLS LAST", true},
    {"/rpc/thing_rows", "select=id&name=fts(simple).gamma",
     "SELECT r.id FROM fsql.thing_rows() r WHERE r.name @@ to_tsquery('simple', 'gamma')", false},
    /* order: json paths, nulls */
    {"/things", "select=id&order=data->arr->0.desc.nullslast,id",
     "SELECT " T ".\"id\" FROM " T " ORDER BY " T ".\"data\"->'arr'->'0'::int DESC NULLS LAST, " T ".\"id\"", true},
    {"/things", "select=id&order=amount.nullsfirst", "SELECT " T ".\"id\" FROM " T " ORDER BY " T ".\"amount\" NULLS FIRST", true},
    {"/things", "select=id&order=amount.desc.nullslast,id.desc",
     "SELECT " T ".\"id\" FROM " T " ORDER BY " T ".\"amount\" DESC NULLS LAST, " T ".\"id\" DESC", true},
    {"/things", "select=id&order=nums->>0.asc,id", "SELECT " T ".\"id\" FROM " T " ORDER BY to_jsonb(" T ".\"nums\")->>'0'::int ASC, " T ".\"id\"", true},
    /* of two orders for one node the first wins (addOrders folds right) */
    {"/things", "select=id&order=id.desc&order=id", "SELECT " T ".\"id\" FROM " T " ORDER BY " T ".\"id\" DESC", true},
    {"/things", "select=id,parts(id)&parts.order=id.desc&parts.order=id&order=id",
     "SELECT t.id, COALESCE(p.p, '[]') AS parts FROM " T " t LEFT JOIN LATERAL"
     " (SELECT json_agg(p)::jsonb AS p FROM (SELECT p1.id FROM fsql.parts p1"
     " WHERE p1.thing_id = t.id ORDER BY p1.id DESC) p) p ON TRUE ORDER BY t.id", true},
    {"/things", "select=id&order=info->a", "SELECT " T ".\"id\" FROM " T " ORDER BY " T ".\"info\"->'a'", true},
    /* select: casts and json path outputs named after their last key */
    {"/things", "select=id::text,amount::int", "SELECT CAST( " T ".\"id\" AS text ), CAST( " T ".\"amount\" AS int ) FROM " T, false},
    {"/things", "select=data->a->>b,k:data->\"k y\",data->arr->0,i:info->arr->1::int",
     "SELECT " T ".\"data\"->'a'->>'b' AS \"b\", " T ".\"data\"->'k y' AS \"k\", " T ".\"data\"->'arr'->'0'::int AS \"arr\","
     " CAST( " T ".\"info\"->'arr'->'1'::int AS int ) AS \"i\" FROM " T, false},
    {"/things", "select=nums->0,l:nums->>-1::int", "SELECT to_jsonb(" T ".\"nums\")->'0'::int AS \"nums\", CAST( to_jsonb(" T ".\"nums\")->>'-1'::int AS int ) AS \"l\" FROM " T, false},
    {"/things", "select=data->0->d", "SELECT " T ".\"data\"->'0'::int->'d' AS \"d\" FROM " T, false},
    {"/things", "select=data->a->>b::int", "SELECT CAST( " T ".\"data\"->'a'->>'b' AS int ) AS \"b\" FROM " T, false},
};

static PGconn *direct;
static pgrest_ctx *ctx;

static void run_sql(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    ck_assert_msg(PQresultStatus(r) == PGRES_COMMAND_OK, "%s", PQerrorMessage(c));
    PQclear(r);
}

static void setup_schema(void)
{
    const char *uri = getenv("PGREST_TEST_ADMIN_URI");
    if (uri == NULL || *uri == '\0') {
        fprintf(stderr, "PGREST_TEST_ADMIN_URI not set: skipping\n");
        exit(77);
    }
    direct = PQconnectdb(uri);
    ck_assert_int_eq(PQstatus(direct), CONNECTION_OK);
    PGresult *r = PQexec(direct, "SET client_min_messages = warning");
    PQclear(r);
    run_sql(direct, schema_sql);
    /* pgrest's search_path is the exposed schema, so PostgreSQL names the
     * schema's types unqualified in its messages */
    run_sql(direct, "SET search_path = fsql, public");
    const char *opts[] = {"db-schemas", "fsql", NULL};
    ctx = harness_ctx(opts);
}

static void teardown_schema(void)
{
    pgrest_ctx_free(ctx);
    PQfinish(direct);
}

static json_object *parse_body(const char *text)
{
    json_object *j = json_tokener_parse(text);
    ck_assert_msg(j != NULL, "not JSON: %s", text);
    return j;
}

START_TEST(same_answer_as_postgresql)
{
    const sql_case *c = &cases[_i];
    test_response resp;
    harness_request(ctx, "GET", c->path, c->query, NULL, NULL, &resp);
    char sql[8192];
    snprintf(sql, sizeof sql,
             "SET ROLE web_anon; SELECT coalesce(json_agg(_t), '[]') FROM (%s) _t", c->sql);
    PGresult *r = PQexec(direct, sql);
    PGresult *reset = PQexec(direct, "RESET ROLE");
    PQclear(reset);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        const char *msg = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
        ck_assert_msg(resp.status >= 400, "%s?%s: PostgreSQL refused (%s) but got %d %s",
                      c->path, c->query, msg, resp.status, resp.body);
        json_object *body = parse_body(resp.body), *v;
        ck_assert(json_object_object_get_ex(body, "code", &v));
        ck_assert_str_eq(json_object_get_string(v), state);
        ck_assert(json_object_object_get_ex(body, "message", &v));
        ck_assert_str_eq(json_object_get_string(v), msg);
        json_object_put(body);
    } else {
        ck_assert_msg(resp.status == 200, "%s?%s -> %d %s", c->path, c->query, resp.status,
                      resp.body);
        json_object *ours = parse_body(resp.body);
        json_object *theirs = parse_body(PQgetvalue(r, 0, 0));
        char *a = harness_json_canonical(ours, !c->ordered);
        char *b = harness_json_canonical(theirs, !c->ordered);
        ck_assert_msg(strcmp(a, b) == 0, "%s?%s\n ours:   %s\n theirs: %s", c->path, c->query,
                      a, b);
        free(a);
        free(b);
        json_object_put(ours);
        json_object_put(theirs);
    }
    PQclear(r);
    harness_free(&resp);
}
END_TEST

int main(void)
{
    harness_db_uri();
    Suite *s = suite_create("filter_sql");
    TCase *tc = tcase_create("operators");
    tcase_set_timeout(tc, 60);
    tcase_add_unchecked_fixture(tc, setup_schema, teardown_schema);
    tcase_add_loop_test(tc, same_answer_as_postgresql, 0, (int)(sizeof cases / sizeof cases[0]));
    suite_add_tcase(s, tc);
    return check_run(s);
}
