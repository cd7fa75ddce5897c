#!/usr/bin/env bash
# The HTTP layer alone: libmicrohttpd driven as pgrest-server drives it
# (bench/http_layer/mhd_hello.c) against Debian's libh2o-evloop
# (bench/http_layer/h2o_hello.c), each one thread answering a fixed
# GETSingle-sized JSON body, under the same wrk load, ROUNDS times side by
# side; each at once, and answered on the loop's next turn as an engine
# waiting for PostgreSQL does (MHD: suspend/resume; h2o: a zero timeout). Prints per round and server: req/s and the server's CPU µs per
# request (/proc utime+stime over the run), then the medians and the
# h2o/MHD ratios. No database.
#
#   bench/http_layer.sh [BUILD_DIR] [ROUNDS] [SECONDS] [CONNECTIONS]
#
# Needs wrk, and libh2o-evloop-dev for h2o_hello (meson builds it only when
# the library is found).
set -euo pipefail
build="${1:-build}" rounds="${2:-3}" secs="${3:-10}" conns="${4:-50}"
command -v wrk >/dev/null || { echo "http_layer.sh: wrk not installed" >&2; exit 1; }
ninja -C "$build" bench/mhd_hello bench/h2o_hello >/dev/null ||
  { echo "http_layer.sh: build bench/mhd_hello and bench/h2o_hello (libh2o-evloop-dev)" >&2; exit 1; }
tck=$(getconf CLK_TCK)

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# measure NAME: one wrk run against the server on $port; prints "req/s µs/req"
measure() {
  local pid=$1 before after out reqs rps
  before=$(cpu_ticks "$pid")
  out=$(wrk -t1 -c"$conns" -d"${secs}s" "http://127.0.0.1:$port/artist?artist_id=eq.1")
  after=$(cpu_ticks "$pid")
  reqs=$(awk '/requests in/ {print $1}' <<<"$out")
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  awk -v r="$reqs" -v rps="$rps" -v d=$((after - before)) -v t="$tck" \
    'BEGIN { printf "%.0f %.2f\n", rps, d / t * 1e6 / r }'
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

declare -A rps cpu
port=7790
for r in $(seq "$rounds"); do
  for s in mhd mhd-suspend h2o h2o-defer; do
    port=$((port + 1))
    case $s in
      mhd-suspend) "$build/bench/mhd_hello" "$port" suspend & pid=$! ;;
      h2o-defer) "$build/bench/h2o_hello" "$port" defer & pid=$! ;;
      *) "$build/bench/${s}_hello" "$port" & pid=$! ;;
    esac
    sleep 0.3
    read -r x y < <(measure "$pid")
    kill "$pid"; wait "$pid" 2>/dev/null || true
    rps[$s]+="$x "; cpu[$s]+="$y "
    printf 'round %d %-4s %8s req/s %6s µs CPU/request\n' "$r" "$s" "$x" "$y"
  done
done
declare -A mr mc
for s in mhd mhd-suspend h2o h2o-defer; do
  mr[$s]=$(tr ' ' '\n' <<<"${rps[$s]}" | grep . | median)
  mc[$s]=$(tr ' ' '\n' <<<"${cpu[$s]}" | grep . | median)
  printf 'median %-11s %8s req/s %6s µs CPU/request\n' "$s" "${mr[$s]}" "${mc[$s]}"
done
ratio() {  # A B: A's medians over B's
  awk -v a="${mr[$1]}" -v b="${mr[$2]}" -v c="${mc[$1]}" -v d="${mc[$2]}" \
    'BEGIN { printf "%s/%s: req/s %.2f, CPU/request %.2f\n", ARGV[1], ARGV[2], a / b, c / d }' "$1" "$2"
}
ratio h2o mhd
ratio h2o-defer mhd-suspend
