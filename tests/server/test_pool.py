"""The connection pool as PostgREST runs hasql-pool (AppState/Pool.hs
initPool): db-pool-max-lifetime and db-pool-max-idletime close connections
(hasql-pool's reaper and its age check on borrow), and each connection's
life is logged at debug level in the words of Logger.hs's HasqlPoolObs
("Connection <uuid> is being established", "... is used", "... is
available due to session success", "... is terminated due to max
idletime", ...), between usePool's PoolRequest and PoolRequestFullfilled."""
import re
import time

from harness import ServerTestCase
from test_admin_logs import LogReader, wait_until

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
CONN = re.compile(r"^Connection (%s) (.*)$" % UUID)


def pool_lines(reader, start=0):
    """(uuid, status) of every hasql-pool observation from the start-th
    line on, in order."""
    out = []
    for m in reader.messages()[start:]:
        c = CONN.match(m)
        if c:
            out.append((c.group(1), c.group(2)))
    return out


def backends(cluster):
    """pgrest-server's pooled connections (not the listener's)."""
    return int(cluster.psql("SELECT count(*) FROM pg_stat_activity "
                            "WHERE usename = 'authenticator' AND query NOT LIKE 'LISTEN%'").strip())


class PoolTestCase(ServerTestCase):
    SPLIT_LOGS = True

    def setUp(self):
        super().setUp()
        self.logs = LogReader(self.server)


class PoolObservationsTest(PoolTestCase):
    SERVER_CONFIG = {"log-level": "debug", "db-pool": "1", "db-channel-enabled": "false"}

    def test_one_request_on_a_new_connection(self):
        start = len(self.logs.messages())
        self.assertEqual(self.server.get("/artists?id=eq.1").status, 200)
        self.logs.wait_message(r"^Borrowed a connection from the pool$")
        msgs = [m for m in self.logs.messages()[start:]
                if m.startswith(("Connection ", "Trying to borrow", "Borrowed"))]
        # a connection opened for the schema cache or /ready may be reused
        # (then only its "is used"); the request's own lines are these
        self.assertEqual(msgs[0], "Trying to borrow a connection from pool", msgs)
        self.assertEqual(msgs[-1], "Borrowed a connection from the pool", msgs)
        statuses = [CONN.match(m).group(2) for m in msgs[1:-1]]
        self.assertEqual(statuses[-2:], ["is used", "is available due to session success"], msgs)
        ids = {CONN.match(m).group(1) for m in msgs[1:-1]}
        self.assertEqual(len(ids), 1, msgs)

    def test_establishment_is_logged_once_per_connection(self):
        # the start-up load's connection was flushed after it (Reload.hs
        # flushPool: "is terminated due to release"); the requests' are new
        start = len(self.logs.messages())
        self.assertEqual(self.server.get("/artists").status, 200)
        self.assertEqual(self.server.get("/artists").status, 200)
        lines = pool_lines(self.logs, start)
        est = [u for u, s in lines if s == "is being established"]
        avail = [u for u, s in lines if s == "is available due to connection establishment"]
        self.assertEqual(est, avail, lines)
        self.assertEqual(len(set(est)), len(est), lines)
        # db-pool = 1: one connection serves everything
        self.assertEqual(len(set(u for u, _ in lines)), 1, lines)

    def test_failed_session(self):
        # a database error (23502 null into a NOT NULL column) fails the session
        r = self.server.post("/artists", {"id": 9001, "name": None})
        self.assertGreaterEqual(r.status, 400, r)
        self.logs.wait_message(r"^Connection %s is available due to session failure$" % UUID)

    def test_schema_reload_releases_connections(self):
        self.assertEqual(self.server.get("/artists").status, 200)
        used = pool_lines(self.logs)[-1][0]
        self.server.signal(__import__("signal").SIGUSR1)
        self.logs.wait_message(r"^Database connection pool flushed$")
        self.logs.wait_message(r"^Connection %s is terminated due to release$" % used)


def metric(server, name):
    for line in server.admin("/metrics").body.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError("no metric " + name)


