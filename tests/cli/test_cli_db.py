"""The CLI commands that talk to a database or a running server:
--ready (Client.hs), --dump-config with in-database settings and
--dump-schema (CLI.hs runAppCommand), and the Server header (App.hs
setServerName). Each test has its own PostgreSQL (tests/server/harness)."""
import json
import os
import subprocess

import harness


def pgrest(args, timeout=60):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PGRST_")}
    return subprocess.run([harness.SERVER] + args, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout, env=env)


class ReadyTest(harness.ServerTestCase):

    def test_ready_ok(self):
        r = pgrest(["--ready", self.server.config_path])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "OK: http://127.0.0.1:%d/ready\n" % self.server.admin_port)

    def test_ready_fails_while_the_database_is_down(self):
        self.cluster.stop()
        self.assertIsNotNone(self.server.wait_for(lambda: self.server.ready_status() == 503, 30))
        r = pgrest(["--ready", self.server.config_path])
        self.assertEqual(r.returncode, 1)
        # PostgRESTNotReady url
        self.assertEqual(r.stderr, "ERROR: http://127.0.0.1:%d/ready\n" % self.server.admin_port)


class ServerHeaderTest(harness.ServerTestCase):

    def test_server_header(self):
        for path in ["/artists", "/nonexistent_table"]:
            r = self.server.get(path)
            # Warp's setServerName ("postgrest/" <> prettyVersion)
            self.assertRegex(r.headers.get("Server", ""), r"^postgrest/\d+\.\d+", path)
        # the admin server runs with the same Warp settings (App.hs runAdmin)
        r = self.server.admin("/live")
        self.assertRegex(r.headers.get("Server", ""), r"^postgrest/\d+\.\d+")


