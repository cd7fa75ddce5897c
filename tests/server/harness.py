"""Server test harness: a throwaway PostgreSQL per test and a pgrest-server
process talking to it over loopback.

PostgreSQL clusters come from tests/harness/pg.sh. initdb plus loading
tests/fixtures/test_schema.sql is slow on a loaded machine, so it happens
once per run into a template cluster; every test then copies the template's
data directory and starts its own postmaster on its own free port.

Everything is bounded in time: subprocesses and HTTP requests have
timeouts, and ServerTestCase arms an alarm per test.
"""
import base64
import hashlib
import hmac
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PG_SH = os.path.join(REPO, "tests", "harness", "pg.sh")
FIXTURE = os.path.join(REPO, "tests", "fixtures", "test_schema.sql")
SERVER = os.environ.get("PGREST_SERVER",
                        os.path.join(REPO, "build", "server", "pgrest-server"))
TEST_SECONDS = 150          # hard limit per test (alarm)
PG_OS_USER = os.environ.get("PG_USER_OS", "postgres")


def log(msg):
    print("    " + msg, flush=True)


def run(cmd, timeout=120, env=None, check=True):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout, env=env, text=True)
    if check and r.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), r.returncode, r.stdout[-2000:]))
    return r.stdout


def free_pg_port():
    # random start: several test runs (other work trees) may share the host;
    # PGREST_TEST_PG_PORTS=LOW-HIGH keeps a run inside its own range
    low, high = 5461, 6900
    given = os.environ.get("PGREST_TEST_PG_PORTS", "")
    if given:
        low, high = (int(x) for x in given.split("-", 1))
    start = random.randint(low, high)
    return int(run(["bash", PG_SH, "freeport", str(start)]).strip())


_ports_given = set()


def free_tcp_port():
    """A port nothing listens on now, and not one this process handed out
    before (the kernel may give a just-closed port again: a server's API
    and admin ports would be the same)."""
    while True:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        if port not in _ports_given:
            _ports_given.add(port)
            return port


def _chown_tree(path):
    if os.geteuid() != 0:
        return
    run(["chown", "-R", PG_OS_USER + ":", path])


def _workdir(prefix):
    d = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    os.chmod(d, 0o755)      # the postgres user must reach d/run and d/data
    return d


class Cluster:
    """A running PostgreSQL in its own directory, with the fixture loaded
    into database pgrest_test."""

    def __init__(self, directory, port):
        self.dir = directory
        self.port = port
        self.sockdir = os.path.join(directory, "run")

    @property
    def db_uri(self):
        return "postgresql://authenticator@localhost:%d/pgrest_test" % self.port

    def psql(self, sql, db="pgrest_test", timeout=30):
        env = dict(os.environ, PGHOST=self.sockdir, PGPORT=str(self.port),
                   PGUSER="postgres", PGTZ="UTC",
                   PGOPTIONS="-c client_min_messages=warning")
        return run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                    "-d", db, "-c", sql], timeout=timeout, env=env)

    def psql_file(self, path, db="pgrest_test"):
        env = dict(os.environ, PGHOST=self.sockdir, PGPORT=str(self.port),
                   PGUSER="postgres", PGTZ="UTC",
                   PGOPTIONS="-c client_min_messages=warning")
        run(["createdb", db], env=env)
        run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", db, "-f", path,
             "-o", "/dev/null"], env=env)

    def stop(self):
        """Clean shutdown (pg_ctl -m fast)."""
        run(["bash", PG_SH, "stop", self.dir], timeout=60)

    def kill(self):
        """Crash-like shutdown (pg_ctl -m immediate)."""
        run(["bash", PG_SH, "kill", self.dir], timeout=60)

    def resume(self):
        run(["bash", PG_SH, "resume", self.dir], timeout=90)

    def destroy(self):
        run(["bash", PG_SH, "stop", self.dir], timeout=60, check=False)
        shutil.rmtree(self.dir, ignore_errors=True)


