#!/usr/bin/env bash
# The test command: installs what is missing, builds build/ and build-asan/
# (AddressSanitizer + UBSan), starts a throwaway PostgreSQL loaded with
# tests/fixtures/test_schema.sql, runs the unit and integration suites in both
# builds, runs the Check programs of build/ under valgrind memcheck
# (tests/valgrind/run.sh), runs the multi-thread test (tests/integration/test_threads.c) in
# build-tsan/ (ThreadSanitizer; skipped with the reason when TSan cannot run
# a program here), runs the server suite (tests/server/run.py, own clusters),
# the read-replica suite (tests/cluster/run.py, a primary and a replica),
# the CLI suite (tests/cli/run.py) and the Python binding's suite
# (tests/bindings/python/run.py)
# against build/, the cluster instances suite (tests/cluster/run_instances.py
# on scripts/cluster.sh), the postgrest-js client suite (tests/client/run.py; skipped
# without node/npm), the Node binding suite (tests/bindings/node/run.py; skipped
# without node/npm or Node's headers), the server limits test (tests/limits/run.sh, its own
# PostgreSQL and pgrest-server), a short run of every libFuzzer target
# (tests/fuzz: build-fuzz/ with clang, FUZZ_SECONDS each, default 10, in
# parallel; skipped when clang cannot build them), runs the conformance
# target (tests/conformance/run.sh;
# skipped when ../shared/conformance is absent), and ends with one line
#   N passed, N failed[, N skipped]
# summing every suite.  Exit status 1 if anything failed.
#
# Usage: scripts/test.sh [--no-asan] [--no-tsan] [--no-server] [--no-fuzz] [--no-valgrind]
#                        [--no-conformance]
#        scripts/test.sh --deps-only     install missing packages and exit
#        scripts/test.sh --print-deps    print the Debian packages needed
#
# Environment: PGREST_TEST_PG_PORT (first port tried for the test cluster,
# default 5441; the next free one is used), PGREST_TEST_DB_USER (role in
# PGREST_TEST_DB_URI, default authenticator).  The suites get
# PGREST_TEST_DB_URI (a fresh copy of the loaded database for each build)
# and PGREST_TEST_ADMIN_URI (same database, superuser postgres).  The
# conformance target has its own variables (see tests/conformance/run.sh).
#
# Counting: the limits test adds its "N passed, N failed" line; each fuzz
# target counts one passed (no crash) or one failed (crash or build
# failure), or one skipped without clang. Meson's Ok + Expected Fail are passed, Fail + Unexpected Pass +
# Timeout failed, Skipped skipped; a failed build or database setup counts
# one failure.  Conformance adds its passing cases to "passed" and its
# regressions (cases listed in tests/conformance/passing.txt that fail) to
# "failed"; other failing cases are not implemented yet and are only shown
# in the runner's own line.  The server, cli and python-binding suites add their passed /
# failed (failures + errors) / skipped tests.
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pg_sh="$repo/tests/harness/pg.sh"

# Debian 12 packages: build, tests, PostgreSQL 15 (+ PostGIS and contrib for
# the conformance fixtures; server-dev + make build pg-safeupdate for its
# PgSafeUpdateSpec cases), python3 (conformance runner, limits test), curl
# (demo), clang + its fuzzer runtime (tests/fuzz), pgbouncer + haproxy
# (scripts/cluster.sh, tests/cluster), the Python binding's install and
# tests (venv, pip, setuptools, wheel; starlette, uvicorn, httpx:
# tests/bindings/python).
DEPS=(meson ninja-build pkg-config gcc libc6-dev
      libpq-dev libjson-c-dev libjwt-dev libssl-dev libmicrohttpd-dev
      libcurl4-openssl-dev
      check libsubunit-dev
      postgresql-15 postgresql-server-dev-15 make postgresql-client-15 postgresql-15-postgis-3
      postgresql-contrib tzdata
      python3 curl
      clang libclang-rt-14-dev valgrind
      pgbouncer haproxy
      python3-venv python3-pip python3-setuptools python3-wheel
      python3-starlette python3-uvicorn python3-httpx)

