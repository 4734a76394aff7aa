#!/usr/bin/env bash
# Grouped GEMM tuning runs on prebuilt binaries (carry build/release/tools/symmoe): both tile
# families at every M, against the cuBLASLt baselines. Output: $OUT/gemm_sweep.log.
export PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")/../../build/release"
B=tools/symmoe
for t in large small; do
  echo "== tile $t"
  timeout 120 $B bench gemm --tile $t --experts 8,32 --m 64,256,1024,4096 --reps 8 --dtype ${DTYPES:-fp8} 2>&1 | grep -E "^  (gate_up|down) |n/a"
done 2>&1 | tee $OUT/gemm_sweep.log
