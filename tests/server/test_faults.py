"""Database faults under a running server, answered as PostgREST answers
them (Error.hs: ConnectionUsageError PGRST000, ClientError PGRST001,
AcquisitionTimeoutUsageError PGRST003, mapSQLtoHTTP for the SQLSTATE a
backend sends before it goes): no request hangs, the server recovers
without a restart, and the pool gets every connection back."""
import os
import signal
import re
import subprocess
import threading
import time

from harness import ServerTestCase, http
from test_admin_logs import JWT_SECRET, LogReader, jwt, wait_until

RECOVERY_TIMEOUT = 20
# Error.hs ClientError: hasql's session on a connection libpq knows lost
# (PQsendQueryStart's "no connection to the server")
NO_CONNECTION = {"code": "PGRST001", "details": "no connection to the server\n", "hint": None,
                 "message": "Database client error. Retrying the connection."}


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

    def past_lost_connections(self, path):
        """GETs path until an answer is no fallout of pooled connections
        the database ended (57P01, then that connection's PGRST001)."""
        for _ in range(2 * int(metric(self.server, "pgrst_db_pool_max")) + 1):
            r = self.server.get(path)
            if r.status != 503 or r.json()["code"] != "57P01" and r.json() != NO_CONNECTION:
                return r
        raise AssertionError("more lost connections than the pool has")

    def assert_pool_whole(self):
        """Nobody is left borrowing, and db-pool requests run at once."""
        self.assertIsNotNone(self.server.wait_for(
            lambda: metric(self.server, "pgrst_db_pool_waiting") == 0.0, 5),
            "a borrower never came back")
        size = int(metric(self.server, "pgrst_db_pool_max"))
        reqs = [Background(lambda: self.server.get("/rpc/slow?seconds=3", timeout=30))
                for _ in range(size)]
        # all of them sleep in the database at once (seen there, not timed)
        self.assertIsNotNone(self.server.wait_for(
            lambda: self.cluster.psql("SELECT count(*) FROM pg_stat_activity "
                                      "WHERE wait_event = 'PgSleep'").strip() == str(size), 10),
            "fewer connections than db-pool")
        for r in reqs:
            self.assertEqual(self.finished(r).status, 200)


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
        # hasql-pool returns a connection whose session got a server error
        # without looking at it: the next session on it (the only one
        # open) fails with libpq's words for a send on a lost connection,
        # a ClientError, and that closes it; then a new one serves
        self.assertEqual(self.server.get("/artists?id=eq.1").json(), NO_CONNECTION)
        for _ in range(3):
            self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)
        self.assert_pool_whole()
        self.assertEqual(self.server.ready_status(), 200)

    def test_idle_pool_connections_terminated(self):
        for _ in range(2):
            self.assertEqual(self.server.get("/artists").status, 200)
        self.cluster.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE usename = 'authenticator' AND query NOT LIKE 'LISTEN%'")
        # one connection was open: its FATAL 57P01 waits on the socket and
        # is the first session's ServerError (connection kept), the second
        # session's send fails (ClientError, connection closed)
        bodies = [self.server.get("/artists?id=eq.1") for _ in range(4)]
        self.assertEqual([r.status for r in bodies], [503, 503, 200, 200], bodies)
        self.assertEqual(bodies[0].json()["code"], "57P01")
        self.assertEqual(bodies[1].json(), NO_CONNECTION)
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


