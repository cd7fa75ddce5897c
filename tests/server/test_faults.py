"""Database faults under a running server, answered as PostgREST answers
them (Error.hs: ConnectionUsageError PGRST000, ClientError PGRST001,
AcquisitionTimeoutUsageError PGRST003, mapSQLtoHTTP for the SQLSTATE a
backend sends before it goes): no request hangs, the server recovers
without a restart, and the pool gets every connection back."""
import os
import re
import subprocess
import threading
import time

from harness import ServerTestCase, http
from test_admin_logs import LogReader

RECOVERY_TIMEOUT = 20


class Background(threading.Thread):
    def __init__(self, fn):
        super().__init__(daemon=True)
        self.fn, self.result, self.error = fn, None, None
        self.start()

    def run(self):
        try:
            self.result = self.fn()
        except Exception as e:     # reported by the test
            self.error = e


def metric(server, name):
    for line in server.admin("/metrics").body.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError("no metric " + name)


class FaultTestCase(ServerTestCase):
    SPLIT_LOGS = True

    def slow_request(self, seconds):
        req = Background(lambda: self.server.get("/rpc/slow?seconds=%s" % seconds, timeout=30))
        # wait until its query runs
        t0 = time.monotonic()
        while time.monotonic() - t0 < 10:
            if self.cluster.psql("SELECT count(*) FROM pg_stat_activity "
                                 "WHERE wait_event = 'PgSleep'"
                                 ).strip() != "0":
                return req
            time.sleep(0.05)
        raise AssertionError("the slow request never reached the database")

    def finished(self, req, within=15):
        req.join(within)
        self.assertFalse(req.is_alive(), "request hung")
        self.assertIsNone(req.error)
        return req.result

    def assert_pool_whole(self):
        """Nobody is left borrowing, and db-pool requests run at once."""
        self.assertIsNotNone(self.server.wait_for(
            lambda: metric(self.server, "pgrst_db_pool_waiting") == 0.0, 5),
            "a borrower never came back")
        size = int(metric(self.server, "pgrst_db_pool_max"))
        t0 = time.monotonic()
        reqs = [Background(lambda: self.server.get("/rpc/slow?seconds=1", timeout=30))
                for _ in range(size)]
        for r in reqs:
            self.assertEqual(self.finished(r).status, 200)
        self.assertLess(time.monotonic() - t0, 1.9, "fewer connections than db-pool")


class TerminatedBackendTest(FaultTestCase):
    SERVER_CONFIG = {"db-pool": "2"}

    def test_backend_terminated_mid_query(self):
        req = self.slow_request(10)
        self.cluster.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE wait_event = 'PgSleep'")
        r = self.finished(req)
        # the backend's FATAL 57P01 reaches the client before the socket
        # closes: hasql's ServerError, mapSQLtoHTTP "57P01" -> 503
        self.assertEqual(r.status, 503, r)
        self.assertEqual(r.json(), {"code": "57P01", "details": None, "hint": None,
                                    "message": "terminating connection due to administrator command"})
        # the broken connection is replaced: the next requests work
        for _ in range(3):
            self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)
        self.assert_pool_whole()
        self.assertEqual(self.server.ready_status(), 200)

    def test_idle_pool_connections_terminated(self):
        for _ in range(2):
            self.assertEqual(self.server.get("/artists").status, 200)
        self.cluster.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE usename = 'authenticator' AND query NOT LIKE 'LISTEN%'")
        # a dead idle connection is found out when borrowed; at most the
        # first request on it fails, as with hasql
        statuses = [self.server.get("/artists").status for _ in range(4)]
        self.assertEqual(statuses[-2:], [200, 200], statuses)
        self.assert_pool_whole()


class ShutdownMidRequestTest(FaultTestCase):
    def test_fast_shutdown(self):
        req = self.slow_request(10)
        self.cluster.stop()
        r = self.finished(req)
        self.assertEqual(r.status, 503, r)
        self.assertEqual(r.json()["code"], "57P01", r)
        t0 = time.monotonic()
        down = self.server.get("/artists", timeout=10)
        self.assertLess(time.monotonic() - t0, 5)
        self.assertError(down, 503, ("PGRST000", "PGRST001"))
        self.cluster.resume()
        self.assertIsNotNone(self.server.wait_ready(RECOVERY_TIMEOUT))
        self.assertEqual(self.server.get("/artists").status, 200)
        self.assert_pool_whole()

    def test_immediate_shutdown(self):
        req = self.slow_request(10)
        self.cluster.kill()
        r = self.finished(req)
        # an immediate shutdown only warns the client (WARNING_CLIENT_ONLY)
        # and closes: libpq's own error, hasql's ClientError
        body = self.assertError(r, 503, ("PGRST001",))
        self.assertEqual(body["message"], "Database client error. Retrying the connection.")
        self.assertTrue(body["details"].startswith("server closed the connection unexpectedly"),
                        body)
        self.cluster.resume()
        self.assertIsNotNone(self.server.wait_ready(RECOVERY_TIMEOUT))
        self.assertEqual(self.server.get("/artists").status, 200)
        self.assert_pool_whole()


