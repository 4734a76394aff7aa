#!/usr/bin/env bash
# Builds (if needed) and runs the whole test suite. GPU tests skip where no GPU exists.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
scripts/fetch-cutlass.sh >/dev/null
scripts/fetch-cuobjdump.sh >/dev/null
[ -f build/release/build.ninja ] || cmake --preset release
cmake --build --preset release
ctest --preset release -j "$(nproc)" "$@"