_template = None
_template_lock = threading.Lock()


def template_cluster():
    """The stopped template cluster (fixture loaded), made once per run."""
    global _template
    with _template_lock:
        if _template is None:
            d = _workdir("pgrest-srv-template-")
            c = Cluster(d, free_pg_port())
            run(["bash", PG_SH, "start", d, str(c.port)], timeout=180)
            c.psql_file(FIXTURE)
            c.stop()
            _template = c
        return _template


def destroy_template():
    global _template
    if _template is not None:
        _template.destroy()
        _template = None


def new_cluster():
    """A fresh running cluster: a copy of the template on a free port."""
    t = template_cluster()
    d = _workdir("pgrest-srv-")
    shutil.copytree(os.path.join(t.dir, "data"), os.path.join(d, "data"), symlinks=True)
    os.makedirs(os.path.join(d, "run"))
    # A port found free can be taken before the cluster binds it (runs in
    # parallel pick theirs at the same time): then another one. The last
    # port line of postgresql.conf wins.
    for attempt in range(5):
        port = free_pg_port()
        with open(os.path.join(d, "data", "postgresql.conf"), "a") as f:
            # synchronous_commit on: tests crash the server (pg.sh kill) and
            # expect acknowledged commits to survive (pg.sh turns it off)
            f.write("\n# server tests: this copy's port and socket\nport = %d\n"
                    "unix_socket_directories = '%s'\nsynchronous_commit = on\n"
                    % (port, os.path.join(d, "run")))
        _chown_tree(d)
        os.chmod(os.path.join(d, "data"), 0o700)
        c = Cluster(d, port)
        try:
            c.resume()
            return c
        except RuntimeError:
            log = os.path.join(d, "postgres.log")
            taken = os.path.exists(log) and "Address already in use" in open(log).read()
            if not taken or attempt == 4:
                raise
            os.remove(log)


def hs256_token(claims, secret):
    """A JWT of the claims signed with HS256 (no library needed)."""
    def b64(raw):
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(json.dumps(claims).encode())
    sig = hmac.new(secret.encode(), (head + "." + body).encode(), hashlib.sha256).digest()
    return head + "." + body + "." + b64(sig)


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return "<%d %s>" % (self.status, self.body[:300])


