#!/usr/bin/env bash
# One device call for the fp8 wgmma auto tile order (fp8_wgmma_row_band_by_default): the wgmma GPU
# tests (the auto row bands against the reference and the column-band bits, a subset of the
# kernel variants, SM budgets and graph replay), then a same-call A/B of the new default against
# the column-band walk (SYMMOE_GEMM_WGMMA_ROW_BAND=0: the previous default). The logged call
# (bench/results/gemm_wgmma_row_band_ab_h100.log) also ran the round scales of 8b9845e
# (SYMMOE_GEMM_WGMMA_SCALES=rounds, test variants 29 and 30; reverted). Prebuilt binaries:
# carry build/release/tools/symmoe (with the DeepGEMM baseline) and build/release/tests/test_gemm_gpu.
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name --format=csv,noheader
(cd build/release && SYMMOE_WAIT_TIMEOUT_S=5 SYMMOE_TEST_WGMMA_VARIANTS=${TEST_VARIANTS:-17,21,22,27} timeout 200 \
  tests/test_gemm_gpu --gtest_filter='*Wgmma*:*SmBudget*' > $OUT/test_gemm_gpu_${NAME:-row_band}.log 2>&1; echo "test rc $?"
  grep -E "OK \]|FAILED|rror|PASSED" $OUT/test_gemm_gpu_${NAME:-row_band}.log | head -20)
SETTINGS="default
columns SYMMOE_GEMM_WGMMA_ROW_BAND=0" NAME=${NAME:-gemm_wgmma_row_band_ab} MS=${MS:-1024,4096} EXPERTS=${EXPERTS:-8,32} ROUNDS=${ROUNDS:-2} REPS=${REPS:-20} POWER=1 \
  timeout ${AB_LIMIT_S:-260} scripts/device/gemm_wgmma_env_ab.sh > /dev/null 2>&1; echo "ab rc $?"
python3 scripts/analysis/ab_ratio.py $OUT/${NAME:-gemm_wgmma_row_band_ab}.log | tail -24
python3 scripts/analysis/ab_ratio.py --per-ghz $OUT/${NAME:-gemm_wgmma_row_band_ab}.log | tail -4
