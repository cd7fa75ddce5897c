#!/usr/bin/env bash
# Runs the Check test programs of a build under valgrind memcheck: any
# invalid read/write, use of uninitialised memory or definite leak fails the
# program. The unit programs always run; the integration programs run when
# PGREST_TEST_DB_URI is set (the thread test is left to ThreadSanitizer:
# valgrind serialises threads and it would take minutes). Check's fork mode
# is turned off so valgrind sees the tests themselves.
#
#   tests/valgrind/run.sh BUILD_DIR
#
# Ends with "valgrind: N passed, N failed, N skipped".
set -uo pipefail

build="${1:?usage: run.sh BUILD_DIR}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# what meson's unit suite would set (tests/unit/meson.build)
export PGREST_TEST_FIXTURES="$repo/tests/unit/fixtures" PGREST_GOLDEN_DIR="$repo/tests/unit/golden"
if ! command -v valgrind >/dev/null; then
  echo "valgrind: not installed, skipped"
  echo "valgrind: 0 passed, 0 failed, 1 skipped"
  exit 0
fi
pass=0 fail=0 skip=0
log="$(mktemp -d "${TMPDIR:-/tmp}/pgrest-valgrind.XXXXXX")"
trap 'rm -rf "$log"' EXIT

run_one() {
  local exe="$1" name rc
  name="$(basename "$exe")"
  CK_FORK=no CK_DEFAULT_TIMEOUT=600 timeout 900 valgrind -q --error-exitcode=99 \
    --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
    --track-origins=no "$exe" >"$log/$name.out" 2>&1
  rc=$?
  if [ "$rc" -eq 0 ]; then
    pass=$((pass + 1)); echo "ok   $name"
  elif [ "$rc" -eq 77 ]; then
    skip=$((skip + 1)); echo "skip $name"
  else
    fail=$((fail + 1)); echo "FAIL $name (exit $rc)"; tail -40 "$log/$name.out"
  fi
}

for exe in "$build"/tests/unit/test_*; do
  [ -x "$exe" ] && [ -f "$exe" ] && run_one "$exe"
done
if [ -n "${PGREST_TEST_DB_URI:-}" ]; then
  for exe in "$build"/tests/integration/itest_*; do
    [ -x "$exe" ] && [ -f "$exe" ] || continue
    case "$(basename "$exe")" in itest_threads) continue ;; esac
    run_one "$exe"
  done
fi
echo "valgrind: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
