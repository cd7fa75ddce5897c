#!/usr/bin/env python3
"""Runs the read-replica suite (tests/cluster/test_replica_*.py: a primary, a
streaming replica and pgrest-server with db-replica-uris) and ends with
    cluster: N passed, N failed, N skipped
which scripts/test.sh adds to its totals. Without PostgreSQL's server
binaries (pg_basebackup) the suite is skipped.

Usage: tests/cluster/run.py [-k PATTERN ...]"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pair  # noqa: E402


def main(argv):
    if pair.pg_bindir() is None:
        print("cluster: PostgreSQL server binaries not found")
        print("cluster: 0 passed, 0 failed, 1 skipped")
        return 0
    # test_instances.py and test_pgbouncer_chinook.py run on scripts/cluster.sh
    # instead (run_instances.py).
    return pair.harness.run_suite("cluster", HERE, argv, pattern="test_replica_*.py")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