missing_deps() {
  local p
  for p in "${DEPS[@]}"; do
    grep -q '^install ok installed$' <<<"$(dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null)" || echo "$p"
  done
}

install_deps() {
  local missing sudo=()
  mapfile -t missing < <(missing_deps)
  [ "${#missing[@]}" -eq 0 ] && return 0
  echo "test.sh: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "test.sh: missing packages ${missing[*]}; run as root" >&2; return 1; }
    sudo=(sudo)
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q &&
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

use_asan=1 use_tsan=1 use_conformance=1 use_server=1 use_fuzz=1 use_valgrind=1
for arg in "$@"; do
  case "$arg" in
    --print-deps) printf '%s\n' "${DEPS[@]}"; exit 0 ;;
    --deps-only) install_deps; exit $? ;;
    --no-asan) use_asan=0 ;;
    --no-tsan) use_tsan=0 ;;
    --no-conformance) use_conformance=0 ;;
    --no-server) use_server=0 ;;
    --no-fuzz) use_fuzz=0 ;;
    --no-valgrind) use_valgrind=0 ;;
    -h|--help) sed -n '2,43p' "$0"; exit 0 ;;
    *) echo "test.sh: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done

cd "$repo" || exit 1
install_deps || { echo "0 passed, 1 failed"; exit 1; }

total_pass=0 total_fail=0 total_skip=0
summary=()
# note NAME RESULT: one summary line, with the seconds since the previous
# note (the stage's own time: stages run one after another).
noted_at=$SECONDS
note() {
  summary+=("$(printf '%-28s %-58s %4ds' "$1" "$2" $((SECONDS - noted_at)))")
  noted_at=$SECONDS
}

