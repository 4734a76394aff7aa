#!/usr/bin/env bash
# One device call: the unrolled 128 x 192 tile in 2-CTA clusters (weight multicast) under the
# static and the auto schedule (dynamic in clusters: NOTE [wgmma tile schedule]) — its GPU test
# variants and the bf16 kernel's (dynamic in clusters of 2 and 2 x 2), a same-call A/B against the
# default (auto schedule, clusters of one) and the static schedule, and, time left, the L2
# counters next to DeepGEMM's (gemm_l2_traffic_ncu.sh). Prebuilt binaries: carry
# build/release/tools/symmoe and build/release/tests/test_gemm_gpu.
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name --format=csv,noheader
(cd build/release && SYMMOE_WAIT_TIMEOUT_S=5 SYMMOE_TEST_WGMMA_VARIANTS=27,29,30,31,32,33 timeout 100 tests/test_gemm_gpu \
  --gtest_filter='*WgmmaKernelMatches*:*Bf16WgmmaKernelMatches*' > $OUT/test_gemm_gpu_c2.log 2>&1; echo "test rc $?"
  grep -E "OK \]|FAILED|rror" $OUT/test_gemm_gpu_c2.log | head -12)
SETTINGS="auto SYMMOE_GEMM_WGMMA_SCHEDULE=auto
c2 SYMMOE_GEMM_WGMMA_CLUSTER=2 SYMMOE_GEMM_WGMMA_TILE_N=192
c2static SYMMOE_GEMM_WGMMA_CLUSTER=2 SYMMOE_GEMM_WGMMA_TILE_N=192 SYMMOE_GEMM_WGMMA_SCHEDULE=static
static SYMMOE_GEMM_WGMMA_SCHEDULE=static" NAME=gemm_wgmma_c2_ab MS=1024,4096 EXPERTS=8,32 ROUNDS=2 REPS=20 POWER=1 \
  timeout 330 scripts/device/gemm_wgmma_env_ab.sh > /dev/null 2>&1; echo "ab rc $?"
python3 scripts/analysis/ab_ratio.py $OUT/gemm_wgmma_c2_ab.log | tail -16
python3 scripts/analysis/ab_ratio.py --per-ghz $OUT/gemm_wgmma_c2_ab.log | tail -4
if [ "$SECONDS" -lt 430 ]; then
  SYMMOE_BUILD_COMMIT=${SYMMOE_BUILD_COMMIT:-unknown} VARIANTS="auto SYMMOE_GEMM_WGMMA_SCHEDULE=auto
c2 SYMMOE_GEMM_WGMMA_CLUSTER=2 SYMMOE_GEMM_WGMMA_TILE_N=192" NCU_TIMEOUT=45 timeout $((560 - SECONDS)) \
    scripts/device/gemm_l2_traffic_ncu.sh > /dev/null 2>&1; echo "ncu rc $?"
  grep -v "^lts__t_requests" $OUT/gemm_l2_traffic.log | head -70
else
  echo "ncu skipped: ${SECONDS} s used"
fi
