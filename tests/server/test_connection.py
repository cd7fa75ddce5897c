"""Connection semantics of pgrest-server (PostgREST AppState/Reload.hs,
AppState/Pool.hs, Logger.hs; ref/connection_pool "Automatic Recovery" and
"Connection Application Name"; ref/configuration server-reuseport):
exit status and log lines when the database cannot be reached, the
application_name and LISTEN seen in pg_stat_activity, and the handover
between two processes sharing a port."""
import os
import signal
import socket
import re
import subprocess
import tempfile
import threading
import time
import urllib.error

from harness import SERVER, Server, ServerTestCase, http, log


def server_app_name():
    """PostgREST's fallback_application_name, "PostgREST <version>", where
    <version> is what follows "postgrest/" in the Server header (Config.hs
    addFallbackAppName with prettyVersion): the --version line."""
    line = subprocess.run([SERVER, "--version"], stdout=subprocess.PIPE,
                          text=True, timeout=10).stdout.strip()
    return line


class ConnectionFailureTest(ServerTestCase):
    """PL04: fatal errors and db-pool-automatic-recovery."""
    START_SERVER = False

    def wait_exit(self, srv, timeout=15):
        try:
            return srv.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.fail("server still running:\n" + srv.log_tail())

    def bad_db_uri(self):
        return "postgresql://authenticator@localhost:%d/no_such_db" % self.cluster.port

    def test_wrong_database_without_recovery_exits_1(self):
        srv = self.start_server(wait=False, **{"db-uri": self.bad_db_uri(),
                                               "db-pool-automatic-recovery": "false"})
        self.assertEqual(self.wait_exit(srv), 1)
        out = srv.log_tail()
        self.assertIn("Failed to query the PostgreSQL version. {\"code\":\"PGRST000\","
                      "\"details\":\"connection to server at", out)
        self.assertIn('database \\"no_such_db\\" does not exist","hint":null,'
                      '"message":"Database connection error."}', out)
        self.assertIn("Automatic recovery disabled, exiting.", out)
        self.assertNotIn("Attempting to reconnect", out)

    def test_wrong_database_with_recovery_retries_with_backoff(self):
        srv = self.start_server(wait=False, **{"db-uri": self.bad_db_uri()})
        self.assertIsNotNone(srv.wait_for(
            lambda: "in 2 seconds..." in srv.log_tail(), 10), srv.log_tail())
        self.assertTrue(srv.alive())
        out = srv.log_tail()
        self.assertIn("Attempting to reconnect to the database in 1 seconds...", out)
        self.assertLess(out.index("in 1 seconds"), out.index("in 2 seconds"))
        self.assertGreaterEqual(out.count("Failed to query the PostgreSQL version."), 2)
        # requests meanwhile: 503 (no schema cache yet)
        self.assertEqual(srv.get("/artists").status, 503)

    def make_password_user(self):
        """A role that must log in with a password over TCP."""
        self.cluster.psql("CREATE ROLE pw_user LOGIN PASSWORD 'right' IN ROLE authenticator;"
                          "GRANT web_anon TO pw_user")
        hba = os.path.join(self.cluster.dir, "data", "pg_hba.conf")
        with open(hba) as f:
            rules = f.read()
        with open(hba, "w") as f:
            f.write("host all pw_user 127.0.0.1/32 scram-sha-256\n" + rules)
        self.cluster.psql("SELECT pg_reload_conf()")

    def test_wrong_password_exits_1_even_with_recovery(self):
        self.make_password_user()
        uri = "postgresql://pw_user:wrong@127.0.0.1:%d/pgrest_test" % self.cluster.port
        srv = self.start_server(wait=False, **{"db-uri": uri})
        self.assertEqual(self.wait_exit(srv), 1)
        out = srv.log_tail()
        self.assertIn("Failed to establish a connection. {\"code\":\"PGRST000\"", out)
        self.assertIn('password authentication failed for user \\"pw_user\\"', out)
        self.assertNotIn("Attempting to reconnect", out)

    def test_missing_password_exits_1(self):
        self.make_password_user()
        uri = "postgresql://pw_user@127.0.0.1:%d/pgrest_test" % self.cluster.port
        srv = self.start_server(wait=False, **{"db-uri": uri})
        self.assertEqual(self.wait_exit(srv), 1)
        self.assertIn("Failed to establish a connection.", srv.log_tail())
        self.assertIn("no password supplied", srv.log_tail())

    def test_right_password_works(self):
        self.make_password_user()
        uri = "postgresql://pw_user:right@127.0.0.1:%d/pgrest_test" % self.cluster.port
        srv = self.start_server(**{"db-uri": uri})
        self.assertEqual(srv.get("/artists?select=id&limit=1").status, 200)
        self.assertIn("Successfully connected to PostgreSQL", srv.log_tail())
        self.assertIn("Connection Pool initialized with a maximum size of 4 connections",
                      srv.log_tail())

    def test_duplicate_prepared_statement_exits_1(self):
        # what a transaction-mode pooler does to prepared statements:
        # PostgREST exits (AppState/Pool.hs, 42P05)
        self.cluster.psql(
            "CREATE FUNCTION api.prepare_twice() RETURNS int LANGUAGE plpgsql AS $$"
            " BEGIN EXECUTE 'PREPARE dup_probe AS SELECT 1'; RETURN 1; END $$;"
            "GRANT EXECUTE ON FUNCTION api.prepare_twice() TO web_anon")
        srv = self.start_server(**{"db-pool": "1"})
        self.assertEqual(srv.post("/rpc/prepare_twice", {}).status, 200)
        r = srv.post("/rpc/prepare_twice", {})
        self.assertEqual(r.json()["code"], "42P05")
        self.assertEqual(self.wait_exit(srv), 1)
        self.assertIn("If you are using connection poolers in transaction mode, try setting "
                      "db-prepared-statements to false. {\"code\":\"42P05\"", srv.log_tail())

    def test_database_lost_without_recovery_exits_1(self):
        srv = self.start_server(**{"db-pool-automatic-recovery": "false"})
        self.cluster.stop()
        self.assertEqual(self.wait_exit(srv, 20), 1)
        # Reload.hs retryingListen: the listener's failure, then killApp
        # (no line of its own; the schema cache loader never ran)
        self.assertIn('Failed listening for database notifications on the "pgrst" channel. ',
                      srv.log_tail())
        self.assertNotIn("Attempting to reconnect", srv.log_tail())
        self.assertNotIn("Automatic recovery disabled", srv.log_tail())

    def test_database_lost_with_recovery_keeps_running(self):
        srv = self.start_server()
        self.cluster.stop()
        # the listener notices and retries (Reload.hs retryingListen)
        self.assertIsNotNone(srv.wait_for(
            lambda: "Retrying listening for database notifications in 2 seconds..."
            in srv.log_tail(), 15), srv.log_tail())
        self.assertTrue(srv.alive())
        self.cluster.resume()
        self.assertIsNotNone(srv.wait_ready(40))


