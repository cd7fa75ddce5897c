"""Behaviours PostgREST's own operational tests (test/io: test_io.py,
test_replica.py) check and the other server tests do not: a server
started from PGRST_* variables alone, the random port, a pool flush under
a running request, function settings hoisted into the transaction, the
pre-config function, the JWT secret read from standard input, and a
standby first in the db-uri host list. Expected values come from
PostgREST's source (App.hs, Config.hs, Config/Database.hs, Query.hs,
Logger.hs)."""
import base64
import hashlib
import hmac
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time

import harness
from harness import SERVER, ServerTestCase, free_tcp_port, http
from test_admin_logs import LogReader, unix_get

SECRET = "reallyreallyreallyreallyverysafe"


def token(claims, secret=SECRET):
    def b64(data):
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(json.dumps(claims).encode())
    sig = hmac.new(secret.encode(), ("%s.%s" % (head, body)).encode(), hashlib.sha256).digest()
    return "%s.%s.%s" % (head, body, b64(sig))


class EnvServer:
    """pgrest-server started the way PostgREST's io fixture starts
    postgrest: no config file, only PGRST_* variables, stdin optional."""

    def __init__(self, directory, env, stdin=None):
        self.admin_port = free_tcp_port()
        self.log_path = os.path.join(directory, "env-server.out")
        self.err_path = os.path.join(directory, "env-server.err")
        full = {k: v for k, v in os.environ.items() if not k.startswith("PGRST_")}
        full.update({"PGRST_ADMIN_SERVER_PORT": str(self.admin_port)})
        full.update(env)
        self.out = open(self.log_path, "wb")
        self.err = open(self.err_path, "wb")
        self.proc = subprocess.Popen([SERVER], env=full, stdout=self.out, stderr=self.err,
                                     stdin=subprocess.PIPE if stdin is not None else None)
        if stdin is not None:
            self.proc.stdin.write(stdin)
            self.proc.stdin.close()

    def admin(self, path):
        return http("GET", "http://127.0.0.1:%d%s" % (self.admin_port, path), timeout=5)

    def wait_ready(self, timeout=30):
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout and self.proc.poll() is None:
            try:
                if self.admin("/ready").status == 200:
                    return True
            except OSError:
                pass
            time.sleep(0.05)
        return False

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.out.close()
        self.err.close()

    def text(self, path):
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()


