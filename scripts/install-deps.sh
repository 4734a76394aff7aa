#!/usr/bin/env bash
# Installs what building and testing symmoe needs on Debian/Ubuntu. The CUDA toolkit (nvcc,
# 12.8 or newer; 13.0 is what symmoe is tested with) must already be installed.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

need=()
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v g++ >/dev/null || need+=(g++)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)
command -v mpicc >/dev/null || need+=(libopenmpi-dev openmpi-bin)
if [ ${#need[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"
fi

if ! command -v nvcc >/dev/null; then
  if [ -x /usr/local/cuda/bin/nvcc ]; then
    echo "install-deps: nvcc is at /usr/local/cuda/bin; add it to PATH (export PATH=/usr/local/cuda/bin:\$PATH)"
  else
    echo "install-deps: no CUDA toolkit found (nvcc). Install CUDA 12.8+ first." >&2
    exit 1
  fi
fi
cmake_version=$(cmake --version | head -1 | awk '{print $3}')
if [ "$(printf '%s\n3.25\n' "$cmake_version" | sort -V | head -1)" != "3.25" ]; then
  echo "install-deps: cmake $cmake_version is older than 3.25; python3 -m pip install 'cmake>=3.25'" >&2
  exit 1
fi
# CUTLASS/CuTe headers for the grouped GEMM kernels (pinned wheel from PyPI, headers only).
"$(dirname "$0")/fetch-cutlass.sh"
# cuobjdump for the kernel resource check (ctest build.kernel_resources; pinned wheel from PyPI).
"$(dirname "$0")/fetch-cuobjdump.sh"
echo "install-deps: ok (cmake $cmake_version, $(nvcc --version | tail -1))"
