#!/usr/bin/env bash
# Installs the release build into a scratch prefix and builds a consumer with
# find_package(symmoe CONFIG) against it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
log="$prefix/log"
if ! { cmake --install build/release --prefix "$prefix/install" &&
       cmake -S tests/install_consumer -B "$prefix/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix/install" &&
       cmake --build "$prefix/build"; } >"$log" 2>&1; then
  tail -30 "$log"
  echo "check-install: FAILED to install symmoe or build a find_package consumer" >&2
  exit 1
fi
"$prefix/build/consumer"
