#!/usr/bin/env bash
# Conformance target: run the shared PostgREST HTTP conformance cases against
# build/server/pgrest-server and compare with the committed list of cases that
# pass (tests/conformance/passing.txt).
#
# Usage:
#   tests/conformance/run.sh [--update] [--verbose] [-- RUN.PY ARGS...]
#
#   --update     rewrite passing.txt from this run (with extra run.py args such
#                as --only, only the cases that ran are updated)
#   --verbose    print the runner's whole output (default: profiles, server
#                start failures and regressions; the full log is kept)
#   -- ARGS      passed to run.py, e.g. -- --only '^QuerySpec'
#
# The shared conformance dir is $PGREST_SHARED/conformance, else
# <repo>/../shared/conformance; when absent the target is skipped (exit 0).
# A throwaway PostgreSQL (tests/harness/pg.sh) is started on a free port
# (>= $PGREST_CONFORMANCE_PORT, default 5442), loaded with the shared
# fixtures.sh, and stopped at the end.
#
# Exit status: 1 when a case listed in passing.txt did not pass (a
# regression) or the run could not be done; 0 otherwise.  Cases that fail and
# are not listed are expected (not implemented yet).  The last two lines are
#   conformance: P passed (L listed in passing.txt, R regressions, N newly passing)
#   P passed, F failed[, S skipped]          <- the runner's own final line
#
# Environment: PGREST_SERVER (server binary), PGREST_CONFORMANCE_TIMEOUT
# (seconds for the whole runner, default 900), PGREST_CONFORMANCE_OUT
# (directory for report.json and run.log, default /tmp/pgrest-conformance-last).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
pg_sh="$repo/tests/harness/pg.sh"
passing="$here/passing.txt"

update=0 verbose=0
runner_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --update) update=1 ;;
    --verbose|-v) verbose=1 ;;
    --) shift; runner_args=("$@"); break ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

if [ -n "${PGREST_SHARED:-}" ]; then
  conf="$PGREST_SHARED/conformance"
else
  conf="$repo/../shared/conformance"
fi
if [ ! -f "$conf/run.py" ] || [ ! -d "$conf/cases" ]; then
  echo "conformance: ../shared/conformance not found, skipped"
  exit 0
fi
conf="$(cd "$conf" && pwd)"

server="${PGREST_SERVER:-$repo/build/server/pgrest-server}"
if [ ! -x "$server" ]; then
  echo "conformance: server binary $server not found (build first: meson setup build && ninja -C build)" >&2
  exit 1
fi
server="$(cd "$(dirname "$server")" && pwd)/$(basename "$server")"

out="${PGREST_CONFORMANCE_OUT:-${TMPDIR:-/tmp}/pgrest-conformance-last}"
mkdir -p "$out"
report="$out/report.json"
log="$out/run.log"
rm -f "$report" "$log"

work="$(mktemp -d "${TMPDIR:-/tmp}/pgrest-conformance.XXXXXX")"
chmod 755 "$work"   # the postgres user must reach $work/pg
pgdir="$work/pg"
cfgdir="$work/configs"
mkdir -p "$cfgdir"

