#!/usr/bin/env bash
# Installs the release build into a scratch prefix and builds a consumer with
# find_package(symmoe CONFIG) against it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install build/release --prefix "$prefix/install" >/dev/null
cmake -S tests/install_consumer -B "$prefix/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix/install" >/dev/null
cmake --build "$prefix/build" >/dev/null
"$prefix/build/consumer"
