"""A request whose client goes away.

By default a request outlives its client, as under PostgREST: Warp does
not watch the socket while the application runs, so the statement runs to
its end and a write commits; PostgREST's io tests hold the pool's one
connection exactly so (a GET /rpc/sleep abandoned after 0.1 s, then 504
PGRST003 for the next request). With pgrest's own
server-cancel-on-disconnect, a client that closes its connection while
pgrest-server waits for PostgreSQL has its statement cancelled (PQcancel)
and the pooled connection comes back clean -- the same backend, idle,
serving the next request. (server-timeout cuts off no response being
computed, as Warp's: tests/limits. A streamed body's reader leaving
cancels either way: test_streaming.py.)"""
import socket
import time

from harness import ServerTestCase
from test_admin_logs import LogReader, wait_until
from test_faults import metric

SLOW = b"GET /rpc/slow?seconds=30 HTTP/1.1\r\nHost: localhost\r\n\r\n"
CANCEL_ON_DISCONNECT = {"server-cancel-on-disconnect": "true"}
# a job with a side effect: sleeps, then writes a row
LONG_JOB_SQL = """
CREATE TABLE api.job_runs (note text NOT NULL);
GRANT SELECT, INSERT ON api.job_runs TO web_anon;
CREATE FUNCTION api.long_job(seconds double precision, note text) RETURNS void
  LANGUAGE sql VOLATILE AS $$
    SELECT pg_sleep(seconds); INSERT INTO api.job_runs VALUES (note) $$;
"""


def send_and_leave(port, request, until):
    """Sends request on a new connection, waits for until() (the statement
    running in PostgreSQL), then closes the connection unanswered."""
    s = socket.create_connection(("127.0.0.1", port), timeout=15)
    s.sendall(request)
    try:
        return until()
    finally:
        s.close()


def call_long_job(seconds, note):
    body = '{"seconds":%s,"note":"%s"}' % (seconds, note)
    return ("POST /rpc/long_job HTTP/1.1\r\nHost: localhost\r\n"
            "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
            % (len(body), body)).encode()


class SlowBackendMixin:
    def backend_running(self, name="slow", timeout=10):
        """The pid of the backend running api.<name>."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid = self.cluster.psql(
                "SELECT pid FROM pg_stat_activity WHERE state = 'active' "
                "AND query LIKE '%%%s%%' AND pid <> pg_backend_pid()" % name).strip()
            if pid:
                return int(pid)
            time.sleep(0.05)
        self.fail("api.%s never ran:\n%s" % (name, self.server.log_tail()))

    def backend_running_slow(self, timeout=10):
        return self.backend_running("slow", timeout)

    def idle_since(self, pid, timeout=10):
        """Epoch seconds at which backend pid went idle (pg_stat_activity's
        state_change: exact, whatever psql's own latency)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            row = self.cluster.psql(
                "SELECT state, extract(epoch FROM state_change) "
                "FROM pg_stat_activity WHERE pid = %d" % pid).strip()
            state, _, since = row.partition("|")
            if state == "idle":
                return float(since)
            time.sleep(0.05)
        self.fail("backend %d still not idle:\n%s" % (pid, self.server.log_tail()))

    def job_runs(self, note):
        return int(self.cluster.psql(
            "SELECT count(*) FROM api.job_runs WHERE note = '%s'" % note).strip())

    def start_with_long_job(self):
        self.cluster.psql(LONG_JOB_SQL)
        self.start_server()


class RequestOutlivesClientTest(SlowBackendMixin, ServerTestCase):
    """The default, PostgREST's: nothing watches the client while the
    request runs (Warp runs the application to its end)."""
    START_SERVER = False
    SPLIT_LOGS = True
    SERVER_CONFIG = {"db-pool": "1", "db-pool-acquisition-timeout": "1", "log-level": "error"}

    def test_abandoned_call_still_runs_its_job(self):
        # a fire-and-forget /rpc/long_job with a short client timeout
        self.start_with_long_job()
        pid = send_and_leave(self.server.port, call_long_job(1, "fire-and-forget"),
                             lambda: self.backend_running("long_job"))
        self.idle_since(pid, timeout=20)
        self.assertEqual(self.job_runs("fire-and-forget"), 1, self.server.log_tail())
        r = self.server.get("/job_runs?select=note")
        self.assertEqual((r.status, r.json()), (200, [{"note": "fire-and-forget"}]))

    def test_abandoned_request_keeps_the_pool_connection(self):
        # PostgREST's io test: a GET /rpc/sleep abandoned after 0.1 s holds
        # the only connection, so the next request waits
        # db-pool-acquisition-timeout and gets 504 PGRST003 with its log
        # line (Logger.hs PoolAcqTimeoutObs; its debouncing over a burst:
        # test_faults.PoolTimeoutDebounceTest)
        self.start_server()
        send_and_leave(self.server.port, b"GET /rpc/slow?seconds=4 HTTP/1.1\r\n"
                       b"Host: localhost\r\n\r\n", self.backend_running_slow)
        for _ in range(3):
            r = self.server.get("/artists")
            self.assertEqual(r.status, 504, r)
            self.assertEqual(r.json(), {"code": "PGRST003", "details": None, "hint": None,
                                        "message": "Timed out acquiring connection from "
                                                   "connection pool."})
        line = (r'^\{"code":"PGRST003","details":null,"hint":null,'
                r'"message":"Timed out acquiring connection from connection pool\."\}$')
        LogReader(self.server).wait_message(line)
        self.assertEqual(metric(self.server, "pgrst_db_pool_timeouts_total"), 3.0)
        # the abandoned call ends on its own, and the connection serves again
        self.assertTrue(wait_until(lambda: self.server.get("/artists").status == 200, 40),
                        self.server.log_tail())