class PoolMetricsTest(PoolTestCase):
    SERVER_CONFIG = {"db-pool": "3", "db-pool-max-idletime": "2"}

    def test_available_counts_open_idle_connections(self):
        # Metrics.hs: pgrst_db_pool_available = connected - inUse, from
        # hasql-pool's observations: slots never opened are not available
        self.assertEqual(self.server.get("/artists").status, 200)
        self.assertEqual(metric(self.server, "pgrst_db_pool_max"), 3.0)
        self.assertEqual(metric(self.server, "pgrst_db_pool_available"), 1.0)
        self.assertEqual(metric(self.server, "pgrst_db_pool_waiting"), 0.0)
        # closed for idleness: no longer available
        self.assertIsNotNone(self.server.wait_for(
            lambda: metric(self.server, "pgrst_db_pool_available") == 0.0, 8))

    def test_waiting_counts_borrowers(self):
        # PoolRequest .. PoolRequestFullfilled: a request running on its
        # connection is still in usePool
        import threading
        t = threading.Thread(target=lambda: self.server.get("/rpc/slow?seconds=2", timeout=10))
        t.start()
        try:
            self.assertIsNotNone(self.server.wait_for(
                lambda: metric(self.server, "pgrst_db_pool_waiting") == 1.0, 2))
        finally:
            t.join()
        self.assertEqual(metric(self.server, "pgrst_db_pool_waiting"), 0.0)
        self.assertEqual(metric(self.server, "pgrst_db_pool_available"), 1.0)


class PoolNotDebugTest(PoolTestCase):
    SERVER_CONFIG = {"log-level": "info"}

    def test_no_pool_lines_below_debug(self):
        self.assertEqual(self.server.get("/artists").status, 200)
        time.sleep(0.3)
        self.assertEqual(pool_lines(self.logs), [])


class MaxIdletimeTest(PoolTestCase):
    SERVER_CONFIG = {"log-level": "debug", "db-pool": "2", "db-pool-max-idletime": "1"}

    def test_idle_connection_is_closed_and_replaced(self):
        self.assertEqual(self.server.get("/artists").status, 200)
        used = pool_lines(self.logs)[-1][0]
        self.logs.wait_message(r"^Connection %s is terminated due to max idletime$" % used)
        self.assertTrue(wait_until(lambda: backends(self.cluster) == 0, 10),
                        "pooled connections still open")
        # the next request gets a new connection
        self.assertEqual(self.server.get("/artists").status, 200)
        self.assertNotEqual(pool_lines(self.logs)[-1][0], used)

    def test_db_pool_timeout_alias(self):
        # Config.hs: db-pool-timeout is read as db-pool-max-idletime
        self.server.stop()
        self.start_server(**{"db-pool-max-idletime": None, "db-pool-timeout": "1"})
        self.logs = LogReader(self.server)
        self.assertEqual(self.server.get("/artists").status, 200)
        self.logs.wait_message(r"^Connection %s is terminated due to max idletime$" % UUID)


class MaxLifetimeTest(PoolTestCase):
    SERVER_CONFIG = {"log-level": "debug", "db-pool": "1", "db-pool-max-lifetime": "1",
                     "db-channel-enabled": "false"}

    def test_old_connection_is_closed(self):
        self.assertEqual(self.server.get("/artists").status, 200)
        first = pool_lines(self.logs)[-1][0]
        self.logs.wait_message(r"^Connection %s is terminated due to max lifetime$" % first)
        self.assertEqual(self.server.get("/artists").status, 200)
        self.assertNotEqual(pool_lines(self.logs)[-1][0], first)

    def test_busy_connection_is_replaced_when_borrowed_past_its_lifetime(self):
        # api.slow keeps the only connection busy past its lifetime: it
        # cannot be reaped while in use, and is replaced on the next borrow
        self.assertEqual(self.server.get("/rpc/slow?seconds=2").status, 200)
        first = [u for u, s in pool_lines(self.logs) if s == "is used"][-1]
        self.assertEqual(self.server.get("/artists").status, 200)
        self.assertTrue(wait_until(lambda: any(
            u == first and s == "is terminated due to max lifetime"
            for u, s in pool_lines(self.logs)), 5), pool_lines(self.logs))
        used = [u for u, s in pool_lines(self.logs) if s == "is used"]
        self.assertNotEqual(used[-1], first)


