"""Where requests run: what PostgREST runs READ ONLY (Plan.hs txMode) on
the replica, everything else on the primary; read-your-writes with
Pgrest-Commit-Lsn / Pgrest-Min-Lsn; lag and pause move reads to the
primary (docs/replicas.md)."""
import time

from cluster_case import ClusterCase, metrics


def scans(node):
    return int(node.psql("SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) "
                         "FROM pg_stat_user_tables WHERE relid = 'api.items'::regclass"))


class RoutingTest(ClusterCase):

    def setUp(self):
        self.wait_replica_up(self.server)

    def test_reads_run_on_the_replica_by_its_own_statistics(self):
        before_r, before_p = scans(self.pair.replica), scans(self.pair.primary)
        for _ in range(20):
            r = self.server.get("/items?id=eq.3")
            self.assertEqual(r.status, 200, r)
            self.assertEqual(r.json(), [{"id": 3, "name": "seed 3"}])
        # PostgreSQL 15 flushes a backend's statistics within a second of
        # going idle
        t0 = time.monotonic()
        while scans(self.pair.replica) < before_r + 20 and time.monotonic() - t0 < 10:
            time.sleep(0.2)
        self.assertGreaterEqual(scans(self.pair.replica), before_r + 20)
        self.assertLess(scans(self.pair.primary), before_p + 20)

    def test_read_only_requests_go_to_the_replica(self):
        self.assertIs(self.on_replica(self.server), True)
        m0 = metrics(self.server)['pgrst_replica_reads_total{replica="0"}']
        cases = [("GET", "/rpc/on_replica_stable"), ("POST", "/rpc/on_replica_stable"),
                 # GET calls run READ ONLY whatever the volatility
                 ("GET", "/rpc/on_replica_volatile")]
        for method, path in cases:
            r = harness_http(self.server, method, path)
            self.assertEqual(r.status, 200, r)
            self.assertIs(r.json(), True, (method, path))
        self.assertEqual(self.server.get("/").status, 200)
        r = harness_http(self.server, "HEAD", "/items")
        self.assertEqual(r.status, 200, r)
        m1 = metrics(self.server)['pgrst_replica_reads_total{replica="0"}']
        self.assertGreaterEqual(m1 - m0, len(cases) + 2)

    def test_writes_and_volatile_calls_go_to_the_primary(self):
        r = harness_http(self.server, "POST", "/rpc/on_replica_volatile")
        self.assertEqual(r.status, 200, r)
        self.assertIs(r.json(), False)
        # a hot standby refuses SERIALIZABLE: such a read stays on the primary
        r = self.server.get("/rpc/on_replica_serializable")
        self.assertEqual(r.status, 200, r)
        self.assertIs(r.json(), False)
        r = self.server.post("/items", {"name": "written"},
                             headers={"Prefer": "return=representation"})
        self.assertEqual(r.status, 201, r)
        self.assertRegex(r.headers.get("Pgrest-Commit-Lsn", ""), r"^[0-9A-F]+/[0-9A-F]+$")
        new_id = r.json()[0]["id"]
        self.assertEqual(self.pair.primary.psql(
            "SELECT name FROM api.items WHERE id = %d" % new_id), "written")
        r = harness_http(self.server, "PATCH", "/items?id=eq.%d" % new_id, {"name": "patched"})
        self.assertEqual(r.status, 204, r)
        self.assertIn("Pgrest-Commit-Lsn", r.headers)
        # a failed write has no position to wait for
        r = self.server.post("/items", {"nope": "never"})
        self.assertEqual(r.status, 400, r)
        self.assertNotIn("Pgrest-Commit-Lsn", r.headers)
        # reads carry none
        self.assertNotIn("Pgrest-Commit-Lsn", self.server.get("/items?id=eq.1").headers)

    def test_commit_lsn_is_past_the_commit(self):
        r = self.server.post("/items", {"name": "lsn"})
        self.assertEqual(r.status, 201, r)
        lsn = r.headers["Pgrest-Commit-Lsn"]
        # the transaction's commit is at or before the position reported
        self.assertEqual(self.pair.primary.psql(
            "SELECT pg_current_wal_insert_lsn() >= '%s'::pg_lsn" % lsn), "t")
        self.pair.wait_caught_up()
        self.assertEqual(self.pair.replica.psql(
            "SELECT count(*) FROM api.items WHERE name = 'lsn' AND "
            "pg_last_wal_replay_lsn() >= '%s'::pg_lsn" % lsn), "1")

    def test_read_your_writes_with_replay_paused(self):
        self.pair.replica.psql("SELECT pg_wal_replay_pause()")
        try:
            r = self.server.post("/items", {"name": "paused write"},
                                 headers={"Prefer": "return=representation"})
            self.assertEqual(r.status, 201, r)
            lsn, new_id = r.headers["Pgrest-Commit-Lsn"], r.json()[0]["id"]
            r = self.server.get("/items_where?id=eq.%d" % new_id,
                                headers={"Pgrest-Min-Lsn": lsn})
            self.assertEqual(r.status, 200, r)
            self.assertEqual(len(r.json()), 1, r)
            self.assertIs(r.json()[0]["on_replica"], False)
            # the replica itself has not got it
            self.assertEqual(self.pair.replica.psql(
                "SELECT count(*) FROM api.items WHERE id = %d" % new_id), "0")
            # paused: skipped by the health check, every read on the primary
            self.wait_replica_up(self.server, up=False, timeout=5)
            self.assertIs(self.on_replica(self.server), False)
        finally:
            self.pair.replica.psql("SELECT pg_wal_replay_resume()")
        self.wait_replica_up(self.server)
        self.assertIs(self.on_replica(self.server), True)

    def test_min_lsn_waits_for_a_lagging_replica_then_uses_it(self):
        """A replica applying a few seconds late (recovery_min_apply_delay)
        behind a server that tolerates the lag: a plain read there misses
        the write, a read with its position runs on the primary until the
        replica has replayed it, then on the replica."""
        lenient = self.start_server({"db-replica-max-lag": "60"})
        self.pair.replica.conf("recovery_min_apply_delay = '3s'")
        self.pair.replica.reload()
        try:
            self.wait_replica_up(lenient)
            r = lenient.post("/items", {"name": "delayed"},
                             headers={"Prefer": "return=representation"})
            self.assertEqual(r.status, 201, r)
            lsn, new_id = r.headers["Pgrest-Commit-Lsn"], r.json()[0]["id"]
            plain = lenient.get("/items_where?id=eq.%d" % new_id).json()
            self.assertEqual(plain, [], "the replica had the write before its delay")
            r = lenient.get("/items_where?id=eq.%d" % new_id, headers={"Pgrest-Min-Lsn": lsn})
            self.assertEqual(r.json(), [{"id": new_id, "name": "delayed", "on_replica": False}])
            self.assertGreater(metrics(lenient)['pgrst_replica_skipped_lsn_total{replica="0"}'], 0)
            t0 = time.monotonic()
            rows = None
            while time.monotonic() - t0 < 15:
                rows = lenient.get("/items_where?id=eq.%d" % new_id,
                                   headers={"Pgrest-Min-Lsn": lsn}).json()
                if rows and rows[0]["on_replica"]:
                    break
                time.sleep(0.1)
            self.assertEqual(rows, [{"id": new_id, "name": "delayed", "on_replica": True}])
            # not a position at all: the primary answers
            r = lenient.get("/items_where?id=eq.%d" % new_id, headers={"Pgrest-Min-Lsn": "soon"})
            self.assertEqual(r.json(), [{"id": new_id, "name": "delayed", "on_replica": False}])
        finally:
            self.pair.replica.conf("recovery_min_apply_delay = 0")
            self.pair.replica.reload()
            lenient.stop()

    def test_lag_beyond_max_lag_moves_reads_to_the_primary(self):
        self.pair.replica.conf("recovery_min_apply_delay = '4s'")
        self.pair.replica.reload()
        try:
            time.sleep(0.3)
            self.assertEqual(self.server.post("/items", {"name": "lagging"}).status, 201)
            # db-replica-max-lag = 1: skipped once a second has passed
            self.wait_replica_up(self.server, up=False, timeout=4)
            self.assertGreater(metrics(self.server)['pgrst_replica_lag_seconds{replica="0"}'], 1)
            f0 = metrics(self.server)["pgrst_replica_fallbacks_total"]
            self.assertIs(self.on_replica(self.server), False)
            self.assertGreater(metrics(self.server)["pgrst_replica_fallbacks_total"], f0)
            # and back once it has replayed
            self.wait_replica_up(self.server, up=True, timeout=10)
            self.assertIs(self.on_replica(self.server), True)
        finally:
            self.pair.replica.conf("recovery_min_apply_delay = 0")
            self.pair.replica.reload()


def harness_http(server, method, path, body=None):
    from pair import harness
    return harness.http(method, server.url(path), body=body)
