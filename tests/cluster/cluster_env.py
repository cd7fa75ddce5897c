"""The cluster scripts/cluster.sh started, as the instance tests see it:
its endpoints (PGREST_CLUSTER_DIR/endpoints.env), psql on the primary,
pgrest-server start/stop, HAProxy's view of its servers, and a bounded
request load that counts every failure (no client-side retry)."""
import http.client
import os
import signal
import subprocess
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLUSTER_SH = os.path.join(REPO, "scripts", "cluster.sh")
PG_BINDIR = os.environ.get("PG_BINDIR", "/usr/lib/postgresql/15/bin")


def state_dir():
    return os.environ.get("PGREST_CLUSTER_DIR", "/tmp/pgrest-cluster")


def endpoints():
    env = {}
    with open(os.path.join(state_dir(), "endpoints.env")) as f:
        for line in f:
            key, _, value = line.strip().partition("=")
            if key:
                env[key] = value
    return env


def psql(sql, db=None, port=None):
    """Runs sql as postgres on the primary (or port); returns stdout."""
    e = endpoints()
    r = subprocess.run(
        [os.path.join(PG_BINDIR, "psql"), "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1",
         "-h", "127.0.0.1", "-p", str(port or e["PRIMARY_PORT"]), "-U", "postgres",
         "-d", db or e["DB_NAME"], "-c", sql],
        capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise AssertionError("psql failed: %s" % r.stderr)
    return r.stdout


def request(port, path, method="GET", timeout=10, headers=None):
    """(status, body) of one request on a new connection."""
    c = http.client.HTTPConnection("127.0.0.1", int(port), timeout=timeout)
    try:
        c.request(method, path, headers=headers or {})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def status_of(port, path):
    try:
        return request(port, path, timeout=2)[0]
    except OSError:
        return None


def wait_for(pred, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def pgrest_pid(n):
    with open(os.path.join(state_dir(), "pgrest-%d.pid" % n)) as f:
        return int(f.read().strip())


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie of ours (cluster.sh started it, so it is not our child) cannot
    # be one; /proc tells a zombie anyway
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


def stop_pgrest(n, sig=signal.SIGTERM, wait=True):
    pid = pgrest_pid(n)
    os.kill(pid, sig)
    if wait:
        wait_for(lambda: not pid_alive(pid), 30, "pgrest-server %d to exit" % n)


def start_pgrest(n):
    subprocess.run(["bash", CLUSTER_SH, "start-pgrest", str(n)], check=True,
                   capture_output=True, timeout=60)


def haproxy_servers():
    """{server name: status} from HAProxy's CSV statistics."""
    e = endpoints()
    _, body = request(e["HAPROXY_STATS_PORT"], "/stats;csv")
    out = {}
    for line in body.decode().splitlines():
        f = line.split(",")
        if len(f) > 17 and f[0] == "pgrest" and f[1] not in ("BACKEND", "FRONTEND"):
            out[f[1]] = f[17]
    return out


def wait_haproxy(name, status, seconds=15):
    wait_for(lambda: haproxy_servers().get(name) == status, seconds,
             "HAProxy to see %s %s" % (name, status))


class Load:
    """Workers sending GET path to port, one new connection per request,
    until stopped (or max_seconds): counts answers by status and every
    failure (refused, reset, timeout) as it came; nothing is retried."""

    def __init__(self, port, path, workers=4, max_seconds=60):
        self.port, self.path, self.workers = port, path, workers
        self.max_seconds = max_seconds
        self.ok = 0
        self.failures = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.threads = []

    def _run(self):
        deadline = time.monotonic() + self.max_seconds
        while not self.stopping.is_set() and time.monotonic() < deadline:
            try:
                st, body = request(self.port, self.path, timeout=10)
                failure = None if 200 <= st < 300 else "HTTP %d: %r" % (st, body[:200])
            except OSError as e:
                failure = "%s: %s" % (type(e).__name__, e)
            with self.lock:
                if failure is None:
                    self.ok += 1
                else:
                    self.failures.append(failure)

    def __enter__(self):
        for _ in range(self.workers):
            t = threading.Thread(target=self._run, daemon=True)
            t.start()
            self.threads.append(t)
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        for t in self.threads:
            t.join(30)
        return False
