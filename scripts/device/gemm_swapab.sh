#!/usr/bin/env bash
# The fp8 swap-AB decode kernel on prebuilt binaries (carry build/release/tools/symmoe and
# build/release/tests/test_gemm_gpu): its GPU tests, then M = 8..64 per expert for each
# SYMMOE_GEMM_SWAPAB_KBLOCKS in KBLOCKS (default "1 2 4") against CUTLASS's small-M tile, then
# the same at row strides that are not a power of two (--intermediate 2176, --hidden 7296),
# same process per run (its d2d copy rate is the Wt% reference). Output: $OUT/gemm_swapab.log.
export PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")/../../build/release"
B=tools/symmoe
bench() {
  timeout 120 $B bench gemm --dtype fp8 --experts 8,32 --m ${MS:-8,16,32,64} --reps 10 --no-baseline "$@" 2>&1 |
    grep -E "^  (gate_up|down) |d2d|rror"
}
{
  echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
  timeout 300 tests/test_gemm_gpu --gtest_filter="${GTEST_FILTER:-*SwapAb*}" 2>&1 |
    grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure|error|got" | head -40
  for kd in ${KBLOCKS:-1 2 4}; do
    echo "== swapab, SYMMOE_GEMM_SWAPAB_KBLOCKS=$kd"
    SYMMOE_GEMM_SWAPAB_KBLOCKS=$kd bench --tile swapab
  done
  echo "== small"
  bench --tile small
  for kd in ${KBLOCKS:-1 2 4}; do
    echo "== swapab, SYMMOE_GEMM_SWAPAB_KBLOCKS=$kd, intermediate 2176, hidden 7296"
    SYMMOE_GEMM_SWAPAB_KBLOCKS=$kd bench --tile swapab --intermediate 2176 --hidden 7296
  done
} 2>&1 | tee $OUT/gemm_swapab.log
