#!/usr/bin/env bash
# Does the order of `symmoe bench gemm`'s sizes change what they measure? One call: the sizes in
# the bench's order (rows per expert ascending) once per --warmup-ms value in WARMUPS (untimed
# replays of each section before it is timed; default "0 300"), then in the former dtype -> op ->
# experts -> rows order (one process per dtype, op and expert count, --warmup-ms 0), ROUNDS
# times, with --power (clock, power, power-cap share per section). M (default 8,64,256), REPS
# (10), BASELINES (cublas). The logged H100 call (gemm_bench_order_settle_ab_h100.log) ran an
# idle gap (--settle-ms, since replaced by --warmup-ms) of 0, 300 and 1000 ms. Prebuilt binary:
# carry build/release/tools/symmoe. Output: $OUT/gemm_bench_order_ab.log.
export PATH=/usr/local/cuda/bin:$PATH
B=build/release/tools/symmoe
M=${M:-8,64,256}
common="--m $M --reps ${REPS:-10} --power --baselines ${BASELINES:-cublas}"
log=$OUT/gemm_bench_order_ab.log
{
  echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
  nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
  for r in $(seq 1 ${ROUNDS:-1}); do
    for w in ${WARMUPS:-0 300}; do
      echo "== rows-first warmup $w round $r"
      timeout 300 $B bench gemm $common --warmup-ms $w 2>&1 | grep -E "^  (gate_up|down) |power ours|d2d"
      nvidia-smi --query-gpu=temperature.gpu --format=csv,noheader
    done
    echo "== dtype-first warmup 0 round $r"
    for d in fp8 bf16; do for op in gate_up down; do for e in 8 32; do
      timeout 60 $B bench gemm --dtype $d --op $op --experts $e $common --warmup-ms 0 2>&1 |
        grep -E "^  (gate_up|down) |power ours"
    done; done; done
    nvidia-smi --query-gpu=temperature.gpu --format=csv,noheader
  done
} > $log 2>&1
python3 - "$log" <<'PY'
import re, sys
runs, cur = {}, None
for line in open(sys.argv[1]):
    if line.startswith("== "):
        cur = line[3:].strip(); runs[cur] = {}; continue
    m = re.match(r"^  (gate_up|down)\s+(fp8|bf16)\s+(\d+)\s+(\d+)\s+\d+\s+\d+\s+\S+\s+([\d.]+)", line)
    if m and cur: runs[cur][" ".join(m.groups()[:4])] = float(m.group(5))
names = list(runs)
print("time (us) per order / warm-up:", " | ".join(names))
for key in runs[names[0]]:
    print(f"  {key:24s}", "  ".join(f"{runs[n].get(key, float('nan')):8.1f}" for n in names))
PY
