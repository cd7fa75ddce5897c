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
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
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
  pids+=($!)
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

# CPU seconds (user+system) of every process, by program name.
cpu_snapshot() {
  python3 - <<'PY'
import os
tck = os.sysconf("SC_CLK_TCK")
by = {}
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        s = open("/proc/%s/stat" % pid).read()
    except OSError:
        continue
    name = s[s.index("(") + 1:s.rindex(")")]
    f = s[s.rindex(")") + 2:].split()
    by[name] = by.get(name, 0) + (int(f[11]) + int(f[12])) / tck
cpu = open("/proc/stat").readline().split()[1:]
print("machine_idle %s machine_total %s" % (int(cpu[3]) / tck, sum(map(int, cpu[:8])) / tck))
for k, v in by.items():
    print("%s %s" % (k.replace(" ", "_"), v))
PY
}

cpu_split() {  # BEFORE AFTER SECS
  python3 - "$1" "$2" "$3" <<'PY'
import sys
def read(p):
    return {l.split()[0]: float(l.split()[1]) for l in open(p) if l.strip() and len(l.split()) == 2}
b, a, secs = read(sys.argv[1]), read(sys.argv[2]), float(sys.argv[3])
# the machine line holds two values
m = {}
for p, d in ((sys.argv[1], "b"), (sys.argv[2], "a")):
    f = open(p).readline().split()
    m[d] = (float(f[1]), float(f[3]))
idle = (m["a"][0] - m["b"][0]) / (m["a"][1] - m["b"][1])
groups = {"wrk": ["wrk"], "haproxy": ["haproxy"], "pgrest-server": ["pgrest-server"],
          "postgres": ["postgres"], "pgbouncer": ["pgbouncer"]}
parts = []
for g, names in groups.items():
    used = sum(a.get(n, 0) - b.get(n, 0) for n in names)
    if used > 0.05:
        parts.append("%s %.0f%%" % (g, 100 * used / secs))
print("  ".join(parts) + "  (of one core; machine idle %.0f%%)" % (100 * idle))
PY
}

run() {  # LABEL PORT
  cpu_snapshot >"$WORK/before"
  out=$(wrk -t1 -c"$CONNS" -d"${DUR}s" -s "$KIT/scenarios/GETSingle.lua" "http://127.0.0.1:$2" 2>&1)
  cpu_snapshot >"$WORK/after"
  rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\)/\1/p' <<<"$out")
  non2xx=$(grep -o 'non2xx=[0-9]*' <<<"$out" | head -1 || true)
  printf '%-14s %10s req/s  %s  %s\n' "$1" "$rps" "${non2xx:-}" "$(cpu_split "$WORK/before" "$WORK/after" "$DUR")"
}

echo "# GETSingle, wrk -t1 -c$CONNS -d${DUR}s, $(nproc) cores; CPU per program in % of one core"
a=$(start_server a "$PRIMARY_PORT" true)
wrk -t1 -c"$CONNS" -d2s -s "$KIT/scenarios/GETSingle.lua" "http://127.0.0.1:$a" >/dev/null 2>&1
run direct "$a"
b=$(start_server b "$PRIMARY_PORT" true)
h=$(start_haproxy "$a" "$b")
wrk -t1 -c"$CONNS" -d2s -s "$KIT/scenarios/GETSingle.lua" "http://127.0.0.1:$h" >/dev/null 2>&1
run haproxy-2 "$h"
c=$(start_server c "$PGBOUNCER_PORT" false)
d=$(start_server d "$PGBOUNCER_PORT" false)
h=$(start_haproxy "$c" "$d")
wrk -t1 -c"$CONNS" -d2s -s "$KIT/scenarios/GETSingle.lua" "http://127.0.0.1:$h" >/dev/null 2>&1
run haproxy-2-pgb "$h"
