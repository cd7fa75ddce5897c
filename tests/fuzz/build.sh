#!/usr/bin/env bash
# Configures (once) and builds the libFuzzer targets in BUILD_DIR (default
# build-fuzz): clang, -Dfuzz=true, AddressSanitizer + UBSan. Exit 77 when
# clang or its fuzzer runtime (libclang-rt-14-dev) is missing.
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dir="${1:-$repo/build-fuzz}"
command -v clang >/dev/null 2>&1 || { echo "build.sh: clang not found" >&2; exit 77; }
echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { (void)d; (void)n; return 0; }' |
  clang -x c -fsanitize=fuzzer -o /dev/null - >/dev/null 2>&1 ||
  { echo "build.sh: clang cannot link -fsanitize=fuzzer (libclang-rt-14-dev?)" >&2; exit 77; }
if [ ! -f "$dir/build.ninja" ]; then
  CC=clang meson setup "$dir" "$repo" -Dfuzz=true -Dtests=disabled \
    -Db_sanitize=address,undefined -Db_lundef=false || exit 1
fi
ninja -C "$dir"
