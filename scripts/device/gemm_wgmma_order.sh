#!/usr/bin/env bash
# The fp8 wgmma kernel's tile widths and tile orders (prebuilt binaries: carry
# build/release/tools/symmoe and build/release/tests/test_gemm_gpu): the wgmma GPU test on the
# chosen variants with each order, then `symmoe bench gemm --tile wgmma` per variant and order,
# the first with the same-run baselines (DeepGEMM included when built in).
# Env: TEST_VARIANTS (SYMMOE_TEST_WGMMA_VARIANTS for the tests, default 5,11,17), BANDS (row bands
# to test and bench besides 0, default 16), VARIANTS (TILE_N:OVERLAP, default "256:2 192:0 128:0"),
# MS (1024,4096), EXPERTS (8,32).
# Output: $OUT/gemm_wgmma_order.log (+ JSON per run).
export PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")/../../build/release"
{
  echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
  nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
  for rb in 0 ${BANDS:-16}; do
    echo "== test, row band $rb"
    SYMMOE_GEMM_WGMMA_ROW_BAND=$rb SYMMOE_TEST_WGMMA_VARIANTS=${TEST_VARIANTS:-5,11,17} timeout 300 \
      tests/test_gemm_gpu --gtest_filter='*WgmmaKernelMatches*' 2>&1 |
      grep -E "^\[  (PASSED|FAILED) |^\[       OK|Failure|rror|differ|Expected|Which" | head -20
  done
  first=1
  for v in ${VARIANTS:-256:2 192:0 128:0}; do
    IFS=: read -r n ov <<<"$v"
    for rb in 0 ${BANDS:-16}; do
      echo "== bench n$n v$ov row band $rb"
      base=--no-baseline
      [ $first = 1 ] && base=
      first=0
      SYMMOE_GEMM_WGMMA_ROW_BAND=$rb SYMMOE_GEMM_WGMMA_TILE_N=$n SYMMOE_GEMM_WGMMA_OVERLAP=$ov timeout 300 \
        tools/symmoe bench gemm --dtype fp8 --tile wgmma --experts ${EXPERTS:-8,32} --m ${MS:-1024,4096} --reps 5 $base \
        --json $OUT/order_n${n}_v${ov}_rb$rb.json 2>&1 | grep -E "^  (gate_up|down) |DeepGEMM 128x(128|192)|rror"
    done
  done
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
} 2>&1 | tee $OUT/gemm_wgmma_order.log
