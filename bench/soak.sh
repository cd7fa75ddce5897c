#!/usr/bin/env bash
# Soak: pgrest-server under constant mixed load for a long time, to see that
# nothing leaks or degrades. Uses bench/run.sh --serve (its own PostgreSQL
# with Chinook from ../shared/bench, its own server), then cycles the nine
# published scenarios with wrk (one thread, -c 50) in slices of SLICE
# seconds for MINUTES minutes, sampling the server's resident memory and
# counting non-2xx responses. Exits 0 with a message when the kit is absent.
#
#   bench/soak.sh [MINUTES] [SLICE]      defaults: 10 minutes, 20 s slices
#
# Prints one line per slice (scenario, req/s, non-2xx, RSS) and a summary:
# total requests, non-2xx, RSS at the first and last sample.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MINUTES="${1:-10}"
SLICE="${2:-20}"
KIT="${PGREST_SHARED:-$REPO/../shared}/bench"
if [ ! -f "$KIT/chinook.sql" ]; then
  echo "bench/soak.sh: benchmark kit not found at $KIT; nothing to do."
  exit 0
fi
command -v wrk >/dev/null || { echo "bench/soak.sh: wrk not found" >&2; exit 1; }

info="$(mktemp)"
bash "$REPO/bench/run.sh" --serve >"$info" 2>&1 &
serve_pid=$!
trap 'kill "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null; rm -f "$info"' EXIT
for _ in $(seq 1 600); do
  grep -q '^SERVER_PID=' "$info" && break
  kill -0 "$serve_pid" 2>/dev/null || { cat "$info" >&2; exit 1; }
  sleep 0.5
done
URL="$(sed -n 's/^URL=//p' "$info")"
PID="$(sed -n 's/^SERVER_PID=//p' "$info")"
CONNINFO="$(sed -n "s/^CONNINFO='\(.*\)'$/\1/p" "$info")"
[ -n "$URL" ] && [ -n "$PID" ] || { cat "$info" >&2; exit 1; }

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$PID/status"; }
SCEN=(GETSingle GETSingleEmbed POSTSingle POSTBulk PATCHSingle RPCSimple RPCGETSingle RPCGETSingleEmbed GETAllEmbed)
end=$(( $(date +%s) + MINUTES * 60 ))
first_rss="$(rss_kb)"; total=0; bad=0; i=0
echo "# soak: $MINUTES min of ${SLICE}s wrk slices against $URL (server pid $PID, RSS ${first_rss} kB at start)"
while [ "$(date +%s)" -lt "$end" ]; do
  s="${SCEN[$((i % ${#SCEN[@]}))]}"; i=$((i + 1))
  line="$(wrk -t1 -c50 -d"${SLICE}s" --timeout 10s -s "$KIT/scenarios/$s.lua" "$URL" 2>&1 | grep '^BENCH scenario=' | head -1 || true)"
  req="$(sed -n 's/.* requests=\([0-9]*\).*/\1/p' <<<"$line")"
  rps="$(sed -n 's/.* rps=\([0-9.]*\).*/\1/p' <<<"$line")"
  n2="$(sed -n 's/.* non2xx=\([0-9]*\).*/\1/p' <<<"$line")"
  total=$((total + ${req:-0})); bad=$((bad + ${n2:-0}))
  kill -0 "$PID" 2>/dev/null || { echo "soak: pgrest-server died" >&2; exit 1; }
  printf '%-18s %9s req/s  non2xx %-6s RSS %s kB\n' "$s" "${rps:-FAIL}" "${n2:-?}" "$(rss_kb)"
  case "$s" in POST*) psql -q -X "$CONNINFO" -c "DELETE FROM employee WHERE title = 'Load Tester'" >/dev/null 2>&1 || true;; esac
done
echo "soak: $total requests, $bad non-2xx, RSS ${first_rss} kB -> $(rss_kb) kB over $MINUTES min"
[ "$bad" -eq 0 ]
