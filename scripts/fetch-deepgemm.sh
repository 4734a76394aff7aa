#!/usr/bin/env bash
# Puts DeepGEMM's kernel headers (include/deep_gemm: its SM90 fp8 grouped GEMM, MIT licence)
# into third_party/deepgemm/include (git-ignored), for the optional same-run DeepGEMM baseline of
# `symmoe bench gemm` (configure with -DSYMMOE_DEEPGEMM_INCLUDE=third_party/deepgemm/include).
# DeepGEMM is not on PyPI with its headers; the sgl-kernel wheel (pinned) ships them. Nothing of
# DeepGEMM is built into the library or its tests. Idempotent.
#   scripts/fetch-deepgemm.sh             # fetch if missing (downloads ~540 MB once)
#   SYMMOE_SGL_KERNEL_WHEEL=path.whl ...   # use a downloaded wheel
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.3.21
sha256=57dfb3a2a3cd759f499c32e2bad5f6489b7c58f7f9a84ee00c53ec92d303aaab
dest=third_party/deepgemm
stamp=$dest/VERSION
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "sgl-kernel $version" ]; then
  echo "fetch-deepgemm: headers of sgl-kernel $version already in $dest/include"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source scripts/pinned-wheel.sh
wheel=$(pinned_wheel sgl-kernel "$version" "$sha256" "$tmp" "${SYMMOE_SGL_KERNEL_WHEEL:-}") || exit 1
python3 - "$wheel" "$tmp/x" <<'PY'
import sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith("deep_gemm/include/deep_gemm/"):
            z.extract(name, out)
PY
rm -rf "$dest"
mkdir -p "$dest/include"
cp -r "$tmp/x/deep_gemm/include/deep_gemm" "$dest/include/"
echo "sgl-kernel $version" >"$stamp"
echo "fetch-deepgemm: DeepGEMM headers (sgl-kernel $version) in $dest/include ($(du -sh "$dest" | cut -f1))"