work="$(mktemp -d "${TMPDIR:-/tmp}/pgrest-test.XXXXXX")"
chmod 755 "$work"   # the postgres user must reach $work/pg
pgdir="$work/pg"
cleanup() { "$pg_sh" stop "$pgdir" >/dev/null 2>&1; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- builds -----------------------------------------------------------------
# build_dir DIR [meson setup options...]: configure (once) and build.
build_dir() {
  local dir="$1"; shift
  echo "== build $dir"
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" "$@" || return 1
  fi
  ninja -C "$dir"
}

build_ok=()
if build_dir build; then build_ok+=(build); note "build" "ok"; else
  total_fail=$((total_fail + 1)); note "build" "FAILED"; fi
if [ "$use_asan" -eq 1 ]; then
  if build_dir build-asan -Db_sanitize=address,undefined -Db_lundef=false; then
    build_ok+=(build-asan); note "build-asan" "ok"
  else total_fail=$((total_fail + 1)); note "build-asan" "FAILED"; fi
fi

# ThreadSanitizer: probe that gcc's TSan can build and run a threaded program
# here (it needs libtsan, and aborts at start on kernels whose mmap
# randomisation it does not support), then build only the thread test.
tsan_ready=0
tsan_probe() {
  local d="$work/tsan-probe"
  mkdir -p "$d"
  cat >"$d/probe.c" <<'PROBE'
#include <pthread.h>
static int n;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static void *run(void *a) { pthread_mutex_lock(&m); n++; pthread_mutex_unlock(&m); return a; }
int main(void)
{
    pthread_t t;
    if (pthread_create(&t, 0, run, 0) != 0) return 1;
    run(0);
    pthread_join(t, 0);
    return n == 2 ? 0 : 1;
}
PROBE
  if ! "${CC:-cc}" -fsanitize=thread -g -pthread "$d/probe.c" -o "$d/probe" >"$d/log" 2>&1; then
    tsan_reason="compiler cannot link -fsanitize=thread: $(head -n 1 "$d/log")"; return 1
  fi
  if ! timeout 30 "$d/probe" >"$d/log" 2>&1; then
    tsan_reason="TSan program does not run here: $(grep -m 1 -v '^$' "$d/log")"; return 1
  fi
}
if [ "$use_tsan" -eq 1 ]; then
  tsan_reason=""
  if ! tsan_probe; then
    echo "test.sh: ThreadSanitizer run skipped: $tsan_reason"
    note "build-tsan" "skipped ($tsan_reason)"
  else
    echo "== build build-tsan (tests/integration/itest_threads)"
    if { [ -f build-tsan/build.ninja ] || meson setup build-tsan -Db_sanitize=thread -Db_lundef=false; } &&
       ninja -C build-tsan tests/integration/itest_threads; then
      tsan_ready=1; note "build-tsan" "ok"
    else
      total_fail=$((total_fail + 1)); note "build-tsan" "FAILED"
    fi
  fi
fi

# ---- test database ------------------------------------------------------------
fixture="$repo/tests/fixtures/test_schema.sql"
db_ready=0
port="$("$pg_sh" freeport "${PGREST_TEST_PG_PORT:-5441}")"
if "$pg_sh" start "$pgdir" "$port"; then
  export PGHOST PGPORT PGUSER
  PGHOST="$("$pg_sh" sockdir "$pgdir")" PGPORT="$port" PGUSER=postgres
  if [ ! -f "$fixture" ]; then
    echo "test.sh: $fixture not found; integration suites run without a loaded database"
    createdb pgrest_test_template && db_ready=1
  elif createdb pgrest_test_template &&
       PGTZ=UTC PGOPTIONS='-c client_min_messages=warning' \
         psql -X -q -v ON_ERROR_STOP=1 -d pgrest_test_template -f "$fixture" -o /dev/null; then
    db_ready=1
  else
    echo "test.sh: loading $fixture failed" >&2
    total_fail=$((total_fail + 1)); note "test database" "FAILED (loading test_schema.sql)"
  fi
else
  total_fail=$((total_fail + 1)); note "test database" "FAILED (PostgreSQL did not start)"
fi

# Chinook (PostgREST's benchmark database, ../shared/bench/chinook.sql)
# for the integration tests that replay the benchmark's requests; they skip
# when it is absent.
chinook_sql="${PGREST_SHARED:-$repo/../shared}/bench/chinook.sql"
if [ "$db_ready" -eq 1 ] && [ -f "$chinook_sql" ]; then
  if createdb chinook && psql -X -q -v ON_ERROR_STOP=1 -d chinook -f "$chinook_sql" -o /dev/null 2>/dev/null &&
     psql -X -q -d chinook -c 'VACUUM ANALYZE' >/dev/null; then
    export PGREST_TEST_CHINOOK_URI="postgresql://postgres@localhost:$port/chinook"
  else
    echo "test.sh: loading $chinook_sql failed; Chinook tests skip" >&2
  fi
fi

# A fresh copy of the loaded database for each run of the integration suite.
fresh_test_db() {
  dropdb --if-exists pgrest_test && createdb -T pgrest_test_template pgrest_test
}
# The tests connect like the server does: as the fixture's login role
# `authenticator` (NOINHERIT; switches to web_anon / web_user).  Setup that
# needs a superuser can use PGREST_TEST_ADMIN_URI.
export PGREST_TEST_DB_URI="postgresql://${PGREST_TEST_DB_USER:-authenticator}@localhost:$port/pgrest_test"
export PGREST_TEST_ADMIN_URI="postgresql://postgres@localhost:$port/pgrest_test"

# ---- meson suites ---------------------------------------------------------------
# field LOG NAME: the number on meson's last "NAME: n" summary line.
field() { sed -n "s/^$2:[[:space:]]*\([0-9][0-9]*\).*/\1/p" "$1" | tail -n 1; }

# run_suite BUILD SUITE [meson test options...]: run and add meson's summary
# (Ok / Expected Fail / Fail / Unexpected Pass / Skipped / Timeout) to the totals.
run_suite() {
  local dir="$1" suite="$2" log rc ok xfail fail xpass skip tmo
  shift 2
  log="$work/$dir-$suite.log"
  echo "== meson test -C $dir --suite $suite"
  meson test -C "$dir" --suite "$suite" --print-errorlogs "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  ok=$(field "$log" 'Ok'); xfail=$(field "$log" 'Expected Fail'); fail=$(field "$log" 'Fail')
  xpass=$(field "$log" 'Unexpected Pass'); skip=$(field "$log" 'Skipped'); tmo=$(field "$log" 'Timeout')
  ok=$(( ${ok:-0} + ${xfail:-0} ))
  fail=$(( ${fail:-0} + ${xpass:-0} + ${tmo:-0} ))
  skip=${skip:-0}
  if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then fail=1; fi   # meson itself failed
  if grep -q '^No suitable tests defined' "$log"; then
    note "$dir $suite" "no tests"
  else
    note "$dir $suite" "$ok passed, $fail failed, $skip skipped"
  fi
  total_pass=$((total_pass + ok)); total_fail=$((total_fail + fail)); total_skip=$((total_skip + skip))
}

for b in "${build_ok[@]}"; do
  opts=()
  [ "$b" = build-asan ] && opts=(--timeout-multiplier 3)
  run_suite "$b" unit "${opts[@]}"
  if [ "$db_ready" -eq 1 ]; then
    if fresh_test_db; then
      run_suite "$b" integration "${opts[@]}"
    else
      total_fail=$((total_fail + 1)); note "$b integration" "FAILED (could not create pgrest_test)"
    fi
  else
    note "$b integration" "not run (no test database)"
  fi
done
# TSan: only the thread test; a data race report fails it (exit 66).
if [ "$tsan_ready" -eq 1 ]; then
  if [ "$db_ready" -eq 1 ] && fresh_test_db; then
    TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}" \
      run_suite build-tsan integration --no-rebuild --timeout-multiplier 2 threads
  else
    note "build-tsan integration" "not run (no test database)"
  fi