class DumpWithDatabaseTest(harness.ServerTestCase):
    START_SERVER = False

    def config(self, extra=None):
        server = harness.Server.__new__(harness.Server)
        server.cluster = self.cluster
        server.port = harness.free_tcp_port()
        server.admin_port = harness.free_tcp_port()
        server.config_path = os.path.join(self.cluster.dir, "cli.conf")
        server.write_config(extra or {})
        return server.config_path

    def test_dump_config_reads_in_database_settings(self):
        self.cluster.psql("ALTER ROLE authenticator SET pgrst.db_max_rows = '7'; "
                          "ALTER ROLE authenticator SET pgrst.openapi_mode = 'disabled'")
        r = pgrest(["--dump-config", self.config()])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("db-max-rows = 7\n", r.stdout)
        self.assertIn('openapi-mode = "disabled"\n', r.stdout)
        self.assertIn('db-schemas = "api"\n', r.stdout)

    def test_dump_config_refuses_an_invalid_in_database_value(self):
        # readInDbConfig re-runs the whole config parser and panics at startup
        self.cluster.psql("ALTER ROLE authenticator SET pgrst.db_tx_end = 'sometimes'")
        r = pgrest(["--dump-config", self.config()])
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertEqual(r.stdout, "")
        self.assertIn("FatalError {fatalErrorMessage = \"Error in config ", r.stderr)
        # Config.hs parser's text for db-tx-end
        self.assertIn("Invalid transaction termination. Check your configuration.", r.stderr)

    def test_dump_config_unreadable_in_database_number_is_the_default(self):
        # Config.hs coerceInt/coerceBool: readMaybe gives Nothing, the
        # option's default; the file's value does not come back either
        self.cluster.psql("ALTER ROLE authenticator SET pgrst.db_max_rows = 'ten';"
                          "ALTER ROLE authenticator SET pgrst.server_timing_enabled = 'yes';"
                          "ALTER ROLE authenticator SET pgrst.db_plan_enabled = ' 1 '")
        r = pgrest(["--dump-config", self.config({"db-max-rows": "5",
                                                  "server-timing-enabled": "true"})])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('db-max-rows = ""\n', r.stdout)
        self.assertIn("server-timing-enabled = false\n", r.stdout)
        self.assertIn("db-plan-enabled = true\n", r.stdout)

    def test_dump_config_without_db_config_ignores_them(self):
        self.cluster.psql("ALTER ROLE authenticator SET pgrst.db_max_rows = '7'")
        r = pgrest(["--dump-config", self.config({"db-config": "false"})])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('db-max-rows = ""\n', r.stdout)

    def test_dump_schema(self):
        r = pgrest(["--dump-schema", self.config()])
        self.assertEqual(r.returncode, 0, r.stderr)
        cache = json.loads(r.stdout)
        self.assertEqual(sorted(cache), ["dbMediaHandlers", "dbRelationships", "dbRepresentations",
                                         "dbRoutines", "dbTables"])
        tables = {(k["qiSchema"], k["qiName"]): v for k, v in cache["dbTables"]}
        artists = tables[("api", "artists")]
        self.assertEqual(artists["tableName"], "artists")
        self.assertEqual(artists["tablePKCols"], ["id"])
        self.assertFalse(artists["tableIsView"])
        self.assertIn("name", artists["tableColumns"])
        self.assertIn("colNominalType", artists["tableColumns"]["name"])
        rels = [rel for _, group in cache["dbRelationships"] for rel in group]
        # aeson tags the two constructors of Relationship
        self.assertTrue(all(r["tag"] in ("Relationship", "ComputedRelationship") for r in rels))
        self.assertTrue(any(r["tag"] == "Relationship" and r["relCardinality"]["tag"] == "M2O"
                            and r["relTable"]["qiName"] == "albums" for r in rels))
        # the derived relationships too (SchemaCache.hs addViewM2OAndO2ORels,
        # addM2MRels): a view over albums -> artists, playlists -> tracks
        view_rel = [r for r in rels if r["tag"] == "Relationship"
                    and r["relTable"]["qiName"] == "album_view"
                    and r["relForeignTable"]["qiName"] == "artists"]
        self.assertEqual(len(view_rel), 1)
        self.assertEqual(view_rel[0]["relCardinality"],
                         {"tag": "M2O", "relCons": "albums_artist_id_fkey",
                          "relColumns": [["artist", "id"]]})
        self.assertTrue(view_rel[0]["relTableIsView"])
        self.assertFalse(view_rel[0]["relFTableIsView"])
        m2m = [r for r in rels if r["tag"] == "Relationship"
               and r["relTable"]["qiName"] == "playlists"
               and r["relForeignTable"]["qiName"] == "tracks"
               and r["relCardinality"]["tag"] == "M2M"]
        self.assertEqual(len(m2m), 1)
        self.assertEqual(m2m[0]["relCardinality"]["contents"]["junTable"],
                         {"qiSchema": "api", "qiName": "playlist_track"})
        # decodeFuncs sorts each name's overloads (Routine's Ord)
        picks = [[p["ppName"] + ":" + p["ppType"] for p in r["pdParams"]]
                 for k, group in cache["dbRoutines"] if k == {"qiSchema": "api", "qiName": "pick"}
                 for r in group]
        self.assertEqual(picks, [["x:integer"], ["x:text"], ["x:date", "y:integer"]])
        # initialMediaHandlers, as aeson encodes the keys
        self.assertIn([[{"tag": "RelAnyElement"}, {"tag": "MTAny"}],
                       [{"tag": "BuiltinOvAggJson"}, {"tag": "MTApplicationJSON"}]],
                      cache["dbMediaHandlers"])

    def test_dump_schema_fails_without_database(self):
        self.cluster.stop()
        r = pgrest(["--dump-schema", self.config()])
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, "")

    def stderr_messages(self, r):
        # Logger.hs: every diagnostic line starts "dd/Mon/yyyy:HH:MM:SS +zzzz: "
        stamp = r"^\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}: "
        lines = r.stderr.splitlines()
        for line in lines:
            self.assertRegex(line, stamp)
        return [line.split(": ", 1)[1] for line in lines]

    def test_dump_config_logs_as_a_fresh_app_state(self):
        # CLI.hs: AppState.init logs AppStartObs; readInDbConfig True logs
        # no ConfigSucceededObs, and nothing of a normal start follows
        r = pgrest(["--dump-config", self.config()])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.stderr_messages(r), ["Starting PostgREST %s..." % self.version()])

    def test_dump_config_without_database_reports_both_settings_queries(self):
        self.cluster.stop()
        r = pgrest(["--dump-config", self.config()])
        self.assertEqual(r.returncode, 0, r.stderr)
        msgs = self.stderr_messages(r)
        self.assertEqual(len(msgs), 3, msgs)
        self.assertEqual(msgs[0], "Starting PostgREST %s..." % self.version())
        # Reload.hs readInDbConfig: ConfigReadErrorObs (no space before the
        # JSON), then QueryRoleSettingsErrorObs, both with the pool's error
        self.assertTrue(msgs[1].startswith("Failed to query database settings for the config "
                                           'parameters.{"code":"PGRST000"'), msgs[1])
        self.assertTrue(msgs[2].startswith('Failed to query the role settings. {"code":"PGRST000"'),
                        msgs[2])
        self.assertIn('db-schemas = "api"\n', r.stdout)

    def test_dump_schema_failure_logs_the_schema_cache_error_once(self):
        self.cluster.stop()
        r = pgrest(["--dump-schema", self.config()])
        self.assertEqual(r.returncode, 1)
        msgs = self.stderr_messages(r)
        self.assertEqual(msgs[0], "Starting PostgREST %s..." % self.version())
        failed = [m for m in msgs if m.startswith("Failed to load the schema cache using "
                                                  "db-schemas=api and db-extra-search-path=public. ")]
        self.assertEqual(len(failed), 1, msgs)
        self.assertEqual(msgs[-1], failed[0], msgs)

    def version(self):
        out = pgrest(["--version"]).stdout.strip()
        self.assertTrue(out.startswith("PostgREST "), out)
        return out[len("PostgREST "):]
