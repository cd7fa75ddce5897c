#!/usr/bin/env python3
"""Real clients: Supabase's postgrest-js (npm @supabase/postgrest-js) and
supabase-js (whose from/rpc/schema are postgrest-js behind its own fetch)
against pgrest-server on tests/fixtures/test_schema.sql (a cluster of the
server suite's harness) with tests/client/client_schema.sql on top. The
packages are installed with npm into a temporary directory; without
node/npm, or when the registry cannot be reached, the suite is skipped.
Every *.test.mjs here runs in turn (in name order, against one server and
database); ends with
    client: N passed, N failed, N skipped
which scripts/test.sh adds to its totals. Exit status 1 if anything failed.

Environment: PGREST_SERVER (default build/server/pgrest-server),
POSTGREST_JS_VERSION, SUPABASE_JS_VERSION (npm version specs, default:
the latest), PGREST_CLIENT_ASGI_PYTHON (a python with the pgrest package
installed, as tests/bindings/python/run.py sets it: the clients then talk
to pgrest.asgi.App mounted under /api in Starlette and served by uvicorn,
tests/bindings/python/serve_app.py, instead of pgrest-server)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True      # no __pycache__ in tests/server
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "server"))
import harness  # noqa: E402

SERVE_APP_DIR = os.path.join(os.path.dirname(HERE), "bindings", "python")
# Tests that read the status line's reason phrase: ASGI has no way to send
# PostgREST's custom one (docs/bindings.md), so against the ASGI app they
# count as skipped, not failed.
ASGI_REASON_TESTS = ("statusText and response status as PostgREST sends them",
                     "RAISE SQLSTATE PGRST: code, message, details, hint, status, status_text",
                     "SQLSTATEs to statuses (Error.hs mapSQLtoHTTP), PT statuses with the "
                     "message as reason")

JWT_SECRET = "reallyreallyreallyreallyverysafe"
TEST_SUFFIX = ".test.mjs"
PACKAGES = [("@supabase/postgrest-js", "POSTGREST_JS_VERSION"),
            ("@supabase/supabase-js", "SUPABASE_JS_VERSION"),
            # openapi31.test.mjs: the official OpenAPI schemas, a generator
            ("@seriousme/openapi-schema-validator", "OPENAPI_VALIDATOR_VERSION"),
            ("openapi-typescript", "OPENAPI_TYPESCRIPT_VERSION")]
SCHEMA_FILE = "client_schema.sql"   # loaded on top of the fixture


def skipped(reason):
    print("client: skipped (%s)" % reason)
    print("client: 0 passed, 0 failed, 1 skipped")
    return 0


def install(directory):
    """npm install of the clients into directory; None or why it failed."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return "node or npm not found"
    specs = [name + ("@" + os.environ[var] if os.environ.get(var) else "")
             for name, var in PACKAGES]
    with open(os.path.join(directory, "package.json"), "w") as f:
        f.write('{"name": "pgrest-client-test", "private": true, "type": "module"}\n')
    try:
        r = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"] + specs,
                           cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=180)
    except subprocess.TimeoutExpired:
        return "npm install timed out"
    if r.returncode != 0:
        lines = r.stdout.strip().splitlines()
        return "npm install failed" + (": " + lines[-1] if lines else "")
    return None


def known_asgi_failures(output):
    """How many "not ok" lines of output are reason-phrase tests."""
    return sum(1 for line in output.splitlines()
               if line.startswith("not ok - ") and line[9:].startswith(ASGI_REASON_TESTS))


def run_files(work, server, env=None):
    """Runs every test file, prints their lines and the summed counts."""
    passed = failures = skipped = 0
    for name in sorted(n for n in os.listdir(work) if n.endswith(TEST_SUFFIX)):
        r = subprocess.run(["node", name, server.url(""), JWT_SECRET], cwd=work,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=300, env=env)
        out = r.stdout.replace("client: ", "client %s: " % name)
        print(out, end="")
        m = re.search(r"^client: (\d+) passed, (\d+) failed", r.stdout, re.M)
        if m is None:
            failures += 1
            print("%s: no summary line (exit %d)" % (name, r.returncode))
            continue
        passed += int(m.group(1))
        known = known_asgi_failures(r.stdout) if isinstance(server, AsgiServer) else 0
        if known:
            print("client %s: %d reason-phrase test(s) counted as skipped (ASGI)" % (name, known))
        skipped += known
        failed_here = int(m.group(2)) - known
        failures += failed_here + (1 if r.returncode != 0 and failed_here == 0 and not known
                                   else 0)
    if failures:
        print("server log tail:\n" + server.log_tail(25))
    print("client: %d passed, %d failed, %d skipped" % (passed, failures, skipped))
    return 1 if failures else 0