class DefaultsKeepConnectionsTest(PoolTestCase):
    SERVER_CONFIG = {"log-level": "debug"}

    def test_connection_reused_within_idletime(self):
        # after the start-up load's flush
        start = len(self.logs.messages())
        self.assertEqual(self.server.get("/artists").status, 200)
        time.sleep(2.5)
        self.assertEqual(self.server.get("/artists").status, 200)
        lines = pool_lines(self.logs, start)
        self.assertFalse([l for l in lines if "terminated" in l[1]], lines)
        self.assertGreaterEqual(backends(self.cluster), 1)


class WithoutListenerTest(PoolTestCase):
    # db-channel-enabled = false: PostgREST's only connections are its
    # pool's (isConnEstablished checks with a pooled SELECT 1)
    SERVER_CONFIG = {"db-channel-enabled": "false", "db-pool-max-idletime": "1"}

    def all_backends(self):
        return int(self.cluster.psql("SELECT count(*) FROM pg_stat_activity "
                                     "WHERE usename = 'authenticator'").strip())

    def test_no_connection_beside_the_pool(self):
        self.assertEqual(self.server.get("/artists").status, 200)
        self.assertTrue(wait_until(lambda: self.all_backends() == 0, 10),
                        "a connection outside the pool stays open")
        self.assertEqual(self.server.ready_status(), 200)
        self.assertEqual(self.server.get("/artists").status, 200)
        # a database loss is still noticed and recovered from
        self.cluster.stop()
        self.assertIsNotNone(self.server.wait_for(lambda: self.server.ready_status() == 503, 10))
        self.cluster.resume()
        self.assertIsNotNone(self.server.wait_ready(20))
        self.assertEqual(self.server.get("/artists").status, 200)


class ReadyProbeTest(PoolTestCase):
    # AppState.isConnEstablished without a listener: usePool "SELECT 1",
    # with usePool's PoolRequest / PoolRequestFullfilled around it
    SERVER_CONFIG = {"db-channel-enabled": "false", "log-level": "debug"}

    def test_ready_borrows_through_use_pool(self):
        start = len(self.logs.messages())
        self.assertEqual(self.server.ready_status(), 200)
        self.logs.wait_message(r"^Borrowed a connection from the pool$")
        msgs = [m for m in self.logs.messages()[start:]
                if m.startswith(("Connection ", "Trying to borrow", "Borrowed"))]
        self.assertEqual(msgs[0], "Trying to borrow a connection from pool", msgs)
        self.assertEqual(msgs[-1], "Borrowed a connection from the pool", msgs)
        self.assertTrue(CONN.match(msgs[-2]) and msgs[-2].endswith(
            " is available due to session success"), msgs)


# The lines PostgREST writes at debug around one schema cache load
# (AppState/Reload.hs retryingSchemaCacheLoad), each query through
# AppState/Pool.hs usePool (PoolRequest, hasql-pool's connection lines,
# PoolRequestFullfilled after the session returned the connection):
# qPgVersion, then DBConnectedObs and PoolInit; qInDbConfig's
# readInDbConfig (queryDbSettings, queryRoleSettings, ConfigSucceededObs);
# qSchemaCache, then flushPool (hasql-pool's release of the idle
# connection, PoolFlushed) before SchemaCacheQueriedObs. Texts from
# Logger.hs observationMessages.
def use_pool(*connection):
    return (["Trying to borrow a connection from pool"]
            + ["Connection U " + s for s in connection]
            + ["Borrowed a connection from the pool"])


REUSED = ("is used", "is available due to session success")
LOAD_TAIL = (use_pool(*REUSED) + use_pool(*REUSED) + ["Config reloaded"]
             + use_pool(*REUSED)
             + ["Connection U is terminated due to release",
                "Database connection pool flushed",
                "Schema cache queried in"])
