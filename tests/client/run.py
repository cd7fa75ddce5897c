#!/usr/bin/env python3
"""A real client: Supabase's postgrest-js (npm @supabase/postgrest-js)
against pgrest-server on tests/fixtures/test_schema.sql (a cluster of the
server suite's harness) with tests/client/client_schema.sql on top. The package is installed with npm into a
temporary directory; without node/npm, or when the registry cannot be
reached, the suite is skipped. Ends with
    client: N passed, N failed, N skipped
which scripts/test.sh adds to its totals. Exit status 1 if anything failed.

Environment: PGREST_SERVER (default build/server/pgrest-server),
POSTGREST_JS_VERSION (npm version spec, default: the latest)."""
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

JWT_SECRET = "reallyreallyreallyreallyverysafe"
TEST_FILE = "postgrest_js.test.mjs"
SCHEMA_FILE = "client_schema.sql"   # loaded on top of the fixture


def skipped(reason):
    print("client: skipped (%s)" % reason)
    print("client: 0 passed, 0 failed, 1 skipped")
    return 0


def install(directory):
    """npm install of postgrest-js into directory; None or why it failed."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return "node or npm not found"
    spec = "@supabase/postgrest-js"
    if os.environ.get("POSTGREST_JS_VERSION"):
        spec += "@" + os.environ["POSTGREST_JS_VERSION"]
    with open(os.path.join(directory, "package.json"), "w") as f:
        f.write('{"name": "pgrest-client-test", "private": true, "type": "module"}\n')
    try:
        r = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", spec],
                           cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=180)
    except subprocess.TimeoutExpired:
        return "npm install timed out"
    if r.returncode != 0:
        lines = r.stdout.strip().splitlines()
        return "npm install failed" + (": " + lines[-1] if lines else "")
    return None


def main():
    if not os.access(harness.SERVER, os.X_OK):
        print("client: %s not built" % harness.SERVER)
        print("client: 0 passed, 1 failed, 0 skipped")
        return 1
    work = tempfile.mkdtemp(prefix="pgrest-client-")
    cluster = server = None
    try:
        why = install(work)
        if why is not None:
            return skipped(why)
        shutil.copy(os.path.join(HERE, TEST_FILE), work)
        cluster = harness.new_cluster()
        with open(os.path.join(HERE, SCHEMA_FILE)) as f:
            cluster.psql(f.read())
        # explain() needs db-plan-enabled, rollback() a tx-end that allows it
        server = harness.Server(cluster, cluster.dir, {
            "jwt-secret": JWT_SECRET, "db-plan-enabled": "true",
            "db-tx-end": "commit-allow-override"})
        if server.wait_ready(30) is None:
            print(server.log_tail())
            print("client: 0 passed, 1 failed, 0 skipped")
            return 1
        r = subprocess.run(["node", TEST_FILE, server.url(""), JWT_SECRET], cwd=work,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=300)
        print(r.stdout, end="")
        if not re.search(r"^client: \d+ passed, \d+ failed", r.stdout, re.M):
            print("client: 0 passed, 1 failed, 0 skipped")
            return 1
        if r.returncode != 0:
            print("server log tail:\n" + server.log_tail(25))
        return r.returncode
    finally:
        if server is not None:
            server.stop()
        if cluster is not None:
            cluster.destroy()
        harness.destroy_template()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
