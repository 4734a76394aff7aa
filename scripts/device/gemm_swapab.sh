#!/usr/bin/env bash
# The fp8 swap-AB decode kernel on prebuilt binaries (carry build/release/tools/symmoe and
# build/release/tests/test_gemm_gpu): its GPU tests (GTEST_FILTER, default *SwapAb*; "skip"
# runs none), then M = 8..64 per expert (MS) with the auto, dynamic, static and split schedules
# (SYMMOE_GEMM_SWAPAB_SCHEDULE), without the early launch, masked, CUTLASS's small-M tile, and
# a shape whose item count splits unevenly over the SMs (--intermediate 2176, --hidden 7296:
# 68 x 64-row items per expert on gate/up) with the dynamic, static and split schedules; same process per run (its d2d
# copy rate is the Wt% reference). KBLOCKS sets SYMMOE_GEMM_SWAPAB_KBLOCKS (default: the
# library's). Output: $OUT/gemm_swapab.log.
export PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")/../../build/release"
B=tools/symmoe
[ -n "${KBLOCKS:-}" ] && export SYMMOE_GEMM_SWAPAB_KBLOCKS=$KBLOCKS
bench() {
  timeout 120 $B bench gemm --dtype fp8 --experts 8,32 --m ${MS:-8,16,32,64} --reps 10 --no-baseline "$@" 2>&1 |
    grep -E "^  (gate_up|down) |d2d|rror"
}
{
  echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
  if [ "${GTEST_FILTER:-}" != skip ]; then
    timeout 300 tests/test_gemm_gpu --gtest_filter="${GTEST_FILTER:-*SwapAb*}" 2>&1 |
      grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure|error|got" | head -40
  fi
  for sched in auto dynamic static split; do
    echo "== swapab, SYMMOE_GEMM_SWAPAB_SCHEDULE=$sched"
    SYMMOE_GEMM_SWAPAB_SCHEDULE=$sched bench --tile swapab
  done
  echo "== swapab, --no-early-launch"
  bench --tile swapab --no-early-launch
  echo "== swapab, masked"
  bench --tile swapab --layout masked
  echo "== small"
  bench --tile small
  for sched in dynamic static split; do
    echo "== swapab, SYMMOE_GEMM_SWAPAB_SCHEDULE=$sched, intermediate 2176, hidden 7296"
    SYMMOE_GEMM_SWAPAB_SCHEDULE=$sched bench --tile swapab --intermediate 2176 --hidden 7296
  done
  echo "== small, intermediate 2176, hidden 7296"
  bench --tile small --intermediate 2176 --hidden 7296
} 2>&1 | tee $OUT/gemm_swapab.log