class ApplicationNameTest(ServerTestCase):
    """PL03 / PL06: PostgREST's connections carry fallback_application_name
    "PostgREST <version>"; pgrest's carry the library's name and version
    ("pgrest X.Y.Z", the end of pgrest-server --version). The listener shows
    as LISTEN on db-channel."""

    def activity(self):
        return self.cluster.psql(
            "SELECT application_name || '|' || state || '|' || query FROM pg_stat_activity"
            " WHERE usename = 'authenticator' ORDER BY query").splitlines()

    def test_application_name_and_listener(self):
        self.assertEqual(self.server.get("/artists?select=id&limit=1").status, 200)
        name = server_app_name()
        version = self.server.get("/").headers["Server"].split("/", 1)[1]
        self.assertEqual(name, "PostgREST " + version)
        rows = self.activity()
        self.assertIn('%s|idle|LISTEN "pgrst"' % name, rows)
        self.assertTrue(rows and all(r.startswith(name + "|") for r in rows), rows)
        self.assertGreaterEqual(len(rows), 2, rows)   # listener + a pool connection
        # the listener's lines (PostgREST Logger.hs DBListenStart, ...)
        self.assertRegex(self.server.log_tail(),
                         r'Listener connected to PostgreSQL \d+.* on "localhost:%d" and '
                         r'listening for database notifications on the "pgrst" channel'
                         % self.cluster.port)
        self.cluster.psql("NOTIFY pgrst, 'reload schema'")
        self.assertIsNotNone(self.server.wait_for(
            lambda: 'Received a schema cache reload message on the "pgrst" channel'
            in self.server.log_tail(), 10), self.server.log_tail())

    def test_channel_name_in_listen(self):
        self.server.stop()
        self.start_server(**{"db-channel": "my channel"})
        self.assertIn('%s|idle|LISTEN "my channel"' % server_app_name(), self.activity())

    def test_application_name_in_db_uri_wins(self):
        self.server.stop()
        uri = self.cluster.db_uri + "?application_name=my_api"
        srv = self.start_server(**{"db-uri": uri})
        self.assertEqual(srv.get("/artists?select=id&limit=1").status, 200)
        rows = self.activity()
        self.assertTrue(rows and all(r.startswith("my_api|") for r in rows), rows)

    def test_server_name_overrides_a_fallback_in_db_uri(self):
        # appended after db-uri's own options: libpq keeps the last one
        for suffix in ("?fallback_application_name=mine", "?", ""):
            self.server.stop()
            srv = self.start_server(**{"db-uri": self.cluster.db_uri + suffix})
            self.assertEqual(srv.get("/artists?select=id&limit=1").status, 200)
            rows = self.activity()
            self.assertTrue(rows and all(r.startswith(server_app_name() + "|") for r in rows),
                            (suffix, rows))

    def test_key_value_db_uri(self):
        self.server.stop()
        uri = "host=localhost port=%d dbname=pgrest_test user=authenticator" % self.cluster.port
        srv = self.start_server(**{"db-uri": uri})
        self.assertEqual(srv.get("/artists?select=id&limit=1").status, 200)
        rows = self.activity()
        self.assertTrue(rows and all(r.startswith(server_app_name() + "|") for r in rows), rows)


