#!/usr/bin/env bash
# Throwaway PostgreSQL clusters for tests, conformance runs and the demo.
#
# Usage:
#   pg.sh start DIR PORT   initdb a fresh cluster in DIR/data and start it on
#                          PORT (TCP on localhost) with its unix socket in
#                          DIR/run; waits until it accepts connections.
#   pg.sh stop DIR         stop the cluster in DIR (no error if none runs).
#   pg.sh kill DIR         stop it abruptly (pg_ctl -m immediate: backends
#                          die without cleanup, like a crash).
#   pg.sh resume DIR       start the cluster in DIR again after stop/kill,
#                          keeping its data (port from its postgresql.conf).
#   pg.sh sockdir DIR      print the socket directory (DIR/run).
#   pg.sh freeport [START] print the first free TCP port >= START (default 5450).
#
# Layout of DIR: data/ (PGDATA), run/ (socket dir), postgres.log.
# `start` always begins from scratch: a server a previous run left running in
# DIR is stopped and DIR/data is wiped, so the cluster is clean every time.
#
# PostgreSQL refuses to run as root: when run as root, the server programs run
# as the `postgres` user (Debian's package creates it) and DIR is chowned to
# it; DIR and its parents must be reachable by that user (use /tmp when the
# work tree is below a private home directory).  The cluster is initialised
# like PostgREST's test harness does: TZ=UTC, --no-locale, UTF8, superuser
# `postgres`, trust authentication.  Durability is off (fsync=off ...): the
# data is disposable.
#
# Environment: PG_BINDIR (default: /usr/lib/postgresql/15/bin, else the newest
# /usr/lib/postgresql/*/bin, else PATH), PG_USER_OS (default: postgres).
set -euo pipefail

die() { echo "pg.sh: $*" >&2; exit 1; }

find_bindir() {
  if [ -n "${PG_BINDIR:-}" ]; then echo "$PG_BINDIR"; return; fi
  if [ -x /usr/lib/postgresql/15/bin/initdb ]; then echo /usr/lib/postgresql/15/bin; return; fi
  local d
  d=$(find /usr/lib/postgresql -maxdepth 3 -path '*/bin/initdb' 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$d" ]; then dirname "$d"; return; fi
  command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return; }
  die "PostgreSQL server binaries not found (install postgresql-15 or set PG_BINDIR)"
}

os_user="${PG_USER_OS:-postgres}"

# Run a PostgreSQL program as the server's OS user (from /, so a cwd that user
# cannot read does not matter).
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then
    (cd / && runuser -u "$os_user" -- env TZ=UTC "$@")
  else
    (cd / && env TZ=UTC "$@")
  fi
}

abspath() { mkdir -p "$1" && (cd "$1" && pwd -P); }

port_free() {
  python3 - "$1" <<'PY'
import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
finally:
    s.close()
PY
}

# Is PID a live PostgreSQL postmaster?  (A stale postmaster.pid may name a
# pid that has been reused by something else.)
postmaster_alive() {
  [ -n "$1" ] && kill -0 "$1" 2>/dev/null &&
    grep -q postgres <<<"$(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline")"
}

cmd_stop() {
  local dir="$1" bindir pid
  [ -d "$dir" ] || return 0
  dir=$(abspath "$dir")
  [ -f "$dir/data/postmaster.pid" ] || return 0
  bindir=$(find_bindir)
  pid=$(head -n 1 "$dir/data/postmaster.pid" 2>/dev/null || true)
  if postmaster_alive "$pid"; then
    as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
      as_pg "$bindir/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
    for _ in $(seq 1 50); do
      postmaster_alive "$pid" || break
      sleep 0.2
    done
    ! postmaster_alive "$pid" || die "could not stop the server in $dir/data (pid $pid)"
  fi
  rm -f "$dir/data/postmaster.pid"
}

