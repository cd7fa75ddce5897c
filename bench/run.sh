#!/usr/bin/env bash
# pgrest benchmark: PostgREST's published scenarios (Chinook) against
# pgrest-server, compared side by side with what the database alone can do.
#
# Usage: bench/run.sh [options] [scenario ...]
#   -d SECS        duration of every wrk / pgbench run (default 10)
#   -r ROUNDS      alternating rounds per scenario (default 3)
#   -c CONNS       connections for wrk and pgbench (default 50)
#   -w SECS        wrk warm-up before the first round of a scenario (default 2; 0 = none)
#   -q, --quick    smoke test: -d 3 -r 1 -w 0
#   --pipe         also run the kit's .pipe.sql (the .pgrst statements in one
#                  pipeline: what pgrest sends, the database-side ceiling)
#   --no-inproc    skip the in-process benchmark (build/bench/pgrest-bench-inproc)
#   --inproc-only  skip the HTTP / pgbench runs
#   --peer CMD     also run every scenario's wrk against another server, the
#                  "peer" (e.g. 'node bench/peers/node/server.js'): CMD is run
#                  by bash from the current directory, in a process group of
#                  its own, with PORT (a free loopback port to listen on, host
#                  127.0.0.1), DATABASE_URL (postgresql:///chinook?host=SOCKDIR&
#                  port=N&user=postgres) and libpq's PGHOST PGPORT PGUSER
#                  PGDATABASE for the same database; it must answer the nine
#                  scenarios' requests (GET /artist?select=*&artist_id=eq.1 must
#                  give 200 before the runs start). Each round then runs wrk
#                  against pgrest-server and right after it against the peer;
#                  the table gets the peer's req/s, non-2xx, CPU µs per request
#                  of its process tree and of PostgreSQL, and pgrest ÷ peer req/s
#   --keep         leave the work directory (logs, config, snapshot) behind
#   --serve        set up PostgreSQL + pgrest-server, print URL and CONNINFO,
#                  and wait until interrupted (for profiling by hand)
#   scenario ...   subset of: GETSingle GETSingleEmbed GETAllEmbed POSTSingle
#                  POSTBulk PATCHSingle RPCSimple RPCGETSingle RPCGETSingleEmbed
#
# What it does: finds the shared benchmark kit ($PGREST_SHARED/bench, else
# <repo>/../shared/bench; exits 0 with a message if there is none), starts a
# throwaway PostgreSQL with tests/harness/pg.sh, loads chinook.sql and runs
# VACUUM ANALYZE, builds (meson release build in build/ if missing) and starts
# build/server/pgrest-server (db-anon-role=postgres, db-schemas=public,
# db-pool=20 or BENCH_DB_POOL, log-level=crit, loopback only). For every scenario it then
# alternates, ROUNDS times: wrk -t1 -cCONNS with the kit's scenario .lua, then
# pgbench -n -M prepared -j1 -cCONNS with the kit's .pgrst.sql (the
# transaction PostgREST sends) and .min.sql (the least database work giving
# the same body). Rows inserted by write scenarios are deleted after every
# run. The table shows medians over the rounds: req/s, latency p50/p99/min,
# non-2xx (summed), pgbench tps and the ratios req/s : tps.
# Everything started here is stopped on exit.
#
# Environment: PGREST_SHARED (kit location), BUILD_DIR (default <repo>/build),
# BENCH_TMP (parent of the work directory, default /tmp), PG_BINDIR (pg.sh),
# BENCH_DB_POOL (the server's db-pool, default 20: docs/deployment.md's pool
# sizing runs change it).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
ALL="GETSingle GETSingleEmbed GETAllEmbed POSTSingle POSTBulk PATCHSingle RPCSimple RPCGETSingle RPCGETSingleEmbed"