fi
# valgrind memcheck over the Check programs of build/ (invalid accesses and
# definite leaks fail them); counts its "valgrind: P passed, F failed" line.
if [ "$use_valgrind" -eq 1 ] && [ "${build_ok[0]:-}" = build ]; then
  echo "== valgrind (tests/valgrind/run.sh)"
  vlog="$work/valgrind.log"
  if [ "$db_ready" -eq 1 ] && fresh_test_db; then
    "$repo/tests/valgrind/run.sh" "$repo/build" 2>&1 | tee "$vlog"
  else
    env -u PGREST_TEST_DB_URI "$repo/tests/valgrind/run.sh" "$repo/build" 2>&1 | tee "$vlog"
  fi
  vline=$(grep -E '^valgrind: [0-9]+ passed' "$vlog" | tail -n 1)
  if [ -n "$vline" ]; then
    vpass=$(sed -E 's/^valgrind: ([0-9]+) passed.*/\1/' <<<"$vline")
    vfail=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$vline")
    vskip=$(sed -nE 's/.*, ([0-9]+) skipped.*/\1/p' <<<"$vline")
    total_pass=$((total_pass + vpass)); total_fail=$((total_fail + vfail))
    total_skip=$((total_skip + ${vskip:-0}))
    note "valgrind" "${vline#valgrind: }"
  else
    total_fail=$((total_fail + 1)); note "valgrind" "FAILED (no result line)"
  fi
fi
"$pg_sh" stop "$pgdir"
unset PGHOST PGPORT PGUSER

# record_runner_suite NAME PREFIX LOG: adds the runner's last
# "PREFIX: P passed, F failed, S skipped" line of LOG to the totals (the
# server, cli and client runners print it; no line counts one failure).
record_runner_suite() {
  local sline spass sfail sskip
  sline=$(grep -E "^$2: [0-9]+ passed, [0-9]+ failed" "$3" | tail -n 1)
  if [ -n "$sline" ]; then
    spass=$(sed -E "s/^$2: ([0-9]+) passed.*/\1/" <<<"$sline")
    sfail=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$sline")
    sskip=$(sed -nE 's/.*, ([0-9]+) skipped.*/\1/p' <<<"$sline")
    total_pass=$((total_pass + spass)); total_fail=$((total_fail + sfail))
    total_skip=$((total_skip + ${sskip:-0}))
    note "$1" "${sline#"$2": }"
  else
    total_fail=$((total_fail + 1)); note "$1" "FAILED (no summary line, see output above)"
  fi
}

