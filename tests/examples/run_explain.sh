#!/usr/bin/env bash
# pgrest-explain, the offline "what SQL would run" tool, on the schema
# snapshot used by the unit tests (no database): each case's stdout plus
# its exit status must equal tests/examples/explain/CASE.out.
#
# Usage: run_explain.sh PGREST_EXPLAIN SNAPSHOT_JSON EXPECTED_DIR
#        PGREST_REGEN=1 run_explain.sh ...   rewrite the .out files (review
#                                            the diff before committing)
set -uo pipefail

explain="$1" snapshot="$2" expected="$3"
cfg=(-c db-schemas=api -c db-anon-role=web_user)
tmp="$(mktemp -d "${TMPDIR:-/tmp}/pgrest-explain.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
failed=0 ran=0

# check NAME ARGS...: runs pgrest-explain SNAPSHOT ARGS... and compares.
check() {
  local name="$1" out="$tmp/$1.out" rc
  shift
  timeout 20 "$explain" "$snapshot" "$@" >"$out" 2>"$tmp/$name.err"
  rc=$?
  echo "exit: $rc" >>"$out"
  ran=$((ran + 1))
  if [ -n "${PGREST_REGEN:-}" ]; then
    cp "$out" "$expected/$name.out"
  elif ! diff -u "$expected/$name.out" "$out"; then
    echo "run_explain: case $name differs (stderr: $(cat "$tmp/$name.err"))" >&2
    failed=$((failed + 1))
  fi
}

# a read: filter, order, limit
check read GET '/artists?select=id,name&id=eq.1&order=name&limit=2' "${cfg[@]}"
# a many-to-one and a one-to-many embed
check embed GET '/albums?select=title,artists(name),tracks(title)&id=eq.1' "${cfg[@]}"
# a write with a body: the body is one $n parameter, never SQL text
check insert POST '/artists?select=id,name' -H 'Content-Type: application/json' \
  -H 'Prefer: return=representation' -d '{"name":"New'"'"'; DROP TABLE x","country":"NL"}' "${cfg[@]}"
# an RPC call with arguments from the query string
check rpc GET '/rpc/add?a=40&b=2' "${cfg[@]}"
# bad requests: PostgREST's error bodies and statuses, exit 1
check bad_filter GET '/artists?select=id&id=zz.1' "${cfg[@]}"
check bad_body POST '/artists' -H 'Content-Type: application/json' -d '{"name":' "${cfg[@]}"
# PostgREST leaves plain select columns to PostgreSQL (42703 when run),
# so this one plans and prints SQL
check unknown_column GET '/artists?select=nope' "${cfg[@]}"
check unknown_table GET '/nope' "${cfg[@]}"
# anonymous access off (no db-anon-role): 401
check no_anon_role GET '/artists' -c db-schemas=api
# wrong usage: exit 2
check usage GET

if [ -n "${PGREST_REGEN:-}" ]; then
  echo "run_explain: rewrote $ran expected files in $expected"
  exit 0
fi
echo "run_explain: $((ran - failed)) of $ran cases match"
[ "$failed" -eq 0 ]
