#!/usr/bin/env bash
# Puts cuobjdump (the CUDA binary inspector) and nvdisasm (which `cuobjdump -sass` runs; not
# every toolkit install carries either) into third_party/cuobjdump (git-ignored), from the
# pinned PyPI wheels nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm. The build checks read the
# kernels with them: scripts/check-kernel-resources.py (ctest build.kernel_resources: stack and
# local memory) and scripts/check-scaler-loop.py (ctest build.scaler_loop: SASS). Idempotent.
#   scripts/fetch-cuobjdump.sh            # fetch if missing
#   SYMMOE_CUOBJDUMP_WHEEL=path.whl SYMMOE_NVDISASM_WHEEL=path.whl ...   # downloaded wheels
#                                         # (machines without PyPI)
set -euo pipefail
cd "$(dirname "$0")/.."
version=13.5.37
dest=third_party/cuobjdump
stamp=$dest/VERSION
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$version" ] && [ -x "$dest/cuobjdump" ] && [ -x "$dest/nvdisasm" ]; then
  echo "fetch-cuobjdump: cuobjdump and nvdisasm $version already in $dest"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source scripts/pinned-wheel.sh
# fetch_tool NAME WHEEL_NAME SHA256 [WHEEL]: bin/NAME of the pinned wheel into $dest.
fetch_tool() {
  local tool=$1 wheel
  wheel=$(pinned_wheel "$2" "$version" "$3" "$tmp" "${4:-}") || return 1
  python3 - "$wheel" "$tool" "$tmp/$tool" <<'PY'
import sys, zipfile
wheel, tool, out = sys.argv[1], sys.argv[2], sys.argv[3]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.endswith("/bin/" + tool)]
    if len(names) != 1:
        sys.exit(f"fetch-cuobjdump: expected one bin/{tool} in {wheel}, found {names}")
    with z.open(names[0]) as src, open(out, "wb") as dst:
        dst.write(src.read())
PY
  mkdir -p "$dest"
  install -m 755 "$tmp/$tool" "$dest/$tool"
}
fetch_tool cuobjdump nvidia-cuda-cuobjdump 38780fee50863252a0b8926357faa91615ca1c8346490563f33a06100cd73f58 \
  "${SYMMOE_CUOBJDUMP_WHEEL:-}"
fetch_tool nvdisasm nvidia-cuda-nvdisasm d3fdbdd49fa53e2e4aacd3db8259d052bd2b049ececdcb69e92e083c6728e7ca \
  "${SYMMOE_NVDISASM_WHEEL:-}"
echo "$version" >"$stamp"
echo "fetch-cuobjdump: cuobjdump and nvdisasm $version in $dest"
