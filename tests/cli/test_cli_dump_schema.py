"""--dump-schema, field by field: CLI.hs dumpSchema prints `JSON.encode
sCache` (aeson, not YAML) and a newline (putStrLn); Admin.hs serves the
same `JSON.encode` at /schema_cache. The expected values below are read
from PostgREST's types and introspection queries (SchemaCache.hs and
SchemaCache/*.hs, MediaType.hs), not from pgrest's output. Each test has
its own PostgreSQL (tests/server/harness); DumpSchemaTest's have SCHEMA
loaded and db-schemas = "dump"."""
import json
import os

import harness
from test_cli_db import pgrest

SCHEMA = r"""
CREATE SCHEMA dump;
CREATE DOMAIN dump.color AS integer;
CREATE TYPE dump.mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE dump.person (
  id integer PRIMARY KEY,
  name varchar(40) NOT NULL DEFAULT 'x',
  fav dump.color,
  mood dump.mood);
COMMENT ON TABLE dump.person IS 'People';
COMMENT ON COLUMN dump.person.name IS E'tab\there\fform\bback "q" \\ </> \u00e9';
CREATE TABLE dump.club (id integer PRIMARY KEY, title text);
CREATE TABLE dump.membership (
  person_id integer REFERENCES dump.person(id),
  club_id integer REFERENCES dump.club(id),
  PRIMARY KEY (person_id, club_id));
CREATE VIEW dump.people AS SELECT id, name FROM dump.person;
CREATE TABLE dump.passport (person_id integer PRIMARY KEY REFERENCES dump.person(id));
CREATE TABLE dump.pair (b integer, a integer, PRIMARY KEY (b, a));
CREATE VIEW dump.pair_view AS SELECT a, b FROM dump.pair;
CREATE TABLE dump.node (id integer PRIMARY KEY, parent_id integer REFERENCES dump.node(id));
CREATE FUNCTION dump.add(a integer, b integer DEFAULT 1) RETURNS integer
  LANGUAGE sql IMMUTABLE AS 'SELECT a + b';
COMMENT ON FUNCTION dump.add(integer, integer) IS 'adds';
CREATE FUNCTION dump.add(a integer) RETURNS integer
  LANGUAGE sql AS 'SELECT a';
CREATE FUNCTION dump.pad(c character(3)) RETURNS text LANGUAGE sql AS 'SELECT c';
CREATE FUNCTION dump.color(text) RETURNS dump.color
  LANGUAGE sql IMMUTABLE AS 'SELECT 1';
CREATE CAST (text AS dump.color) WITH FUNCTION dump.color(text) AS IMPLICIT;
CREATE FUNCTION dump.persons(VARIADIC ids integer[]) RETURNS SETOF dump.person
  LANGUAGE sql STABLE SET search_path = dump
  AS 'SELECT * FROM dump.person WHERE id = ANY(ids)';
ALTER FUNCTION dump.persons(integer[]) SET default_transaction_isolation = 'serializable';
CREATE FUNCTION dump.pairs() RETURNS TABLE(x integer, y text)
  LANGUAGE sql AS 'SELECT 1, ''a''';
CREATE FUNCTION dump.outs(a integer, INOUT b text, OUT y text) LANGUAGE sql
  AS 'SELECT b, b';
CREATE DOMAIN dump."text/plain" AS text;
CREATE FUNCTION dump.hello() RETURNS dump."text/plain" LANGUAGE sql AS 'SELECT ''hi''';
CREATE FUNCTION dump.clubs_of(dump.person) RETURNS SETOF dump.club
  LANGUAGE sql AS 'SELECT * FROM dump.club';
CREATE FUNCTION dump.best_club(dump.person) RETURNS dump.club
  LANGUAGE sql AS 'SELECT * FROM dump.club LIMIT 1';
-- named as the table: overrides the detected club -> membership
CREATE FUNCTION dump.membership(dump.club) RETURNS SETOF dump.membership
  LANGUAGE sql AS 'SELECT * FROM dump.membership';
CREATE DOMAIN dump."Application/X-Thing" AS text;
CREATE FUNCTION dump.thing() RETURNS dump."Application/X-Thing" LANGUAGE sql AS 'SELECT ''t''';
-- two aggregates over person whose media types decode alike
CREATE SCHEMA dump_private;
CREATE DOMAIN dump."application/json" AS json;
CREATE DOMAIN dump."application/vnd.pgrst.array+json" AS json;
CREATE FUNCTION dump_private.step(state json, next dump.person) RETURNS json
  LANGUAGE sql AS 'SELECT state';
CREATE FUNCTION dump_private.as_json(json) RETURNS dump."application/json"
  LANGUAGE sql AS 'SELECT $1';
CREATE FUNCTION dump_private.as_array(json) RETURNS dump."application/vnd.pgrst.array+json"
  LANGUAGE sql AS 'SELECT $1';
CREATE AGGREGATE dump.as_json(dump.person)
  (sfunc = dump_private.step, stype = json, finalfunc = dump_private.as_json);
CREATE AGGREGATE dump.as_array(dump.person)
  (sfunc = dump_private.step, stype = json, finalfunc = dump_private.as_array);
GRANT USAGE ON SCHEMA dump TO PUBLIC;
GRANT ALL ON ALL TABLES IN SCHEMA dump TO PUBLIC;
"""