class CancelTest(SlowBackendMixin, ServerTestCase):
    """server-cancel-on-disconnect (pgrest's own): the loop watches the
    client's socket while the request runs."""
    SERVER_CONFIG = dict(CANCEL_ON_DISCONNECT, **{"db-pool": "1"})

    def start_slow(self):
        s = socket.create_connection(("127.0.0.1", self.server.port), timeout=15)
        s.sendall(SLOW)
        return s, self.backend_running_slow()

    def assert_pool_serves(self, pid):
        r = self.server.get("/rpc/slow?seconds=0", timeout=10)
        self.assertEqual((r.status, r.body), (200, "0"))
        # the same connection, kept rather than replaced
        self.assertEqual(self.cluster.psql(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = %d" % pid).strip(), "1")

    def test_client_gone_cancels_the_statement(self):
        s, pid = self.start_slow()
        closed = time.time()
        s.close()
        self.assertLess(self.idle_since(pid) - closed, 1.0)
        self.assert_pool_serves(pid)

    def test_queued_client_gone_leaves_the_queue(self):
        """With the only connection busy, a second client waits in the
        queue; gone, it must not take the connection afterwards."""
        s, pid = self.start_slow()
        q = socket.create_connection(("127.0.0.1", self.server.port), timeout=15)
        q.sendall(SLOW)
        time.sleep(0.3)
        q.close()
        closed = time.time()
        s.close()
        self.assertLess(self.idle_since(pid) - closed, 1.0)
        self.assert_pool_serves(pid)
        self.assertEqual(self.cluster.psql(
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
            "AND query LIKE '%slow%' AND pid <> pg_backend_pid()").strip(), "0")

    def test_pipelined_request_is_no_disconnect(self):
        """Bytes of a next request arriving meanwhile are no EOF."""
        s = socket.create_connection(("127.0.0.1", self.server.port), timeout=15)
        s.sendall(b"GET /rpc/slow?seconds=0.5 HTTP/1.1\r\nHost: localhost\r\n\r\n")
        time.sleep(0.1)
        s.sendall(b"GET /rpc/slow?seconds=0 HTTP/1.1\r\nHost: localhost\r\n\r\n")
        data = b""
        deadline = time.monotonic() + 10
        while data.count(b"HTTP/1.1 200") < 2 and time.monotonic() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
        self.assertEqual(data.count(b"HTTP/1.1 200"), 2, data)

    def test_abandoned_write_rolls_back(self):
        self.server.stop()
        self.start_with_long_job()
        pid = send_and_leave(self.server.port, call_long_job(30, "cancelled"),
                             lambda: self.backend_running("long_job"))
        closed = time.time()
        self.assertLess(self.idle_since(pid) - closed, 1.0)
        self.assertEqual(self.job_runs("cancelled"), 0)
        self.assert_pool_serves(pid)


class CancelLargerPoolTest(CancelTest):
    SERVER_CONFIG = dict(CANCEL_ON_DISCONNECT, **{"db-pool": "4"})


class AbandonedLoadTest(ServerTestCase):
    """Many clients leaving with statements in flight, on two event loops
    sharing the pool: a cancel handled in the same epoll batch as its
    statement's result re-arms the PostgreSQL socket the result had
    disarmed; the loop must still drop that registration when the request
    ends, or the socket's next event -- its next user's, maybe on the other
    loop -- names a request that is gone (a use after free)."""
    SERVER_CONFIG = dict(CANCEL_ON_DISCONNECT, **{"db-pool": "4", "server-threads": "2"})
    BURST = b"GET /rpc/slow?seconds=0 HTTP/1.1\r\nHost: localhost\r\n\r\n" * 20

    def abandon_burst(self, clients=40):
        socks = []
        for _ in range(clients):
            s = socket.create_connection(("127.0.0.1", self.server.port), timeout=5)
            s.sendall(self.BURST)
            socks.append(s)
        time.sleep(0.05)
        for s in socks:
            s.close()

    def test_server_survives_clients_leaving_mid_statement(self):
        for _ in range(8):
            self.abandon_burst()
            r = self.server.get("/rpc/slow?seconds=0", timeout=10)
            self.assertEqual((r.status, r.body), (200, "0"), self.server.log_tail())
        self.assertIsNone(self.server.proc.poll(), self.server.log_tail())


class AbandonedLoadByDefaultTest(AbandonedLoadTest):
    """The same bursts without watching the clients: every request runs to
    its end and the server answers nobody, then serves on."""
    SERVER_CONFIG = {"db-pool": "4", "server-threads": "2"}
