#!/usr/bin/env bash
# One call on the tile order below the row-band threshold (NOTE [grouped GEMM tile order],
# fp8_wgmma_row_band_by_default): at gate/up 8 x 1024 (10.7 tiles of 128 x 192 per CTA) the
# default walks bands of column blocks and Nsight Compute measured 561 MB of DRAM traffic
# against DeepGEMM's 408 MB (bench/RESULTS.md "Nsight Compute with column-major scales").
#  1. ncu, one launch each, column-major scales: ours with the default order, ours with
#     SYMMOE_GEMM_WGMMA_ROW_BAND=16 and DeepGEMM (NCU_SHAPE, default gate_up:8:1024):
#     $OUT/row_band_ncu.log (duration, clock, L2 / DRAM throughput, tensor pipe; DRAM bytes =
#     DRAM throughput x duration);
#  2. timed A/B, column-major scales, at MS (default 256,1024) rows over 8 and 32 experts,
#     ROUNDS (2) rounds of REPS (20) replays with --power: the default order against row bands of
#     16 and 8 and against the 128- and 256-wide tiles (no column padding at gate/up's
#     N = 4096, where 192-wide tiles pad 22 column blocks for 21.33): $OUT/gemm_row_band_ab.log,
#     ratios printed;
#  3. on an H200 only (DEFAULT=0 skips): the README's default table with column-major scales,
#     $OUT/gemm_default_col_h200.{log,json}.
# Carry build/release/tools/symmoe (built with the DeepGEMM baseline) and run as
#   SYMMOE_BUILD_COMMIT=<hash> scripts/device/gemm_row_band_session.sh
# Run 2026-12-08 on an H100 with d81ade7's binary (bench/RESULTS.md "Row bands from 512 rows per
# expert"; its ncu digest is in bench/results/ncu_row_band_gate_up_8x1024_h100.log): row bands
# from 512 rows landed in 2b9901a.
set -o pipefail
export PATH=/usr/local/cuda/bin:$PATH
root=$(cd "$(dirname "$0")/../.." && pwd)
c=${SYMMOE_BUILD_COMMIT:-unknown}
status=0
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
IFS=: read -r op e m <<<"${NCU_SHAPE:-gate_up:8:1024}"
digest() {  # the lines of one report that this probe compares
  grep -E "^\s+(Duration|SM Frequency|L2 Cache Throughput|L2 Hit Rate|DRAM Throughput|sm__pipe_tensor)|Kernel|1d2d|wgmma" "$1" |
    grep -vE "^\s*--" | sed 's/  */ /g' | head -12
}
{
  echo "commit: $c; $op E=$e M=$m, column-major scales"
  for rb in -1 16; do
    SYMMOE_GEMM_WGMMA_ROW_BAND=$rb OP=$op E=$e M=$m OURS="0:-1" NCU_TIMEOUT=90 BENCH_ARGS="--act-scales col" \
      "$root/scripts/device/gemm_vs_deepgemm_ncu.sh" > /dev/null 2>&1 || status=1
    echo "== ours, SYMMOE_GEMM_WGMMA_ROW_BAND=$rb"
    digest "$OUT/ncu_ours_n0_v-1.txt"
    if [ "$rb" = -1 ]; then
      echo "== DeepGEMM"
      digest "$OUT/ncu_deepgemm.txt"
    fi
    # (the digest is not named ncu_*: this clean-up would take it)
    rm -f "$OUT"/ncu_*.txt "$OUT"/ncu_*.log "$OUT"/*.csv
  done
} 2>&1 | tee "$OUT/row_band_ncu.log"
col=SYMMOE_AB_ARG=--act-scales=col
SETTINGS="auto $col
rb16 SYMMOE_GEMM_WGMMA_ROW_BAND=16 $col
rb8 SYMMOE_GEMM_WGMMA_ROW_BAND=8 $col
w128 SYMMOE_GEMM_WGMMA_TILE_N=128 $col
w256 SYMMOE_GEMM_WGMMA_TILE_N=256 $col" NAME=gemm_row_band_ab MS=${MS:-256,1024} REPS=${REPS:-20} POWER=1 NOBASE=1 \
  ROUNDS=${ROUNDS:-2} SYMMOE_BUILD_COMMIT=$c timeout 400 "$root/scripts/device/gemm_wgmma_env_ab.sh" > /dev/null || status=1
python3 "$root/scripts/analysis/ab_ratio.py" "$OUT/gemm_row_band_ab.log" | tail -20
python3 "$root/scripts/analysis/ab_ratio.py" "$OUT/gemm_row_band_ab.log" --per-ghz | tail -3
if [ "${DEFAULT:-1}" = 1 ] && nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  timeout 240 "$root/build/release/tools/symmoe" bench gemm --reps 10 --power --act-scales col \
    --json "$OUT/gemm_default_col_h200.json" > "$OUT/gemm_default_col_h200.log" 2>&1 || status=1
  grep -E "^  (gate_up|down) " "$OUT/gemm_default_col_h200.log" | head -50
fi
exit $status
