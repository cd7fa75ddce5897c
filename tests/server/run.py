#!/usr/bin/env python3
"""Runs the server test suite (Python standard library only) and ends with
    server: N passed, N failed, N skipped
which scripts/test.sh adds to its totals. Exit status 1 if anything failed.

Usage: tests/server/run.py [-k PATTERN ...]   (unittest name patterns)
Environment: PGREST_SERVER (default build/server/pgrest-server);
PGREST_TEST_PG_PORTS=LOW-HIGH, where the clusters' ports start (default
5461-6900)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


def main(argv):
    return harness.run_suite("server", os.path.dirname(os.path.abspath(__file__)), argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
