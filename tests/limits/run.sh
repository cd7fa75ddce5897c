#!/usr/bin/env bash
# Limits test: starts its own PostgreSQL (tests/harness/pg.sh, port >= 5481)
# loaded with tests/fixtures/test_schema.sql and its own pgrest-server with
# small limits on a free loopback port, then runs limits_test.py (body 413,
# URL 414, headers 431, nesting/filters/JSON depth 400, slow and idle
# clients, the connection cap). Ends with "N passed, N failed"; exit 1 on
# any failure. Bounded: the whole run has a 120 s budget.
#
# Usage: tests/limits/run.sh [BUILD_DIR]   (default build)
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$repo/build}"
server="$build/server/pgrest-server"
pg_sh="$repo/tests/harness/pg.sh"
[ -x "$server" ] || { echo "limits: $server not built"; echo "0 passed, 1 failed"; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/pgrest-limits.XXXXXX")"
chmod 755 "$work"
srv_pid=""
cleanup() {
  [ -n "$srv_pid" ] && kill "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
  "$pg_sh" stop "$work/pg" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "limits: $*"; echo "0 passed, 1 failed"; exit 1; }

pgport="$("$pg_sh" freeport 5481)"
"$pg_sh" start "$work/pg" "$pgport" >/dev/null || fail "PostgreSQL did not start"
sock="$("$pg_sh" sockdir "$work/pg")"
createdb -h "$sock" -p "$pgport" -U postgres limits || fail "createdb failed"
PGTZ=UTC PGOPTIONS='-c client_min_messages=warning' \
  psql -X -q -v ON_ERROR_STOP=1 -h "$sock" -p "$pgport" -U postgres -d limits \
  -f "$repo/tests/fixtures/test_schema.sql" -o /dev/null || fail "loading test_schema.sql failed"
# api.slow(seconds) from the fixture answers after longer than
# server-timeout: the idle timeout must not cut off a response the server is
# still computing.

# a free loopback port for the server
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
cat >"$work/pgrest.conf" <<CONF
db-uri = "postgresql://authenticator@localhost:$pgport/limits"
db-schemas = "api"
db-anon-role = "web_anon"
db-pool = 4
server-host = "127.0.0.1"
server-port = $port
log-level = "error"
server-max-body-size = 65536
server-max-url-size = 4096
server-max-header-size = 8192
server-timeout = 2
server-max-connections = 40
request-max-depth = 8
request-max-filters = 50
request-max-json-depth = 16
CONF
"$server" "$work/pgrest.conf" >"$work/server.log" 2>&1 &
srv_pid=$!
for _ in $(seq 1 100); do
  curl -s -o /dev/null "http://127.0.0.1:$port/artists?limit=1" && break
  kill -0 "$srv_pid" 2>/dev/null || { cat "$work/server.log"; fail "pgrest-server exited"; }
  sleep 0.1
done
timeout 120 python3 "$repo/tests/limits/limits_test.py" "$port"
rc=$?
if ! kill -0 "$srv_pid" 2>/dev/null; then
  echo "limits: pgrest-server died during the tests"; cat "$work/server.log"
  echo "0 passed, 1 failed"; exit 1
fi
[ "$rc" -eq 124 ] && { echo "limits: timed out"; echo "0 passed, 1 failed"; }
exit "$rc"
