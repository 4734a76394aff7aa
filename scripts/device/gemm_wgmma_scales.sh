#!/usr/bin/env bash
# The fp8 wgmma kernel's stage scales by tensor copies against cp.async (NOTE [wgmma stage
# scales]; prebuilt binaries: carry build/release/tools/symmoe and
# build/release/tests/test_gemm_gpu): the wgmma GPU test on the chosen variants (the last one
# forces cp.async on the tensor-copy cases), the bf16 wgmma test (same frame), then `symmoe
# bench gemm --tile wgmma` per tile variant with SYMMOE_GEMM_WGMMA_SCALES alternating
# tma / cp_async twice in the same device call, the first run with the same-run baselines
# (DeepGEMM included when built in).
# Env: TEST_VARIANTS (SYMMOE_TEST_WGMMA_VARIANTS, default 5,11,13,17,18), VARIANTS
# (TILE_N:OVERLAP, default "256:2 192:0"), MS (256,1024,4096), EXPERTS (8,32), ROUNDS (2).
# Output: $OUT/gemm_wgmma_scales.log, $OUT/gemm_wgmma_scales_json.tgz (JSON per run).
export PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")/../../build/release"
{
  echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
  nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
  echo "== test, fp8 wgmma variants 0,${TEST_VARIANTS:-5,11,13,17,18}"
  SYMMOE_TEST_WGMMA_VARIANTS=${TEST_VARIANTS:-5,11,13,17,18} timeout 400 \
    tests/test_gemm_gpu --gtest_filter='*WgmmaKernelMatches*:*Bf16WgmmaKernel*' 2>&1 |
    grep -E "^\[  (PASSED|FAILED) |^\[       OK|^\[  FAILED|Failure|rror|differ|Expected|Which" | head -30
  first=1
  for v in ${VARIANTS:-256:2 192:0}; do
    IFS=: read -r n ov <<<"$v"
    for round in $(seq "${ROUNDS:-2}"); do
      for sc in tma cp_async; do
        echo "== bench n$n v$ov scales $sc round $round"
        base=--no-baseline
        [ $first = 1 ] && base=
        first=0
        SYMMOE_GEMM_WGMMA_SCALES=$sc SYMMOE_GEMM_WGMMA_TILE_N=$n SYMMOE_GEMM_WGMMA_OVERLAP=$ov timeout 300 \
          tools/symmoe bench gemm --dtype fp8 --tile wgmma --experts ${EXPERTS:-8,32} --m ${MS:-256,1024,4096} \
          --reps 5 $base --json $OUT/scales_n${n}_v${ov}_${sc}_r$round.json 2>&1 |
          grep -E "^  (gate_up|down) |DeepGEMM 128x(128|192)|rror"
      done
    done
  done
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
} 2>&1 | tee $OUT/gemm_wgmma_scales.log
tar -C "$OUT" -czf "$OUT/gemm_wgmma_scales_json.tgz" $(cd "$OUT" && ls scales_*.json) && rm -f "$OUT"/scales_*.json
