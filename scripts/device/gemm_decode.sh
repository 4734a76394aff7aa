#!/usr/bin/env bash
# Grouped GEMM decode-size runs on prebuilt binaries (carry build/release): the GPU GEMM tests,
# then fp8 at M = 8..64 per expert per kernel family (TILES, default "swapab decode small": our
# swap-AB and decode kernels, CUTLASS's small-M tile), both layouts (same process: the d2d copy
# rate of each run is the Wt% reference). GTEST_FILTER limits the tests (default: all).
# Output: $OUT/gemm_decode.log (+ JSON).
export PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")/../../build/release"
B=tools/symmoe
{
  echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
  [ -n "${SASS:-}" ] && cuobjdump --dump-sass $B 2>/dev/null | grep -oE "(HMMA|QMMA|IMMA|F2FP|HGMMA|QGMMA)[.A-Z0-9_]*" | sort | uniq -c
  timeout 300 tests/test_gemm_gpu ${GTEST_FILTER:+--gtest_filter=$GTEST_FILTER} 2>&1 | grep -E "^\[  (PASSED|FAILED) |^\[==========\]|Failure|error|got" | head -40
  for layout in contiguous masked; do
    for t in ${TILES:-swapab decode small}; do
      echo "== $layout tile $t"
      timeout 120 $B bench gemm --dtype fp8 --tile $t --layout $layout --experts 8,32 --m ${MS:-8,16,32,64} \
        --reps 10 --no-baseline --json $OUT/gemm_decode_${layout}_$t.json 2>&1 | grep -E "^  (gate_up|down) |d2d|rror"
    done
  done
} 2>&1 | tee $OUT/gemm_decode.log