cmd_kill() {
  local dir="$1" bindir pid
  dir=$(abspath "$dir")
  [ -f "$dir/data/postmaster.pid" ] || return 0
  bindir=$(find_bindir)
  pid=$(head -n 1 "$dir/data/postmaster.pid" 2>/dev/null || true)
  as_pg "$bindir/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
  for _ in $(seq 1 50); do
    postmaster_alive "$pid" || break
    sleep 0.1
  done
  ! postmaster_alive "$pid" || die "could not kill the server in $dir/data (pid $pid)"
  rm -f "$dir/data/postmaster.pid"
}

cmd_resume() {
  local dir="$1" bindir port
  dir=$(abspath "$dir")
  [ -f "$dir/data/PG_VERSION" ] || die "no cluster in $dir/data"
  bindir=$(find_bindir)
  port=$(sed -n 's/^port = \([0-9]*\)$/\1/p' "$dir/data/postgresql.conf" | tail -n 1)
  as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 start >/dev/null ||
    die "PostgreSQL did not start again (log: $dir/postgres.log)"
  for _ in $(seq 1 100); do
    "$bindir/pg_isready" -q -h "$dir/run" -p "$port" -U postgres && return 0
    sleep 0.1
  done
  die "PostgreSQL did not become ready on port $port (log: $dir/postgres.log)"
}

cmd_start() {
  local dir="$1" port="$2" bindir
  case "$port" in ''|*[!0-9]*) die "bad port '$port'" ;; esac
  bindir=$(find_bindir)
  dir=$(abspath "$dir")

  cmd_stop "$dir"      # a server a previous run left behind
  rm -rf "$dir/data" "$dir/run" "$dir/postgres.log" "$dir/initdb.log"
  mkdir -p "$dir/data" "$dir/run"
  if [ "$(id -u)" -eq 0 ]; then
    chown -R "$os_user": "$dir"
    runuser -u "$os_user" -- test -w "$dir" ||
      die "$dir is not writable by user $os_user (is a parent directory private?); use a directory under /tmp"
  fi
  chmod 700 "$dir/data"

  port_free "$port" || die "port $port is already in use"

  as_pg "$bindir/initdb" -D "$dir/data" --no-locale --encoding=UTF8 -U postgres \
    --auth=trust --no-sync >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; die "initdb failed"; }

  cat >>"$dir/data/postgresql.conf" <<CONF

# pg.sh: throwaway test cluster
port = $port
listen_addresses = 'localhost'
unix_socket_directories = '$dir/run'
timezone = 'UTC'
log_timezone = 'UTC'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
CONF

  if ! as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 start >/dev/null; then
    tail -n 30 "$dir/postgres.log" >&2 || true
    die "PostgreSQL did not start (log: $dir/postgres.log)"
  fi
  for _ in $(seq 1 100); do
    if "$bindir/pg_isready" -q -h "$dir/run" -p "$port" -U postgres; then
      echo "pg.sh: PostgreSQL running on port $port (socket dir $dir/run, data $dir/data)"
      return 0
    fi
    sleep 0.2
  done
  die "PostgreSQL did not become ready on port $port (log: $dir/postgres.log)"
}

case "${1:-}" in
  start)   [ $# -eq 3 ] || die "usage: pg.sh start DIR PORT"; cmd_start "$2" "$3" ;;
  stop)    [ $# -eq 2 ] || die "usage: pg.sh stop DIR"; cmd_stop "$2" ;;
  kill)    [ $# -eq 2 ] || die "usage: pg.sh kill DIR"; cmd_kill "$2" ;;
  resume)  [ $# -eq 2 ] || die "usage: pg.sh resume DIR"; cmd_resume "$2" ;;
  sockdir) [ $# -eq 2 ] || die "usage: pg.sh sockdir DIR"; echo "$(abspath "$2")/run" ;;
  freeport)
    p="${2:-5450}"
    while ! port_free "$p"; do p=$((p + 1)); done
    echo "$p" ;;
  *) sed -n '2,29p' "$0" >&2; exit 2 ;;
esac
