-- Loaded by tests/client/run.py on top of tests/fixtures/test_schema.sql:
-- the column types postgrest-js has filter methods for that the catalogue
-- lacks (a range, jsonb, tsvector, an enum compared as text), and a
-- geometry column for geojson() when PostGIS is installed. Kept apart from
-- the shared fixture so that the unit tests' schema snapshot and the other
-- suites see the catalogue unchanged.

CREATE TYPE api.member_status AS ENUM ('ONLINE', 'OFFLINE');
CREATE TABLE api.members (
  username     text PRIMARY KEY,
  data         jsonb,
  age_range    int4range,
  status       api.member_status DEFAULT 'ONLINE',
  catchphrase  tsvector
);
INSERT INTO api.members VALUES
  ('supabot', '{"foo": {"bar": 1}, "age": 30}', '[1,2)', 'ONLINE', to_tsvector('english', 'fat cat')),
  ('kiwicopple', '{"age": 25}', '[25,35)', 'OFFLINE', to_tsvector('english', 'cat bat')),
  ('awailas', NULL, '[25,35)', 'ONLINE', to_tsvector('english', 'bat rat')),
  ('dragarcia', '{"age": 20}', '[20,30)', 'ONLINE', to_tsvector('english', 'fat rat'));

-- Identifiers select() keeps quoted (a space), an array column.
CREATE TABLE api.cornercase (
  id                   integer PRIMARY KEY,
  "column whitespace"  text,
  array_column         text[]
);
INSERT INTO api.cornercase VALUES (1, 'foo', '{a,b}'), (2, 'bar', '{b,c}');

CREATE FUNCTION api.member_status_of(name_param text) RETURNS api.member_status
  LANGUAGE sql STABLE AS $$ SELECT status FROM api.members WHERE username = name_param $$;
CREATE FUNCTION api.members_with_status(s api.member_status) RETURNS SETOF api.members
  LANGUAGE sql STABLE AS $$ SELECT * FROM api.members WHERE status = s ORDER BY username $$;
-- An array parameter: rpc(..., { get: true }) sends an array as {1,2,3}.
CREATE FUNCTION api.array_len(xs integer[]) RETURNS integer
  LANGUAGE sql IMMUTABLE AS $$ SELECT cardinality(xs) $$;
-- A writing function (POST only) returning the rows it changed.
CREATE FUNCTION api.set_offline(name_param text) RETURNS SETOF api.members
  LANGUAGE sql VOLATILE AS $$
    UPDATE api.members SET status = 'OFFLINE' WHERE username = name_param RETURNING * $$;
-- A status of its own through the response.status GUC.
CREATE FUNCTION api.teapot() RETURNS text
  LANGUAGE sql VOLATILE AS $$
    SELECT set_config('response.status', '418', true); SELECT 'short and stout'::text $$;
CREATE FUNCTION api.custom_status(code integer) RETURNS void
  LANGUAGE sql VOLATILE AS $$ SELECT set_config('response.status', code::text, true) $$;
-- RAISE with SQLSTATE PTxyz: PostgREST answers with status xyz.
CREATE FUNCTION api.raise_pt(code text) RETURNS void
  LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION USING ERRCODE = code, MESSAGE = 'custom', DETAIL = 'raised'; END $$;

-- Overloads and unnamed parameters, as postgrest-js's own suite calls
-- them with { '': value }. SchemaCache.hs keeps a function with one
-- unnamed parameter only when that one is bytea, json, jsonb, text or xml
-- (poly_ret(bool), poly_ret(int), unnamed_int and the int overload of
-- poly_unnamed_default are not callable); a single unnamed parameter takes
-- the whole body (Plan.hs callPlan OnePosParam).
CREATE FUNCTION api.poly_ret(bool) RETURNS int LANGUAGE sql IMMUTABLE AS $$ SELECT 1 $$;
CREATE FUNCTION api.poly_ret(int) RETURNS int LANGUAGE sql IMMUTABLE AS $$ SELECT 2 $$;
CREATE FUNCTION api.poly_ret(text) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'foo' $$;
CREATE FUNCTION api.poly_none_or_unnamed() RETURNS int LANGUAGE sql IMMUTABLE AS $$ SELECT 1 $$;
CREATE FUNCTION api.poly_none_or_unnamed(bool) RETURNS int LANGUAGE sql IMMUTABLE AS $$ SELECT 2 $$;
CREATE FUNCTION api.poly_none_or_unnamed(text) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'foo' $$;
CREATE FUNCTION api.poly_unnamed_default() RETURNS int LANGUAGE sql IMMUTABLE AS $$ SELECT 1 $$;
CREATE FUNCTION api.poly_unnamed_default(int DEFAULT 42) RETURNS int LANGUAGE sql IMMUTABLE AS $$ SELECT $1 $$;
CREATE FUNCTION api.unnamed_json(json) RETURNS int LANGUAGE sql IMMUTABLE AS $$ SELECT 1 $$;
CREATE FUNCTION api.unnamed_jsonb(jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$ SELECT $1 $$;
CREATE FUNCTION api.unnamed_text(text) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'got ' || $1 $$;
CREATE FUNCTION api.unnamed_int(int) RETURNS int LANGUAGE sql IMMUTABLE AS $$ SELECT $1 + 1 $$;
CREATE FUNCTION api.optional_param(param text DEFAULT 'dflt') RETURNS text
  LANGUAGE sql IMMUTABLE AS $$ SELECT param $$;

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'postgis') THEN
    CREATE EXTENSION IF NOT EXISTS postgis SCHEMA public;
    CREATE TABLE api.shops (
      id       integer PRIMARY KEY,
      address  text,
      shop_geom public.geometry(POINT, 4326)
    );
    INSERT INTO api.shops VALUES (1, 'Sesame Street', 'SRID=4326;POINT(-71.10044 42.373695)');
  END IF;
END
$$;

GRANT SELECT ON ALL TABLES IN SCHEMA api TO web_anon;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA api TO web_user;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA api TO web_anon, web_user;
