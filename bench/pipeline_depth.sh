#!/usr/bin/env bash
# Issue 16 item 4, the database-side ceiling: would a connection that
# carries several requests' pipelines back to back (each its own
# transaction, Sync-separated) answer more requests per second than one
# request's pipeline per round trip? Measured with pgbench alone, so that
# only the database and the wire are in it: for each scenario the kit's
# .pipe.sql (one request's statements in one pipeline) against the same
# statements of DEPTH requests in one pipeline (generated here: the body
# between \startpipeline and \endpipeline repeated with fresh random
# variables). pgbench counts one transaction per script run, so the
# deeper script's request rate is DEPTH x its tps. Alternating rounds,
# medians; no assertions.
#
# Usage: bench/pipeline_depth.sh [-d SECS] [-r ROUNDS] [-c CONNS] [-p DEPTH] [scenario ...]
#   defaults: -d 5 -r 3 -c 20 (pgrest-server's db-pool in bench/run.sh:
#   every pooled connection busy) -p 2; scenarios: GETSingle RPCSimple
#   POSTSingle PATCHSingle
# Needs the shared kit ($PGREST_SHARED/bench, else <repo>/../shared/bench);
# exits 0 with a message without it.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DUR=5 ROUNDS=3 CONNS=20 DEPTH=2
while getopts "d:r:c:p:" o; do
  case "$o" in
    d) DUR="$OPTARG" ;; r) ROUNDS="$OPTARG" ;; c) CONNS="$OPTARG" ;; p) DEPTH="$OPTARG" ;;
    *) sed -n '2,20p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
SCENARIOS=("$@")
[ ${#SCENARIOS[@]} -gt 0 ] || SCENARIOS=(GETSingle RPCSimple POSTSingle PATCHSingle)

KIT="${PGREST_SHARED:-$REPO/../shared}/bench"
if [ ! -f "$KIT/chinook.sql" ] || [ ! -d "$KIT/pgbench" ]; then
  echo "bench/pipeline_depth.sh: no benchmark kit at $KIT (set PGREST_SHARED): nothing to do"
  exit 0
fi

PGSH="$REPO/tests/harness/pg.sh"
WORK="$(mktemp -d "${BENCH_TMP:-/tmp}/pgrest-pipedepth.XXXXXX")"
chmod 755 "$WORK"
trap 'bash "$PGSH" stop "$WORK" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
PGPORT="$(bash "$PGSH" freeport 5470)"
bash "$PGSH" start "$WORK" "$PGPORT" >/dev/null
SOCK="$(bash "$PGSH" sockdir "$WORK")"
CONNINFO="host=$SOCK port=$PGPORT user=postgres dbname=chinook"
psql -q -h "$SOCK" -p "$PGPORT" -U postgres -d postgres -c 'CREATE DATABASE chinook' >/dev/null
psql -q -h "$SOCK" -p "$PGPORT" -U postgres -d chinook -f "$KIT/chinook.sql" >"$WORK/load.log" 2>&1
psql -q -h "$SOCK" -p "$PGPORT" -U postgres -d chinook -c 'VACUUM ANALYZE' >/dev/null

# The .pipe script with its pipeline body DEPTH times; copy k > 1 gets its
# own \set variables (name_k) so that every request picks its own ids.
deepen() {
  perl -e '
    my ($depth, $file) = @ARGV;
    open(my $f, "<", $file) or die "$file: $!";
    my @lines = <$f>;
    my @vars = map { /^\\set (\w+)/ ? $1 : () } @lines;
    my $rename = sub { my ($t, $k) = @_; $t =~ s/:$_\b/:${_}_$k/g for @vars; $t };
    my ($in, @body) = (0);
    for (@lines) {
      if (/^\\set (\w+)(.*)$/) {
        print;
        print "\\set ${1}_$_" . $rename->($2, $_) . "\n" for 2 .. $depth;
        next;
      }
      if (/^\\startpipeline/) { $in = 1; print; next }
      if (/^\\endpipeline/) {
        for my $k (2 .. $depth) { print $rename->($_, $k) for @body }
        $in = 0; print; next;
      }
      push @body, $_ if $in;
      print;
    }' "$DEPTH" "$1"
}

tps() {
  pgbench -n -M prepared -j 1 -c "$CONNS" -T "$DUR" -f "$1" "$CONNINFO" 2>&1 |
    awk '/^tps = / { printf "%.0f", $3 }'
}

median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

printf '# pgbench -M prepared -j1 -c%s -T%s, %s alternating rounds, medians; depth %s\n' \
  "$CONNS" "$DUR" "$ROUNDS" "$DEPTH"
printf '%-14s %12s %16s %8s\n' scenario "pipe req/s" "depth-$DEPTH req/s" ratio
for s in "${SCENARIOS[@]}"; do
  pipe="$KIT/pgbench/$s.pipe.sql"
  [ -f "$pipe" ] || { echo "$s: no $pipe" >&2; continue; }
  deep="$WORK/$s.depth$DEPTH.sql"
  deepen "$pipe" >"$deep"
  one=() many=()
  for _ in $(seq "$ROUNDS"); do
    one+=("$(tps "$pipe")")
    many+=("$(( $(tps "$deep") * DEPTH ))")
    # write scenarios insert rows: keep the tables as they were
    psql -q -X -h "$SOCK" -p "$PGPORT" -U postgres -d chinook \
      -c "DELETE FROM employee WHERE title = 'Load Tester'" >/dev/null 2>&1 || true
  done
  a="$(median "${one[@]}")" b="$(median "${many[@]}")"
  printf '%-14s %12s %16s %8s\n' "$s" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a ? b / a : 0 }')"
done
