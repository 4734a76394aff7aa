#!/usr/bin/env bash
# Our fp8 wgmma kernel on prebuilt binaries (carry build/release/tools/symmoe and
# build/release/tests/test_gemm_gpu): the GPU GEMM tests, then fp8 at large M per expert with
# the wgmma kernel against CUTLASS's large-M tile and the same-run cuBLASLt baselines.
# Env: TILES (default "wgmma large"), MS (default 1024,4096), EXPERTS (default 8,32), DTYPE (default fp8;
# bf16 runs our bf16 wgmma kernel, whose variants are the epilogue only), TESTS=0 skips tests,
# SYMMOE_TEST_WGMMA_VARIANTS (indices, e.g. "9,11": the wgmma test runs only those besides variant 0),
# VARIANTS (default "1:tma:0:256:2"): wgmma variants to run, each CLUSTER:EPILOGUE:ORDERED:TILE_N:OVERLAP
# (the SYMMOE_GEMM_WGMMA_* values; TILE_N and OVERLAP may be left out: 256, 0).
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
    [ "$t" = wgmma ] && variants=${VARIANTS:-1:tma:0:256:2}
    for v in $variants; do
      tag=$t
      if [ "$v" != - ]; then
        IFS=: read -r c e o n ov <<<"$v"
        n=${n:-256}
        ov=${ov:-0}
        tag=${t}_c${c}_${e}_o${o}_n${n}_v${ov}
        export SYMMOE_GEMM_WGMMA_CLUSTER=$c SYMMOE_GEMM_WGMMA_EPILOGUE=$e SYMMOE_GEMM_WGMMA_ORDERED=$o \
          SYMMOE_GEMM_WGMMA_TILE_N=$n SYMMOE_GEMM_WGMMA_OVERLAP=$ov
      fi
      echo "== tile $tag"
      timeout ${BENCH_TIMEOUT:-240} $B bench gemm --dtype ${DTYPE:-fp8} --tile $t --experts ${EXPERTS:-8,32} --m ${MS:-1024,4096} \
        --reps ${REPS:-5} --json $OUT/gemm_wgmma_${DTYPE:-fp8}_$tag.json 2>&1 | grep -E "^  (gate_up|down|op) |rror|n/a"
    done
  done
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
} 2>&1 | tee $OUT/gemm_wgmma.log