class EnvStartTest(ServerTestCase):
    START_SERVER = False

    def env_server(self, env, stdin=None):
        base = {"PGRST_DB_URI": self.cluster.db_uri, "PGRST_DB_SCHEMAS": "api",
                "PGRST_DB_ANON_ROLE": "web_anon", "PGRST_LOG_LEVEL": "info"}
        base.update(env)
        srv = EnvServer(self.cluster.dir, base, stdin)
        self.addCleanup(srv.stop)
        self.assertTrue(srv.wait_ready(), srv.text(srv.err_path)[-2000:])
        return srv

    def test_unix_socket_from_the_environment(self):
        # the io fixture's default: PGRST_SERVER_UNIX_SOCKET, requests over it
        path = os.path.join(self.cluster.dir, "api.sock")
        srv = self.env_server({"PGRST_SERVER_UNIX_SOCKET": path})
        self.assertEqual(unix_get(path, "/artists?select=id&id=eq.1"), (200, '[{"id":1}]'))
        self.assertEqual(unix_get(path, "/no_such_table")[0], 404)
        self.assertIn("API server listening on %s\n" % path, srv.text(srv.err_path))
        t0 = time.monotonic()
        while time.monotonic() - t0 < 5 and srv.text(srv.log_path).count("\n") < 2:
            time.sleep(0.05)
        lines = srv.text(srv.log_path).splitlines()
        # Logger/Apache.hs getSourceFromSocket: wai-logger's showSockAddr
        # writes a Unix socket peer as "-" (since its 2022 change "Make
        # unix sockets known"), so the line starts "- - role"
        self.assertRegex(lines[0], r'^- - web_anon \[[^]]+\] '
                                   r'"GET /artists\?select=id&id=eq\.1 HTTP/1\.1" 200 10 "" "[^"]*"$')
        self.assertRegex(lines[1], r'^- - web_anon \[[^]]+\] '
                                   r'"GET /no_such_table HTTP/1\.1" 404 \d+ "" "[^"]*"$')

    def test_options_set_to_empty(self):
        # io test_allow_configs_to_be_set_to_empty: Config.hs optString
        # drops "" (the default holds); db-extra-search-path "" is the
        # empty list (optStringEmptyable)
        empty = ["DB_EXTRA_SEARCH_PATH", "DB_PRE_CONFIG", "DB_PRE_REQUEST", "DB_ROOT_SPEC",
                 "OPENAPI_SERVER_PROXY_URI", "SERVER_CORS_ALLOWED_ORIGINS",
                 "SERVER_TRACE_HEADER", "JWT_AUD", "JWT_ROLE_CLAIM_KEY", "JWT_SECRET",
                 "DB_MAX_ROWS", "DB_TX_END", "OPENAPI_MODE", "CLIENT_ERROR_VERBOSITY",
                 "DB_HOISTED_TX_SETTINGS", "ADMIN_SERVER_UNIX_SOCKET", "DB_CHANNEL",
                 "JWT_CACHE_MAX_ENTRIES", "DB_POOL", "SERVER_UNIX_SOCKET_MODE"]
        port = free_tcp_port()
        env = {"PGRST_" + k: "" for k in empty}
        env.update({"PGRST_SERVER_PORT": str(port), "PGRST_SERVER_HOST": "127.0.0.1"})
        self.env_server(env)
        r = http("GET", "http://127.0.0.1:%d/artists?select=id&order=id" % port)
        self.assertEqual((r.status, r.body), (200, '[{"id":1}, \n {"id":2}, \n {"id":3}]'))

    def test_version_line_and_server_header_agree(self):
        # io test_log_postgrest_version: the Server header's version after
        # "postgrest/" is the one "Starting PostgREST <version>..." shows
        port = free_tcp_port()
        srv = self.env_server({"PGRST_SERVER_PORT": str(port), "PGRST_SERVER_HOST": "127.0.0.1"})
        r = http("HEAD", "http://127.0.0.1:%d/" % port)
        self.assertTrue(r.headers["Server"].startswith("postgrest/"), r.headers)
        version = r.headers["Server"].split("/", 1)[1]
        first = srv.text(srv.err_path).splitlines()[0]
        self.assertTrue(first.endswith(": Starting PostgREST %s..." % version), first)

    def test_jwt_secret_from_stdin_with_db_config(self):
        # io test_read_secret_from_stdin(_dbconfig): "@/dev/stdin" read at
        # start (one trailing newline chomped, Config.hs readSecretFile);
        # the in-database reload of db-config reads stdin again, finds it
        # empty and fails, so the secret read at start stays in force
        self.cluster.psql("GRANT SELECT ON api.artists TO web_user")
        port = free_tcp_port()
        srv = self.env_server({"PGRST_JWT_SECRET": "@/dev/stdin", "PGRST_DB_CONFIG": "true",
                               "PGRST_SERVER_PORT": str(port),
                               "PGRST_SERVER_HOST": "127.0.0.1"},
                              stdin=(SECRET + "\n").encode())
        r = http("GET", "http://127.0.0.1:%d/artists?select=id&id=eq.1" % port,
                 headers={"Authorization": "Bearer " + token({"role": "web_user"})})
        self.assertEqual((r.status, r.body), (200, '[{"id":1}]'))
        bad = http("GET", "http://127.0.0.1:%d/artists" % port,
                   headers={"Authorization": "Bearer " + token({"role": "web_user"}, "x" * 32)})
        self.assertEqual(bad.status, 401, bad)


class RandomPortTest(ServerTestCase):
    START_SERVER = False
    SPLIT_LOGS = True

    def test_port_zero_binds_a_free_port(self):
        # io test_random_port_bound: server-port 0 is a port the system
        # picks; App.hs logs the address the socket got
        srv = self.start_server(**{"server-port": "0"})
        logs = LogReader(srv)
        rx = r"^API server listening on 127\.0\.0\.1:(\d+)$"
        logs.wait_message(rx)
        port = int(next(m for m in map(re.compile(rx).match, logs.messages()) if m).group(1))
        self.assertNotEqual(port, 0)
        r = http("GET", "http://127.0.0.1:%d/artists?select=id&id=eq.1" % port)
        self.assertEqual((r.status, r.body), (200, '[{"id":1}]'))


