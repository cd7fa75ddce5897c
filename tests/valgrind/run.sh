#!/usr/bin/env bash
# Runs the Check test programs of a build under valgrind memcheck: any
# invalid read/write, use of uninitialised memory or definite leak fails the
# program. The unit programs always run; the integration programs run when
# PGREST_TEST_DB_URI is set, one after another because they share one
# database (as in meson's suite), beside the unit programs: VALGRIND_JOBS
# programs at a time in all (default: the number of cores; memcheck runs a
# program on one core). The thread test is left to ThreadSanitizer:
# valgrind serialises threads and it would take minutes. Check's fork mode
# is turned off so valgrind sees the tests themselves.
#
#   tests/valgrind/run.sh BUILD_DIR
#
# Prints "ok|FAIL|skip NAME (S s)" per program and ends with
# "valgrind: N passed, N failed, N skipped".
set -uo pipefail

# internal: --one LOGDIR EXE... runs each program under memcheck in turn
if [ "${1:-}" = --one ]; then
  dir="$2"; shift 2
  for exe in "$@"; do
    out="$dir/$(basename "$exe")" start=$(date +%s)
    CK_FORK=no CK_DEFAULT_TIMEOUT=600 timeout 900 valgrind -q --error-exitcode=99 \
      --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
      --track-origins=no "$exe" >"$out.out" 2>&1
    echo $? >"$out.rc"
    echo $(( $(date +%s) - start )) >"$out.secs"
  done
  exit 0
fi

build="${1:?usage: run.sh BUILD_DIR}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# what meson's unit suite would set (tests/unit/meson.build)
export PGREST_TEST_FIXTURES="$repo/tests/unit/fixtures" PGREST_GOLDEN_DIR="$repo/tests/unit/golden"
if ! command -v valgrind >/dev/null; then
  echo "valgrind: not installed, skipped"
  echo "valgrind: 0 passed, 0 failed, 1 skipped"
  exit 0
fi
jobs="${VALGRIND_JOBS:-$(nproc 2>/dev/null || echo 1)}"
log="$(mktemp -d "${TMPDIR:-/tmp}/pgrest-valgrind.XXXXXX")"
trap 'rm -rf "$log"' EXIT

units=() integs=()
for exe in "$build"/tests/unit/test_*; do
  [ -x "$exe" ] && [ -f "$exe" ] && units+=("$exe")
done
if [ -n "${PGREST_TEST_DB_URI:-}" ]; then
  for exe in "$build"/tests/integration/itest_*; do
    [ -x "$exe" ] && [ -f "$exe" ] || continue
    case "$(basename "$exe")" in itest_threads) continue ;; esac
    integs+=("$exe")
  done
fi

unit_jobs="$jobs"
if [ "${#integs[@]}" -gt 0 ]; then
  bash "$here/run.sh" --one "$log" "${integs[@]}" &
  integ_pid=$!
  [ "$jobs" -gt 1 ] && unit_jobs=$((jobs - 1))
fi
[ "${#units[@]}" -gt 0 ] &&
  printf '%s\0' "${units[@]}" | xargs -0 -n 1 -P "$unit_jobs" bash "$here/run.sh" --one "$log"
[ -n "${integ_pid:-}" ] && wait "$integ_pid"

pass=0 fail=0 skip=0
for exe in "${units[@]}" "${integs[@]}"; do
  name="$(basename "$exe")"
  rc="$(cat "$log/$name.rc" 2>/dev/null || echo 1)" secs="$(cat "$log/$name.secs" 2>/dev/null || echo '?')"
  if [ "$rc" -eq 0 ]; then
    pass=$((pass + 1)); echo "ok   $name ($secs s)"
  elif [ "$rc" -eq 77 ]; then
    skip=$((skip + 1)); echo "skip $name ($secs s)"
  else
    fail=$((fail + 1)); echo "FAIL $name (exit $rc, $secs s)"; tail -40 "$log/$name.out" 2>/dev/null
  fi
done
echo "valgrind: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
