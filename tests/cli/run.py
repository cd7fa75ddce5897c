#!/usr/bin/env python3
"""Runs the CLI and configuration test suite (Python standard library only)
and ends with
    cli: N passed, N failed, N skipped
which scripts/test.sh adds to its totals. Exit status 1 if anything failed.

Usage: tests/cli/run.py [-k PATTERN ...]   (unittest name patterns)
Environment: PGREST_SERVER (default build/server/pgrest-server), PGREST_TEST_JOBS
(test classes run at a time, default twice the cores; see harness.run_suite).
Most tests need no database; the ones that do (--ready, --dump-schema,
in-database settings, the Server header) start their own cluster with
tests/server/harness.py."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "server"))
import harness  # noqa: E402


def main(argv):
    return harness.run_suite("cli", HERE, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
