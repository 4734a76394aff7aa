#!/usr/bin/env bash
# Fresh machine -> dependencies, release build, and the main job: `symmoe doctor` with its
# multi-rank smoke test (threads and processes). Extra arguments go to the doctor.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
scripts/install-deps.sh
cmake --preset release
cmake --build --preset release
exec build/release/tools/symmoe doctor --ranks 4 --processes "$@"
