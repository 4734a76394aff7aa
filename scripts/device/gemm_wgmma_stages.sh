#!/usr/bin/env bash
# Our wgmma kernels with 3 stages (the output tile staged whole) against 4 (the output staged
# in 64-column rounds), SYMMOE_GEMM_WGMMA_STAGES, on prebuilt binaries (carry
# build/release/tools/symmoe): fp8 (--tile wgmma, the default overlapped promotion) and bf16
# (--tile wgmma, clusters of 1) at large M, in the order ORDER (default "3 4 3 4": GPU heat
# shows as a trend); same-run cuBLASLt dense baseline. BF16_MS / FP8_MS set the rows per
# expert (default 256,1024,4096 / 1024,4096). Output: $OUT/gemm_wgmma_stages.log.
export PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")/../../build/release"
B=tools/symmoe
{
  echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw --format=csv,noheader
  for dtype in bf16 fp8; do
    ms=${BF16_MS:-256,1024,4096}
    [ $dtype = fp8 ] && ms=${FP8_MS:-1024,4096}
    for stages in ${ORDER:-3 4 3 4}; do
      echo "== $dtype --tile wgmma, SYMMOE_GEMM_WGMMA_STAGES=$stages"
      SYMMOE_GEMM_WGMMA_STAGES=$stages timeout 150 $B bench gemm --dtype $dtype --tile wgmma --experts 8,32 \
        --m $ms --reps 5 2>&1 | grep -E "^  (gate_up|down) |rror"
    done
  done
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw --format=csv,noheader
} 2>&1 | tee $OUT/gemm_wgmma_stages.log
