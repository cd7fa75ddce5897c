"""Many pgrest-server instances (issue 18 item 5) on the cluster
scripts/cluster.sh starts: HAProxy in front of two of them with admin
GET /ready as its health check, a schema reload NOTIFY reaching each, the
SIGTERM drain, and several processes sharing one port (server-reuseport).
Every load counts each failed request; the client never retries (HAProxy's
retries / option redispatch / retry-on, as deployed, are the only ones)."""
import os
import re
import signal
import subprocess
import threading
import time
import unittest

from cluster_env import (Load, endpoints, haproxy_servers, pgrest_pid, pid_alive, psql,
                         request, start_pgrest, state_dir, status_of, stop_pgrest,
                         wait_for, wait_haproxy)

READ = "/artists?select=id,name&limit=3"


def setUpModule():
    # a slow function for requests in flight; both instances must see it
    psql("CREATE OR REPLACE FUNCTION api.cluster_sleep(seconds float) RETURNS int "
         "LANGUAGE sql STABLE AS 'SELECT 1 FROM pg_sleep(seconds)'; "
         "GRANT EXECUTE ON FUNCTION api.cluster_sleep(float) TO web_anon; "
         "NOTIFY pgrst, 'reload schema'")
    e = endpoints()
    for n in (1, 2):
        wait_for(lambda: status_of(e["PGREST%d_PORT" % n], "/rpc/cluster_sleep?seconds=0") == 200,
                 10, "instance %d to load api.cluster_sleep" % n)


class HAProxyTest(unittest.TestCase):

    def setUp(self):
        self.e = endpoints()
        # every test begins with both instances up in HAProxy's view
        wait_haproxy("pgrest1", "UP")
        wait_haproxy("pgrest2", "UP")

    def ensure_up(self, n):
        if not pid_alive(pgrest_pid(n)):
            start_pgrest(n)
        wait_haproxy("pgrest%d" % n, "UP")

    def test_both_instances_serve_through_haproxy(self):
        for _ in range(10):
            st, _ = request(self.e["HAPROXY_PORT"], READ)
            self.assertEqual(st, 200)
        for n in (1, 2):
            st, body = request(self.e["PGREST%d_ADMIN_PORT" % n], "/metrics")
            m = re.search(rb'pgrst_requests_total\{status="2xx"\} (\d+)', body)
            self.assertTrue(m and int(m.group(1)) > 0, "instance %d served nothing" % n)

    def test_killed_instance_no_failed_request(self):
        """SIGKILL (no drain at all) under load: the requests it had in
        flight and the connections refused until the health check marks it
        DOWN are sent again by HAProxy to the other instance."""
        self.addCleanup(self.ensure_up, 2)
        with Load(self.e["HAPROXY_PORT"], READ) as load:
            time.sleep(0.7)
            stop_pgrest(2, signal.SIGKILL)
            wait_haproxy("pgrest2", "DOWN", 10)
            time.sleep(1.0)       # past the check interval (inter 500ms)
        self.assertEqual(load.failures, [])
        self.assertGreater(load.ok, 50)

    def test_rolling_restart_no_failed_request(self):
        """Each instance in turn: SIGTERM (drain), start again, wait until
        HAProxy has it UP, then the next."""
        self.addCleanup(self.ensure_up, 1)
        self.addCleanup(self.ensure_up, 2)
        with Load(self.e["HAPROXY_PORT"], READ) as load:
            for n in (1, 2):
                time.sleep(0.5)
                old = pgrest_pid(n)
                stop_pgrest(n, signal.SIGTERM)
                start_pgrest(n)
                self.assertNotEqual(pgrest_pid(n), old)
                wait_haproxy("pgrest%d" % n, "UP")
            time.sleep(0.5)
        self.assertEqual(load.failures, [])
        self.assertGreater(load.ok, 50)

    def test_sigterm_drains(self):
        """SIGTERM with a request in flight: /ready answers 503 at once (so
        the health check takes the instance out), the request completes,
        then the process exits and its port refuses connections."""
        self.addCleanup(self.ensure_up, 1)
        port, admin = self.e["PGREST1_PORT"], self.e["PGREST1_ADMIN_PORT"]
        result = {}

        def slow():
            result["r"] = request(port, "/rpc/cluster_sleep?seconds=2", timeout=20)

        t = threading.Thread(target=slow)
        t.start()
        time.sleep(0.5)
        pid = pgrest_pid(1)
        os.kill(pid, signal.SIGTERM)
        wait_for(lambda: status_of(admin, "/ready") == 503, 0.5, "/ready 503 while draining")
        self.assertEqual(status_of(admin, "/live"), 500)
        self.assertTrue(pid_alive(pid), "exited before its request in flight finished")
        t.join(20)
        self.assertEqual(result["r"][0], 200, result["r"][1])
        wait_for(lambda: not pid_alive(pid), 10, "the drained instance to exit")
        self.assertIsNone(status_of(port, READ))


