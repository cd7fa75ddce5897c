#!/usr/bin/env bash
# Runs the libFuzzer targets built by tests/fuzz/build.sh, all in parallel:
# first every committed input of tests/fuzz/corpus/<target> once (the
# regression inputs of fixed crashes among them), then fuzzing for SECONDS
# of wall time from a scratch copy of that corpus. Prints one line per target
#   fuzz <target>: ok|CRASH runs R execs N cov C ft F crashes K
# and exits 1 if any target crashed (crash inputs are kept in
# WORK/<target>-artifacts/ and named in the output).
#
# Usage: tests/fuzz/run.sh [-b BUILD_DIR] [-w WORK_DIR] [-k] SECONDS [TARGET...]
#   -b  build directory (default build-fuzz)
#   -w  keep corpora and logs in WORK_DIR (default: a temporary directory,
#       removed afterwards)
#   -k  keep going: restart a target after a crash until SECONDS are used
#       (long runs: every distinct crash gets its artifact)
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$repo/build-fuzz" work="" keep=0
while getopts "b:w:k" o; do
  case "$o" in
    b) build="$OPTARG" ;; w) work="$OPTARG" ;; k) keep=1 ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { sed -n '2,16p' "$0"; exit 2; }
secs="$1"; shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(request grammar payload jwt config headers target import)
tmp=0
if [ -z "$work" ]; then work="$(mktemp -d "${TMPDIR:-/tmp}/pgrest-fuzz.XXXXXX")"; tmp=1; fi
mkdir -p "$work"

# fuzz_one TARGET: runs until SECONDS are used (once, or again after each
# crash with -k); writes TARGET.result: "runs execs cov ft crashes".
fuzz_one() {
  local t="$1" bin="$build/tests/fuzz/fuzz_$1" corpus="$work/$1" art="$work/$1-artifacts"
  local start end now left runs=0 execs=0 cov=0 ft=0 crashes=0 log line n
  mkdir -p "$corpus" "$art"
  cp -n "$repo/tests/fuzz/corpus/$t"/* "$corpus"/ 2>/dev/null
  # Replay every committed input once at full length first: regression
  # inputs (regress-*) may be longer than -max_len, which would truncate
  # them when the corpus is loaded for fuzzing.
  if ! "$bin" -runs=1 "$repo/tests/fuzz/corpus/$t"/* >"$work/$t.replay.log" 2>&1; then
    grep -E '^(==[0-9]+==ERROR|SUMMARY|Running:)' "$work/$t.replay.log" | tail -n 3 >&2
    echo "0 0 0 0 1" >"$work/$t.result"
    return
  fi
  start=$(date +%s); end=$((start + secs))
  while :; do
    now=$(date +%s); left=$((end - now))
    [ "$left" -ge 1 ] || break
    runs=$((runs + 1)); log="$work/$t.$runs.log"
    "$bin" -max_total_time="$left" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$art/" "$corpus" >"$log" 2>&1
    local rc=$?
    # the last status line ("#N ... cov: C ft: F ...") of this run
    line=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
    n=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -n 1)
    execs=$((execs + ${n:-0}))
    cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$line"); ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$line")
    if [ "$rc" -ne 0 ]; then
      crashes=$((crashes + 1))
      grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|artifact_prefix|Test unit written)' "$log" | head -n 5 >&2
      [ "$keep" -eq 1 ] || break
    fi
  done
  echo "$runs $execs ${cov:-0} ${ft:-0} $crashes" >"$work/$t.result"
}

for t in "${targets[@]}"; do
  if [ ! -x "$build/tests/fuzz/fuzz_$t" ]; then
    echo "fuzz $t: MISSING ($build/tests/fuzz/fuzz_$t; run tests/fuzz/build.sh)"
    echo "0 0 0 0 1" >"$work/$t.result"
    continue
  fi
  fuzz_one "$t" &
done
wait

failed=0
for t in "${targets[@]}"; do
  runs=0 execs=0 cov=0 ft=0 crashes=1   # no result file: the runner itself failed
  [ -f "$work/$t.result" ] && read -r runs execs cov ft crashes <"$work/$t.result"
  status=ok
  if [ "$crashes" -gt 0 ]; then status=CRASH; failed=1; fi
  echo "fuzz $t: $status runs $runs execs $execs cov $cov ft $ft crashes $crashes"
  [ "$crashes" -gt 0 ] && ls "$work/$t-artifacts" 2>/dev/null | sed "s|^|  $work/$t-artifacts/|"
done
if [ "$tmp" -eq 1 ] && [ "$failed" -eq 0 ]; then rm -rf "$work"; fi
exit "$failed"
