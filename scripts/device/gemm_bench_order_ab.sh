#!/usr/bin/env bash
# Does the order of `symmoe bench gemm`'s sizes change what they measure? One call: the default
# run (rows per expert ascending) and the same sizes in the former dtype -> op -> experts -> rows
# order (one invocation per dtype, op and expert count), ROUNDS times alternating, with --power
# (clock, power, power-cap share per section). Prebuilt binary: carry build/release/tools/symmoe.
# Output: $OUT/gemm_bench_order_ab.log.
export PATH=/usr/local/cuda/bin:$PATH
B=build/release/tools/symmoe
log=$OUT/gemm_bench_order_ab.log
{
  echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
  nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
  for r in $(seq 1 ${ROUNDS:-2}); do
    echo "== rows-first round $r"
    timeout 150 $B bench gemm --reps ${REPS:-10} --power --baselines ${BASELINES:-cublas} 2>&1 | grep -E "^  (gate_up|down) |power ours|d2d"
    nvidia-smi --query-gpu=temperature.gpu --format=csv,noheader
    echo "== dtype-first round $r"
    for d in fp8 bf16; do for op in gate_up down; do for e in 8 32; do
      timeout 60 $B bench gemm --dtype $d --op $op --experts $e --reps ${REPS:-10} --power --baselines ${BASELINES:-cublas} 2>&1 |
        grep -E "^  (gate_up|down) |power ours"
    done; done; done
    nvidia-smi --query-gpu=temperature.gpu --format=csv,noheader
  done
} > $log 2>&1
grep -E "^== |^  (gate_up|down) +(fp8|bf16) +(8|32) +(8|64|256) " $log | awk '{print $1,$2,$3,$4,$5,$8,$9,$11}'
