#!/usr/bin/env bash
# Where a swap-AB launch's time goes (NOTE [swap-AB trace]), on prebuilt binaries (carry
# build/release/tools/symmoe, build/release/tests/test_gemm_gpu and the binaries named in
# AB_BINS / TEST_BINS): the swap-AB GPU tests of each test binary in TEST_BINS (default
# test_gemm_gpu; GTEST_FILTER, default *SwapAb*; "skip" runs none), `--trace` timelines of
# each binary in TRACE_BINS (default symmoe) at 8 and 32 experts (TRACE_MS rows per expert),
# down at 8 rows over 1..32 experts (the fixed cost per launch), and the binaries in AB_BINS
# (default: symmoe, and symmoe_ab where present) alternating ROUNDS (2) times in one call
# (AB_MS rows per expert). Output: $OUT/gemm_swapab_trace.log.
export PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")/../../build/release"
bench() {
  local bin=$1
  shift
  timeout 120 $bin bench gemm --dtype fp8 --reps 10 --no-baseline "$@" 2>&1 |
    grep -E "^  (gate_up|down) |^          |d2d|rror"
}
ab_bins=${AB_BINS:-symmoe $( [ -x tools/symmoe_ab ] && echo symmoe_ab )}
{
  echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
  if [ "${GTEST_FILTER:-}" != skip ]; then
    for t in ${TEST_BINS:-test_gemm_gpu}; do
      echo "== tests/$t"
      timeout 300 tests/$t --gtest_filter="${GTEST_FILTER:-*SwapAb*}" 2>&1 |
        grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure|error|got" | head -40
    done
  fi
  for bin in ${TRACE_BINS:-symmoe}; do
    echo "== trace, $bin, auto"
    bench tools/$bin --experts "${TRACE_ES:-8,32}" --m "${TRACE_MS:-8,64}" --trace
  done
  echo "== down, 8 rows, 1..32 experts"
  bench tools/symmoe --op down --experts 1,2,4,8,16,32 --m 8
  for round in $(seq ${ROUNDS:-2}); do
    for bin in $ab_bins; do
      echo "== $bin, auto (round $round)"
      bench tools/$bin --experts 8,32 --m "${AB_MS:-8,16,32,64}"
    done
  done
} 2>&1 | tee $OUT/gemm_swapab_trace.log