def http(method, url, body=None, headers=None, timeout=15):
    data = None
    hdrs = dict(headers or {})
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        hdrs.setdefault("Content-Type", "application/json")
    req = urllib.request.Request(url, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return Response(r.status, r.headers, r.read().decode("utf-8", "replace"))
    except urllib.error.HTTPError as e:
        return Response(e.code, e.headers, e.read().decode("utf-8", "replace"))


class Server:
    """pgrest-server with a generated PostgREST config file."""

    def __init__(self, cluster, directory, extra=None, split_logs=False):
        self.cluster = cluster
        self.port = free_tcp_port()
        self.admin_port = free_tcp_port()
        self.config_path = os.path.join(directory, "pgrest.conf")
        self.log_path = os.path.join(directory, "server.log")
        # split_logs: stderr (diagnostics) apart from stdout (access log)
        self.err_path = os.path.join(directory, "server.err") if split_logs else None
        self.write_config(extra or {})
        self.logf = open(self.log_path, "wb")
        self.errf = open(self.err_path, "wb") if split_logs else None
        env = {k: v for k, v in os.environ.items() if not k.startswith("PGRST_")}
        self.proc = subprocess.Popen([SERVER, self.config_path], stdout=self.logf,
                                     stderr=self.errf or subprocess.STDOUT, env=env)

    def write_config(self, extra):
        opts = {
            "db-uri": self.cluster.db_uri,
            "db-schemas": "api",
            "db-anon-role": "web_anon",
            "db-pool": "4",
            "db-pool-acquisition-timeout": "5",
            "server-host": "127.0.0.1",
            "server-port": str(self.port),
            "admin-server-port": str(self.admin_port),
            "log-level": "info",
        }
        opts.update(extra)
        with open(self.config_path + ".tmp", "w") as f:
            for k, v in opts.items():
                if v is not None:       # None: leave the default
                    f.write('%s = "%s"\n' % (k, v))
        os.replace(self.config_path + ".tmp", self.config_path)

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def get(self, path, **kw):
        return http("GET", self.url(path), **kw)

    def post(self, path, body, **kw):
        return http("POST", self.url(path), body=body, **kw)

    def admin(self, path, timeout=5):
        return http("GET", "http://127.0.0.1:%d%s" % (self.admin_port, path), timeout=timeout)

    def alive(self):
        return self.proc.poll() is None

    def log_tail(self, n=40):
        try:
            with open(self.log_path, "rb") as f:
                return b"\n".join(f.read().splitlines()[-n:]).decode("utf-8", "replace")
        except OSError:
            return ""

    def wait_for(self, predicate, timeout, step=0.05):
        """Polls predicate() until true; returns seconds taken or None."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if not self.alive():
                raise AssertionError("pgrest-server died (exit %s):\n%s"
                                     % (self.proc.returncode, self.log_tail()))
            try:
                if predicate():
                    return time.monotonic() - t0
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(step)
        return None

    def ready_status(self):
        return self.admin("/ready").status

    def wait_ready(self, timeout=20):
        return self.wait_for(lambda: self.ready_status() == 200, timeout)

    def signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self):
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.logf.close()
        if self.errf is not None:
            self.errf.close()


class ServerTestCase(unittest.TestCase):
    """setUp: own cluster + own server (extra config in SERVER_CONFIG)."""

    SERVER_CONFIG = {}
    START_SERVER = True

    def setUp(self):
        def on_alarm(signum, frame):
            raise TimeoutError("test exceeded %d s" % TEST_SECONDS)
        signal.signal(signal.SIGALRM, on_alarm)
        signal.alarm(TEST_SECONDS)
        self.server = None
        self.cluster = new_cluster()
        # cleanups run even when setUp fails after this point (tearDown
        # does not), so no cluster or server outlives its test
        self.addCleanup(self._cleanup)
        if self.START_SERVER:
            self.start_server()

    SPLIT_LOGS = False

    def start_server(self, wait=True, **extra):
        cfg = dict(self.SERVER_CONFIG)
        cfg.update(extra)
        self.server = Server(self.cluster, self.cluster.dir, cfg, self.SPLIT_LOGS)
        if wait:
            self.assertIsNotNone(self.server.wait_ready(30),
                                 "server not ready:\n" + self.server.log_tail())
        return self.server

    def _cleanup(self):
        try:
            if self.server is not None:
                self.server.stop()
                if self._outcome_failed():
                    log("server log tail:\n" + self.server.log_tail(25))
        finally:
            self.cluster.destroy()
            signal.alarm(0)

    def _outcome_failed(self):
        outcome = getattr(self, "_outcome", None)
        errors = getattr(outcome, "errors", None) or []
        result = getattr(outcome, "result", None)
        if errors:
            return any(exc is not None for _, exc in errors)
        if result is not None:
            return any(t is self for t, _ in result.failures + result.errors)
        return False

    def assertError(self, resp, status, codes):
        self.assertEqual(resp.status, status, resp)
        body = resp.json()
        self.assertIn(body.get("code"), codes, resp)
        self.assertEqual(sorted(body), ["code", "details", "hint", "message"], resp)
        return body


def _test_classes(suite):
    """The test classes of a discovered suite, each as a list of its tests."""
    classes = {}
    def walk(s):
        for t in s:
            if isinstance(t, unittest.TestSuite):
                walk(t)
            else:
                classes.setdefault(type(t), []).append(t)
    walk(suite)
    return list(classes.values())


class _TimedResult(unittest.TextTestResult):
    """Also records each test's wall time, for the slowest-tests list."""
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.durations = []

    def startTest(self, test):
        self._started = time.monotonic()
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        self.durations.append((time.monotonic() - self._started, test.id()))


def _run_tests(tests, stream):
    runner = unittest.TextTestRunner(verbosity=2, stream=stream, resultclass=_TimedResult)
    result = runner.run(unittest.TestSuite(tests))
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    return result.testsRun, failed, len(result.skipped), result.durations


def _worker(jobs_queue, results_queue, classes):
    """One of the parallel runners (a forked process): takes a class index at
    a time (None ends), runs it with its own template cluster and sends back
    its output."""
    import io
    try:
        while True:
            i = jobs_queue.get()
            if i is None:
                break
            out = io.StringIO()
            try:
                counts = _run_tests(classes[i], out)
            except Exception as e:  # a crash of the runner itself counts as one failure
                out.write("runner error: %r\n" % (e,))
                counts = (1, 1, 0, [])
            results_queue.put((out.getvalue(),) + counts)
    finally:
        destroy_template()


def _run_parallel(classes, jobs):
    """Runs the classes in `jobs` processes (each test already has its own
    cluster and server; the processes only share the machine), longest
    classes first; prints each class's output as it finishes."""
    import multiprocessing
    ctx = multiprocessing.get_context("fork")
    jobs_queue, results_queue = ctx.Queue(), ctx.Queue()
    order = sorted(range(len(classes)), key=lambda i: -len(classes[i]))
    for i in order:
        jobs_queue.put(i)
    for _ in range(jobs):
        jobs_queue.put(None)
    sys.stdout.flush()
    procs = [ctx.Process(target=_worker, args=(jobs_queue, results_queue, classes))
             for _ in range(jobs)]
    for p in procs:
        p.start()
    run = failed = skipped = 0
    durations = []
    import queue
    for _ in classes:
        while True:
            try:
                text, r, f, s, d = results_queue.get(timeout=5)
                break
            except queue.Empty:
                if not any(p.is_alive() for p in procs):
                    text, r, f, s, d = "a test runner process died\n", 1, 1, 0, []
                    break
        sys.stdout.write(text)
        sys.stdout.flush()
        run, failed, skipped = run + r, failed + f, skipped + s
        durations += d
    for p in procs:
        p.join()
        if p.exitcode != 0:
            failed += 1
    return run, failed, skipped, durations


def run_suite(name, directory, argv, pattern="test_*.py"):
    """Runs the files of directory matching pattern (default test_*.py) (-k PATTERN selects by name) and ends
    with "<name>: N passed, N failed, N skipped", the line scripts/test.sh
    counts. Returns the exit status: 1 if anything failed. The test classes
    run PGREST_TEST_JOBS at a time (default: twice the number of cores: the
    tests mostly wait on their clusters and servers; 1 runs them in this
    process, in order)."""
    if not os.access(SERVER, os.X_OK):
        print("%s: %s not built" % (name, SERVER))
        print("%s: 0 passed, 1 failed, 0 skipped" % name)
        return 1
    loader = unittest.TestLoader()
    patterns = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "-k"]
    if patterns:
        loader.testNamePatterns = ["*%s*" % p for p in patterns]
    suite = loader.discover(directory, pattern=pattern, top_level_dir=directory)
    classes = _test_classes(suite)
    jobs = int(os.environ.get("PGREST_TEST_JOBS") or 2 * (os.cpu_count() or 1))
    jobs = max(1, min(jobs, len(classes)))
    if jobs == 1:
        try:
            run, failed, skipped, durations = _run_tests([t for c in classes for t in c], sys.stdout)
        finally:
            destroy_template()
    else:
        run, failed, skipped, durations = _run_parallel(classes, jobs)
    slowest = sorted(durations, reverse=True)[:8]
    if slowest:
        print("%s: slowest: %s" % (name, ", ".join("%s %.1fs" % (t.split(".", 1)[-1], d)
                                                    for d, t in slowest)))
    passed = run - failed - skipped
    print("%s: %d passed, %d failed, %d skipped" % (name, passed, failed, skipped))
    return 1 if failed else 0