# ---- server ---------------------------------------------------------------------
# tests/server/run.py: pgrest-server (build/) against PostgreSQL clusters of
# its own (reload, admin, recovery, shutdown, durability); it ends with
# "server: P passed, F failed, S skipped". Its request-lifetime tests
# (cancel, HEAD framing, database faults, streamed bodies cut short, readers
# leaving together) and the hostile-input sweep (test_hostile.py) run again
# on the ASan/UBSan server of build-asan/ ("server-asan"): a use after free
# there need not crash a plain build.
if [ "$use_server" -eq 1 ] && [ "${build_ok[0]:-}" != build ]; then
  note "server" "not run (build/ failed)"
elif [ "$use_server" -eq 1 ]; then
  echo "== server tests"
  slog="$work/server.log"
  timeout 1200 python3 "$repo/tests/server/run.py" 2>&1 | tee "$slog"
  record_runner_suite server server "$slog"
fi
if [ "$use_server" -eq 1 ] && [[ " ${build_ok[*]} " == *" build-asan "* ]]; then
  echo "== server tests on the ASan/UBSan server (cancel, HEAD, faults, stream failures, hostile inputs)"
  salog="$work/server-asan.log"
  PGREST_SERVER="$repo/build-asan/server/pgrest-server" \
    timeout 600 python3 "$repo/tests/server/run.py" -k test_cancel -k test_http_head -k test_faults -k StreamFailureTest -k ReadersLeavingTogether -k Hostile 2>&1 | tee "$salog"
  record_runner_suite server-asan server "$salog"
fi

# ---- cluster --------------------------------------------------------------------
# tests/cluster/run.py: read replicas (docs/replicas.md): a primary, a
# streaming replica (pg_basebackup -R with a slot) and pgrest-server with
# db-replica-uris: routing, read-your-writes, lag, a replica lost under
# load. Ends with "cluster: P passed, F failed, S skipped"; skipped without
# PostgreSQL's server binaries.
if [ "$use_server" -eq 1 ] && [ "${build_ok[0]:-}" != build ]; then
  note "cluster" "not run (build/ failed)"
elif [ "$use_server" -eq 1 ]; then
  echo "== cluster tests"
  clog="$work/cluster.log"
  timeout 300 python3 "$repo/tests/cluster/run.py" 2>&1 | tee "$clog"
  record_runner_suite cluster cluster "$clog"
fi

# ---- cli ------------------------------------------------------------------------
# tests/cli/run.py: the command line (CLI.hs), configuration forms and checks
# (Config.hs), --ready / --dump-config / --dump-schema and the Server header;
# most tests need no database, the others start their own clusters. It ends
# with "cli: P passed, F failed, S skipped".
if [ "$use_server" -eq 1 ] && [ "${build_ok[0]:-}" != build ]; then
  note "cli" "not run (build/ failed)"
elif [ "$use_server" -eq 1 ]; then
  echo "== cli tests"
  cli_log="$work/cli.log"
  timeout 900 python3 "$repo/tests/cli/run.py" 2>&1 | tee "$cli_log"
  record_runner_suite cli cli "$cli_log"
fi

# ---- client ---------------------------------------------------------------------
# tests/client/run.py: Supabase's postgrest-js and supabase-js, installed with npm into a
# temporary directory, against pgrest-server (own cluster). Skipped without
# node/npm or when the npm registry cannot be reached; node and npm are not
# in DEPS (Debian 12's nodejs is 18, postgrest-js asks for 20, and a
# nodesource node already brings its own npm). It ends with
# "client: P passed, F failed, S skipped".
if [ "$use_server" -eq 1 ] && [ "${build_ok[0]:-}" != build ]; then
  note "client" "not run (build/ failed)"
