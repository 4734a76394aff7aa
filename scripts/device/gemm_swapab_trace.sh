#!/usr/bin/env bash
# Where a swap-AB launch's time goes (NOTE [swap-AB trace]), on prebuilt binaries (carry
# build/release/tools/symmoe, build/release/tests/test_gemm_gpu and, for the A/B part,
# build/release/tools/symmoe_ab, the binary to compare against): the swap-AB GPU tests
# (GTEST_FILTER, default *SwapAb*; "skip" runs none), `--trace` timelines at 8 and 32 experts
# (TRACE_MS rows per expert), down at 8 rows over 1..32 experts (the fixed cost per launch), and
# symmoe, symmoe --weights-written (no early weight copies into shared memory) and symmoe_ab,
# alternating twice in one call (AB_MS). Output: $OUT/gemm_swapab_trace.log.
export PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")/../../build/release"
bench() {
  local bin=$1
  shift
  timeout 120 $bin bench gemm --dtype fp8 --reps 10 --no-baseline "$@" 2>&1 |
    grep -E "^  (gate_up|down) |^          |d2d|rror"
}
{
  echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
  if [ "${GTEST_FILTER:-}" != skip ]; then
    timeout 300 tests/test_gemm_gpu --gtest_filter="${GTEST_FILTER:-*SwapAb*}" 2>&1 |
      grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure|error|got" | head -40
  fi
  echo "== trace, auto"
  bench tools/symmoe --experts 8,32 --m "${TRACE_MS:-8,64}" --trace
  echo "== trace, auto, --weights-written"
  bench tools/symmoe --experts 8 --m "${TRACE_MS:-8,64}" --trace --weights-written
  echo "== down, 8 rows, 1..32 experts"
  bench tools/symmoe --op down --experts 1,2,4,8,16,32 --m 8
  for round in 1 2; do
    echo "== symmoe, auto (round $round)"
    bench tools/symmoe --experts 8,32 --m "${AB_MS:-8,16,32,64}"
    echo "== symmoe --weights-written, auto (round $round)"
    bench tools/symmoe --experts 8,32 --m "${AB_MS:-8,16,32,64}" --weights-written
    if [ -x tools/symmoe_ab ]; then
      echo "== symmoe_ab, auto (round $round)"
      bench tools/symmoe_ab --experts 8,32 --m "${AB_MS:-8,16,32,64}"
    fi
  done
} 2>&1 | tee $OUT/gemm_swapab_trace.log
