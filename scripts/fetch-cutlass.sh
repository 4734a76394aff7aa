#!/usr/bin/env bash
# Puts the CUTLASS/CuTe C++ headers the SM90 grouped-GEMM kernels build on into
# third_party/cutlass/include (git-ignored). They come from the PyPI wheel nvidia-cutlass (the
# version is pinned: the kernels are tested against it). Idempotent; CMake runs nothing itself.
#   scripts/fetch-cutlass.sh            # fetch if missing
#   SYMMOE_CUTLASS_WHEEL=path.whl ...   # use a downloaded wheel (machines without PyPI)
set -euo pipefail
cd "$(dirname "$0")/.."
version=4.2.0.0
sha256=f9599ada45c7bcb6bf53f7d3f0a7d154183e53451c01bfa59eecd37dd4a693f6
dest=third_party/cutlass
stamp=$dest/VERSION
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$version" ]; then
  echo "fetch-cutlass: CUTLASS $version headers already in $dest/include"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source scripts/pinned-wheel.sh
wheel=$(pinned_wheel nvidia-cutlass "$version" "$sha256" "$tmp" "${SYMMOE_CUTLASS_WHEEL:-}") || exit 1
python3 - "$wheel" "$tmp/x" <<'PY'
import sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
keep = ("cutlass_library/source/include/", "cutlass_library/source/tools/util/include/",
        "cutlass_library/source/LICENSE.txt")
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith(keep):
            z.extract(name, out)
PY
rm -rf "$dest"
mkdir -p "$dest/include"
cp -r "$tmp/x/cutlass_library/source/include/." "$dest/include/"
cp -r "$tmp/x/cutlass_library/source/tools/util/include/." "$dest/include/"
cp "$tmp/x/cutlass_library/source/LICENSE.txt" "$dest/" 2>/dev/null || true
echo "$version" >"$stamp"
echo "fetch-cutlass: CUTLASS $version headers in $dest/include ($(du -sh "$dest" | cut -f1))"
