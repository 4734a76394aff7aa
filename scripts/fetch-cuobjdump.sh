#!/usr/bin/env bash
# Puts cuobjdump (the CUDA binary inspector; not every toolkit install carries it) into
# third_party/cuobjdump (git-ignored), from the pinned PyPI wheel nvidia-cuda-cuobjdump. The
# kernel resource check (scripts/check-kernel-resources.py, ctest build.kernel_resources) reads
# every kernel's stack and local memory with it. Idempotent.
#   scripts/fetch-cuobjdump.sh            # fetch if missing
#   SYMMOE_CUOBJDUMP_WHEEL=path.whl ...   # use a downloaded wheel (machines without PyPI)
set -euo pipefail
cd "$(dirname "$0")/.."
version=13.5.37
sha256=38780fee50863252a0b8926357faa91615ca1c8346490563f33a06100cd73f58
dest=third_party/cuobjdump
stamp=$dest/VERSION
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$version" ] && [ -x "$dest/cuobjdump" ]; then
  echo "fetch-cuobjdump: cuobjdump $version already in $dest"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source scripts/pinned-wheel.sh
wheel=$(pinned_wheel nvidia-cuda-cuobjdump "$version" "$sha256" "$tmp" "${SYMMOE_CUOBJDUMP_WHEEL:-}") || exit 1
python3 - "$wheel" "$tmp/cuobjdump" <<'PY'
import sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.endswith("/bin/cuobjdump")]
    if len(names) != 1:
        sys.exit(f"fetch-cuobjdump: expected one bin/cuobjdump in {wheel}, found {names}")
    with z.open(names[0]) as src, open(out, "wb") as dst:
        dst.write(src.read())
PY
mkdir -p "$dest"
install -m 755 "$tmp/cuobjdump" "$dest/cuobjdump"
echo "$version" >"$stamp"
echo "fetch-cuobjdump: cuobjdump $version in $dest"