class AsgiServer:
    """pgrest.asgi.App under uvicorn with the configuration pgrest-server
    would get (harness.Server's options plus extra); its base URL is the
    mount point, /api."""

    def __init__(self, python, cluster, directory, extra):
        import json
        opts = {"db-uri": cluster.db_uri, "db-schemas": "api", "db-anon-role": "web_anon",
                "db-pool": "4", "db-pool-acquisition-timeout": "5"}
        opts.update(extra)
        self.port = harness.free_tcp_port()
        self.log_path = os.path.join(directory, "uvicorn.log")
        self.logf = open(self.log_path, "wb")
        env = dict(os.environ, PGREST_TEST_OPTIONS=json.dumps(opts))
        self.proc = subprocess.Popen(
            [python, "-m", "uvicorn", "serve_app:app", "--app-dir", SERVE_APP_DIR,
             "--host", "127.0.0.1", "--port", str(self.port), "--log-level", "warning"],
            stdout=self.logf, stderr=subprocess.STDOUT, env=env)

    def url(self, path):
        return "http://127.0.0.1:%d/api%s" % (self.port, path)

    def wait_ready(self, timeout):
        import time
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if harness.http("GET", "http://127.0.0.1:%d/hello" % self.port).status == 200:
                    return True
            except OSError:
                time.sleep(0.1)
        return None

    def log_tail(self, n=40):
        with open(self.log_path, "rb") as f:
            return b"\n".join(f.read().splitlines()[-n:]).decode("utf-8", "replace")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.logf.close()


def chinook_server(cluster):
    """pgrest-server on Chinook (the shared benchmark kit's chinook.sql,
    $PGREST_SHARED/bench; None without it), in the cluster's database
    chinook, for openapi31.test.mjs."""
    shared = os.environ.get("PGREST_SHARED") or os.path.join(HERE, "..", "..", "..", "shared")
    sql = os.path.join(shared, "bench", "chinook.sql")
    if not os.path.isfile(sql):
        print("client: no %s (PGREST_SHARED): Chinook's OpenAPI document not checked" % sql)
        return None
    cluster.psql_file(sql, db="chinook")
    uri = "postgresql://postgres@localhost:%d/chinook" % cluster.port
    directory = os.path.join(cluster.dir, "chinook-server")   # its own config and log
    os.makedirs(directory, exist_ok=True)
    return harness.Server(cluster, directory, {"db-uri": uri, "db-schemas": "public",
                                               "db-anon-role": "postgres"})


def main():
    if not os.access(harness.SERVER, os.X_OK):
        print("client: %s not built" % harness.SERVER)
        print("client: 0 passed, 1 failed, 0 skipped")
        return 1
    work = tempfile.mkdtemp(prefix="pgrest-client-")
    cluster = server = chinook = None
    try:
        why = install(work)
        if why is not None:
            return skipped(why)
        for name in os.listdir(HERE):
            if name.endswith(".mjs"):
                shutil.copy(os.path.join(HERE, name), work)
        cluster = harness.new_cluster()
        with open(os.path.join(HERE, SCHEMA_FILE)) as f:
            cluster.psql(f.read())
        # explain() needs db-plan-enabled, rollback() a tx-end that allows
        # it, count()/sum() db-aggregates-enabled, schema() a second schema
        config = {"jwt-secret": JWT_SECRET, "db-plan-enabled": "true",
                  "db-tx-end": "commit-allow-override",
                  "db-aggregates-enabled": "true", "db-schemas": "api, personal"}
        asgi_python = os.environ.get("PGREST_CLIENT_ASGI_PYTHON")
        if asgi_python:
            server = AsgiServer(asgi_python, cluster, cluster.dir, config)
        else:
            server = harness.Server(cluster, cluster.dir, config)
        if server.wait_ready(30) is None:
            print(server.log_tail())
            print("client: 0 passed, 1 failed, 0 skipped")
            return 1
        env = dict(os.environ)
        if not asgi_python:
            chinook = chinook_server(cluster)
            if chinook is not None and chinook.wait_ready(30) is None:
                print(chinook.log_tail())
                print("client: 0 passed, 1 failed, 0 skipped")
                return 1
            if chinook is not None:
                env["PGREST_CHINOOK_URL"] = chinook.url("")
        return run_files(work, server, env)
    finally:
        if chinook is not None:
            chinook.stop()
        if server is not None:
            server.stop()
        if cluster is not None:
            cluster.destroy()
        harness.destroy_template()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
