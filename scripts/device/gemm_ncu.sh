#!/usr/bin/env bash
# One grouped-GEMM launch under Nsight Compute (prebuilt binaries; carry build/release/tools/symmoe).
# Env: KERNEL (regex, default wgmma), TILE (default wgmma), DTYPE (fp8), OP (gate_up), M (4096), E (8),
# SECTIONS (default: speed of light, compute, memory, warp state, source counters, occupancy;
# "full" = --set full), SKIP (launches to skip, default 0: the eager warm-up launch), TAG
# (output name, default TILE).
# Output: $OUT/ncu_<TAG>.txt (details), $OUT/ncu_<TAG>_raw.csv (every metric, one launch),
# $OUT/ncu_<TAG>_sass.csv (per-instruction counters and stall samples; summarize it with
# scripts/analysis/ncu_stalls.py).
export PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")/../../build/release"
S=${SECTIONS:-"SpeedOfLight ComputeWorkloadAnalysis MemoryWorkloadAnalysis WarpStateStats SourceCounters Occupancy"}
args=()
if [ "$S" = full ]; then args=(--set full); else for s in $S; do args+=(--section "$s"); done; fi
tag=${TAG:-${TILE:-wgmma}}
timeout ${NCU_TIMEOUT:-300} ncu --clock-control none --kernel-name "regex:${KERNEL:-wgmma}" --launch-skip ${SKIP:-0} \
  --launch-count 1 "${args[@]}" --export $OUT/ncu_$tag \
  tools/symmoe bench gemm --dtype ${DTYPE:-fp8} --tile ${TILE:-wgmma} --op ${OP:-gate_up} --experts ${E:-8} --m ${M:-4096} \
  --reps 1 --per-graph 1 --no-baseline > $OUT/ncu_$tag.log 2>&1
ncu --import $OUT/ncu_$tag.ncu-rep --print-details all > $OUT/ncu_$tag.txt 2>&1
ncu --import $OUT/ncu_$tag.ncu-rep --page raw --csv > $OUT/ncu_${tag}_raw.csv 2>&1
ncu --import $OUT/ncu_$tag.ncu-rep --page source --print-source sass --csv > $OUT/ncu_${tag}_sass.csv 2>&1
rm -f $OUT/ncu_$tag.ncu-rep
grep -E "Throughput|Pipe|Hit Rate|Stall|Executed Ipc|Duration|SM Frequency|Bank|Warp Cycles|Issued" $OUT/ncu_$tag.txt | head -40