class PoolFlushTest(ServerTestCase):
    SERVER_CONFIG = {"db-pool": "2"}

    def test_flush_does_not_interrupt_a_running_request(self):
        # io test_flush_pool_no_interrupt: SIGUSR1 flushes the pool (and
        # reloads the schema cache); a request in flight finishes normally
        result = {}
        t = threading.Thread(target=lambda: result.setdefault(
            "r", self.server.get("/rpc/slow?seconds=1", timeout=20)))
        t.start()
        t0 = time.monotonic()
        while time.monotonic() - t0 < 10:
            if self.cluster.psql("SELECT count(*) FROM pg_stat_activity "
                                 "WHERE wait_event = 'PgSleep'").strip() != "0":
                break
            time.sleep(0.02)
        self.server.signal(signal.SIGUSR1)
        t.join(20)
        self.assertFalse(t.is_alive())
        self.assertEqual((result["r"].status, result["r"].body), (200, "1"))
        self.assertEqual(self.server.get("/artists?select=id&id=eq.1").status, 200)


FUNCTIONS = """
CREATE FUNCTION api.short_timeout() RETURNS int LANGUAGE sql
  SET statement_timeout = '100ms' AS $$ SELECT 1 FROM pg_sleep(0.5) $$;
CREATE FUNCTION api.two_settings() RETURNS TABLE(work_mem text, statement_timeout text)
  LANGUAGE sql SET work_mem = '5000kB' SET statement_timeout = '10s'
  AS $$ SELECT current_setting('work_mem'), current_setting('statement_timeout') $$;
GRANT EXECUTE ON FUNCTION api.short_timeout(), api.two_settings() TO web_anon;
"""


class FunctionSettingsTest(ServerTestCase):
    START_SERVER = False

    def test_statement_timeout_is_hoisted_by_default(self):
        # io test_function_setting_statement_timeout_fails: statement_timeout
        # is in db-hoisted-tx-settings' default list (Config.hs), so the
        # function's SET applies to the whole statement (Query.hs set_config)
        self.cluster.psql(FUNCTIONS)
        self.start_server()
        r = self.server.get("/rpc/short_timeout")
        body = self.assertError(r, 500, ("57014",))
        self.assertEqual(body["message"], "canceling statement due to statement timeout")
        # io test_multiple_func_settings
        r = self.server.get("/rpc/two_settings")
        self.assertEqual(r.json(), [{"work_mem": "5000kB", "statement_timeout": "10s"}])

    def test_not_hoisted_when_left_out_of_the_list(self):
        self.cluster.psql(FUNCTIONS)
        self.start_server(**{"db-hoisted-tx-settings": "work_mem"})
        r = self.server.get("/rpc/short_timeout")
        self.assertEqual((r.status, r.body), (200, "1"))


class PreConfigTest(ServerTestCase):
    START_SERVER = False

    def test_pre_config_function_sets_options(self):
        # Config/Database.hs queryDbSettings: the pre-config function's
        # set_config values, below the role's own settings
        self.cluster.psql(
            "CREATE SCHEMA conf; GRANT USAGE ON SCHEMA conf TO authenticator;"
            "CREATE FUNCTION conf.pre_config() RETURNS void LANGUAGE sql AS $$"
            " SELECT set_config('pgrst.db_max_rows', '1', true),"
            "        set_config('pgrst.server_timing_enabled', 'true', true) $$;")
        self.start_server(**{"db-pre-config": "conf.pre_config"})
        r = self.server.get("/artists")
        self.assertEqual(len(r.json()), 1)
        self.assertIn("Server-Timing", r.headers)
        self.cluster.psql("ALTER ROLE authenticator SET pgrst.db_max_rows = '2'")
        self.server.signal(signal.SIGUSR2)
        self.assertIsNotNone(self.server.wait_for(
            lambda: len(self.server.get("/artists").json()) == 2, 5))
        self.assertIn("Server-Timing", self.server.get("/artists").headers)