LOAD_KEPT = ("Trying to borrow", "Borrowed a connection", "Connection ", "Successfully connected",
             "Connection Pool initialized", "Config reloaded", "Database connection pool flushed",
             "Schema cache queried in")


class SchemaCacheLoadPoolLinesTest(PoolTestCase):
    """The schema cache load and the in-database config read borrow from
    the pool as PostgREST's usePool does (db-pool = 1: one connection
    named U; the listener, on a connection of its own, writes none)."""
    SERVER_CONFIG = {"log-level": "debug", "db-pool": "1"}

    def load_lines(self, start):
        """The load's lines from the start-th message on, up to "Schema
        cache queried", uuids replaced by U (all the same connection)."""
        out, ids = [], set()
        for m in self.logs.messages()[start:]:
            if not m.startswith(LOAD_KEPT):
                continue
            c = CONN.match(m)
            if c:
                ids.add(c.group(1))
                m = "Connection U " + c.group(2)
            elif m.startswith("Successfully connected to PostgreSQL"):
                m = "Successfully connected to PostgreSQL"
            elif m.startswith("Schema cache queried in"):
                out.append("Schema cache queried in")
                break
            out.append(m)
        self.assertLessEqual(len(ids), 1, out)
        return out

    def version_and_config(self, *connection):
        return (use_pool(*connection) + ["Successfully connected to PostgreSQL",
                                         "Connection Pool initialized with a maximum size of 1 connections"]
                + LOAD_TAIL)

    def test_start_up_load(self):
        expected = self.version_and_config("is being established",
                                           "is available due to connection establishment",
                                           *REUSED)
        self.assertEqual(self.load_lines(0), expected)

    def test_reload_on_notify_and_sigusr1(self):
        self.assertEqual(self.server.get("/artists").status, 200)
        for reload in (lambda: self.cluster.psql("NOTIFY pgrst"),
                       lambda: self.server.signal(__import__("signal").SIGUSR1)):
            start = len(self.logs.messages())
            reload()
            self.assertTrue(wait_until(
                lambda: "Schema cache queried in" in self.load_lines(start), 10),
                self.logs.messages()[start:])
            # the request's connection is reused by the version query
            self.assertEqual(self.load_lines(start), self.version_and_config(*REUSED))
            self.assertEqual(self.server.get("/artists").status, 200)

    def test_reload_waits_for_the_only_connection(self):
        # usePool waits for the pool like a request: with db-pool = 1 held
        # by a request, the load borrows once the request returns it
        import signal
        import threading
        before = len(self.logs.messages())
        # the request holds the connection long enough for the signal to
        # land meanwhile on a loaded machine, and less than the harness's
        # db-pool-acquisition-timeout (5 s), which would end the load's wait
        t = threading.Thread(target=lambda: self.server.get("/rpc/slow?seconds=4", timeout=40))
        t.start()
        try:
            # the request runs on the connection
            self.assertTrue(wait_until(lambda: (pool_lines(self.logs, before) or [("", "")])[-1][1]
                                       == "is used", 20))
            start = len(self.logs.messages())
            self.server.signal(signal.SIGUSR1)
            self.logs.wait_message(r"^Schema cache queried in", 40)
        finally:
            t.join()
        msgs = [m for m in self.logs.messages()[start:] if m.startswith(LOAD_KEPT)]
        self.assertEqual(msgs[0], "Trying to borrow a connection from pool", msgs)
        # the request's session ends before the load's first one starts
        # (the request's own PoolRequestFullfilled may come either side
        # of the load's "is used": two threads)
        rest = [m for m in msgs[1:] if m != "Borrowed a connection from the pool"]
        self.assertRegex(rest[0], r"^Connection %s is available due to session success$" % UUID)
        self.assertRegex(rest[1], r"^Connection %s is used$" % UUID)
        self.assertEqual(self.server.get("/artists").status, 200)
