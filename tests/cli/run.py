#!/usr/bin/env python3
"""Runs the CLI and configuration test suite (Python standard library only)
and ends with
    cli: N passed, N failed, N skipped
which scripts/test.sh adds to its totals. Exit status 1 if anything failed.

Usage: tests/cli/run.py [-k PATTERN ...]   (unittest name patterns)
Environment: PGREST_SERVER (default build/server/pgrest-server).
Most tests need no database; the ones that do (--ready, --dump-schema,
in-database settings, the Server header) start their own cluster with
tests/server/harness.py."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "server"))
import harness  # noqa: E402


def main(argv):
    if not os.access(harness.SERVER, os.X_OK):
        print("cli: %s not built" % harness.SERVER)
        print("cli: 0 passed, 1 failed, 0 skipped")
        return 1
    loader = unittest.TestLoader()
    patterns = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "-k"]
    if patterns:
        loader.testNamePatterns = ["*%s*" % p for p in patterns]
    suite = loader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    try:
        result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    finally:
        harness.destroy_template()
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    print("cli: %d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