def aeson_string(s):
    """Data.Aeson.Encoding.Builder escapeAscii: short escapes for '"',
    '\\', '\\n', '\\r', '\\t' only; other bytes below 0x20 as \\u00xx
    (lowercase); everything else (UTF-8 included) as it is."""
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif ord(ch) < 0x20:
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def aeson_encode(v):
    """JSON.encode of a Value: compact, object keys in KeyMap (Data.Map)
    order, i.e. sorted as Text compares."""
    if isinstance(v, dict):
        keys = sorted(v, key=lambda k: k.encode())
        return "{" + ",".join(aeson_string(k) + ":" + aeson_encode(v[k]) for k in keys) + "}"
    if isinstance(v, list):
        return "[" + ",".join(aeson_encode(x) for x in v) + "]"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    if isinstance(v, str):
        return aeson_string(v)
    return str(v)


def qi(schema, name):
    """QualifiedIdentifier: a record, generic ToJSON."""
    return {"qiSchema": schema, "qiName": name}


def col(name, typ, nominal=None, nullable=True, max_len=None, default=None,
        description=None, enum=()):
    """Table.hs Column, generic ToJSON (Maybe is null when Nothing)."""
    return {"colName": name, "colDescription": description, "colNullable": nullable,
            "colType": typ, "colNominalType": nominal or typ, "colMaxLen": max_len,
            "colDefault": default, "colEnum": list(enum)}


def table(name, cols, pk, is_view=False, description=None):
    """Table.hs Table; tableColumns an InsOrdHashMap (an object)."""
    return {"tableSchema": "dump", "tableName": name, "tableDescription": description,
            "tableIsView": is_view, "tableInsertable": True, "tableUpdatable": True,
            "tableDeletable": True, "tablePKCols": pk,
            "tableColumns": {c["colName"]: c for c in cols}}


def rel(t, ft, card, t_view=False, ft_view=False):
    """Relationship.hs Relationship: a constructor of a sum with fields,
    aeson's TaggedObject: {"tag": constructor, fields...}."""
    return {"tag": "Relationship", "relTable": qi("dump", t), "relForeignTable": qi("dump", ft),
            "relIsSelf": t == ft, "relCardinality": card,
            "relTableIsView": t_view, "relFTableIsView": ft_view}


def computed(function, t, ft, to_one):
    """Relationship.hs ComputedRelationship; allComputedRels: the alias
    is QualifiedIdentifier mempty mempty."""
    return {"tag": "ComputedRelationship", "relFunction": qi("dump", function),
            "relTable": qi("dump", t), "relForeignTable": qi("dump", ft),
            "relTableAlias": qi("", ""), "relToOne": to_one, "relIsSelf": t == ft}


def fk(tag, cons, cols):
    """Cardinality O2M/M2O: record constructors, tuples as arrays."""
    return {"tag": tag, "relCons": cons, "relColumns": [list(c) for c in cols]}


def o2o(cons, cols, is_parent):
    """Cardinality O2O: a record constructor with isParent."""
    return {"tag": "O2O", "relCons": cons, "relColumns": [list(c) for c in cols],
            "isParent": is_parent}


