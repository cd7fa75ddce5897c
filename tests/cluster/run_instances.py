#!/usr/bin/env python3
"""Runs the many-instances and PgBouncer tests (test_instances.py,
test_pgbouncer_chinook.py) on a cluster of their own: scripts/cluster.sh up
in a fresh state directory, the tests, scripts/cluster.sh down. Ends with
    cluster-instances: N passed, N failed, N skipped
which scripts/test.sh adds to its totals. Exit status 1 if anything failed.

Usage: tests/cluster/run_instances.py [-k PATTERN ...]  (unittest name patterns)
Environment: PGREST_BUILD (build directory, default build), PGREST_SHARED
(the benchmark kit for the Chinook scenarios; skipped without it),
PGREST_CLUSTER_PORT (first port tried), PGREST_CLUSTER_DIR (where the
state goes, default a new directory under /tmp; the postgres user must reach
it). With PGREST_CLUSTER_REUSE=1 the cluster already up in PGREST_CLUSTER_DIR
is used and left up."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CLUSTER_SH = os.path.join(REPO, "scripts", "cluster.sh")
MODULES = ["test_instances", "test_pgbouncer_chinook"]
PREFIX = "cluster-instances"


def run_tests(patterns):
    sys.path.insert(0, HERE)
    loader = unittest.TestLoader()
    if patterns:
        loader.testNamePatterns = ["*%s*" % p for p in patterns]
    suite = unittest.TestSuite(loader.loadTestsFromName(m) for m in MODULES)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    return passed, failed, skipped


def show_logs(state):
    """The state directory goes with cluster.sh down: keep what the
    components said in the test log."""
    for name in sorted(os.listdir(state)) if os.path.isdir(state) else []:
        if name.endswith(".log"):
            with open(os.path.join(state, name), errors="replace") as f:
                print("---- %s (last lines)\n%s" % (name, "".join(f.readlines()[-15:])))


def main(argv):
    patterns = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "-k"]
    own = os.environ.get("PGREST_CLUSTER_REUSE") != "1"
    if own and "PGREST_CLUSTER_DIR" not in os.environ:
        os.environ["PGREST_CLUSTER_DIR"] = tempfile.mkdtemp(prefix="pgrest-cluster-")
        os.rmdir(os.environ["PGREST_CLUSTER_DIR"])   # cluster.sh makes it
    os.environ.setdefault("PGREST_BUILD", os.path.join(REPO, "build"))
    passed = failed = skipped = 0
    try:
        if own:
            up = subprocess.run(["bash", CLUSTER_SH, "up"], timeout=300)
            if up.returncode != 0:
                print("%s: scripts/cluster.sh up failed" % PREFIX)
                show_logs(os.environ["PGREST_CLUSTER_DIR"])
                failed = 1
        if failed == 0:
            passed, failed, skipped = run_tests(patterns)
    finally:
        if own:
            subprocess.run(["bash", CLUSTER_SH, "down"], timeout=120)
    print("%s: %d passed, %d failed, %d skipped" % (PREFIX, passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