class NotifyReloadTest(unittest.TestCase):

    def test_schema_reload_reaches_every_instance(self):
        """A new table, then NOTIFY pgrst on the primary: each instance's
        listener (db-channel-uri, direct) reloads its own schema cache."""
        e = endpoints()
        # both listeners hold a session of their own on the primary
        listening = psql("SELECT count(*) FROM pg_stat_activity WHERE usename = "
                         "'authenticator' AND query LIKE 'LISTEN %'")
        self.assertGreaterEqual(int(listening), 2)
        name = "notify_probe_%d" % int(time.time() * 1000)
        psql("CREATE TABLE api.%s (id int); GRANT SELECT ON api.%s TO web_anon" % (name, name))
        self.addCleanup(psql, "DROP TABLE api.%s; NOTIFY pgrst" % name)
        for n in (1, 2):
            self.assertEqual(status_of(e["PGREST%d_PORT" % n], "/" + name), 404)
        psql("NOTIFY pgrst, 'reload schema'")
        for n in (1, 2):
            wait_for(lambda: status_of(e["PGREST%d_PORT" % n], "/" + name) == 200, 10,
                     "instance %d to see the new table" % n)


class ReusePortTest(unittest.TestCase):
    """Two more processes on one port with server-reuseport = true."""

    def start(self, i, port, admin):
        e = endpoints()
        conf = os.path.join(state_dir(), "reuseport-%d.conf" % i)
        with open(os.path.join(state_dir(), "pgrest-1.conf")) as f:
            text = f.read()
        text = re.sub(r"(?m)^server-port = .*$", "server-port = %d" % port, text)
        text = re.sub(r"(?m)^admin-server-port = .*$", "admin-server-port = %d" % admin, text)
        with open(conf, "w") as f:
            f.write(text + "server-reuseport = true\n")
        log = open(os.path.join(state_dir(), "reuseport-%d.log" % i), "ab")
        p = subprocess.Popen([e["PGREST_SERVER"], conf], stdout=subprocess.DEVNULL,
                             stderr=log, stdin=subprocess.DEVNULL)
        log.close()
        self.addCleanup(lambda: (p.poll() is None and p.send_signal(signal.SIGTERM), p.wait(30)))
        wait_for(lambda: status_of(admin, "/ready") == 200, 30, "reuseport instance %d" % i)
        return p

    def test_two_processes_one_port(self):
        import socket
        ports = []
        for _ in range(3):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            ports.append(s)
        port, a1, a2 = (s.getsockname()[1] for s in ports)
        for s in ports:
            s.close()
        first = self.start(1, port, a1)
        self.start(2, port, a2)
        for _ in range(60):
            self.assertEqual(request(port, READ)[0], 200)
        for admin in (a1, a2):
            body = request(admin, "/metrics")[1]
            m = re.search(rb'pgrst_requests_total\{status="2xx"\} (\d+)', body)
            self.assertTrue(m and int(m.group(1)) > 0,
                            "the kernel gave one process no connection")
        # one leaves under load: the other takes its port's connections
        with Load(port, READ, workers=3) as load:
            time.sleep(0.5)
            first.send_signal(signal.SIGTERM)
            first.wait(30)
            time.sleep(0.5)
        self.assertEqual(load.failures, [])
        self.assertGreater(load.ok, 20)


if __name__ == "__main__":
    unittest.main()
