#!/usr/bin/env python3
"""Transactional batches (docs/batch.md): one client on a keep-alive
connection sending the same ten requests (five inserts, four reads, a
delete) as one batch, and as ten requests alone. With --baseline BUILD the
batch row is measured for that build too, in the same sitting, rounds
alternating between the two servers (a build from before the items went
out in one pipeline sends one round trip per item).

Also with --db-delay-ms N: PostgreSQL sits behind a TCP proxy that holds
every packet from the server N ms, as a database across a network would
(loopback round trips are ~30 µs and hide what a round trip costs).

Not a test (no assertions): it prints rows for bench/README.md, medians
of --rounds rounds of --seconds each. A throwaway PostgreSQL comes from
tests/harness/pg.sh.

Usage: bench/batch.py [--build DIR] [--baseline DIR] [--rounds N]
                      [--seconds S] [--db-delay-ms N]"""
import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PG_SH = os.path.join(REPO, "tests", "harness", "pg.sh")
SCHEMA = "CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL)"
BATCH = "application/vnd.pgrest.batch+json"


def sh(*cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def items(base):
    out = [{"method": "POST", "path": "/notes", "body": {"id": base + i, "body": "n"}}
           for i in range(5)]
    out += [{"method": "GET", "path": "/notes",
             "query": "id=gte.%d&id=lt.%d&select=id" % (base, base + 5)}] * 4
    out += [{"method": "DELETE", "path": "/notes", "query": "id=gte.%d&id=lt.%d" % (base, base + 5)}]
    return out


def send(c, method, path, body, ctype):
    c.request(method, path, body=json.dumps(body).encode() if body is not None else None,
              headers={"Content-Type": ctype} if body is not None else {})
    r = c.getresponse()
    r.read()
    if r.status >= 300:
        raise RuntimeError("%s %s: %d" % (method, path, r.status))


def as_batch(c, base):
    send(c, "POST", "/", items(base), BATCH)


def alone(c, base):
    for i in items(base):
        path = i["path"] + ("?" + i["query"] if "query" in i else "")
        send(c, i["method"], path, i.get("body"), "application/json")


def rate(port, how, seconds, base):
    """Batches (or sets of ten requests) per second."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    n, t0 = 0, time.monotonic()
    while time.monotonic() - t0 < seconds:
        how(c, base + 10 * n)
        n += 1
    elapsed = time.monotonic() - t0
    c.close()
    return n / elapsed


class DelayProxy:
    """Holds each chunk PostgreSQL sends for delay seconds (in order)."""

    def __init__(self, target, delay):
        self.target, self.delay = target, delay
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            client, _ = self.sock.accept()
            server = socket.create_connection(("127.0.0.1", self.target))
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self.pump, args=(client, server, 0), daemon=True).start()
            threading.Thread(target=self.pump, args=(server, client, self.delay),
                             daemon=True).start()

    @staticmethod
    def pump(src, dst, delay):
        try:
            while True:
                data = src.recv(1 << 16)
                if not data:
                    break
                if delay:
                    time.sleep(delay)
                dst.sendall(data)
        except OSError:
            pass    # the other direction closed it: the connection is over
        dst.close()


def start_server(build, conf, port):
    proc = subprocess.Popen([os.path.join(build, "server", "pgrest-server"), conf],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(400):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/notes?limit=0")
            if c.getresponse().status == 200:
                return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("%s did not start" % build)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--baseline")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--db-delay-ms", type=float, default=0)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="pgrest-batch-bench-", dir="/tmp")
    os.chmod(work, 0o755)
    pg_port = int(sh("bash", PG_SH, "freeport", "5850").strip())
    sh("bash", PG_SH, "start", work, str(pg_port))
    procs = []
    try:
        env = dict(os.environ, PGHOST="localhost", PGPORT=str(pg_port), PGUSER="postgres")
        sh("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", SCHEMA, env=env)
        db_port = pg_port
        if args.db_delay_ms > 0:
            db_port = DelayProxy(pg_port, args.db_delay_ms / 1e3).port
        builds = [("this build", args.build)] + ([("baseline", args.baseline)]
                                                 if args.baseline else [])
        servers = []
        for name, build in builds:
            port, admin = free_port(), free_port()
            conf = os.path.join(work, "%d.conf" % port)
            with open(conf, "w") as f:
                f.write('db-uri = "postgresql://postgres@127.0.0.1:%d/postgres"\n'
                        'db-schemas = "public"\ndb-anon-role = "postgres"\ndb-pool = "2"\n'
                        'server-host = "127.0.0.1"\nserver-port = "%d"\n'
                        'admin-server-port = "%d"\nlog-level = "crit"\n'
                        'db-channel-enabled = "false"\n' % (db_port, port, admin))
            procs.append(start_server(build, conf, port))
            servers.append((name, port))
        rows = {}
        base = 1
        for _ in range(args.rounds):
            for name, port in servers:
                for what, how in (("batch of 10", as_batch), ("10 requests alone", alone)):
                    if what != "batch of 10" and name != "this build":
                        continue
                    rows.setdefault((name, what), []).append(rate(port, how, args.seconds, base))
                    base += 10 ** 6
        print("| build | requests | sets of ten per s (median of %d) | ms per set |"
              % args.rounds)
        print("|---|---|---|---|")
        for (name, what), rates in rows.items():
            r = statistics.median(rates)
            print("| %s | %s | %.0f | %.2f |" % (name, what, r, 1e3 / r))
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=30)
        subprocess.run(["bash", PG_SH, "stop", work], capture_output=True)
        subprocess.run(["rm", "-rf", work])
    return 0


if __name__ == "__main__":
    sys.exit(main())
