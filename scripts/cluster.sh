#!/usr/bin/env bash
# A whole scale-out deployment on this one machine, from Debian packages
# (docs/deployment.md): a PostgreSQL 15 primary, a streaming replica of it
# (pg_basebackup -R with a physical replication slot), PgBouncer in
# transaction pooling mode in front of the primary, two pgrest-servers and
# HAProxy in front of them, every one on a free loopback port, under one
# state directory. Loaded with the demo schema (demo/schema.sql, data.sql).
#
# Usage: scripts/cluster.sh up        start everything, print the endpoints
#        scripts/cluster.sh status    each component's health
#        scripts/cluster.sh down      stop everything, remove the state
#        scripts/cluster.sh start-pgrest N    start pgrest-server N (1 or 2)
#                                     again with its configuration (after a
#                                     stop or a kill; used by tests/cluster)
#        scripts/cluster.sh env       print the endpoints file (shell syntax)
#
# The pgrest-servers connect to the database through PgBouncer (db-uri,
# db-prepared-statements = false: PgBouncer 1.18 has no protocol-level
# prepared statements), LISTEN on a direct connection to the primary
# (db-channel-uri) and are given the replica as db-replica-uris (ignored by a
# server that does not know the option, as PostgREST ignores unknown keys).
# HAProxy checks each one's admin GET /ready and retries a failed connection
# or an empty response on the other (retries, option redispatch, retry-on).
# When run as root, PostgreSQL and PgBouncer (both refuse root) run as the
# postgres user; the state directory must be reachable by it.
#
# Environment: PGREST_CLUSTER_DIR (state, default /tmp/pgrest-cluster),
# PGREST_CLUSTER_PORT (first port tried, default 6100), PGREST_BUILD (build
# directory with server/pgrest-server, default <repo>/build), PG_BINDIR
# (see tests/harness/pg.sh).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pg_sh="$repo/tests/harness/pg.sh"
state="${PGREST_CLUSTER_DIR:-/tmp/pgrest-cluster}"
build="${PGREST_BUILD:-$repo/build}"
case "$build" in /*) ;; *) build="$repo/$build" ;; esac
server="$build/server/pgrest-server"
db=pgrest_demo
jwt_secret="pgrest-demo-secret-change-me-0123456789"

DEPS=(postgresql-15 postgresql-client-15 pgbouncer haproxy curl python3)

die() { echo "cluster.sh: $*" >&2; exit 1; }
say() { echo "cluster.sh: $*"; }

install_deps() {
  local p missing=()
  for p in "${DEPS[@]}"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
      missing+=("$p")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  say "installing ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q &&
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
      --no-install-recommends "${missing[@]}"
}

bindir() {
  if [ -n "${PG_BINDIR:-}" ]; then echo "$PG_BINDIR"; else echo /usr/lib/postgresql/15/bin; fi
}

# A program run as the postgres user when we are root (PostgreSQL and
# PgBouncer refuse to run as root).
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then (cd / && runuser -u postgres -- "$@"); else (cd / && "$@"); fi
}

# The first free port after the ones already handed out (in $port).
port=""
take_port() {
  port=$("$pg_sh" freeport "$((${port:-$((${PGREST_CLUSTER_PORT:-6100} - 1))} + 1))")
}

load_env() {
  [ -f "$state/endpoints.env" ] || die "no cluster in $state (run: scripts/cluster.sh up)"
  # shellcheck disable=SC1091
  . "$state/endpoints.env"
}

psql_primary() {
  "$(bindir)/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres "$@"
}

wait_http() {  # URL CODE SECONDS
  local i
  for i in $(seq 1 $(($3 * 10))); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$1" 2>/dev/null)" = "$2" ] && return 0
    sleep 0.1
  done
  return 1
}

start_primary() {
  "$pg_sh" start "$state/primary" "$PRIMARY_PORT" >/dev/null
  cat >>"$state/primary/data/postgresql.conf" <<CONF
# cluster.sh: streaming replication
wal_level = replica
max_wal_senders = 10
max_replication_slots = 10
hot_standby = on
CONF
  as_pg "$(bindir)/pg_ctl" -D "$state/primary/data" -w -t 60 restart -l "$state/primary/postgres.log" >/dev/null
  "$(bindir)/createdb" -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres "$db"
  psql_primary -d "$db" -o /dev/null -f "$repo/demo/schema.sql" -f "$repo/demo/data.sql"
  psql_primary -d postgres -o /dev/null \
    -c "SELECT pg_create_physical_replication_slot('replica1')"
}

start_replica() {
  local dir="$state/replica"
  mkdir -p "$dir/run"
  [ "$(id -u)" -eq 0 ] && chown -R postgres: "$dir"
  as_pg "$(bindir)/pg_basebackup" -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres \
    -D "$dir/data" -R -S replica1 -X stream -c fast --no-sync >"$dir/basebackup.log" 2>&1 ||
    { cat "$dir/basebackup.log" >&2; die "pg_basebackup failed"; }
  cat >>"$dir/data/postgresql.conf" <<CONF
# cluster.sh: the replica's own
port = $REPLICA_PORT
unix_socket_directories = '$dir/run'
CONF
  "$pg_sh" resume "$dir"
}

start_pgbouncer() {
  local dir="$state/pgbouncer"
  mkdir -p "$dir"
  printf '"authenticator" ""\n"postgres" ""\n' >"$dir/userlist.txt"
  cat >"$dir/pgbouncer.ini" <<INI
[databases]
* = host=127.0.0.1 port=$PRIMARY_PORT

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $PGBOUNCER_PORT
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
admin_users = postgres
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 20
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
INI
  [ "$(id -u)" -eq 0 ] && chown -R postgres: "$dir"
  as_pg pgbouncer -d -q "$dir/pgbouncer.ini"
  local i
  for i in $(seq 1 50); do
    "$(bindir)/pg_isready" -q -h 127.0.0.1 -p "$PGBOUNCER_PORT" -d "$db" && return 0
    sleep 0.1
  done
  die "PgBouncer did not start (log: $dir/pgbouncer.log)"
}

write_pgrest_conf() {  # N PORT ADMIN_PORT
  cat >"$state/pgrest-$1.conf" <<CONF
db-uri = "postgresql://authenticator@127.0.0.1:$PGBOUNCER_PORT/$db"
db-channel-uri = "postgresql://authenticator@127.0.0.1:$PRIMARY_PORT/$db"
db-replica-uris = "postgresql://authenticator@127.0.0.1:$REPLICA_PORT/$db"
db-prepared-statements = false
db-schemas = "api"
db-anon-role = "web_anon"
db-pool = 10
jwt-secret = "$jwt_secret"
server-host = "127.0.0.1"
server-port = $2
admin-server-port = $3
log-level = "error"
CONF
}

cmd_start_pgrest() {
  local n="$1" port admin
  load_env
  port="PGREST${n}_PORT" admin="PGREST${n}_ADMIN_PORT"
  [ -n "${!port:-}" ] || die "no pgrest-server $n"
  # stdout is the access log: not kept (the error log is stderr)
  nohup "$server" "$state/pgrest-$n.conf" >/dev/null 2>>"$state/pgrest-$n.log" </dev/null &
  echo $! >"$state/pgrest-$n.pid"
  wait_http "http://127.0.0.1:${!admin}/ready" 200 60 ||
    die "pgrest-server $n is not ready (log: $state/pgrest-$n.log)"
}

start_haproxy() {
  cat >"$state/haproxy.cfg" <<CFG
global
    maxconn 4096
    pidfile $state/haproxy.pid

defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    # a connection refused by a stopped instance, or a request the instance
    # closed without answering (killed, or an idle keep-alive connection it
    # closed while draining), is sent again, to the other instance
    retries 3
    option redispatch 1
    retry-on all-retryable-errors

frontend api
    bind 127.0.0.1:$HAPROXY_PORT
    default_backend pgrest

backend pgrest
    balance roundrobin
    option httpchk GET /ready
    http-check expect status 200
    default-server inter 500ms fall 1 rise 2
    server pgrest1 127.0.0.1:$PGREST1_PORT check port $PGREST1_ADMIN_PORT
    server pgrest2 127.0.0.1:$PGREST2_PORT check port $PGREST2_ADMIN_PORT

listen stats
    bind 127.0.0.1:$HAPROXY_STATS_PORT
    stats enable
    stats uri /stats
CFG
  haproxy -q -c -f "$state/haproxy.cfg" || die "invalid $state/haproxy.cfg"
  haproxy -D -f "$state/haproxy.cfg"
  wait_http "http://127.0.0.1:$HAPROXY_PORT/artists?limit=1" 200 20 ||
    die "HAProxy does not reach the pgrest-servers"
}

cmd_up() {
  [ ! -f "$state/endpoints.env" ] || die "a cluster is up in $state (scripts/cluster.sh down first)"
  install_deps || die "could not install ${DEPS[*]}"
  [ -x "$server" ] || { [ -f "$build/build.ninja" ] || meson setup "$build" >/dev/null; ninja -C "$build" >/dev/null; }
  [ -x "$server" ] || die "$server was not built"
  mkdir -p "$state"
  chmod 755 "$state"
  local primary replica pgb p1 a1 p2 a2 hp hs
  take_port; primary=$port; take_port; replica=$port; take_port; pgb=$port
  take_port; p1=$port; take_port; a1=$port; take_port; p2=$port; take_port; a2=$port
  take_port; hp=$port; take_port; hs=$port
  cat >"$state/endpoints.env" <<ENV
CLUSTER_DIR=$state
PRIMARY_PORT=$primary
REPLICA_PORT=$replica
PGBOUNCER_PORT=$pgb
PGREST1_PORT=$p1
PGREST1_ADMIN_PORT=$a1
PGREST2_PORT=$p2
PGREST2_ADMIN_PORT=$a2
HAPROXY_PORT=$hp
HAPROXY_STATS_PORT=$hs
DB_NAME=$db
JWT_SECRET=$jwt_secret
PGREST_SERVER=$server
ENV
  load_env
  trap 'echo "cluster.sh: up failed; stopping what started" >&2; cmd_down >/dev/null 2>&1' ERR
  say "primary on $PRIMARY_PORT"; start_primary
  say "replica on $REPLICA_PORT"; start_replica
  say "PgBouncer on $PGBOUNCER_PORT"; start_pgbouncer
  write_pgrest_conf 1 "$PGREST1_PORT" "$PGREST1_ADMIN_PORT"
  write_pgrest_conf 2 "$PGREST2_PORT" "$PGREST2_ADMIN_PORT"
  say "pgrest-servers on $PGREST1_PORT and $PGREST2_PORT"
  cmd_start_pgrest 1
  cmd_start_pgrest 2
  say "HAProxy on $HAPROXY_PORT"; start_haproxy
  trap - ERR
  cat <<MSG

pgrest cluster up (state in $state):
  API (HAProxy)        http://127.0.0.1:$HAPROXY_PORT/
  HAProxy stats        http://127.0.0.1:$HAPROXY_STATS_PORT/stats
  pgrest-server 1      http://127.0.0.1:$PGREST1_PORT/   admin http://127.0.0.1:$PGREST1_ADMIN_PORT/ready
  pgrest-server 2      http://127.0.0.1:$PGREST2_PORT/   admin http://127.0.0.1:$PGREST2_ADMIN_PORT/ready
  PgBouncer            postgresql://authenticator@127.0.0.1:$PGBOUNCER_PORT/$db  (transaction pooling)
  primary              postgresql://postgres@127.0.0.1:$PRIMARY_PORT/$db
  replica              postgresql://postgres@127.0.0.1:$REPLICA_PORT/$db  (slot replica1)
  try: curl 'http://127.0.0.1:$HAPROXY_PORT/albums?select=title,artists(name)&limit=3'
MSG
}

stop_pid() {  # PIDFILE
  local pid
  [ -f "$1" ] || return 0
  pid=$(cat "$1")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$1"
}

cmd_down() {
  [ -d "$state" ] || { say "nothing in $state"; return 0; }
  stop_pid "$state/haproxy.pid"
  stop_pid "$state/pgrest-1.pid"
  stop_pid "$state/pgrest-2.pid"
  stop_pid "$state/pgbouncer/pgbouncer.pid"
  "$pg_sh" stop "$state/replica" || true
  "$pg_sh" stop "$state/primary" || true
  rm -rf "$state"
  say "stopped; $state removed"
}

row() { printf '  %-18s %-6s %s\n' "$1" "$2" "$3"; }

pg_health() {  # NAME PORT
  local rec
  if rec=$("$(bindir)/psql" -X -At -h 127.0.0.1 -p "$2" -U postgres -d postgres \
             -c "SELECT pg_is_in_recovery()" 2>/dev/null); then
    row "$1" up "port $2, in recovery: $rec"
  else row "$1" DOWN "port $2"; fi
}

cmd_status() {
  load_env
  echo "pgrest cluster in $state:"
  pg_health primary "$PRIMARY_PORT"
  pg_health replica "$REPLICA_PORT"
  local lag
  lag=$(psql_primary -At -d postgres -c "SELECT coalesce(state || ', replay lag ' ||
          coalesce(replay_lag::text, '0'), 'not streaming') FROM pg_stat_replication
          RIGHT JOIN (SELECT 1) one ON true LIMIT 1" 2>/dev/null || echo "unknown")
  row replication "" "$lag"
  if "$(bindir)/pg_isready" -q -h 127.0.0.1 -p "$PGBOUNCER_PORT" -d "$db"; then
    row pgbouncer up "port $PGBOUNCER_PORT, pool_mode transaction"
  else row pgbouncer DOWN "port $PGBOUNCER_PORT"; fi
  local n port admin code
  for n in 1 2; do
    port="PGREST${n}_PORT" admin="PGREST${n}_ADMIN_PORT"
    code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${!admin}/ready" 2>/dev/null || true)
    [ "$code" = 200 ] && row "pgrest-server $n" up "port ${!port}, /ready 200" ||
      row "pgrest-server $n" DOWN "port ${!port}, /ready ${code:-refused}"
  done
  local csv
  if csv=$(curl -s "http://127.0.0.1:$HAPROXY_STATS_PORT/stats;csv" 2>/dev/null) && [ -n "$csv" ]; then
    row haproxy up "port $HAPROXY_PORT; $(awk -F, '$1 == "pgrest" && $2 != "BACKEND" &&
      $2 != "FRONTEND" {printf "%s %s  ", $2, $18}' <<<"$csv")"
  else row haproxy DOWN "port $HAPROXY_PORT"; fi
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  start-pgrest) [ $# -eq 2 ] || die "usage: cluster.sh start-pgrest N"; cmd_start_pgrest "$2" ;;
  env) load_env; cat "$state/endpoints.env" ;;
  *) sed -n '2,31p' "$0" >&2; exit 2 ;;
esac