def m2m(cons1, cons2, source, target):
    """Cardinality M2M Junction: a constructor without field names, so its
    one argument goes under "contents"."""
    return {"tag": "M2M", "contents": {
        "junTable": qi("dump", "membership"), "junConstraint1": cons1, "junConstraint2": cons2,
        "junColsSource": [list(c) for c in source], "junColsTarget": [list(c) for c in target]}}


def param(name, typ, req=True, var=False, max_len_type=None):
    """Routine.hs RoutineParam."""
    return {"ppName": name, "ppType": typ, "ppTypeMaxLength": max_len_type or typ,
            "ppReq": req, "ppVar": var}


def routine(name, params, ret, volatility="Volatile", description=None, variadic=False,
            iso=None, settings=()):
    """Routine.hs Function (the only constructor: no tag); FuncVolatility
    and IsolationLevel have nullary constructors only, so they are strings
    (allNullaryToStringTag)."""
    return {"pdSchema": "dump", "pdName": name, "pdDescription": description,
            "pdParams": params, "pdReturnType": ret, "pdVolatility": volatility,
            "pdHasVariadic": variadic, "pdIsoLvl": iso,
            "pdFuncSettings": [list(s) for s in settings]}


def scalar(schema, name, setof=False):
    """RetType (Single | SetOf) of PgType Scalar: single-argument
    constructors, {"tag", "contents"}."""
    return {"tag": "SetOf" if setof else "Single",
            "contents": {"tag": "Scalar", "contents": qi(schema, name)}}


def composite(schema, name, alias, setof=False):
    """PgType Composite QualifiedIdentifier Bool: two arguments, contents
    is an array."""
    return {"tag": "SetOf" if setof else "Single",
            "contents": {"tag": "Composite", "contents": [qi(schema, name), alias]}}


