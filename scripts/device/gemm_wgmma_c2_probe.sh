#!/usr/bin/env bash
# One device call: the unrolled 128 x 192 tile in 2-CTA clusters (weight multicast) — its GPU test
# variants, a same-call A/B against the default (auto schedule) and the static schedule, and the L2 counters of both next
# to DeepGEMM's (gemm_l2_traffic_ncu.sh). Prebuilt binaries: carry build/release/tools/symmoe and
# build/release/tests/test_gemm_gpu.
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name --format=csv,noheader
(cd build/release && SYMMOE_WAIT_TIMEOUT_S=5 SYMMOE_TEST_WGMMA_VARIANTS=27,29,30 timeout 90 tests/test_gemm_gpu --gtest_filter='*WgmmaKernelMatches*' > $OUT/test_gemm_gpu_c2.log 2>&1; echo "test rc $?"; grep -E "OK|FAILED|rror" $OUT/test_gemm_gpu_c2.log | head -8)
SETTINGS="auto SYMMOE_GEMM_WGMMA_SCHEDULE=auto
c2 SYMMOE_GEMM_WGMMA_CLUSTER=2 SYMMOE_GEMM_WGMMA_TILE_N=192
static SYMMOE_GEMM_WGMMA_SCHEDULE=static" NAME=gemm_wgmma_c2_ab MS=1024,4096 EXPERTS=8,32 ROUNDS=2 REPS=20 POWER=1 timeout 360 scripts/device/gemm_wgmma_env_ab.sh > /dev/null 2>&1; echo "ab rc $?"
python3 scripts/analysis/ab_ratio.py $OUT/gemm_wgmma_c2_ab.log | tail -12
python3 scripts/analysis/ab_ratio.py --per-ghz $OUT/gemm_wgmma_c2_ab.log | tail -3
SYMMOE_BUILD_COMMIT=8efddc6 VARIANTS="auto SYMMOE_GEMM_WGMMA_SCHEDULE=auto
c2 SYMMOE_GEMM_WGMMA_CLUSTER=2 SYMMOE_GEMM_WGMMA_TILE_N=192" NCU_TIMEOUT=45 timeout 140 scripts/device/gemm_l2_traffic_ncu.sh > /dev/null 2>&1; echo "ncu rc $?"
grep -v "^lts__t_requests" $OUT/gemm_l2_traffic.log | head -70