class PoolTimeoutDebounceTest(FaultTestCase):
    SERVER_CONFIG = {"db-pool": "1", "db-pool-acquisition-timeout": "1", "log-level": "error"}

    def test_a_burst_logs_once_then_once_more_after_five_seconds(self):
        # Logger.hs: PoolAcqTimeoutObs goes through Debounce.hs makeDebouncer
        # whose action logs and sleeps 5 s; the timeouts during the sleep
        # give one more line when it ends. The slow request outlasts the
        # three 1 s timeouts with room for a loaded machine.
        req = self.slow_request(8)
        t0 = time.monotonic()
        for _ in range(3):
            self.assertEqual(self.server.get("/artists").status, 504)
        line = (r'^\{"code":"PGRST003","details":null,"hint":null,'
                r'"message":"Timed out acquiring connection from connection pool\."\}$')
        logs = LogReader(self.server)
        count = lambda: len([m for m in logs.messages() if re.match(line, m)])
        self.assertEqual(count(), 1)
        self.assertEqual(self.finished(req).status, 200)
        # the trailing line comes when the first one's 5 s are over
        self.assertTrue(wait_until(lambda: count() == 2, 10), logs.messages())
        self.assertGreaterEqual(time.monotonic() - t0, 5)
        time.sleep(1)
        self.assertEqual(count(), 2)
        self.assertEqual(metric(self.server, "pgrst_db_pool_timeouts_total"), 3.0)


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


def loads_ok(server):
    return metric(server, 'pgrst_schema_cache_loads_total{status="SUCCESS"}')


def terminate(cluster, where):
    cluster.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                 "WHERE usename = 'authenticator' AND " + where)


class RequestLostConnectionTest(FaultTestCase):
    """AppState/Pool.hs usePool: a request whose connection died gets the
    error and hasql-pool drops that connection; nothing else happens (no
    pool flush, no schema cache reload, the listener is untouched)."""

    def test_no_outage_after_a_lost_connection(self):
        self.assertEqual(self.server.get("/artists").status, 200)
        before = loads_ok(self.server)
        terminate(self.cluster, "query NOT LIKE 'LISTEN%'")
        r = self.server.get("/artists?id=eq.1")
        # FATAL 57P01 was waiting on the socket: hasql's ServerError
        self.assertError(r, 503, ("57P01",))
        self.assertEqual(r.headers.get("Retry-After"), "0")     # App.hs addRetryHint
        self.assertEqual(self.server.ready_status(), 200)
        r = self.server.get("/artists?id=eq.1")
        self.assertEqual(r.json(), NO_CONNECTION)
        self.assertEqual(r.status, 503)
        self.assertEqual(r.headers.get("Retry-After"), "0")
        self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)
        self.assertEqual(loads_ok(self.server), before)
        msgs = LogReader(self.server).messages()
        self.assertFalse([m for m in msgs if m.startswith(
            ("Retrying listening", "Attempting to reconnect", "Failed listening"))], msgs)
        # QueryErrorCodeHighObs: the 5xx errors' JSON
        self.assertIn('{"code":"57P01","details":null,"hint":null,'
                      '"message":"terminating connection due to administrator command"}', msgs)
        self.assertIn('{"code":"PGRST001","details":"no connection to the server\\n",'
                      '"hint":null,"message":"Database client error. Retrying the connection."}',
                      msgs)


class LostConnectionPoolLinesTest(FaultTestCase):
    """hasql-pool's use: a server error returns the connection ("is
    available due to session failure"), a client error closes it ("is
    terminated due to network error"), and the next borrower opens one."""
    SERVER_CONFIG = {"db-pool": "1", "log-level": "debug", "db-channel-enabled": "false"}

    def test_pool_lines(self):
        self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)
        logs = LogReader(self.server)
        start = len(logs.messages())
        terminate(self.cluster, "true")
        self.assertEqual(self.server.get("/artists?id=eq.1").json()["code"], "57P01")
        self.assertEqual(self.server.get("/artists?id=eq.1").json(), NO_CONNECTION)
        self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)
        logs.wait_message(r"^Connection \S+ is available due to session success$")
        lines = [m.split(" ", 2) for m in logs.messages()[start:] if m.startswith("Connection ")]
        old, new = lines[0][1], lines[-1][1]
        self.assertNotEqual(old, new)
        self.assertEqual([(u == old, what) for _, u, what in lines], [
            (True, "is used"), (True, "is available due to session failure"),
            (True, "is used"), (True, "is terminated due to network error"),
            (False, "is being established"),
            (False, "is available due to connection establishment"),
            (False, "is used"), (False, "is available due to session success")], lines)