class DumpSchemaTest(harness.ServerTestCase):
    START_SERVER = False

    def setUp(self):
        super().setUp()
        self.cluster.psql(SCHEMA)
        server = harness.Server.__new__(harness.Server)
        server.cluster = self.cluster
        server.port = harness.free_tcp_port()
        server.admin_port = harness.free_tcp_port()
        server.config_path = os.path.join(self.cluster.dir, "dump.conf")
        server.write_config({"db-schemas": "dump"})
        r = pgrest(["--dump-schema", server.config_path])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.out = r.stdout
        self.cache = json.loads(self.out)

    def test_dump_schema_is_aeson_encoding(self):
        """CLI.hs: putStrLn of JSON.encode sCache: one compact line, keys in
        KeyMap order, aeson's string escapes ("\\u000c", "\\u0008",
        UTF-8 as is); SchemaCache.hs toJSON has exactly these five keys."""
        self.assertTrue(self.out.endswith("}\n"), self.out[-20:])
        self.assertEqual(self.out, aeson_encode(self.cache) + "\n")
        self.assertEqual(list(self.cache), ["dbMediaHandlers", "dbRelationships",
                                            "dbRepresentations", "dbRoutines", "dbTables"])
        self.assertIn(r'"colDescription":"tab\there\u000cform\u0008back \"q\" \\ </> é"',
                      self.out)

    def test_dump_schema_tables(self):
        """Table.hs (TablesMap: a HashMap with QualifiedIdentifier keys,
        ToJSONKeyValue, so [key, value] pairs), SchemaCache.hs
        tablesSqlQuery (data_type, nominal_data_type, view PKs from
        addViewPrimaryKeys, removeInternal keeps db-schemas only)."""
        tables = self.cache["dbTables"]
        for key, value in tables:
            self.assertEqual(key, qi(value["tableSchema"], value["tableName"]))
        got = {k["qiName"]: v for k, v in tables}
        self.assertEqual(len(got), len(tables))
        self.assertEqual(sorted(got), ["club", "membership", "node", "pair", "pair_view",
                                       "passport", "people", "person"])
        self.assertEqual(got["person"], table("person", [
            col("id", "integer", nullable=False),
            col("name", "character varying", "character varying(40)", nullable=False,
                max_len=40, default="'x'::character varying",
                description='tab\there\fform\bback "q" \\ </> \u00e9'),
            # a domain over a pg_catalog type: the base type's name
            col("fav", "integer", "dump.color"),
            col("mood", "dump.mood", enum=["sad", "ok", "happy"]),
        ], ["id"], description="People"))
        self.assertEqual(got["club"], table("club", [
            col("id", "integer", nullable=False), col("title", "text")], ["id"]))
        self.assertEqual(got["membership"], table("membership", [
            col("person_id", "integer", nullable=False),
            col("club_id", "integer", nullable=False)], ["club_id", "person_id"]))
        self.assertEqual(got["passport"], table("passport", [
            col("person_id", "integer", nullable=False)], ["person_id"]))
        self.assertEqual(got["node"], table("node", [
            col("id", "integer", nullable=False), col("parent_id", "integer")], ["id"]))
        # a table's PK columns by name (tbl_pk_cols), a view's in the
        # constraint's order (allViewsKeyDependencies, addViewPrimaryKeys)
        self.assertEqual(got["pair"], table("pair", [
            col("b", "integer", nullable=False), col("a", "integer", nullable=False)],
            ["a", "b"]))
        self.assertEqual(got["pair_view"], table("pair_view", [
            col("a", "integer"), col("b", "integer")], ["b", "a"], is_view=True))
        self.assertEqual(got["people"], table("people", [
            col("id", "integer"),
            col("name", "character varying", "character varying(40)", max_len=40),
        ], ["id"], is_view=True))

    def test_dump_schema_relationships(self):
        """Relationship.hs (RelationshipsMap: (QualifiedIdentifier, Schema)
        keys as arrays), SchemaCache.hs addViewM2OAndO2ORels (membership to
        the view people), addM2MRels (junction membership, swapped
        columns), addInverseRels (O2M), allComputedRels and
        getOverrideRelationshipsMap (computed relationships override the
        detected ones of the same key; each list sorted by Relationship's
        derived Ord)."""
        groups = {}
        for key, rels in self.cache["dbRelationships"]:
            self.assertEqual(len(key), 2)
            self.assertNotIn(key[0]["qiName"], groups)
            self.assertEqual((key[0]["qiSchema"], key[1]), ("dump", "dump"))
            groups[key[0]["qiName"]] = rels
        pfk, cfk = "membership_person_id_fkey", "membership_club_id_fkey"
        ppfk, nfk = "passport_person_id_fkey", "node_parent_id_fkey"
        self.assertEqual(groups, {
            # the function dump.membership replaces club -> membership
            # (getOverrideRelationshipsMap: HM.union computedRels)
            "club": [
                rel("club", "people", m2m(cfk, pfk, [("id", "club_id")], [("id", "person_id")]),
                    ft_view=True),
                rel("club", "person", m2m(cfk, pfk, [("id", "club_id")], [("id", "person_id")])),
                computed("membership", "club", "membership", False),
            ],
            "membership": [
                rel("membership", "club", fk("M2O", cfk, [("club_id", "id")])),
                rel("membership", "people", fk("M2O", pfk, [("person_id", "id")]), ft_view=True),
                rel("membership", "person", fk("M2O", pfk, [("person_id", "id")])),
            ],
            "people": [
                rel("people", "club", m2m(pfk, cfk, [("id", "person_id")], [("id", "club_id")]),
                    t_view=True),
                rel("people", "membership", fk("O2M", pfk, [("id", "person_id")]), t_view=True),
                rel("people", "passport", o2o(ppfk, [("id", "person_id")], True), t_view=True),
            ],
            "person": [
                rel("person", "club", m2m(pfk, cfk, [("id", "person_id")], [("id", "club_id")])),
                rel("person", "membership", fk("O2M", pfk, [("id", "person_id")])),
                # addInverseRels: O2O with isParent flipped
                rel("person", "passport", o2o(ppfk, [("id", "person_id")], True)),
                # Relationship < ComputedRelationship, then by relFunction
                computed("best_club", "person", "club", True),
                computed("clubs_of", "person", "club", False),
            ],
            # the FK column is the PK: O2O (allM2OandO2ORels one_to_one)
            "passport": [
                rel("passport", "people", o2o(ppfk, [("person_id", "id")], False), ft_view=True),
                rel("passport", "person", o2o(ppfk, [("person_id", "id")], False)),
            ],
            # self: relIsSelf, and O2M before M2O (Cardinality's Ord)
            "node": [
                rel("node", "node", fk("O2M", nfk, [("id", "parent_id")])),
                rel("node", "node", fk("M2O", nfk, [("parent_id", "id")])),
            ],
        })

    def test_dump_schema_routines(self):
        """Routine.hs (RoutineMap: QualifiedIdentifier keys; each list
        sorted by Routine's Ord, fewer parameters first), SchemaCache.hs
        funcsSqlQuery (return types through domains to the base type,
        ppTypeMaxLength for character, only the hoisted settings,
        toIsolationLevel)."""
        got = {}
        for key, overloads in self.cache["dbRoutines"]:
            self.assertNotIn(key["qiName"], got)
            self.assertEqual(key["qiSchema"], "dump")
            got[key["qiName"]] = overloads
        # best_club, clubs_of and membership take one unnamed argument of
        # a row type: not callable (funcsSqlQuery arguments.callable)
        self.assertEqual(sorted(got), ["add", "color", "hello", "outs", "pad", "pairs",
                                       "persons", "thing"])
        self.assertEqual(got["add"], [
            routine("add", [param("a", "integer")], scalar("pg_catalog", "int4")),
            routine("add", [param("a", "integer"), param("b", "integer", req=False)],
                    scalar("pg_catalog", "int4"), "Immutable", description="adds"),
        ])
        self.assertEqual(got["pad"], [routine(
            "pad", [param("c", "character", max_len_type="character varying")],
            scalar("pg_catalog", "text"))])
        self.assertEqual(got["color"], [routine(
            "color", [param("", "text")], scalar("pg_catalog", "int4"), "Immutable")])
        self.assertEqual(got["persons"], [routine(
            "persons", [param("ids", "integer[]", var=True)],
            composite("dump", "person", False, setof=True), "Stable", variadic=True,
            iso="Serializable", settings=[("default_transaction_isolation", "serializable")])])
        self.assertEqual(got["pairs"], [routine(
            "pairs", [], composite("pg_catalog", "record", False, setof=True))])
        # OUT parameters are not parameters; they make the result a record
        self.assertEqual(got["outs"], [routine(
            "outs", [param("a", "integer"), param("b", "text")],
            composite("pg_catalog", "record", False))])
        self.assertEqual(got["hello"], [routine("hello", [], scalar("pg_catalog", "text"))])

    def test_dump_schema_representations(self):
        """Representations.hs (RepresentationsMap: (Text, Text) keys),
        SchemaCache.hs dataRepresentations: implicit casts from text/json
        to a domain, names as regtype/regproc print them."""
        reps = self.cache["dbRepresentations"]
        for key, value in reps:
            self.assertEqual(key, [value["drSourceType"], value["drTargetType"]])
        self.assertIn([["text", "dump.color"],
                       {"drSourceType": "text", "drTargetType": "dump.color",
                        "drFunction": "dump.color"}], reps)

    def test_dump_schema_media_handlers(self):
        """Routine.hs MediaHandlerMap ((RelIdentifier, MediaType) keys,
        (MediaHandler, MediaType) values), SchemaCache.hs
        initialMediaHandlers and mediaHandlers/decodeMediaHandlers (a
        function returning a media type domain: handler named by the
        domain, target the function; HM.fromList keeps one handler per
        key), MediaType.hs: constructors of sums
        that are not all nullary, so {"tag"} / {"tag", "contents"}."""
        def tag(t, contents=None):
            return {"tag": t} if contents is None else {"tag": t, "contents": contents}
        any_el = tag("RelAnyElement")
        hello = tag("RelId", qi("dump", "hello"))
        thing = tag("RelId", qi("dump", "thing"))
        person = tag("RelId", qi("dump", "person"))
        expected = [
            [[any_el, tag("MTAny")], [tag("BuiltinOvAggJson"), tag("MTApplicationJSON")]],
            [[any_el, tag("MTApplicationJSON")],
             [tag("BuiltinOvAggJson"), tag("MTApplicationJSON")]],
            [[any_el, tag("MTTextCSV")], [tag("BuiltinOvAggCsv"), tag("MTTextCSV")]],
            [[any_el, tag("MTGeoJSON")], [tag("BuiltinOvAggGeoJson"), tag("MTGeoJSON")]],
            [[hello, tag("MTTextPlain")],
             [tag("CustomFunc", [qi("dump", "text/plain"), hello]), tag("MTTextPlain")]],
            # the key and the handler's name come from lower(t.typname),
            # the resolved media type from t.typname as it is
            [[thing, tag("MTOther", "application/x-thing")],
             [tag("CustomFunc", [qi("dump", "application/x-thing"), thing]),
              tag("MTOther", "Application/X-Thing")]],
        ]
        got = self.cache["dbMediaHandlers"]
        # HM.fromList: one of the two aggregates for (person, JSON); which
        # one depends on the query's row order
        on_person = [entry for entry in got if entry[0] == [person, tag("MTApplicationJSON")]]
        self.assertEqual(len(on_person), 1, got)
        self.assertIn(on_person[0][1], [
            [tag("CustomFunc", [qi("dump", agg), person]), tag("MTApplicationJSON")]
            for agg in ("as_json", "as_array")])
        got = [entry for entry in got if entry not in on_person]
        # a HashMap: compared as a set of entries
        def canon(items):
            return sorted(json.dumps(x, sort_keys=True) for x in items)
        self.assertEqual(canon(got), canon(expected))


