"""A test class's primary + replica pair and pgrest-servers in front of
them (made once per class: a pair takes seconds to build)."""
import os
import re
import signal
import time
import unittest

import pair
from pair import harness

CLASS_SECONDS = 80


def metrics(server):
    """The admin /metrics samples as {name or name{labels}: float}."""
    out = {}
    for line in server.admin("/metrics").body.splitlines():
        m = re.match(r'^([a-z_]+(?:\{[^}]*\})?) (\S+)$', line)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


class ClusterCase(unittest.TestCase):
    SERVER_CONFIG = {}
    START_SERVER = True

    @classmethod
    def setUpClass(cls):
        def on_alarm(signum, frame):
            raise AssertionError("test class timed out after %d s" % CLASS_SECONDS)
        signal.signal(signal.SIGALRM, on_alarm)
        signal.alarm(CLASS_SECONDS)
        cls.pair = pair.Pair()
        cls.servers = []
        try:
            if cls.START_SERVER:
                cls.server = cls.start_server(cls.SERVER_CONFIG)
        except Exception:
            cls.tearDownClass()
            raise

    @classmethod
    def start_server(cls, extra):
        cfg = {"db-replica-uris": cls.pair.replica.db_uri, "db-replica-max-lag": "1"}
        cfg.update(extra)
        d = os.path.join(cls.pair.root, "server%d" % len(cls.servers))
        os.makedirs(d)
        s = harness.Server(cls.pair.primary, d, cfg)
        cls.servers.append(s)
        if s.wait_ready(20) is None:
            raise AssertionError("server not ready:\n" + s.log_tail())
        return s

    @classmethod
    def tearDownClass(cls):
        try:
            for s in cls.servers:
                s.stop()
        finally:
            cls.pair.destroy()
            signal.alarm(0)

    def wait_metric(self, server, name, predicate, timeout=10):
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            v = metrics(server).get(name)
            if v is not None and predicate(v):
                return v
            time.sleep(0.05)
        self.fail("%s never satisfied the condition (last %r)\n%s"
                  % (name, metrics(server).get(name), server.log_tail(20)))

    def wait_replica_up(self, server, up=True, timeout=15):
        self.wait_metric(server, 'pgrst_replica_up{replica="0"}',
                         lambda v: v == (1.0 if up else 0.0), timeout)

    def on_replica(self, server, headers=None, item=1):
        r = server.get("/items_where?id=eq.%d" % item, headers=headers)
        self.assertEqual(r.status, 200, r)
        rows = r.json()
        return rows[0]["on_replica"] if rows else None
