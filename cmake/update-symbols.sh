#!/usr/bin/env bash
# update-symbols.sh - rebuilds libdsml.so with the "default" preset and writes
# its exported symbols to tests/abi/dsml.symbols.  Commit the result.
#
#   cmake/update-symbols.sh            (uses build/default, configuring it if needed)
#   cmake/update-symbols.sh BUILD_DIR  (uses an existing build directory)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ge 1 ]; then
  build=$1
else
  build=build/default
  [ -f "$build/CMakeCache.txt" ] || cmake --preset default
fi
cmake --build "$build" --target dsml-update-symbols
git --no-pager diff --stat -- tests/abi/dsml.symbols 2>/dev/null || true
