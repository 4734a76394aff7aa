#!/usr/bin/env bash
export PATH=/usr/local/cuda/bin:$PATH
root=$PWD
cd build/release
{
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
for t in test_gemm_gpu test_ep_gpu test_runtime_gpu test_eager_loading_gpu; do
  echo "### $t"; ( time timeout 300 tests/$t ) 2>&1 | grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|tests ran|Failure|^real" | head -12
done
} > $OUT/test_gpu_h200.log 2>&1
cat $OUT/test_gpu_h200.log
cd $root
SYMMOE_BUILD_COMMIT=0c3632e TILE=auto ROUNDS=1 timeout 200 bash scripts/device/gemm_deepgemm.sh > /dev/null 2>&1; echo "dg rc=$?"
SYMMOE_BUILD_COMMIT=0c3632e NAME=gemm_wgmma_default_ab timeout 200 bash scripts/device/gemm_wgmma_env_ab.sh > /dev/null 2>&1; echo "ab rc=$?"