class ListenerTerminatedTest(FaultTestCase):
    """Reload.hs retryingListen: the LISTEN connection lost turns the
    listener off (/ready 503), it reconnects after nextDelay (1 s) and,
    having retried, reloads the schema cache; requests are served
    throughout."""

    def test_listener_backend_terminated(self):
        before = loads_ok(self.server)
        logs = LogReader(self.server)
        terminate(self.cluster, "query LIKE 'LISTEN%'")
        self.assertIsNotNone(self.server.wait_for(
            lambda: self.server.ready_status() == 503, 5), "/ready stayed 200")
        self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)
        self.assertEqual(self.server.admin("/live").status, 200)
        self.assertIsNotNone(self.server.wait_ready(10))
        self.assertIsNotNone(self.server.wait_for(
            lambda: loads_ok(self.server) == before + 1, 5), "no schema cache reload")
        msgs = logs.messages()
        fail = next(i for i, m in enumerate(msgs) if m.startswith(
            'Failed listening for database notifications on the "pgrst" channel. '))
        self.assertEqual(msgs[fail + 1],
                         "Retrying listening for database notifications in 1 seconds...", msgs)
        self.assertRegex(msgs[fail + 2], r'^Listener connected to PostgreSQL .* listening for '
                         r'database notifications on the "pgrst" channel$')
        self.assertFalse([m for m in msgs if m.startswith("Attempting to reconnect")], msgs)
        # the new listener hears NOTIFY
        self.cluster.psql("NOTIFY pgrst, 'reload schema'")
        self.assertIsNotNone(self.server.wait_for(
            lambda: loads_ok(self.server) == before + 2, 10))


class ReadOnlyDatabaseTest(FaultTestCase):
    """A read-only database (default_transaction_read_only, as a hot
    standby): writes fail with 25006, mapSQLtoHTTP 405; reads work. The
    listener connects with target_session_attrs=read-write
    (Config.addTargetSessionAttrs), so it cannot, and /ready is 503."""
    SERVER_CONFIG = {"jwt-secret": JWT_SECRET}

    def insert(self):
        return self.server.post("/artists", {"id": 9001, "name": "x"}, headers={
            "Authorization": "Bearer " + jwt({"role": "web_user"})})

    def test_read_only_database(self):
        self.cluster.psql("ALTER DATABASE pgrest_test SET default_transaction_read_only = on")
        terminate(self.cluster, "true")
        # a pooled connection open before fails its next two sessions
        # (57P01, then PGRST001); new ones start read-only
        self.assertEqual(self.past_lost_connections("/artists?id=eq.1").status, 200)
        r = self.insert()
        body = self.assertError(r, 405, ("25006",))
        self.assertRegex(body["message"], r"^cannot execute \w+ in a read-only transaction$")
        self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)
        self.assertIsNotNone(self.server.wait_for(
            lambda: self.server.ready_status() == 503, 5))
        LogReader(self.server).wait_message(
            r'^Failed listening for database notifications on the "pgrst" channel\. '
            r'connection to server at .*session is read-only')
        before = loads_ok(self.server)
        self.cluster.psql("ALTER DATABASE pgrest_test RESET default_transaction_read_only",
                          db="postgres")
        self.assertIsNotNone(self.server.wait_ready(RECOVERY_TIMEOUT))
        # the listener back after retries reloads the schema cache, which
        # flushes the pool (its connections began read-only)
        self.assertIsNotNone(self.server.wait_for(lambda: loads_ok(self.server) > before, 10))
        self.assertEqual(self.insert().status, 201)


