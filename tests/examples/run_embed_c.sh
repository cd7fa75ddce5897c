#!/usr/bin/env bash
# Builds examples/embed_c against the INSTALLED library, the way a user
# would: `meson install --destdir` into a scratch directory, then
# `cc main.c $(pkg-config --cflags --libs pgrest)` with that directory as
# the pkg-config sysroot, and runs it on the integration database,
# comparing its output with embed_c.expected.
#
# Usage: run_embed_c.sh BUILD_DIR SOURCE_DIR [MESON]
# Skips (exit 77) without PGREST_TEST_DB_URI.
set -euo pipefail

build="$1" src="$2" meson="${3:-meson}"
if [ -z "${PGREST_TEST_DB_URI:-}" ]; then
  echo "PGREST_TEST_DB_URI not set: skipping" >&2
  exit 77
fi
cc="${CC:-cc}"
command -v pkg-config >/dev/null || { echo "pkg-config not found" >&2; exit 1; }

tmp="$(mktemp -d "${TMPDIR:-/tmp}/pgrest-embed-c.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
dest="$tmp/root"

# --no-rebuild: meson test has built everything already, and a nested
# ninja would contend for the build directory's lock.
"$meson" install -C "$build" --no-rebuild --quiet --destdir "$dest" >/dev/null

pc="$(find "$dest" -name pgrest.pc -print -quit)"
[ -n "$pc" ] || { echo "pgrest.pc was not installed" >&2; exit 1; }
# Only the staged pgrest.pc is visible; its Requires.private (libpq, json-c,
# libjwt, openssl) come from the system's pkg-config path as usual.
export PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$dest"
pkg-config --exists --print-errors pgrest
header="$(find "$dest" -path '*/include/pgrest/pgrest.h' -print -quit)"
[ -n "$header" ] || { echo "pgrest/pgrest.h was not installed" >&2; exit 1; }
version="$(sed -n 's/^#define PGREST_VERSION_STRING "\(.*\)"/\1/p' "$header")"
[ "$(pkg-config --modversion pgrest)" = "$version" ] ||
  { echo "pgrest.pc version differs from PGREST_VERSION_STRING $version" >&2; exit 1; }

# pkgconf prefixes variables with the sysroot, freedesktop pkg-config does not
libdir="$(pkg-config --variable=libdir pgrest)"
case "$libdir" in "$dest"/*) ;; *) libdir="$dest$libdir" ;; esac

# shellcheck disable=SC2046  # word splitting of pkg-config's flags is wanted
"$cc" -std=c11 -Wall -Wextra -Werror -o "$tmp/embed_c" "$src/examples/embed_c/main.c" \
  $(pkg-config --cflags --libs pgrest) -Wl,-rpath,"$libdir"

# The program must run on the staged copy, not on the build tree's library.
resolved="$(ldd "$tmp/embed_c" | sed -n 's/^[[:space:]]*libpgrest\.so[^ ]* => \([^ ]*\).*/\1/p')"
case "$resolved" in
  "$dest"/*) ;;
  *) echo "embed_c resolves libpgrest to '$resolved', not the installed copy" >&2; exit 1 ;;
esac

status=0
timeout 60 "$tmp/embed_c" "$PGREST_TEST_DB_URI" >"$tmp/out" 2>"$tmp/err" || status=$?
cat "$tmp/out"
if [ "$status" -ne 0 ]; then
  echo "embed_c exited with $status" >&2
  cat "$tmp/err" >&2
  exit 1
fi
diff -u "$src/tests/examples/embed_c.expected" "$tmp/out"