class ReplicaTest(ServerTestCase):
    """test_replica.py: a standby first in the host list serves reads; the
    listener connects with target_session_attrs=read-write (Config.hs
    addTargetSessionAttrs), so it finds the primary and NOTIFY works."""

    START_SERVER = False
    SPLIT_LOGS = True

    def start_standby(self):
        directory = harness._workdir("pgrest-srv-standby-")
        self.addCleanup(shutil.rmtree, directory, True)
        os.makedirs(os.path.join(directory, "run"))
        harness._chown_tree(directory)
        bindir = "/usr/lib/postgresql/15/bin"
        if not os.path.exists(bindir):
            bindir = os.path.dirname(shutil.which("pg_ctl") or "/usr/bin/pg_ctl")
        as_pg = ["runuser", "-u", harness.PG_OS_USER, "--"] if os.geteuid() == 0 else []
        data = os.path.join(directory, "data")
        subprocess.run(as_pg + [os.path.join(bindir, "pg_basebackup"), "-D", data, "-R",
                                "-h", self.cluster.sockdir, "-p", str(self.cluster.port),
                                "-U", "postgres"], check=True, cwd="/", timeout=120,
                       capture_output=True)
        port = harness.free_pg_port()
        with open(os.path.join(data, "postgresql.conf"), "a") as f:
            f.write("\nport = %d\nunix_socket_directories = '%s'\nhot_standby = on\n"
                    % (port, os.path.join(directory, "run")))
        subprocess.run(as_pg + [os.path.join(bindir, "pg_ctl"), "-D", data, "-w", "-l",
                                os.path.join(directory, "postgres.log"), "start"],
                       check=True, cwd="/", timeout=120, capture_output=True)
        self.addCleanup(subprocess.run, as_pg + [os.path.join(bindir, "pg_ctl"), "-D", data,
                                                 "-m", "immediate", "stop"],
                        cwd="/", timeout=60, capture_output=True)
        return os.path.join(directory, "run"), port

    def test_standby_first_in_the_host_list(self):
        self.cluster.psql("CREATE FUNCTION api.is_replica() RETURNS bool LANGUAGE sql"
                          " AS 'SELECT pg_is_in_recovery()';"
                          "GRANT EXECUTE ON FUNCTION api.is_replica() TO web_anon")
        sockdir, port = self.start_standby()
        uri = "postgresql://authenticator@/pgrest_test?host=%s,%s&port=%d,%d" % (
            sockdir, self.cluster.sockdir, port, self.cluster.port)
        self.start_server(**{"db-uri": uri})
        self.assertIsNotNone(self.server.wait_for(
            lambda: self.server.get("/rpc/is_replica").body == "true", 10))
        logs = LogReader(self.server)
        logs.wait_message(r'^Listener connected to .+ on "%s:%d" and listening'
                          % (re.escape(self.cluster.sockdir), self.cluster.port))
        # a write on the standby: PostgreSQL's read-only error, 405 (Error.hs 25006)
        w = self.server.post("/playlists", {"id": 99, "name": "x"})
        self.assertError(w, 405, ("25006",))
        # a NOTIFY on the primary reaches the listener; the table replicates
        self.cluster.psql("CREATE TABLE api.replicated (id int);"
                          "GRANT SELECT ON api.replicated TO web_anon; NOTIFY pgrst")
        self.assertIsNotNone(self.server.wait_for(
            lambda: self.server.get("/replicated").status == 200, 10))


class ConcurrentNotificationsTest(ServerTestCase):
    SERVER_CONFIG = {"internal-schema-cache-query-sleep": "500"}

    def test_notification_during_a_load_is_not_lost(self):
        # io test_schema_cache_concurrent_notifications: a NOTIFY while the
        # (slowed) load of the previous one runs is served by another load
        # after it (AppState's debounced loader runs once more)
        self.cluster.psql("CREATE FUNCTION api.mult_them(a int, b int) RETURNS int"
                          " LANGUAGE sql AS 'SELECT a * b';"
                          "GRANT EXECUTE ON FUNCTION api.mult_them(int, int) TO web_anon;"
                          "NOTIFY pgrst")
        time.sleep(0.25)   # inside the first load's 500 ms sleep
        self.cluster.psql("DROP FUNCTION api.mult_them(int, int);"
                          "CREATE FUNCTION api.mult_them(c int, d int) RETURNS int"
                          " LANGUAGE sql AS 'SELECT c * d';"
                          "GRANT EXECUTE ON FUNCTION api.mult_them(int, int) TO web_anon;"
                          "NOTIFY pgrst")
        self.assertIsNotNone(self.server.wait_for(
            lambda: self.server.get("/rpc/mult_them?c=3&d=4").body == "12", 10),
            self.server.get("/rpc/mult_them?c=3&d=4"))
        self.assertEqual(self.server.get("/rpc/mult_them?a=3&b=4").status, 404)