class RoleStatementTimeoutTest(FaultTestCase):
    """A role's statement_timeout (read with the role settings, applied in
    the transaction): 57014, mapSQLtoHTTP '5':'7' -> 500, logged as
    QueryErrorCodeHighObs."""

    def test_statement_timeout(self):
        before = loads_ok(self.server)
        self.cluster.psql("ALTER ROLE web_anon SET statement_timeout = '100ms'")
        self.cluster.psql("NOTIFY pgrst, 'reload schema'")
        self.assertIsNotNone(self.server.wait_for(
            lambda: loads_ok(self.server) > before, 10))
        r = self.server.get("/rpc/slow?seconds=2")
        self.assertEqual(r.json(), {"code": "57014", "details": None, "hint": None,
                                    "message": "canceling statement due to statement timeout"})
        self.assertEqual(r.status, 500)
        self.assertIsNone(r.headers.get("Retry-After"))
        LogReader(self.server).wait_message(
            r'^\{"code":"57014","details":null,"hint":null,'
            r'"message":"canceling statement due to statement timeout"\}$')
        self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)
        self.assertEqual(self.server.ready_status(), 200)


class LockWaitCancelledTest(FaultTestCase):
    SERVER_CONFIG = {"db-pool": "2"}

    def test_cancelled_lock_wait(self):
        env = dict(os.environ, PGHOST=self.cluster.sockdir, PGPORT=str(self.cluster.port),
                   PGUSER="postgres")
        holder = subprocess.Popen(
            ["psql", "-X", "-d", "pgrest_test", "-c",
             "BEGIN; LOCK TABLE api.artists; SELECT pg_sleep(5); COMMIT;"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            self.assertIsNotNone(self.server.wait_for(lambda: self.cluster.psql(
                "SELECT count(*) FROM pg_locks WHERE mode = 'AccessExclusiveLock' "
                "AND granted AND relation = 'api.artists'::regclass").strip() == "1", 5))
            req = Background(lambda: self.server.get("/artists?id=eq.1", timeout=20))
            self.assertIsNotNone(self.server.wait_for(lambda: self.cluster.psql(
                "SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity "
                "WHERE usename = 'authenticator' AND wait_event_type = 'Lock'").strip() == "1",
                5))
            r = self.finished(req)
            self.assertEqual(r.status, 500, r)
            self.assertEqual(r.json(), {"code": "57014", "details": None, "hint": None,
                                        "message": "canceling statement due to user request"})
        finally:
            holder.kill()
            holder.wait(10)
        self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)
        self.assert_pool_whole()


class DatabaseRenamedTest(FaultTestCase):
    """The database gone (renamed, or dropped): every new connection fails
    (ConnectionUsageError: 503 PGRST000 with libpq's words); the listener
    retries; renamed back, the listener's return reloads and /ready is 200."""

    def rename(self, old, new):
        for _ in range(50):
            self.cluster.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                              "WHERE datname = '%s' AND pid <> pg_backend_pid()" % old,
                              db="postgres")
            try:
                self.cluster.psql('ALTER DATABASE "%s" RENAME TO "%s"' % (old, new),
                                  db="postgres")
                return
            except RuntimeError as e:
                if "being accessed by other users" not in str(e):
                    raise
            time.sleep(0.05)
        self.fail("could not rename the database")

    def test_database_renamed(self):
        self.rename("pgrest_test", "elsewhere")
        r = self.past_lost_connections("/artists")
        body = self.assertError(r, 503, ("PGRST000",))
        self.assertEqual(body["message"], "Database connection error.")
        self.assertIn('database "pgrest_test" does not exist', body["details"])
        self.assertEqual(r.headers.get("Retry-After"), "0")
        self.assertIsNotNone(self.server.wait_for(
            lambda: self.server.ready_status() == 503, 5))
        LogReader(self.server).wait_message(
            r'^Failed listening for database notifications on the "pgrst" channel\. '
            r'connection to server at .*database "pgrest_test" does not exist$')
        self.rename("elsewhere", "pgrest_test")
        self.assertIsNotNone(self.server.wait_ready(RECOVERY_TIMEOUT))
        self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)
        self.assertTrue(self.server.alive())


