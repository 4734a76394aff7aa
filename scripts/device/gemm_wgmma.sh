#!/usr/bin/env bash
# Our fp8 wgmma kernel on prebuilt binaries (carry build/release/tools/symmoe and
# build/release/tests/test_gemm_gpu): the GPU GEMM tests, then fp8 at large M per expert with
# the wgmma kernel against CUTLASS's large-M tile and the same-run cuBLASLt baselines.
# Env: TILES (default "wgmma large"), MS (default 1024,4096), EXPERTS (default 8,32), TESTS=0 skips tests,
# ORDERS (default "1") and CLUSTERS (default "1"): SYMMOE_GEMM_WGMMA_ORDERED and
# SYMMOE_GEMM_WGMMA_CLUSTER values to run the wgmma tile with (every combination).
# Output: $OUT/gemm_wgmma.log (+ JSON per tile, and per variant for wgmma).
export PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")/../../build/release"
B=tools/symmoe
{
  echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
  if [ "${TESTS:-1}" != 0 ]; then
    timeout ${TEST_TIMEOUT:-300} tests/test_gemm_gpu ${GTEST_FILTER:+--gtest_filter=$GTEST_FILTER} 2>&1 |
      grep -E "^\[  (PASSED|FAILED) |^\[       OK|^\[==========\]|Failure|error|got|mismatch|Which is|Expected" | head -60
  fi
  for t in ${TILES:-wgmma large}; do
    variants=-
    if [ "$t" = wgmma ]; then
      variants=
      for c in ${CLUSTERS:-1}; do for o in ${ORDERS:-1}; do variants="$variants c$c:o$o"; done; done
    fi
    for v in $variants; do
      tag=$t
      if [ "$v" != - ]; then
        tag=${t}_${v/:/_}
        export SYMMOE_GEMM_WGMMA_CLUSTER=${v:1:1} SYMMOE_GEMM_WGMMA_ORDERED=${v:4:1}
      fi
      echo "== tile $tag"
      timeout ${BENCH_TIMEOUT:-240} $B bench gemm --dtype fp8 --tile $t --experts ${EXPERTS:-8,32} --m ${MS:-1024,4096} \
        --reps ${REPS:-5} --json $OUT/gemm_wgmma_$tag.json 2>&1 | grep -E "^  (gate_up|down|op) |rror|n/a"
    done
  done
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
} 2>&1 | tee $OUT/gemm_wgmma.log
