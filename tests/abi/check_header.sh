#!/usr/bin/env bash
# The public header is self-contained: header_only.c, which includes only
# <pgrest/pgrest.h>, compiles as C11 (-Wall -Wextra -Wpedantic -Werror)
# and, when a C++ compiler exists, as C++11 under the same flags.  Given
# the directory of libpgrest.so, both are also linked to it and run: they
# must print PGREST_VERSION_STRING (a C++ host links with C linkage).
#
# Usage: check_header.sh INCLUDE_DIR HEADER_ONLY_C [LIBDIR]
set -euo pipefail

inc="$1" src="$2" libdir="${3:-}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/pgrest-header.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
cc="${CC:-cc}"
flags=(-Wall -Wextra -Wpedantic -Werror -Wstrict-prototypes -Wmissing-prototypes)
"$cc" -std=c11 "${flags[@]}" -I"$inc" -c "$src" -o "$tmp/c.o"
echo "check_header: C11 ok ($cc)"
version="$(sed -n 's/^#define PGREST_VERSION_STRING "\(.*\)"/\1/p' "$inc/pgrest/pgrest.h")"
# link_run COMPILER STD LANG: builds header_only.c with its main and runs it
link_run() {
  "$1" -std="$2" -x "$3" -DHEADER_ONLY_MAIN -Wall -Wextra -Werror -I"$inc" "$src" \
    -x none -L"$libdir" -lpgrest -Wl,-rpath,"$libdir" -o "$tmp/run-$3"
  local out
  out="$("$tmp/run-$3")"
  [ "$out" = "$version" ] || { echo "check_header: $3 program printed '$out', want '$version'" >&2; exit 1; }
  echo "check_header: $3 program linked to $libdir/libpgrest.so prints $out"
}
if [ -n "$libdir" ]; then link_run "$cc" c11 c; fi
cxx="${CXX:-}"
if [ -z "$cxx" ]; then
  for c in g++ c++ clang++; do
    if command -v "$c" >/dev/null 2>&1; then cxx="$c"; break; fi
  done
fi
if [ -n "$cxx" ]; then
  # (-Wstrict-prototypes and -Wmissing-prototypes are C-only options)
  "$cxx" -std=c++11 -x c++ -Wall -Wextra -Wpedantic -Werror -I"$inc" -c "$src" -o "$tmp/cxx.o"
  echo "check_header: C++11 ok ($cxx)"
  if [ -n "$libdir" ]; then link_run "$cxx" c++11 c++; fi
else
  echo "check_header: no C++ compiler, C++ check not run"
fi