usage() { sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

DUR=10; ROUNDS=3; CONNS=50; WARM=2; PIPE=0; INPROC=1; HTTP=1; KEEP=0; SERVE=0; PEER=""; SCEN=()
while [ $# -gt 0 ]; do
  case "$1" in
    -d) DUR="$2"; shift 2;;
    -r) ROUNDS="$2"; shift 2;;
    -c) CONNS="$2"; shift 2;;
    -w) WARM="$2"; shift 2;;
    -q|--quick) DUR=3; ROUNDS=1; WARM=0; shift;;
    --pipe) PIPE=1; shift;;
    --no-inproc) INPROC=0; shift;;
    --inproc-only) HTTP=0; shift;;
    --keep) KEEP=1; shift;;
    --peer) PEER="${2:?--peer needs a command}"; shift 2;;
    --serve) SERVE=1; HTTP=1; shift;;
    -h|--help) usage 0;;
    -*) echo "unknown option $1" >&2; usage 1;;
    *) SCEN+=("$1"); shift;;
  esac
done
[ ${#SCEN[@]} -gt 0 ] || read -r -a SCEN <<< "$ALL"
for s in "${SCEN[@]}"; do
  case " $ALL " in *" $s "*) ;; *) echo "unknown scenario: $s (known: $ALL)" >&2; exit 1;; esac
done

# ---------------------------------------------------------------- the kit
if [ -n "${PGREST_SHARED:-}" ]; then KIT="$PGREST_SHARED/bench"; else KIT="$REPO/../shared/bench"; fi
if [ ! -f "$KIT/chinook.sql" ] || [ ! -d "$KIT/scenarios" ] || [ ! -d "$KIT/pgbench" ]; then
  echo "bench/run.sh: benchmark kit not found at $KIT (set PGREST_SHARED to the folder holding bench/); nothing to do."
  exit 0
fi
KIT="$(cd "$KIT" && pwd)"

need() { command -v "$1" >/dev/null || { echo "bench/run.sh: $1 not found" >&2; exit 1; }; }
need psql; need curl; need python3
if [ "$HTTP" = 1 ]; then need wrk; need pgbench; fi

# ---------------------------------------------------------------- build
BUILD="${BUILD_DIR:-$REPO/build}"
if [ ! -x "$BUILD/server/pgrest-server" ] || { [ "$INPROC" = 1 ] && [ ! -x "$BUILD/bench/pgrest-bench-inproc" ]; }; then
  if [ ! -f "$BUILD/build.ninja" ]; then
    echo "# building: meson setup $BUILD --buildtype=release" >&2
    meson setup "$BUILD" "$REPO" --buildtype=release >/dev/null
  fi
  ninja -C "$BUILD" >/dev/null
fi
bt="$(meson introspect --buildoptions "$BUILD" 2>/dev/null | python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="buildtype"))' 2>/dev/null || echo unknown)"
[ "$bt" = release ] || echo "# WARNING: $BUILD is a '$bt' build, not release (meson configure $BUILD --buildtype=release)" >&2

