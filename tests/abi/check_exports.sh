#!/usr/bin/env bash
# ABI hygiene of libpgrest.so (libcurl's discipline): the dynamic symbol
# table defines only pgrest_* symbols, every function the public header
# declares is exported, nothing exported is missing from the header, and
# every prototype in the header carries PGREST_API.
#
# Usage: check_exports.sh LIBPGREST_SO INCLUDE/pgrest/pgrest.h [NM]
set -euo pipefail

lib="$1" header="$2" nm="${3:-nm}"
fail=0
err() { echo "check_exports: $*" >&2; fail=1; }

[ -f "$lib" ] || { echo "check_exports: $lib not found" >&2; exit 1; }
[ -f "$header" ] || { echo "check_exports: $header not found" >&2; exit 1; }

# Defined dynamic symbols: "ADDR TYPE NAME" (version nodes have no address
# column in some binutils versions; keep the last field).
mapfile -t exported < <("$nm" -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' | sort -u)
[ "${#exported[@]}" -gt 0 ] || err "no defined dynamic symbols in $lib"
for s in "${exported[@]}"; do
  case "$s" in pgrest_*) ;; *) err "exported symbol outside the pgrest_ prefix: $s" ;; esac
done

# Functions of the header: comments and preprocessor lines removed, the
# text joined into one line; a function is a pgrest_ identifier followed
# by '(' (types are never followed by one, function-pointer parameters are
# not pgrest_ names).
code="$(sed -e 's://.*$::' "$header" | grep -v '^[[:space:]]*#' | tr '\n' ' ' |
        sed -e 's:/\*[^*]*\*\+\([^/*][^*]*\*\+\)*/: :g')"
mapfile -t declared < <(grep -oE '\bpgrest_[a-z0-9_]+[[:space:]]*\(' <<<"$code" |
                        sed -E 's/[[:space:]]*\($//' | sort -u)
[ "${#declared[@]}" -gt 0 ] || err "no functions found in $header"

# Every declaration is a PGREST_API one: split at ';' and '}' (ends of
# declarations), each piece holding a pgrest_ function must start with it.
while IFS= read -r decl; do
  if grep -qE '\bpgrest_[a-z0-9_]+[[:space:]]*\(' <<<"$decl" &&
     ! grep -qE '^[[:space:]]*PGREST_API\b' <<<"$decl"; then
    err "declaration without PGREST_API: $(tr -s ' ' <<<"$decl")"
  fi
done < <(tr ';{}' '\n\n\n' <<<"$code")

# here-strings, not pipes: with pipefail, grep -q closing the pipe early
# would make printf's SIGPIPE fail the check at random
exported_list="$(printf '%s\n' "${exported[@]}")"
declared_list="$(printf '%s\n' "${declared[@]}")"
for f in "${declared[@]}"; do
  grep -qx "$f" <<<"$exported_list" || err "declared in the header but not exported: $f"
done
for s in "${exported[@]}"; do
  grep -qx "$s" <<<"$declared_list" || err "exported but not declared in the header: $s"
done

if [ "$fail" -eq 0 ]; then
  echo "check_exports: ${#declared[@]} functions declared, ${#exported[@]} symbols exported, all pgrest_*"
fi
exit "$fail"