class PasswordChangedTest(FaultTestCase):
    """The password changed under a running server: the next pooled
    connection is refused, which usePool deems fatal (ExitDBFatalError
    ServerAuthError: "Failed to establish a connection. ...", killApp)."""
    START_SERVER = False

    def test_password_changed(self):
        self.cluster.psql("CREATE ROLE pw_user LOGIN PASSWORD 'right' IN ROLE authenticator;"
                          "GRANT web_anon TO pw_user")
        hba = os.path.join(self.cluster.dir, "data", "pg_hba.conf")
        with open(hba) as f:
            rules = f.read()
        with open(hba, "w") as f:
            f.write("host all pw_user 127.0.0.1/32 scram-sha-256\n" + rules)
        self.cluster.psql("SELECT pg_reload_conf()")
        uri = "postgresql://pw_user:right@127.0.0.1:%d/pgrest_test" % self.cluster.port
        self.start_server(**{"db-uri": uri, "db-pool": "1"})
        self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)
        self.cluster.psql("ALTER ROLE pw_user PASSWORD 'changed'")
        self.cluster.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE usename = 'pw_user' AND query NOT LIKE 'LISTEN%'")
        # the pool's one connection, terminated: 57P01, then its client
        # error; the new connection it needs is refused
        self.assertEqual(self.server.get("/artists?id=eq.1").json()["code"], "57P01")
        self.assertEqual(self.server.get("/artists?id=eq.1").json(), NO_CONNECTION)
        r = self.server.get("/artists?id=eq.1")
        body = self.assertError(r, 503, ("PGRST000",))
        self.assertIn('password authentication failed for user "pw_user"', body["details"])
        self.assertEqual(self.server.proc.wait(timeout=15), 1)
        LogReader(self.server).wait_message(
            r'^Failed to establish a connection\. \{"code":"PGRST000","details":".*password '
            r'authentication failed for user \\"pw_user\\"","hint":null,'
            r'"message":"Database connection error\."\}$')


class TooManyClientsAtStartTest(FaultTestCase):
    """max_connections exhausted when the server starts: the version query
    fails (PGRST000, PostgreSQL's 53300 words) and is retried with backoff;
    once slots are free the schema cache loads."""
    START_SERVER = False

    def connected_hog(self, env):
        for _ in range(5):
            hog = subprocess.Popen(["psql", "-X", "-q", "-d", "pgrest_test", "-c", "\\echo connected",
                                    "-c", "SELECT pg_sleep(6)"], env=env, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            if hog.stdout.readline().strip() == "connected":
                return hog
            hog.wait(20)
        raise AssertionError("a hog never connected")

    def test_no_slot_at_start(self):
        self.cluster.psql("ALTER SYSTEM SET max_connections = 4")
        self.cluster.psql("ALTER SYSTEM SET superuser_reserved_connections = 1")
        self.cluster.stop()
        self.cluster.resume()
        env = dict(os.environ, PGHOST=self.cluster.sockdir, PGPORT=str(self.cluster.port),
                   PGUSER="authenticator")
        # the hogs hold the slots long enough for the server's attempts to be
        # seen on a loaded machine (the suite runs in parallel, under ASan
        # too). Each tells it is connected on its own stdout: a polling
        # connection (and a backend still exiting from the previous poll)
        # would take a slot a hog needs.
        hogs = []
        try:
            for _ in range(3):
                hogs.append(self.connected_hog(env))
            self.start_server(wait=False)
            logs = LogReader(self.server)
            logs.wait_message(r'^Failed to query the PostgreSQL version\. \{"code":"PGRST000",'
                              r'"details":".*(remaining connection slots|too many clients)')
            self.assertEqual(self.server.ready_status(), 503)
            # the API socket opens once the first attempt has failed: on a
            # loaded machine that is after the message above
            logs.wait_message(r"^API server listening on ")
            self.assertError(self.server.get("/artists"), 503, ("PGRST002",))
        finally:
            for h in hogs:
                h.wait(20)
        self.assertIsNotNone(self.server.wait_ready(RECOVERY_TIMEOUT))
        self.assertIn("Attempting to reconnect to the database in 1 seconds...",
                      LogReader(self.server).messages())
        self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)


