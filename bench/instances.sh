#!/usr/bin/env bash
# GETSingle (the shared kit's Chinook scenario) through HAProxy with two
# pgrest-server instances, beside one instance direct, on the cluster of
# scripts/cluster.sh (started here, stopped on exit), with where the CPU
# went: each run's CPU seconds per program (from /proc, every process of
# that name) and the machine's idle share. Results: bench/README.md.
#
# Usage: bench/instances.sh [-d SECS] [-c CONNS]
#   rows: direct       wrk -> pgrest-server -> primary
#         haproxy-2    wrk -> HAProxy -> 2 pgrest-servers -> primary
#         haproxy-2-pgb  the same, the servers on PgBouncer (transaction
#                      mode, db-prepared-statements = false), as cluster.sh
# Every server: db-pool 20, log-level crit, prepared statements on unless
# through PgBouncer. Environment: PGREST_SHARED (the kit), PGREST_BUILD.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
KIT="${PGREST_SHARED:-$REPO/../shared}/bench"
DUR=10 CONNS=50
while [ $# -gt 0 ]; do
  case "$1" in
    -d) DUR="$2"; shift 2 ;;
    -c) CONNS="$2"; shift 2 ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
  esac
done
[ -f "$KIT/chinook.sql" ] || { echo "bench/instances.sh: no kit at $KIT; nothing to do"; exit 0; }
command -v wrk >/dev/null || { echo "bench/instances.sh: wrk is not installed" >&2; exit 1; }

