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
the latest)."""
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
TEST_SUFFIX = ".test.mjs"
PACKAGES = [("@supabase/postgrest-js", "POSTGREST_JS_VERSION"),
            ("@supabase/supabase-js", "SUPABASE_JS_VERSION")]
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


def run_files(work, server):
    """Runs every test file, prints their lines and the summed counts."""
    passed = failures = 0
    for name in sorted(n for n in os.listdir(work) if n.endswith(TEST_SUFFIX)):
        r = subprocess.run(["node", name, server.url(""), JWT_SECRET], cwd=work,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=300)
        out = r.stdout.replace("client: ", "client %s: " % name)
        print(out, end="")
        m = re.search(r"^client: (\d+) passed, (\d+) failed", r.stdout, re.M)
        if m is None:
            failures += 1
            print("%s: no summary line (exit %d)" % (name, r.returncode))
            continue
        passed += int(m.group(1))
        failures += int(m.group(2)) + (1 if r.returncode != 0 and m.group(2) == "0" else 0)
    if failures:
        print("server log tail:\n" + server.log_tail(25))
    print("client: %d passed, %d failed, 0 skipped" % (passed, failures))
    return 1 if failures else 0


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
        for name in os.listdir(HERE):
            if name.endswith(".mjs"):
                shutil.copy(os.path.join(HERE, name), work)
        cluster = harness.new_cluster()
        with open(os.path.join(HERE, SCHEMA_FILE)) as f:
            cluster.psql(f.read())
        # explain() needs db-plan-enabled, rollback() a tx-end that allows
        # it, count()/sum() db-aggregates-enabled, schema() a second schema
        server = harness.Server(cluster, cluster.dir, {
            "jwt-secret": JWT_SECRET, "db-plan-enabled": "true",
            "db-tx-end": "commit-allow-override",
            "db-aggregates-enabled": "true", "db-schemas": "api, personal"})
        if server.wait_ready(30) is None:
            print(server.log_tail())
            print("client: 0 passed, 1 failed, 0 skipped")
            return 1
        return run_files(work, server)
    finally:
        if server is not None:
            server.stop()
        if cluster is not None:
            cluster.destroy()
        harness.destroy_template()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
