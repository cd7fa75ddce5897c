#!/usr/bin/env bash
# Runs the Check test programs of a build under valgrind memcheck: any
# invalid read/write, use of uninitialised memory or definite leak fails the
# program. The unit programs always run; the integration programs run when
# PGREST_TEST_DB_URI is set, one after another because they share one
# database (as in meson's suite, is_parallel: false), beside the unit
# programs: VALGRIND_JOBS programs at a time in all (default: the number of
# cores; memcheck runs a program on one core). One queue feeds the jobs:
# the integration chain first, then the slowest unit programs, then the
# rest, so no core idles at the end while another runs a long program.
# The thread test is left to ThreadSanitizer:
# valgrind serialises threads and it would take minutes. Check's fork mode
# is turned off so valgrind sees the tests themselves.
#
#   tests/valgrind/run.sh BUILD_DIR
#
# Prints "ok|FAIL|skip NAME (S s)" per program and ends with
# "valgrind: N passed, N failed, N skipped".
set -uo pipefail

# internal: --one LOGDIR EXE... runs each program under memcheck in turn;
# an argument @FILE stands for the programs listed in FILE (one a line).
if [ "${1:-}" = --one ]; then
  dir="$2"; shift 2
  exes=()
  for arg in "$@"; do
    if [ "${arg#@}" != "$arg" ]; then mapfile -t -O "${#exes[@]}" exes <"${arg#@}"; else exes+=("$arg"); fi
  done
  for exe in "${exes[@]}"; do
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

# The queue: the integration chain (one item), then the unit programs that
# take minutes under memcheck (seconds for the others), then the rest.
slow_units=(test_arena_sweep test_jwt test_import_rows test_payload test_grammar)
queue=()
if [ "${#integs[@]}" -gt 0 ]; then
  printf '%s\n' "${integs[@]}" >"$log/integration.list"
  queue+=("@$log/integration.list")
fi
for name in "${slow_units[@]}"; do
  for exe in "${units[@]}"; do [ "$(basename "$exe")" = "$name" ] && queue+=("$exe"); done
done
for exe in "${units[@]}"; do
  case " ${slow_units[*]} " in *" $(basename "$exe") "*) ;; *) queue+=("$exe") ;; esac
done
[ "${#queue[@]}" -gt 0 ] &&
  printf '%s\0' "${queue[@]}" | xargs -0 -n 1 -P "$jobs" bash "$here/run.sh" --one "$log"

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
