"""A request the client gave up on (issue 16 "Cancel"): while pgrest-server
waits for PostgreSQL, a client that closes its connection has its
statement cancelled (PQcancel) and the pooled connection comes back clean
-- the same backend, idle, serving the next request. (server-timeout cuts
off no response being computed, as Warp's: tests/limits.)"""
import socket
import time

from harness import ServerTestCase

SLOW = b"GET /rpc/slow?seconds=30 HTTP/1.1\r\nHost: localhost\r\n\r\n"


class CancelTest(ServerTestCase):
    SERVER_CONFIG = {"db-pool": "1"}

    def backend_running_slow(self, timeout=10):
        """The pid of the backend running api.slow."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid = self.cluster.psql(
                "SELECT pid FROM pg_stat_activity WHERE state = 'active' "
                "AND query LIKE '%slow%' AND pid <> pg_backend_pid()").strip()
            if pid:
                return int(pid)
            time.sleep(0.05)
        self.fail("api.slow never ran:\n" + self.server.log_tail())

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


class CancelLargerPoolTest(CancelTest):
    SERVER_CONFIG = {"db-pool": "4"}


class AbandonedLoadTest(ServerTestCase):
    """Many clients leaving with statements in flight, on two event loops
    sharing the pool: a cancel handled in the same epoll batch as its
    statement's result re-arms the PostgreSQL socket the result had
    disarmed; the loop must still drop that registration when the request
    ends, or the socket's next event -- its next user's, maybe on the other
    loop -- names a request that is gone (a use after free)."""
    SERVER_CONFIG = {"db-pool": "4", "server-threads": "2"}
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