elif [ "$use_server" -eq 1 ]; then
  echo "== client tests (postgrest-js)"
  client_log="$work/client.log"
  timeout 900 python3 "$repo/tests/client/run.py" 2>&1 | tee "$client_log"
  record_runner_suite client client "$client_log"
fi

# ---- python binding -------------------------------------------------------------
# tests/bindings/python/run.py: bindings/python installed into a venv with
# pip --no-build-isolation, then pgrest.asgi.App under uvicorn compared with
# pgrest-server request by request, 200 concurrent pg_sleep on one loop,
# errors and identity hand-over (own cluster). It ends with
# "python-binding: P passed, F failed, S skipped".
if [ "$use_server" -eq 1 ] && [ "${build_ok[0]:-}" != build ]; then
  note "python-binding" "not run (build/ failed)"
elif [ "$use_server" -eq 1 ]; then
  echo "== python binding (tests/bindings/python/run.py)"
  pyb_log="$work/python-binding.log"
  timeout 900 python3 "$repo/tests/bindings/python/run.py" 2>&1 | tee "$pyb_log"
  record_runner_suite python-binding python-binding "$pyb_log"
fi

# ---- Node binding -------------------------------------------------------------------
# tests/bindings/node/run.py: bindings/node installed with npm (node-addon-api
# from the registry, compiled against build/'s libpgrest) into a temporary
# directory; requests byte-equal to pgrest-server's, the identity hand-over,
# streaming, with the handler in node:http, Express and Fastify (pinned by
# tests/bindings/node/package-lock.json), index.d.ts through tsc --strict,
# 200 concurrent pg_sleep(0.5) on one event loop, RSS over
# 100,000 requests (own cluster). Skipped without node/npm, Node's headers
# or the registry. It ends with "node: P passed, F failed, S skipped".
if [ "$use_server" -eq 1 ] && [ "${build_ok[0]:-}" != build ]; then
  note "node-binding" "not run (build/ failed)"
elif [ "$use_server" -eq 1 ]; then
  echo "== Node binding tests (bindings/node)"
  node_log="$work/node-binding.log"
  timeout 1200 python3 "$repo/tests/bindings/node/run.py" 2>&1 | tee "$node_log"
  record_runner_suite node-binding node "$node_log"
fi

# ---- cluster instances ------------------------------------------------------------
# tests/cluster/run_instances.py on a cluster of its own (scripts/cluster.sh:
# primary, replica, PgBouncer, two pgrest-servers, HAProxy): an instance
# killed or restarted behind HAProxy, the SIGTERM drain, NOTIFY reaching each
# instance, server-reuseport, the Chinook read scenarios through PgBouncer
# (transaction mode, prepared statements off). It ends with
# "cluster-instances: P passed, F failed, S skipped".
if [ "$use_server" -eq 1 ] && [ "${build_ok[0]:-}" != build ]; then
  note "cluster-instances" "not run (build/ failed)"
elif [ "$use_server" -eq 1 ]; then
  echo "== cluster instances (tests/cluster/run_instances.py on scripts/cluster.sh)"
  ci_log="$work/cluster-instances.log"
  PGREST_CLUSTER_DIR="$work/cluster" PGREST_BUILD="$repo/build" \
    timeout 600 python3 "$repo/tests/cluster/run_instances.py" 2>&1 | tee "$ci_log"
  record_runner_suite cluster-instances cluster-instances "$ci_log"
fi

# ---- limits -----------------------------------------------------------------------
# Own PostgreSQL and pgrest-server with small limits: 413/414/431, parser
# limits, slow and idle clients, the connection cap.
if [ "${build_ok[0]:-}" != build ]; then
  note "limits" "not run (build/ failed)"
