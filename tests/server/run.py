#!/usr/bin/env python3
"""Runs the server test suite (Python standard library only) and ends with
    server: N passed, N failed, N skipped
which scripts/test.sh adds to its totals. Exit status 1 if anything failed.

Usage: tests/server/run.py [-k PATTERN ...]   (unittest name patterns)
Environment: PGREST_SERVER (default build/server/pgrest-server)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


def main(argv):
    if not os.access(harness.SERVER, os.X_OK):
        print("server: %s not built" % harness.SERVER)
        print("server: 0 passed, 1 failed, 0 skipped")
        return 1
    loader = unittest.TestLoader()
    patterns = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "-k"]
    if patterns:
        loader.testNamePatterns = ["*%s*" % p for p in patterns]
    suite = loader.discover(os.path.dirname(os.path.abspath(__file__)), pattern="test_*.py")
    try:
        result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    finally:
        harness.destroy_template()
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    print("server: %d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