class AdminSchemaCacheTest(harness.ServerTestCase):
    """Admin.hs: /schema_cache is JSON.encode of the same SchemaCache,
    without putStrLn's newline."""
    SERVER_CONFIG = {"db-schemas": "api"}

    def test_admin_schema_cache_is_the_dump(self):
        r = self.server.admin("/schema_cache")
        self.assertEqual(r.status, 200)
        d = pgrest(["--dump-schema", self.server.config_path])
        self.assertEqual(d.returncode, 0, d.stderr)
        self.assertEqual(r.body + "\n", d.stdout)


class DumpSchemaInDatabaseConfigTest(harness.ServerTestCase):
    """CLI.hs: CmdDumpSchema runs `when configDbConfig $
    AppState.readInDbConfig True appState` before dumpSchema, so the
    in-database settings (here db-schemas) decide what is dumped."""
    START_SERVER = False

    def config(self, extra):
        server = harness.Server.__new__(harness.Server)
        server.cluster = self.cluster
        server.port = harness.free_tcp_port()
        server.admin_port = harness.free_tcp_port()
        server.config_path = os.path.join(self.cluster.dir, "dump.conf")
        server.write_config(extra)
        return server.config_path

    def schemas(self, r):
        self.assertEqual(r.returncode, 0, r.stderr)
        return sorted({k["qiSchema"] for k, _ in json.loads(r.stdout)["dbTables"]})

    def test_dump_schema_reads_in_database_settings(self):
        self.cluster.psql("CREATE SCHEMA dump; CREATE TABLE dump.t (id integer);"
                          "ALTER ROLE authenticator SET pgrst.db_schemas = 'dump'")
        self.assertEqual(self.schemas(pgrest(["--dump-schema", self.config({})])), ["dump"])
        # db-config = false: the file's db-schemas ("api")
        r = pgrest(["--dump-schema", self.config({"db-config": "false"})])
        self.assertEqual(self.schemas(r), ["api"])

    def test_dump_schema_refuses_an_invalid_in_database_value(self):
        # readInDbConfig True: an invalid value panics before the dump
        self.cluster.psql("ALTER ROLE authenticator SET pgrst.db_tx_end = 'sometimes'")
        r = pgrest(["--dump-schema", self.config({})])
        self.assertEqual(r.returncode, 1, r.stdout[:200])
        self.assertEqual(r.stdout, "")
        self.assertIn("Invalid transaction termination. Check your configuration.", r.stderr)

    def test_dump_schema_without_database_logs_each_failure_once(self):
        # readInDbConfig True reports both settings queries, then
        # dumpSchema's querySchemaCache fails: SchemaCacheErrorObs, exit 1
        self.cluster.stop()
        r = pgrest(["--dump-schema", self.config({})])
        self.assertEqual((r.returncode, r.stdout), (1, ""))
        msgs = [line.split(": ", 1)[1] for line in r.stderr.splitlines()]
        self.assertEqual(len(msgs), 4, msgs)
        self.assertTrue(msgs[0].startswith("Starting PostgREST "), msgs[0])
        self.assertTrue(msgs[1].startswith("Failed to query database settings for the config "
                                           'parameters.{"code":"PGRST000"'), msgs[1])
        self.assertTrue(msgs[2].startswith('Failed to query the role settings. {"code":"PGRST000"'),
                        msgs[2])
        self.assertTrue(msgs[3].startswith("Failed to load the schema cache using "
                                           "db-schemas=api and db-extra-search-path=public. "),
                        msgs[3])
