#!/usr/bin/env python3
"""Streamed responses: time to first byte, total time and the server's
peak RSS for GET /big (1,000,000 rows, issue 17) as JSON, NDJSON and CSV,
one request and 8 concurrent ones, next to the buffered path (the same
request with Prefer: count=exact, which the engine never streams).

Not a test (no assertions): it prints a table for bench/README.md.
A throwaway PostgreSQL comes from tests/harness/pg.sh; every row starts a
fresh pgrest-server so that VmHWM (peak RSS) is that row's own.

Usage: bench/stream.py [--build DIR] [--rounds N]"""
import argparse
import http.client
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PG_SH = os.path.join(REPO, "tests", "harness", "pg.sh")
BIG = ("CREATE TABLE big AS SELECT g AS id, md5(g::text) a, md5((g+1)::text) b "
       "FROM generate_series(1, 1000000) g")


def sh(*cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def get(port, headers):
    """(seconds to the first body byte, seconds in total, bytes)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    t0 = time.monotonic()
    c.request("GET", "/big", headers=headers)
    r = c.getresponse()
    first = r.read(1)
    ttfb = time.monotonic() - t0
    n = len(first)
    while True:
        chunk = r.read(1 << 16)
        if not chunk:
            break
        n += len(chunk)
    c.close()
    return ttfb, time.monotonic() - t0, n


def peak_rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def run_row(server, conf, port, headers, clients):
    proc = subprocess.Popen([server, conf], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                c.request("GET", "/big?limit=1")
                c.getresponse().read()
                c.close()
                break
            except OSError:
                time.sleep(0.05)
        results = [None] * clients

        def one(i):
            results[i] = get(port, headers)
        threads = [threading.Thread(target=one, args=(i,)) for i in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return results, peak_rss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    server = os.path.join(args.build, "server", "pgrest-server")
    work = tempfile.mkdtemp(prefix="pgrest-stream-bench-", dir="/tmp")
    os.chmod(work, 0o755)
    pg_port = int(sh("bash", PG_SH, "freeport", "5800").strip())
    sh("bash", PG_SH, "start", work, str(pg_port))
    try:
        env = dict(os.environ, PGHOST="localhost", PGPORT=str(pg_port), PGUSER="postgres")
        sh("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", BIG, env=env)
        sh("psql", "-X", "-q", "-c", "VACUUM ANALYZE big", env=env)
        # one row order for every scan (synchronized scans would shift it)
        sh("psql", "-X", "-q", "-c",
           "ALTER DATABASE postgres SET synchronize_seqscans = off", env=env)
        port, admin = free_port(), free_port()
        conf = os.path.join(work, "pgrest.conf")
        with open(conf, "w") as f:
            f.write('db-uri = "postgresql://postgres@localhost:%d/postgres"\n'
                    'db-schemas = "public"\ndb-anon-role = "postgres"\ndb-pool = "10"\n'
                    'server-host = "127.0.0.1"\nserver-port = "%d"\n'
                    'admin-server-port = "%d"\nlog-level = "crit"\n' % (pg_port, port, admin))
        rows = []
        for accept in ["application/json", "application/x-ndjson", "text/csv"]:
            for buffered in (False, True):
                for clients in (1, 8):
                    headers = {"Accept": accept}
                    if buffered:
                        headers["Prefer"] = "count=exact"
                    ttfb, total, rss = [], [], []
                    size = 0
                    for _ in range(args.rounds):
                        res, peak = run_row(server, conf, port, headers, clients)
                        ttfb.append(statistics.median(r[0] for r in res))
                        total.append(max(r[1] for r in res))
                        size = res[0][2]
                        rss.append(peak)
                    rows.append((accept, "buffered" if buffered else "streamed", clients,
                                 size, statistics.median(ttfb) * 1e3,
                                 statistics.median(total), statistics.median(rss)))
                    print("| %s | %s | %d | %.1f MB | %.0f ms | %.2f s | %.0f MB |"
                          % (rows[-1][0], rows[-1][1], rows[-1][2], rows[-1][3] / 1e6,
                             rows[-1][4], rows[-1][5], rows[-1][6]), flush=True)
    finally:
        subprocess.run(["bash", PG_SH, "stop", work], capture_output=True)
        subprocess.run(["rm", "-rf", work])
    return 0


if __name__ == "__main__":
    sys.exit(main())