class PoolExhaustedTest(FaultTestCase):
    SERVER_CONFIG = {"db-pool": "1", "db-pool-acquisition-timeout": "1", "log-level": "error",
                     "jwt-secret": "reallyreallyreallyreallyverysafe"}

    def test_no_connection_needed_to_refuse_or_answer_without_the_database(self):
        # PostgREST's io tests (no_pool_connection_required_*): App.hs
        # authenticates, parses and plans before MainTx borrows from the
        # pool, and OPTIONS is NoDbTx; none of these waits for the one
        # connection a slow request holds (a wait would end in 504)
        req = self.slow_request(3)
        for path, headers, status, code in [
                ("/no_such_table", {}, 404, "PGRST205"),
                ("/artists?select=*,no_such_embed(*)", {}, 400, "PGRST200"),
                ("/artists?id=zz.1", {}, 400, "PGRST100"),
                ("/artists", {"Authorization": "Bearer not.a.jwt"}, 401, "PGRST301"),
                ("/rpc/no_such_function", {}, 404, "PGRST202")]:
            r = self.server.get(path, headers=headers)
            self.assertEqual((r.status, r.json()["code"]), (status, code), (path, r))
        r = http("OPTIONS", self.server.url("/artists"))
        self.assertEqual(r.status, 200, r)
        self.assertIn("GET", r.headers["Allow"])
        self.assertEqual(metric(self.server, "pgrst_db_pool_timeouts_total"), 0.0)
        self.assertTrue(req.is_alive(), "the slow request ended before the checks")
        self.assertEqual(self.finished(req).status, 200)

    def test_acquisition_timeout(self):
        req = self.slow_request(3)
        t0 = time.monotonic()
        r = self.server.get("/artists")
        waited = time.monotonic() - t0
        self.assertEqual(r.status, 504, r)
        self.assertEqual(r.json(), {"code": "PGRST003", "details": None, "hint": None,
                                    "message": "Timed out acquiring connection from connection pool."})
        self.assertGreaterEqual(waited, 0.9)
        self.assertLess(waited, 3)
        self.assertEqual(self.finished(req).status, 200)
        # Logger.hs: PoolAcqTimeoutObs at error level, the error's JSON
        LogReader(self.server).wait_message(
            r'^\{"code":"PGRST003","details":null,"hint":null,'
            r'"message":"Timed out acquiring connection from connection pool\."\}$')
        self.assertEqual(metric(self.server, "pgrst_db_pool_timeouts_total"), 1.0)
        self.assertEqual(self.server.get("/artists").status, 200)
        self.assert_pool_whole()
        # a pool timeout is no lost database
        self.assertEqual(self.server.ready_status(), 200)


class TooManyClientsTest(FaultTestCase):
    SERVER_CONFIG = {"db-pool": "2", "db-channel-enabled": "false"}

    def test_max_connections_exhausted(self):
        self.cluster.psql("ALTER SYSTEM SET max_connections = 4")
        self.cluster.psql("ALTER SYSTEM SET superuser_reserved_connections = 1")
        self.cluster.stop()
        self.cluster.resume()
        self.assertIsNotNone(self.server.wait_ready(RECOVERY_TIMEOUT))
        # other clients take every slot an ordinary role may use
        env = dict(os.environ, PGHOST=self.cluster.sockdir, PGPORT=str(self.cluster.port),
                   PGUSER="authenticator")
        hogs = [subprocess.Popen(["psql", "-X", "-d", "pgrest_test", "-c", "SELECT pg_sleep(6)"],
                                 env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                for _ in range(3)]
        try:
            time.sleep(1.5)
            self.cluster.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                              "WHERE application_name LIKE 'PostgREST%'")
            t0 = time.monotonic()
            r = self.server.get("/artists", timeout=10)
            self.assertLess(time.monotonic() - t0, 5)
            if r.status != 200:     # a slot may have been free again
                body = self.assertError(r, 503, ("PGRST000", "PGRST001", "57P01"))
                if body["code"] == "PGRST000":
                    self.assertEqual(body["message"], "Database connection error.")
                    self.assertRegex(body["details"] or "",
                                     "remaining connection slots|too many clients")
        finally:
            for h in hogs:
                h.wait(20)
        self.assertIsNotNone(self.server.wait_for(
            lambda: self.server.get("/artists").status == 200, RECOVERY_TIMEOUT))
        self.assert_pool_whole()


class StartupRetryLogTest(FaultTestCase):
    """Reload.hs retryingSchemaCacheLoad: every attempt runs qPgVersion,
    then qInDbConfig (readInDbConfig: both settings queries fail on the
    pool, the config is rebuilt, "Config reloaded"), then qSchemaCache."""
    START_SERVER = False

    def test_each_attempt_reads_the_in_database_config(self):
        self.cluster.stop()
        self.start_server(wait=False)
        logs = LogReader(self.server)
        logs.wait_message(r"^Attempting to reconnect to the database in 2 seconds\.\.\.$", 15)
        msgs = logs.messages()
        attempts = [i for i, m in enumerate(msgs)
                    if m.startswith("Failed to query the PostgreSQL version. ")]
        self.assertGreaterEqual(len(attempts), 2, msgs)
        for i in attempts[:2]:
            self.assertTrue(msgs[i + 1].startswith(
                'Failed to query database settings for the config parameters.{"code":"PGRST000"'),
                msgs[i:i + 5])
            self.assertTrue(msgs[i + 2].startswith(
                'Failed to query the role settings. {"code":"PGRST000"'), msgs[i:i + 5])
            self.assertEqual(msgs[i + 3], "Config reloaded", msgs[i:i + 5])
            self.assertTrue(msgs[i + 4].startswith(
                "Failed to load the schema cache using db-schemas=api and "
                'db-extra-search-path=public. {"code":"PGRST000"'), msgs[i:i + 5])
        self.cluster.resume()
        self.assertIsNotNone(self.server.wait_ready(RECOVERY_TIMEOUT))