class Hammer(threading.Thread):
    """Sends requests on fresh connections until stopped; counts failures."""

    def __init__(self, port, path):
        super().__init__(daemon=True)
        self.url = "http://127.0.0.1:%d%s" % (port, path)
        self.ok, self.failures = 0, []
        self.stopping = threading.Event()
        self.start()

    def run(self):
        while not self.stopping.is_set():
            try:
                r = http("GET", self.url, timeout=10)
                if r.status == 200:
                    self.ok += 1
                else:
                    self.failures.append(r)
            except (OSError, urllib.error.URLError) as e:
                self.failures.append(e)

    def finish(self):
        self.stopping.set()
        self.join(20)


class ReusePortTest(ServerTestCase):
    """server-reuseport: a second process binds the same port; the old one
    hands over on SIGTERM without dropping a request."""
    SERVER_CONFIG = {"server-reuseport": "true"}

    def second_server(self, extra=None):
        d = tempfile.mkdtemp(prefix="pgrest-srv-b-", dir=self.cluster.dir)
        cfg = dict(self.SERVER_CONFIG)
        cfg["server-port"] = str(self.server.port)
        cfg.update(extra or {})
        srv = Server(self.cluster, d, cfg)
        srv.port = self.server.port
        self.addCleanup(srv.stop)
        return srv

    def test_handover_drops_nothing(self):
        old = self.server
        new = self.second_server()
        self.assertIsNotNone(new.wait_ready(30), new.log_tail())
        hammers = [Hammer(old.port, "/artists?select=id&limit=1") for _ in range(6)]
        slow = []
        threading.Thread(target=lambda: slow.append(
            http("GET", old.url("/rpc/slow?seconds=1.5"), timeout=20)), daemon=True).start()
        time.sleep(1.0)
        served_before = sum(h.ok for h in hammers)
        old.signal(signal.SIGTERM)
        self.assertEqual(old.proc.wait(timeout=30), 0, old.log_tail())
        time.sleep(1.0)
        for h in hammers:
            h.finish()
        self.assertEqual([f for h in hammers for f in h.failures], [])
        served = sum(h.ok for h in hammers)
        self.assertGreater(served_before, 0)
        self.assertGreater(served, served_before, "nothing served after the handover")
        self.assertTrue(new.alive())
        self.assertEqual(new.get("/artists?select=id&limit=1").status, 200)
        # the slow request: served by whichever process got it, complete
        deadline = time.monotonic() + 10
        while not slow and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual([(r.status, r.body) for r in slow], [(200, "1.5")])
        log("handover: %d requests, none dropped" % served)

    def test_port_taken_without_reuseport(self):
        srv = self.second_server({"server-reuseport": "false"})
        self.assertEqual(srv.proc.wait(timeout=30), 1, srv.log_tail())

    def test_new_process_binds_only_when_ready(self):
        # a replacement that cannot load its schema cache takes no traffic
        bad = "postgresql://authenticator@localhost:%d/no_such_db" % self.cluster.port
        new = self.second_server({"db-uri": bad})
        new.wait_for(lambda: "Attempting to reconnect" in new.log_tail(), 10)
        for _ in range(30):
            self.assertEqual(http("GET", self.server.url("/artists?select=id&limit=1")).status, 200)
        self.assertTrue(new.alive())
