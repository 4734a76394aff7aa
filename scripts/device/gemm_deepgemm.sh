#!/usr/bin/env bash
# Our fp8 grouped GEMM against DeepGEMM's, same process, on prebuilt binaries (carry
# build/release/tools/symmoe built with -DSYMMOE_DEEPGEMM_INCLUDE=third_party/deepgemm/include
# after scripts/fetch-deepgemm.sh): the DeepGEMM kernels' registers and spills, then `symmoe
# bench gemm` at fp8, contiguous layout, with its DeepGEMM lines (every built-in config).
# Env: MS (default 256,1024,4096), EXPERTS (default 8,32), TILE (default auto), ROUNDS (default 1),
# REPS (default 5).
# Output: $OUT/gemm_deepgemm.log, $OUT/gemm_deepgemm_<round>.json.
export PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")/../../build/release"
B=tools/symmoe
{
  echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader
  cuobjdump -res-usage $B 2>/dev/null | grep -A1 "sm90_fp8_gemm_1d2d" | grep -o "REG:[0-9]* STACK:[0-9]* SHARED:[0-9]*" |
    sort | uniq -c | sed 's/^/  deepgemm kernels: /'
  for r in $(seq 1 ${ROUNDS:-1}); do
    echo "== round $r"
    timeout ${BENCH_TIMEOUT:-400} $B bench gemm --dtype fp8 --tile ${TILE:-auto} --experts ${EXPERTS:-8,32} \
      --m ${MS:-256,1024,4096} --reps ${REPS:-5} --json $OUT/gemm_deepgemm_$r.json 2>&1 |
      grep -E "^  (gate_up|down|Op) |DeepGEMM|rror|n/a"
  done
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
} 2>&1 | tee $OUT/gemm_deepgemm.log
