-- tests/cluster: a small API whose answers tell which server ran them
CREATE ROLE authenticator LOGIN NOINHERIT;
CREATE ROLE web_anon NOLOGIN;
GRANT web_anon TO authenticator;
CREATE SCHEMA api;
GRANT USAGE ON SCHEMA api TO web_anon;

CREATE TABLE api.items (id serial PRIMARY KEY, name text NOT NULL);
INSERT INTO api.items (name) SELECT 'seed ' || g FROM generate_series(1, 10) g;
GRANT SELECT, INSERT, UPDATE, DELETE ON api.items TO web_anon;
GRANT USAGE ON SEQUENCE api.items_id_seq TO web_anon;

-- every row says whether the backend serving it is a standby
CREATE VIEW api.items_where AS
  SELECT id, name, pg_is_in_recovery() AS on_replica FROM api.items;
GRANT SELECT ON api.items_where TO web_anon;

CREATE FUNCTION api.on_replica_stable() RETURNS boolean
  LANGUAGE sql STABLE AS 'SELECT pg_is_in_recovery()';
CREATE FUNCTION api.on_replica_volatile() RETURNS boolean
  LANGUAGE sql VOLATILE AS 'SELECT pg_is_in_recovery()';
-- a function whose own isolation level is serializable: a hot standby
-- refuses that, so even its GET must run on the primary
CREATE FUNCTION api.on_replica_serializable() RETURNS boolean
  LANGUAGE sql STABLE SET default_transaction_isolation = 'serializable'
  AS 'SELECT pg_is_in_recovery()';
GRANT EXECUTE ON FUNCTION api.on_replica_stable(), api.on_replica_volatile(),
  api.on_replica_serializable() TO web_anon;