else
  echo "== limits (tests/limits/run.sh)"
  llog="$work/limits.log"
  "$repo/tests/limits/run.sh" "$repo/build" 2>&1 | grep -v 'WARNING:  cast will be ignored' | tee "$llog"
  lline=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$llog" | tail -n 1)
  if [ -n "$lline" ]; then
    lpass=$(sed -E 's/^([0-9]+) passed.*/\1/' <<<"$lline")
    lfail=$(sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/' <<<"$lline")
    total_pass=$((total_pass + lpass)); total_fail=$((total_fail + lfail))
    note "limits" "$lline"
  else
    total_fail=$((total_fail + 1)); note "limits" "FAILED (no result line)"
  fi
fi

# ---- fuzz ----------------------------------------------------------------------
# A short bounded run of every libFuzzer target (tests/fuzz/README.md has the
# long runs). Needs clang and its fuzzer runtime; skipped without them.
fuzz_targets=(request grammar payload jwt config headers target import)
if [ "$use_fuzz" -eq 1 ]; then
  echo "== fuzz (tests/fuzz, ${FUZZ_SECONDS:-10} s per target)"
  "$repo/tests/fuzz/build.sh" "$repo/build-fuzz"
  frc=$?
  if [ "$frc" -eq 77 ]; then
    total_skip=$((total_skip + ${#fuzz_targets[@]})); note "fuzz" "skipped (no clang fuzzer support)"
  elif [ "$frc" -ne 0 ]; then
    total_fail=$((total_fail + 1)); note "fuzz" "FAILED (build-fuzz)"
  else
    flog="$work/fuzz.log"
    "$repo/tests/fuzz/run.sh" -b "$repo/build-fuzz" "${FUZZ_SECONDS:-10}" 2>&1 | tee "$flog"
    fok=$(grep -cE '^fuzz [a-z]+: ok ' "$flog"); fbad=$(grep -cE '^fuzz [a-z]+: (CRASH|MISSING)' "$flog")
    [ $((fok + fbad)) -eq 0 ] && fbad=1
    total_pass=$((total_pass + fok)); total_fail=$((total_fail + fbad))
    note "fuzz" "$fok passed, $fbad failed"
  fi
else
  note "fuzz" "not run (--no-fuzz)"
fi

# ---- conformance ------------------------------------------------------------------
if [ "$use_conformance" -eq 1 ] && [ "${build_ok[0]:-}" != build ]; then
  note "conformance" "not run (build/ failed)"
elif [ "$use_conformance" -eq 1 ]; then
  echo "== conformance"
  clog="$work/conformance.log"
  "$repo/tests/conformance/run.sh" 2>&1 | tee "$clog"
  crc=${PIPESTATUS[0]}
  if grep -q '^conformance: .*not found, skipped' "$clog"; then
    note "conformance" "skipped (../shared/conformance not found)"
  else
    # "conformance: P passed (L listed in passing.txt, R regressions, N newly passing)"
    cline=$(grep -E '^conformance: [0-9]+ passed \(' "$clog" | tail -n 1)
    rline=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$clog" | tail -n 1)
    if [ -n "$cline" ]; then
      cpass=$(sed -E 's/^conformance: ([0-9]+) passed.*/\1/' <<<"$cline")
      creg=$(sed -E 's/.* ([0-9]+) regressions.*/\1/' <<<"$cline")
      cskip=$(sed -nE 's/.*, ([0-9]+) skipped.*/\1/p' <<<"$rline")
      # Failing cases not in passing.txt are not implemented yet: reported,
      # not counted; a listed case that fails is a regression and counts.
      total_pass=$((total_pass + cpass)); total_fail=$((total_fail + creg))
      total_skip=$((total_skip + ${cskip:-0}))
      note "conformance" "$rline ($creg regressions against passing.txt)"
    else
      total_fail=$((total_fail + 1)); note "conformance" "FAILED (exit $crc, see output above)"
    fi
  fi
fi

echo
echo "== summary"
printf '%s\n' "${summary[@]}"
line="$total_pass passed, $total_fail failed"
[ "$total_skip" -gt 0 ] && line="$line, $total_skip skipped"
echo "$line"
[ "$total_fail" -eq 0 ]
