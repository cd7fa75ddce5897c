#!/usr/bin/env bash
# The demo: installs what is missing (Debian 12), builds pgrest, starts a
# local PostgreSQL with the music-store sample (demo/schema.sql, demo/data.sql)
# and runs pgrest-server in the foreground on http://localhost:3000.
# Ctrl-C stops the server and PostgreSQL.  Safe to re-run: the database is
# re-created from the SQL files each time.
#
# Usage: scripts/demo.sh [--setup-only]
#   --setup-only   build, start PostgreSQL, load the data, write the config,
#                  then stop PostgreSQL and exit (no server)
# Environment: PGREST_DEMO_PORT (HTTP port, default 3000),
#              PGREST_DEMO_PG_PORT (PostgreSQL port, default 5433).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
pg_sh="$repo/tests/harness/pg.sh"
http_port="${PGREST_DEMO_PORT:-3000}"
pg_port="${PGREST_DEMO_PG_PORT:-5433}"
setup_only=0
case "${1:-}" in
  --setup-only) setup_only=1 ;;
  "") ;;
  *) sed -n '2,13p' "$0"; exit 2 ;;
esac

# Same secret as in README.md: the demo token there is signed with it.
jwt_secret="pgrest-demo-secret-change-me-0123456789"

echo "demo: checking packages"
bash "$repo/scripts/test.sh" --deps-only

echo "demo: building"
[ -f build/build.ninja ] || meson setup build
ninja -C build
server="$repo/build/server/pgrest-server"
[ -x "$server" ] || { echo "demo: $server was not built" >&2; exit 1; }

# PostgreSQL data in .demo/pg, unless the postgres user cannot reach the work
# tree (e.g. a clone below /root): then in /tmp.
mkdir -p .demo
pgdir="$repo/.demo/pg"
if [ "$(id -u)" -eq 0 ] && ! runuser -u postgres -- test -x "$repo/.demo"; then
  pgdir="${TMPDIR:-/tmp}/pgrest-demo-pg"
fi
trap '"$pg_sh" stop "$pgdir"' EXIT
"$pg_sh" start "$pgdir" "$pg_port"
export PGHOST PGPORT=$pg_port PGUSER=postgres
PGHOST="$("$pg_sh" sockdir "$pgdir")"

echo "demo: loading demo/schema.sql and demo/data.sql"
createdb pgrest_demo
psql -X -q -v ON_ERROR_STOP=1 -d pgrest_demo -f demo/schema.sql -f demo/data.sql -o /dev/null

conf="$repo/.demo/pgrest.conf"
cat >"$conf" <<CONF
# written by scripts/demo.sh (PostgREST's configuration format)
db-uri = "postgresql://authenticator@localhost:$pg_port/pgrest_demo"
db-schemas = "api"
db-anon-role = "web_anon"
# aggregates, and pgrest's having=, distinct= and or= across embeds
db-aggregates-enabled = true
jwt-secret = "$jwt_secret"
server-port = "$http_port"
CONF
echo "demo: wrote $conf"

if [ "$setup_only" -eq 1 ]; then
  echo "demo: setup done (--setup-only); PostgreSQL stops now"
  exit 0
fi

token="eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoid2ViX3VzZXIifQ.dwKm146o1OAADFrpn8lLWi7PM-9-JxIaVqdY9vCG-Wg"
cat <<MSG

pgrest demo on http://localhost:$http_port  (Ctrl-C to stop)
  curl 'http://localhost:$http_port/albums?select=title,artists(name)&order=released.desc&limit=3'
  curl 'http://localhost:$http_port/tracks?select=title,duration&genre_id=eq.2'
  curl 'http://localhost:$http_port/rpc/search_tracks?q=love'
  curl -X POST 'http://localhost:$http_port/genres' -H 'Authorization: Bearer $token' \\
       -H 'Content-Type: application/json' -H 'Prefer: return=representation' -d '{"name":"Jazz"}'

MSG

# The server runs as a child so that the EXIT trap (stop PostgreSQL) runs when
# it ends; INT/TERM are passed on to it.
"$server" "$conf" &
srv=$!
stopping=0
trap 'stopping=1; kill -TERM "$srv" 2>/dev/null || true' INT TERM
rc=0
wait "$srv" || rc=$?
# wait returns early when a trapped signal arrives: wait for the server itself
if kill -0 "$srv" 2>/dev/null; then wait "$srv" || rc=$?; fi
[ "$stopping" -eq 1 ] && rc=0   # stopped on request (Ctrl-C)
exit "$rc"