# End the servers the runner started (found by their config path under our
# own $cfgdir) -- only needed when the runner itself was killed by `timeout`.
kill_leftover_servers() {
  local p
  for p in /proc/[0-9]*; do
    if grep -qF "$cfgdir/" <<<"$(tr '\0' ' ' 2>/dev/null <"$p/cmdline")"; then
      kill "${p#/proc/}" 2>/dev/null || true
    fi
  done
}
cleanup() {
  kill_leftover_servers
  "$pg_sh" stop "$pgdir" || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Another cluster may take the port between the check and the start
# (parallel runs): try a few ports.
port="${PGREST_CONFORMANCE_PORT:-5442}"
for attempt in 1 2 3 4 5; do
  port="$("$pg_sh" freeport "$port")"
  if "$pg_sh" start "$pgdir" "$port"; then
    break
  fi
  [ "$attempt" -eq 5 ] && exit 1
  port=$((port + 1))
done
sockdir="$("$pg_sh" sockdir "$pgdir")"

# The pg-safeupdate profile LOADs the safeupdate library: build and install it
# from the shared sources (needs root, make and postgresql-server-dev-15).
# Without it only the PgSafeUpdateSpec cases fail, so this is not fatal.
install_safeupdate() {
  local script="$conf/ext/pg-safeupdate/install.sh" pkglib
  [ -f "$script" ] || return 0
  pkglib="$(/usr/lib/postgresql/15/bin/pg_config --pkglibdir 2>/dev/null || true)"
  if [ -n "$pkglib" ] && [ -f "$pkglib/safeupdate.so" ]; then
    return 0
  fi
  if [ "$(id -u)" -ne 0 ]; then
    echo "conformance: safeupdate not installed and not root: PgSafeUpdateSpec cases will fail" >&2
    return 0
  fi
  bash "$script" >"$out/safeupdate.log" 2>&1 ||
    echo "conformance: installing safeupdate failed (log: $out/safeupdate.log)" >&2
}
install_safeupdate

echo "conformance: loading fixtures ($conf/fixtures.sh)"
if ! PGHOST="$sockdir" PGPORT="$port" PGUSER=postgres bash "$conf/fixtures.sh" >"$out/fixtures.log" 2>&1; then
  tail -n 30 "$out/fixtures.log" >&2
  echo "conformance: loading the fixtures failed (log: $out/fixtures.log)" >&2
  exit 1
fi

server_cmd="$(printf '%q' "$server") {config}"
db_uri="postgresql://Postgrest_Test_Authenticator@localhost:$port/postgrest_test"
echo "conformance: running $conf/run.py against $server"
rc=0
(
  cd "$conf"
  # run.py starts the server with its own environment: these reach the server.
  PGTZ=UTC PGOPTIONS='-c search_path=public,test' \
    timeout -k 10 "${PGREST_CONFORMANCE_TIMEOUT:-900}" \
    python3 run.py --cases cases --server-cmd "$server_cmd" --db-uri "$db_uri" \
      --report "$report" --keep-configs "$cfgdir" "${runner_args[@]}"
) >"$log" 2>&1 || rc=$?
kill_leftover_servers
cp -f "$cfgdir"/*.log "$out/" 2>/dev/null || true

if [ "$verbose" -eq 1 ]; then
  cat "$log"
else
  grep -E '^(==|!!|    \|)' "$log" || true
fi
if [ "$rc" -ne 0 ] || [ ! -f "$report" ]; then
  tail -n 20 "$log" >&2
  echo "conformance: the runner failed (exit $rc; log: $log)" >&2
  exit 1
fi

# Compare with passing.txt; print regressions with the runner's messages.
python3 - "$report" "$passing" "$update" "$log" "${#runner_args[@]}" <<'PY'
import json, re, sys

report_path, passing_path, update, log_path, nargs = sys.argv[1:6]
update, partial = update == "1", int(nargs) > 0
rep = json.load(open(report_path, encoding="utf-8"))
results = {c["id"]: c for c in rep["cases"]}

header, listed = [], []
try:
    with open(passing_path, encoding="utf-8") as f:
        for line in f:
            s = line.split("#", 1)[0].strip()
            if s:
                listed.append(s)
            elif not listed and line.startswith("#"):
                header.append(line.rstrip("\n"))
except FileNotFoundError:
    pass
listed_set = set(listed)

passed = sorted(i for i, c in results.items() if c["result"] == "passed")
regressions = [i for i in listed if i in results and results[i]["result"] != "passed"]
not_run = [i for i in listed if i not in results]
new = [i for i in passed if i not in listed_set]

for i in regressions:
    c = results[i]
    print("REGRESSION %s  %s  [%s]" % (i, c["title"], c["result"]))
    for m in c["messages"][:6]:
        print("     " + m)
if not_run and not partial:
    print("conformance: %d case(s) listed in passing.txt were not run (removed from the cases?): %s"
          % (len(not_run), " ".join(not_run[:10]) + (" ..." if len(not_run) > 10 else "")))

if update:
    keep = set(passed) | (listed_set - set(results) if partial else set())
    if not header:
        header = ["# Conformance cases that pgrest-server passes (one case id per line).",
                  "# A listed case that fails is a regression: tests/conformance/run.sh exits 1.",
                  "# Regenerate with: tests/conformance/run.sh --update"]
    with open(passing_path, "w", encoding="utf-8") as f:
        f.write("\n".join(header) + "\n")
        for i in sorted(keep):
            f.write(i + "\n")
    print("conformance: wrote %d case ids to %s" % (len(keep), passing_path))
elif new:
    print("conformance: %d case(s) pass that are not in passing.txt; record them with tests/conformance/run.sh --update"
          % len(new))

print("conformance: %d passed (%d listed in passing.txt, %d regressions, %d newly passing)"
      % (len(passed), len(listed), len(regressions), len(new)))
final = ""
with open(log_path, encoding="utf-8", errors="replace") as f:
    for line in f:
        if re.match(r"^\d+ passed, \d+ failed", line):
            final = line.rstrip("\n")
print(final or "%d passed, %d failed" % (rep["passed"], rep["failed"]))
sys.exit(1 if regressions and not update else 0)
PY
