"""A replica that goes away under a read load: no client sees it
(docs/replicas.md "Failure behaviour")."""
import threading
import time

from cluster_case import ClusterCase, metrics
from pair import harness


class ReplicaLossTest(ClusterCase):

    def load(self, seconds_before, action, seconds_after):
        statuses, stop = [], threading.Event()

        def reader():
            while not stop.is_set():
                try:
                    r = harness.http("GET", self.server.url("/items?id=eq.2"), timeout=10)
                    statuses.append(r.status)
                except Exception as e:   # a refused or reset HTTP request fails too
                    statuses.append(repr(e))
        threads = [threading.Thread(target=reader) for _ in range(4)]
        for t in threads:
            t.start()
        try:
            time.sleep(seconds_before)
            action()
            time.sleep(seconds_after)
        finally:
            stop.set()
            for t in threads:
                t.join(15)
        return statuses

    def check_no_failures(self, statuses):
        bad = [s for s in statuses if s != 200]
        self.assertGreater(len(statuses), 50)
        self.assertEqual(bad, [], "%d of %d reads failed" % (len(bad), len(statuses)))

    def test_replica_stopped_fast_under_load(self):
        self.wait_replica_up(self.server)
        r0 = metrics(self.server)
        statuses = self.load(1.0, lambda: self.pair.replica.stop("fast"), 1.5)
        self.check_no_failures(statuses)
        m = metrics(self.server)
        self.assertEqual(m['pgrst_replica_up{replica="0"}'], 0)
        self.assertGreater(m['pgrst_replica_reads_total{replica="0"}'],
                           r0['pgrst_replica_reads_total{replica="0"}'])
        self.assertGreater(m["pgrst_replica_fallbacks_total"], r0["pgrst_replica_fallbacks_total"])
        self.pair.replica.start()
        self.wait_replica_up(self.server)
        self.assertIs(self.on_replica(self.server), True)

    def test_replica_killed_under_load(self):
        self.wait_replica_up(self.server)
        statuses = self.load(1.0, lambda: self.pair.replica.stop("immediate"), 1.5)
        self.check_no_failures(statuses)
        self.pair.replica.start()
        self.wait_replica_up(self.server)
        self.assertIs(self.on_replica(self.server), True)