class NoListenerNoRecoveryTest(FaultTestCase):
    """db-channel-enabled = false and db-pool-automatic-recovery = false:
    no listener notices a lost database, so PostgREST keeps running
    (requests 503 PGRST000, /ready's SELECT 1 fails) and serves again once
    the database is back, reloading nothing. Only a schema cache load that
    cannot query the version ends it (Reload.hs qPgVersion:
    ExitDBNoRecoveryObs, killApp)."""
    SERVER_CONFIG = {"db-channel-enabled": "false", "db-pool-automatic-recovery": "false",
                     "db-pool": "1"}

    def test_outage_then_reload_without_recovery(self):
        before = loads_ok(self.server)
        self.cluster.stop()
        # the pool's connection (db-pool 1) was told 57P01, then is closed
        self.assertError(self.server.get("/artists"), 503, ("57P01",))
        self.assertEqual(self.server.get("/artists").json(), NO_CONNECTION)
        self.assertError(self.server.get("/artists"), 503, ("PGRST000",))
        self.assertEqual(self.server.ready_status(), 503)
        self.assertTrue(self.server.alive())
        self.cluster.resume()
        self.assertIsNotNone(self.server.wait_ready(RECOVERY_TIMEOUT))
        self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)
        self.assertEqual(loads_ok(self.server), before)
        self.cluster.stop()
        self.server.signal(signal.SIGUSR1)
        self.assertEqual(self.server.proc.wait(timeout=15), 1)
        msgs = LogReader(self.server).messages()
        self.assertIn("Automatic recovery disabled, exiting.", msgs)
        self.assertFalse([m for m in msgs if m.startswith("Attempting to reconnect")], msgs)


class ClosedPortAtStartTest(FaultTestCase):
    """Nothing listens at db-uri's port: the version query fails with
    libpq's "Connection refused"; without automatic recovery the server
    exits 1, with it the attempt is retried."""
    START_SERVER = False

    def closed_port_uri(self):
        from harness import free_tcp_port
        return "postgresql://authenticator@127.0.0.1:%d/pgrest_test" % free_tcp_port()

    def test_closed_port_without_recovery(self):
        srv = self.start_server(wait=False, **{"db-uri": self.closed_port_uri(),
                                               "db-pool-automatic-recovery": "false"})
        self.assertEqual(srv.proc.wait(timeout=15), 1)
        msgs = LogReader(srv).messages()
        self.assertTrue([m for m in msgs if m.startswith(
            'Failed to query the PostgreSQL version. {"code":"PGRST000"') and
            "Connection refused" in m], msgs)
        self.assertIn("Automatic recovery disabled, exiting.", msgs)

    def test_closed_port_with_recovery(self):
        srv = self.start_server(wait=False, **{"db-uri": self.closed_port_uri()})
        logs = LogReader(srv)
        logs.wait_message(r"^Attempting to reconnect to the database in 1 seconds\.\.\.$", 10)
        logs.wait_message(r"^Retrying listening for database notifications in 2 seconds\.\.\.$", 10)
        self.assertTrue(srv.alive())
        self.assertEqual(srv.ready_status(), 503)
        self.assertEqual(srv.admin("/live").status, 200)
        r = srv.get("/artists")
        self.assertError(r, 503, ("PGRST002",))
        self.assertEqual(r.headers.get("Retry-After"), "0")
