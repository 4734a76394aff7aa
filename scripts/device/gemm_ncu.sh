#!/usr/bin/env bash
# One grouped-GEMM launch under Nsight Compute (prebuilt binaries; carry build/release/tools/symmoe).
# Env: KERNEL (regex, default wgmma), TILE (default wgmma), OP (gate_up), M (4096), E (8),
# SECTIONS (default: speed of light, compute, memory, warp state, source counters).
# Output: $OUT/ncu_<TILE>.txt
export PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")/../../build/release"
S=${SECTIONS:-"SpeedOfLight ComputeWorkloadAnalysis MemoryWorkloadAnalysis WarpStateStats SourceCounters Occupancy"}
args=()
for s in $S; do args+=(--section "$s"); done
timeout 300 ncu --clock-control none --kernel-name "regex:${KERNEL:-wgmma}" --launch-skip ${SKIP:-0} --launch-count 1 "${args[@]}" \
  tools/symmoe bench gemm --dtype fp8 --tile ${TILE:-wgmma} --op ${OP:-gate_up} --experts ${E:-8} --m ${M:-4096} \
  --reps 1 --per-graph 1 --no-baseline > $OUT/ncu_${TILE:-wgmma}.txt 2>&1
grep -E "Throughput|Pipe|Hit Rate|Stall|Executed Ipc|Duration|SM Frequency|Bank|Warp Cycles|Issued|Shared" $OUT/ncu_${TILE:-wgmma}.txt | head -80