# ---------------------------------------------------------------- database
WORK="$(mktemp -d "${BENCH_TMP:-/tmp}/pgrest-bench.XXXXXX")"
chmod 755 "$WORK"
PGSH="$REPO/tests/harness/pg.sh"
SRV_PID=""; PEER_PID=""
cleanup() {
  set +e
  if [ -n "$SRV_PID" ]; then kill "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null; fi
  # the peer runs in a process group of its own (setsid): stop all of it
  if [ -n "$PEER_PID" ]; then kill -TERM -- "-$PEER_PID" 2>/dev/null; wait "$PEER_PID" 2>/dev/null; fi
  "$PGSH" stop "$WORK/pg" >/dev/null 2>&1
  if [ "$KEEP" = 1 ]; then echo "# work directory kept: $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PGPORT="$("$PGSH" freeport 5600)"
"$PGSH" start "$WORK/pg" "$PGPORT" >/dev/null
SOCK="$("$PGSH" sockdir "$WORK/pg")"
CONNINFO="host=$SOCK port=$PGPORT user=postgres dbname=chinook"
psql -q -h "$SOCK" -p "$PGPORT" -U postgres -d postgres -c 'CREATE DATABASE chinook' >/dev/null
echo "# loading chinook.sql into PostgreSQL on port $PGPORT ..." >&2
psql -q -h "$SOCK" -p "$PGPORT" -U postgres -d chinook -f "$KIT/chinook.sql" >"$WORK/load.log" 2>&1 ||
  { tail -5 "$WORK/load.log" >&2; echo "bench/run.sh: loading chinook.sql failed" >&2; exit 1; }
psql -q -h "$SOCK" -p "$PGPORT" -U postgres -d chinook -c 'VACUUM ANALYZE' >/dev/null
psql_c() { psql -q -X -h "$SOCK" -p "$PGPORT" -U postgres -d chinook -c "$1" >/dev/null 2>&1; }
cleanup_rows() { psql_c "DELETE FROM employee WHERE title = 'Load Tester'" || echo "  (cleanup of employee rows failed)" >&2; }

# ---------------------------------------------------------------- server
if [ "$HTTP" = 1 ]; then
  SRV_PORT="$("$PGSH" freeport 3100)"
  cat >"$WORK/pgrest.conf" <<CONF
# written by bench/run.sh: the published runs' settings
db-uri = "postgresql:///chinook?host=$SOCK&port=$PGPORT&user=postgres"
db-schemas = "public"
db-anon-role = "postgres"
db-pool = "${BENCH_DB_POOL:-20}"
server-host = "127.0.0.1"
server-port = "$SRV_PORT"
log-level = "crit"
CONF
  "$BUILD/server/pgrest-server" "$WORK/pgrest.conf" >"$WORK/server.log" 2>&1 &
  SRV_PID=$!
  URL="http://127.0.0.1:$SRV_PORT"
  for _ in $(seq 1 100); do
    code="$(curl -s -o /dev/null -w '%{http_code}' "$URL/artist?limit=1" || true)"
    [ "$code" = 200 ] && break
    kill -0 "$SRV_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; echo "bench/run.sh: pgrest-server exited" >&2; exit 1; }
    sleep 0.1
  done
  [ "$code" = 200 ] || { echo "bench/run.sh: pgrest-server not answering on $URL (last status $code)" >&2; exit 1; }

  if [ -n "$PEER" ]; then
    need setsid
    PEER_PORT="$("$PGSH" freeport "$((SRV_PORT + 1))")"
    env PORT="$PEER_PORT" DATABASE_URL="postgresql:///chinook?host=$SOCK&port=$PGPORT&user=postgres" \
      PGHOST="$SOCK" PGPORT="$PGPORT" PGUSER=postgres PGDATABASE=chinook \
      setsid bash -c "exec $PEER" >"$WORK/peer.log" 2>&1 &
    PEER_PID=$!
    PEER_URL="http://127.0.0.1:$PEER_PORT"
    for _ in $(seq 1 150); do
      code="$(curl -s -o /dev/null -w '%{http_code}' "$PEER_URL/artist?select=*&artist_id=eq.1" || true)"
      [ "$code" = 200 ] && break
      kill -0 "$PEER_PID" 2>/dev/null || { cat "$WORK/peer.log" >&2; echo "bench/run.sh: peer exited: $PEER" >&2; exit 1; }
      sleep 0.1
    done
    [ "$code" = 200 ] || { tail -5 "$WORK/peer.log" >&2; echo "bench/run.sh: peer not answering on $PEER_URL (last status $code): $PEER" >&2; exit 1; }
  fi
fi

if [ "$SERVE" = 1 ]; then
  echo "URL=$URL"
  echo "CONNINFO='$CONNINFO'"
  echo "SERVER_PID=$SRV_PID"
  [ -z "$PEER" ] || { echo "PEER_URL=$PEER_URL"; echo "PEER_PID=$PEER_PID"; }
  echo "WORK=$WORK"
  echo "# serving; interrupt (Ctrl-C / SIGTERM) to stop everything"
  while kill -0 "$SRV_PID" 2>/dev/null && { [ -z "$PEER" ] || kill -0 "$PEER_PID" 2>/dev/null; }; do sleep 1; done
  echo "bench/run.sh: pgrest-server or the peer exited" >&2; exit 1
fi

# median of the numbers on stdin (one per line; non-numbers ignored)
median() { grep -E '^[0-9.eE+-]+$' | sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# wrk with the kit's scenario script, wrapped to report the minimum latency too
wrap_lua() {
  cat >"$WORK/$1.lua" <<LUA
-- bench/run.sh wrapper: the kit's scenario, plus min latency in done()
dofile("$KIT/scenarios/$1.lua")
local kit_done = done
function done(summary, latency, requests)
  kit_done(summary, latency, requests)
  io.write(string.format("BENCHX min_ms=%.3f\n", latency.min / 1000))
end
LUA
}

# CPU clock ticks (user + system) used so far by pgrest-server, and by
# PostgreSQL: the postmaster with the children it reaped, plus every live
# child (backends); /proc/PID/stat fields 14-17 (counted after the comm).
CLK_TCK="$(getconf CLK_TCK)"
proc_ticks() { # pid [with-children] -> ticks
  awk -v kids="${2:-0}" '{ sub(/^.*\) /, ""); t = $12 + $13; if (kids) t += $14 + $15; print t }' "/proc/$1/stat" 2>/dev/null || echo 0
}
pg_ticks() {
  local pm total=0 kid
  pm="$(head -1 "$WORK/pg/data/postmaster.pid")"
  total="$(proc_ticks "$pm" 1)"
  for kid in $(cat "/proc/$pm/task/$pm/children" 2>/dev/null); do
    total=$((total + $(proc_ticks "$kid")))
  done
  echo "$total"
}
# a process tree: the process and the children it reaped, plus its live
# descendants (a peer may be a shell, npm, or a cluster of workers)
tree_ticks() { # pid -> ticks
  local total kid
  total="$(proc_ticks "$1" 1)"
  for kid in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
    total=$((total + $(tree_ticks "$kid")))
  done
  echo "$total"
}
srv_ticks() { proc_ticks "$SRV_PID"; }
peer_ticks() { tree_ticks "$PEER_PID"; }
cpu_snapshot() { echo "$("$1") $(pg_ticks)"; }

run_wrk() { # scenario [url ticks-fn] -> one line "rps p50 p99 min non2xx sockerr requests first srv_us pg_us" (or FAIL)
  local out line mn before after url="${2:-$URL}" ticks="${3:-srv_ticks}"
  before="$(cpu_snapshot "$ticks")"
  out="$(wrk -t1 -c"$CONNS" -d"${DUR}s" --timeout 30s --latency -s "$WORK/$1.lua" "$url" 2>&1)" || true
  after="$(cpu_snapshot "$ticks")"
  line="$(printf '%s\n' "$out" | grep '^BENCH scenario=' | head -1)"
  if [ -z "$line" ]; then printf '%s\n' "$out" | tail -3 >&2; echo FAIL; return; fi
  printf '%s\n' "$out" | grep '^BENCH WARNING' | sed 's/^/  /' | cut -c1-300 >&2 || true
  mn="$(printf '%s\n' "$out" | sed -n 's/^BENCHX min_ms=//p' | head -1)"
  # first unexpected response, as "STATUS/CODE" (e.g. 400/PGRST200), else "-"
  first="$(printf '%s\n' "$out" | sed -n 's/^BENCH WARNING.*first: \([0-9]*\) .*"code":"\([^"]*\)".*/\1\/\2/p; s/^BENCH WARNING.*first: \([0-9]*\).*/\1/p' | head -1)"
  printf '%s\n' "$line" | awk -v mn="${mn:-nan}" -v first="${first:--}" -v before="$before" -v after="$after" -v hz="$CLK_TCK" '
    { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
      split(before, b, " "); split(after, a, " "); n = v["requests"] > 0 ? v["requests"] : 1
      printf "%s %s %s %s %d %d %d %s %.1f %.1f\n", v["rps"], v["p50_ms"], v["p99_ms"], mn, v["non2xx"], v["sockerr"] + v["timeouts"], v["requests"], first,
             (a[1] - b[1]) * 1e6 / hz / n, (a[2] - b[2]) * 1e6 / hz / n }'
}

run_pgbench() { # file -> tps (or FAIL)
  local out tps failed
  out="$(pgbench -n -M prepared -j 1 -c "$CONNS" -T "$DUR" -f "$1" "$CONNINFO" 2>&1)" || { printf '%s\n' "$out" | tail -3 >&2; echo FAIL; return; }
  failed="$(printf '%s\n' "$out" | awk -F': ' '/number of failed transactions/ {split($2, a, " "); print a[1]}')"
  [ -z "$failed" ] || [ "$failed" = 0 ] || echo "  WARNING $(basename "$1"): $failed failed transactions" >&2
  tps="$(printf '%s\n' "$out" | awk '/^tps = / {print $3; exit}')"
  echo "${tps:-FAIL}"
}

is_write() { case "$1" in POST*) return 0;; *) return 1;; esac; }

# a server that died mid-run ends the benchmark with its log's tail (kill -0
# would not do: our dead child stays a zombie until waited for)
alive() { local st; st="$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null)"; [ -n "$st" ] && [ "$st" != Z ]; }
check_alive() { # pid name log scenario
  alive "$1" && return 0
  tail -20 "$3" >&2
  echo "bench/run.sh: $2 exited during $4 (log above, from $3)" >&2
  exit 1
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else printf "n/a" }'; }

if [ "$HTTP" = 1 ]; then
  echo "# pgrest $(git -C "$REPO" describe --always --dirty 2>/dev/null || echo '?') ($bt build), $(nproc) CPUs, $(date -u +%FT%TZ)"
  echo "# alternating x$ROUNDS: wrk -t1 -c$CONNS -d${DUR}s | pgbench -n -M prepared -j1 -c$CONNS -T$DUR .pgrst.sql | .min.sql$([ "$PIPE" = 1 ] && echo ' | .pipe.sql')"
  echo "# medians over the rounds; latencies in ms; ratios = pgrest req/s : pgbench tps"
  [ -z "$PEER" ] || echo "# peer (wrk right after pgrest's in every round): $PEER; psrv_us/ppg_us = its CPU µs per request and PostgreSQL's; /peer = pgrest req/s : peer req/s"
  hdr="$(printf "%-18s %9s %8s %8s %8s %7s %10s %10s" scenario "req/s" p50 p99 min non2xx pgrst_tps min_tps)"
  [ "$PIPE" = 1 ] && hdr+="$(printf " %10s" pipe_tps)"
  hdr+="$(printf " %8s %8s" "/pgrst" "/min")"
  [ "$PIPE" = 1 ] && hdr+="$(printf " %8s" "/pipe")"
  hdr+="$(printf " %7s %7s %7s" srv_us pg_us srv/pg)"
  [ -n "$PEER" ] && hdr+="$(printf " %10s %10s %8s %8s %8s" "peer_req/s" peer_n2xx psrv_us ppg_us "/peer")"
  hdr+="  notes"
  echo "$hdr"
  for s in "${SCEN[@]}"; do
    wrap_lua "$s"
    if [ "$WARM" != 0 ]; then
      wrk -t1 -c"$CONNS" -d"${WARM}s" --timeout 30s -s "$WORK/$s.lua" "$URL" >/dev/null 2>&1 || true
      is_write "$s" && cleanup_rows
      if [ -n "$PEER" ]; then
        wrk -t1 -c"$CONNS" -d"${WARM}s" --timeout 30s -s "$WORK/$s.lua" "$PEER_URL" >/dev/null 2>&1 || true
        is_write "$s" && cleanup_rows
      fi
    fi
    W=(); P=(); N=(); Q=(); X=()
    for ((i = 1; i <= ROUNDS; i++)); do
      W+=("$(run_wrk "$s")");               is_write "$s" && cleanup_rows
      check_alive "$SRV_PID" pgrest-server "$WORK/server.log" "$s"
      if [ -n "$PEER" ]; then
        X+=("$(run_wrk "$s" "$PEER_URL" peer_ticks)"); is_write "$s" && cleanup_rows
        check_alive "$PEER_PID" "the peer" "$WORK/peer.log" "$s"
      fi
      P+=("$(run_pgbench "$KIT/pgbench/$s.pgrst.sql")"); is_write "$s" && cleanup_rows
      N+=("$(run_pgbench "$KIT/pgbench/$s.min.sql")");   is_write "$s" && cleanup_rows
      if [ "$PIPE" = 1 ]; then Q+=("$(run_pgbench "$KIT/pgbench/$s.pipe.sql")"); is_write "$s" && cleanup_rows; fi
    done
    col() { printf '%s\n' "${W[@]}" | grep -v FAIL | awk -v c="$1" '{print $c}'; }
    rps="$(col 1 | median)"; p50="$(col 2 | median)"; p99="$(col 3 | median)"; mn="$(col 4 | median)"
    bad="$(col 5 | awk '{s += $1} END {print s + 0}')"; errs="$(col 6 | awk '{s += $1} END {print s + 0}')"
    reqs="$(col 7 | awk '{s += $1} END {print s + 0}')"; first="$(col 8 | grep -v '^-$' | head -1 || true)"
    p="$(printf '%s\n' "${P[@]}" | median)"; n="$(printf '%s\n' "${N[@]}" | median)"
    row="$(printf "%-18s %9.0f %8.2f %8.2f %8.2f %7d %10.0f %10.0f" "$s" "$rps" "$p50" "$p99" "$mn" "$bad" "$p" "$n")"
    if [ "$PIPE" = 1 ]; then q="$(printf '%s\n' "${Q[@]}" | median)"; row+="$(printf " %10.0f" "$q")"; fi
    # a scenario answered with errors is not comparable: no ratios, say why
    okrun=1; [ "$bad" -gt 0 ] && [ "$((bad * 100))" -gt "$reqs" ] && okrun=0
    if [ "$okrun" = 1 ]; then rp="$(ratio "$rps" "$p")"; rn="$(ratio "$rps" "$n")"; rq="$(ratio "$rps" "${q:-}")"; else rp=-; rn=-; rq=-; fi
    row+="$(printf " %8s %8s" "$rp" "$rn")"
    [ "$PIPE" = 1 ] && row+="$(printf " %8s" "$rq")"
    su="$(col 9 | median)"; pu="$(col 10 | median)"
    row+="$(printf " %7s %7s %7s" "$su" "$pu" "$(ratio "$su" "$pu")")"
    if [ -n "$PEER" ]; then
      xcol() { printf '%s\n' "${X[@]}" | grep -v FAIL | awk -v c="$1" '{print $c}'; }
      xrps="$(xcol 1 | median)"; xbad="$(xcol 5 | awk '{s += $1} END {print s + 0}')"
      xreqs="$(xcol 7 | awk '{s += $1} END {print s + 0}')"; xfirst="$(xcol 8 | grep -v '^-$' | head -1 || true)"
      xok=1; [ "$xbad" -gt 0 ] && [ "$((xbad * 100))" -gt "$xreqs" ] && xok=0
      if [ "$okrun" = 1 ] && [ "$xok" = 1 ]; then rx="$(ratio "$rps" "$xrps")"; else rx=-; fi
      row+="$(printf " %10.0f %10d %8s %8s %8s" "$xrps" "$xbad" "$(xcol 9 | median)" "$(xcol 10 | median)" "$rx")"
    fi
    [ "$bad" -gt 0 ] && row+="  non-2xx ${first:-?} ($bad of $reqs)"
    [ -n "$PEER" ] && [ "$xbad" -gt 0 ] && row+="  peer non-2xx ${xfirst:-?} ($xbad of $xreqs)"
    echo "$row"
    echo "  runs: wrk=[$(col 1 | tr '\n' ' ' | sed 's/ $//')] srv_us=[$(col 9 | tr '\n' ' ' | sed 's/ $//')] pg_us=[$(col 10 | tr '\n' ' ' | sed 's/ $//')] pgrst=[${P[*]}] min=[${N[*]}]${Q[*]:+ pipe=[${Q[*]}]}${X[*]:+ peer=[$(xcol 1 | tr '\n' ' ' | sed 's/ $//')] psrv_us=[$(xcol 9 | tr '\n' ' ' | sed 's/ $//')] ppg_us=[$(xcol 10 | tr '\n' ' ' | sed 's/ $//')]}$([ "$errs" != 0 ] && echo " sock_err/timeouts=$errs")" >&2
  done
fi

# ---------------------------------------------------------------- in-process
if [ "$INPROC" = 1 ]; then
  if [ -x "$BUILD/bench/pgrest-bench-inproc" ]; then
    echo
    "$BUILD/bench/pgrest-bench-inproc" --db "postgresql:///chinook?host=$SOCK&port=$PGPORT&user=postgres" \
      --snapshot "$WORK/chinook-schema.json" --seconds "$(( DUR < 5 ? DUR : 5 ))" "${SCEN[@]}"
    cleanup_rows
  else
    echo "# in-process benchmark not built ($BUILD/bench/pgrest-bench-inproc)" >&2
  fi
fi
