#!/usr/bin/env bash
# Nsight Compute, one launch each, of our fp8 wgmma kernel and DeepGEMM's at one shape (prebuilt
# binaries: carry build/release/tools/symmoe built with the DeepGEMM baseline, gemm_deepgemm.sh).
# Env: OP (gate_up), E (8), M (4096); OURS (default "256:2 192:0": TILE_N:OVERLAP variants of ours);
# DG_SKIP (default 9: DeepGEMM launches to skip — three per config in bench order, so 9 is the 4th
# config's first, 128x192 s4, with --warmup-ms 0: the warm-up's replays made every skip land in
# the first config, 128x128 s5, in the reports of 2026-12-07 — check the kernel name in them);
# SECTIONS; BENCH_ARGS: more bench arguments for every launch (e.g. "--act-scales col": ours
# reads column-major scales; DeepGEMM reads its own layout either way).
# SOURCE=1 adds the SourceCounters section (per-instruction execution counts and warp stall
# samples) and exports them ($OUT/ncu_<tag>_sass.csv; scripts/analysis/ncu_stalls.py
# summarizes the stalls, ncu_opcode_mix.py the instruction mix). TAR=1 packs the outputs into $OUT/ncu_vs.tar.gz
# (the device tool returns at most 8 files).
# RAW=1 exports every collected metric by name ($OUT/ncu_<tag>_raw.csv; with the
# MemoryWorkloadAnalysis_Tables and _Chart sections in SECTIONS: the L2 sectors by source unit,
# the fabric between the L2 partitions among them).
# Output: $OUT/ncu_<tag>.txt per kernel and a digest of the metrics that differ in $OUT/ncu_vs.log.
export PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")/../../build/release"
S=${SECTIONS:-"SpeedOfLight MemoryWorkloadAnalysis ComputeWorkloadAnalysis WarpStateStats SchedulerStats InstructionStats"}
# Stall samples need the SourceCounters section; without it the source page holds execution counts only.
if [ "${SOURCE:-0}" = 1 ] && [[ " $S " != *" SourceCounters "* ]]; then S="$S SourceCounters"; fi
args=()
for s in $S; do args+=(--section "$s"); done
# The tensor pipe's busy share (METRICS: more, comma-separated; a name the chip lacks fails the run).
args+=(--metrics "${METRICS:-sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed}")
bench=(tools/symmoe bench gemm --dtype fp8 --tile wgmma --op ${OP:-gate_up} --experts ${E:-8} --m ${M:-4096} --reps 1 --per-graph 1 --warmup-ms 0 ${BENCH_ARGS:-})
profile() {  # tag, kernel regex, skip, bench args...
  local tag=$1 kernel=$2 skip=$3
  shift 3
  timeout ${NCU_TIMEOUT:-200} ncu --clock-control none --kernel-name "regex:$kernel" --launch-skip $skip --launch-count 1 \
    "${args[@]}" --export $OUT/ncu_$tag "$@" > $OUT/ncu_$tag.log 2>&1
  ncu --import $OUT/ncu_$tag.ncu-rep --print-details all > $OUT/ncu_$tag.txt 2>&1
  if [ "${SOURCE:-0}" = 1 ]; then
    ncu --import $OUT/ncu_$tag.ncu-rep --page source --print-source sass --csv > $OUT/ncu_${tag}_sass.csv 2>&1
  fi
  if [ "${RAW:-0}" = 1 ]; then
    ncu --import $OUT/ncu_$tag.ncu-rep --page raw --csv > $OUT/ncu_${tag}_raw.csv 2>&1
  fi
  rm -f $OUT/ncu_$tag.ncu-rep
}
{
  echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}; ${OP:-gate_up} E=${E:-8} M=${M:-4096}"
  for v in ${OURS:-256:2 192:0}; do
    IFS=: read -r n ov <<<"$v"
    SYMMOE_GEMM_WGMMA_TILE_N=$n SYMMOE_GEMM_WGMMA_OVERLAP=$ov profile ours_n${n}_v$ov sm90_grouped_gemm_wgmma 0 \
      "${bench[@]}" --no-baseline
  done
  profile deepgemm 1d2d ${DG_SKIP:-9} "${bench[@]}"
  for f in $OUT/ncu_*.txt; do
    echo "== $(basename $f .txt)"
    grep -E "^\s+(Duration|SM Frequency|DRAM Throughput|L2 Hit Rate|L1/TEX Hit Rate|Compute \(SM\) Throughput|Memory Throughput|Executed Ipc Active|Issue Slots Busy|Shared Memory|L2 Cache Throughput|Mem Busy|Max Bandwidth|Registers Per Thread|Warp Cycles Per Issued|Avg. Active Threads|Executed Instructions |No Eligible|sm__pipe_tensor|One or More Eligible|Active Warps Per Scheduler|Eligible Warps)" $f |
      sed 's/  */ /g' | head -40
  done
} 2>&1 | tee $OUT/ncu_vs.log
if [ "${TAR:-0}" = 1 ]; then
  (cd $OUT && tar czf ncu_vs.tar.gz ncu_*.txt ncu_*.log ncu_*.csv 2>/dev/null && rm -f ncu_*.txt ncu_*.csv ncu_ours*.log ncu_deepgemm.log)
fi