export PGREST_CLUSTER_DIR
PGREST_CLUSTER_DIR="$(mktemp -u /tmp/pgrest-bench-cluster.XXXXXX)"
WORK="$(mktemp -d /tmp/pgrest-bench-inst.XXXXXX)"
cleanup() {
  for p in "$WORK"/*.pid; do [ -f "$p" ] && kill -TERM "$(cat "$p")" 2>/dev/null || true; done
  [ -f "$WORK/haproxy.pid" ] && kill "$(cat "$WORK/haproxy.pid")" 2>/dev/null || true
  bash "$REPO/scripts/cluster.sh" down >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
bash "$REPO/scripts/cluster.sh" up >/dev/null
# shellcheck disable=SC1091
. "$PGREST_CLUSTER_DIR/endpoints.env"
psql -X -q -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres -d postgres -c "CREATE DATABASE chinook"
psql -X -q -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres -d chinook -f "$KIT/chinook.sql" >/dev/null 2>&1
psql -X -q -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres -d chinook -c "VACUUM ANALYZE" >/dev/null
# the demo cluster's own pgrest-servers and HAProxy are not measured
for n in 1 2; do kill -TERM "$(cat "$PGREST_CLUSTER_DIR/pgrest-$n.pid")"; done
kill "$(cat "$PGREST_CLUSTER_DIR/haproxy.pid")"
sleep 1

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_server() {  # NAME DB_PORT PREPARED -> prints the port
  local port admin
  port=$(free_port) admin=$(free_port)
  cat >"$WORK/$1.conf" <<CONF
db-uri = "postgresql://postgres@127.0.0.1:$2/chinook"
db-channel-uri = "postgresql://postgres@127.0.0.1:$PRIMARY_PORT/chinook"
db-prepared-statements = $3
db-schemas = "public"
db-anon-role = "postgres"
db-pool = 20
server-host = "127.0.0.1"
server-port = $port
admin-server-port = $admin
log-level = "crit"
CONF
  "$PGREST_SERVER" "$WORK/$1.conf" >/dev/null 2>"$WORK/$1.log" &
  echo $! >"$WORK/$1.pid"
  for _ in $(seq 1 100); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$admin/ready")" = 200 ] && break
    sleep 0.1
  done
  echo "$port"
}

start_haproxy() {  # PORT1 PORT2 -> prints the port
  local port
  port=$(free_port)
  cat >"$WORK/haproxy.cfg" <<CFG
global
    maxconn 4096
    pidfile $WORK/haproxy.pid
defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    retries 3
    option redispatch 1
    retry-on all-retryable-errors
frontend api
    bind 127.0.0.1:$port
    default_backend pgrest
backend pgrest
    balance roundrobin
    server a 127.0.0.1:$1
    server b 127.0.0.1:$2
CFG
  [ -f "$WORK/haproxy.pid" ] && kill "$(cat "$WORK/haproxy.pid")" 2>/dev/null && sleep 0.5
  haproxy -D -f "$WORK/haproxy.cfg"
  echo "$port"
}

# CPU seconds (user+system) over SECS of the processes of this run only
# (other work on the machine runs PostgreSQL and pgrest-servers too):
# GROUP=PID,... arguments, a group also takes the children of its pids (the
# postmaster's backends). Sampled every 0.2 s per process, so that those
# which end meanwhile (wrk itself, backends) count up to their last sample;
# "other" is all the rest of the machine, plus its idle share.
cpu_during() {  # SECS GROUP=PID[,PID...] ...
  python3 - "$@" <<'PY'
import os, sys, time
tck = os.sysconf("SC_CLK_TCK")
secs = float(sys.argv[1])
groups = {}
for a in sys.argv[2:]:
    g, _, pids = a.partition("=")
    groups[g] = set(p for p in pids.split(",") if p)
def procs():
    out = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                s = open("/proc/%s/stat" % pid).read()
            except OSError:
                continue
            f = s[s.rindex(")") + 2:].split()
            out[pid] = (f[1], (int(f[11]) + int(f[12])) / tck)
    return out
def group_of(pid, ppid):
    for g, pids in groups.items():
        if pid in pids or ppid in pids:
            return g
    return "other"
def machine():
    c = open("/proc/stat").readline().split()[1:]
    return int(c[3]) / tck, sum(map(int, c[:8])) / tck
first, last = procs(), {}
m0 = machine()
end = time.monotonic() + secs
while time.monotonic() < end:
    time.sleep(0.2)
    last.update(procs())
m1 = machine()
used = {}
me = str(os.getpid())
for pid, (ppid, t) in last.items():
    if pid == me:
        continue
    base = first[pid][1] if pid in first else 0.0
    g = group_of(pid, ppid)
    used[g] = used.get(g, 0.0) + t - base
parts = ["%s %.0f%%" % (g, 100 * used.get(g, 0) / secs) for g in list(groups) + ["other"]
         if used.get(g, 0) > 0.05]
print("  ".join(parts) + "  machine idle %.0f%%" % (100 * (m1[0] - m0[0]) / (m1[1] - m0[1])))
PY
}

run() {  # LABEL PORT SERVER_PIDS WITH_PGBOUNCER
  local postmaster groups
  postmaster=$(head -n 1 "$PGREST_CLUSTER_DIR/primary/data/postmaster.pid")
  wrk -t1 -c"$CONNS" -d"${DUR}s" -s "$KIT/scenarios/GETSingle.lua" "http://127.0.0.1:$2" \
    >"$WORK/wrk.out" 2>&1 &
  local w=$!
  groups=("wrk=$w" "pgrest-server=$3" "postgres=$postmaster")
  [ "$2" = "$a" ] || groups+=("haproxy=$(cat "$WORK/haproxy.pid")")
  [ "$4" = 1 ] && groups+=("pgbouncer=$(cat "$PGREST_CLUSTER_DIR/pgbouncer/pgbouncer.pid")")
  cpu_during "$DUR" "${groups[@]}" >"$WORK/cpu"
  wait "$w"
  rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\)/\1/p' "$WORK/wrk.out")
  non2xx=$(grep -o 'non2xx=[0-9]*' "$WORK/wrk.out" | head -1 || true)
  printf '%-14s %10s req/s  %s  %s\n' "$1" "$rps" "${non2xx:-}" "$(cat "$WORK/cpu")"
}

echo "# GETSingle, wrk -t1 -c$CONNS -d${DUR}s, $(nproc) cores; CPU per program in % of one core (other: every other program on the machine)"
a=$(start_server a "$PRIMARY_PORT" true)
wrk -t1 -c"$CONNS" -d2s -s "$KIT/scenarios/GETSingle.lua" "http://127.0.0.1:$a" >/dev/null 2>&1
run direct "$a" "$(cat "$WORK/a.pid")" 0
b=$(start_server b "$PRIMARY_PORT" true)
h=$(start_haproxy "$a" "$b")
wrk -t1 -c"$CONNS" -d2s -s "$KIT/scenarios/GETSingle.lua" "http://127.0.0.1:$h" >/dev/null 2>&1
run haproxy-2 "$h" "$(cat "$WORK/a.pid"),$(cat "$WORK/b.pid")" 0
c=$(start_server c "$PGBOUNCER_PORT" false)
d=$(start_server d "$PGBOUNCER_PORT" false)
h=$(start_haproxy "$c" "$d")
wrk -t1 -c"$CONNS" -d2s -s "$KIT/scenarios/GETSingle.lua" "http://127.0.0.1:$h" >/dev/null 2>&1
run haproxy-2-pgb "$h" "$(cat "$WORK/c.pid"),$(cat "$WORK/d.pid")" 1
