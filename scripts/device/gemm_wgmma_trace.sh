#!/usr/bin/env bash
# Where the fp8 wgmma kernel's time goes per K block, against DeepGEMM's 128 x 192, and what its
# epilogue costs: timing-only builds (ours and the DeepGEMM baseline instrumented alike),
# carried prebuilt in build/ab. Build them
# on the CPU machine (a worktree of HEAD; the main tree and build/release stay as they are):
#   scripts/build-probes.sh bench/results/gemm_wgmma_kblock_trace.patch:trace \
#     bench/results/gemm_wgmma_probe_no_epilogue.patch:nostore bench/results/deepgemm_kblock_trace.py:dgtrace
# then carry ["build/release/tools/symmoe", "build/ab"].
# 1. build/ab/symmoe_trace at gate/up 8 x 4096, down 8 x 4096 and down 8 x 1024: the SM clock at
#    each K block's wgmma issue, completion and promotion end (CTA 0, first 768 K blocks),
#    summarized by scripts/analysis/wgmma_trace.py (summaries in $OUT/gemm_wgmma_trace.log, the raw
#    traces and outputs in $OUT/gemm_wgmma_traces.tgz: a call returns at most 8 files);
#    with build/ab/symmoe_dgtrace (bench/results/deepgemm_kblock_trace.py:dgtrace) the same trace
#    of DeepGEMM's 128 x 192 s4 at the same shapes (trace_<op>_<E>x<M>.dg.* in the tgz).
# 2. HEAD's default kernel against build/ab/symmoe_nostore (no stores; the promotion kept),
#    ROUNDS (1) rounds of 8 / 32 experts x 1024 / 4096 rows, REPS (20) replays, --power:
#    $OUT/gemm_wgmma_noepilogue_ab.log, ratios by scripts/analysis/ab_ratio.py.
export PATH=/usr/local/cuda/bin:$PATH
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root/build/release" || exit 1
echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
work=$(mktemp -d)
S="$OUT/gemm_wgmma_trace.log"
for c in "gate_up 8 4096 56" "down 8 4096 16" "down 8 1024 16"; do
  read -r op e m kpt <<<"$c"
  # The traced build's own time next to HEAD's (how much the clock reads and stores perturb).
  "$root/scripts/device/gemm_trace_one.sh" ../ab/symmoe_trace trace "$op" "$e" "$m" "$kpt" "$work" | tee -a "$S"
  echo "HEAD:" | tee -a "$S"
  timeout 60 tools/symmoe bench gemm --dtype fp8 --tile wgmma --op "$op" --experts "$e" --m "$m" --reps 5 \
    --no-baseline --warmup-ms 300 2>&1 | grep -E "^  (gate_up|down) " | tee -a "$S"
  # The same trace of DeepGEMM's 128 x 192 s4 (bench/results/deepgemm_kblock_trace.py), same shape.
  if [ -x ../ab/symmoe_dgtrace ]; then
    "$root/scripts/device/gemm_trace_one.sh" ../ab/symmoe_dgtrace dgtrace "$op" "$e" "$m" "$kpt" "$work" \
      --baselines deepgemm | tee -a "$S"
  fi
done
tar -C "$work" -czf "$OUT/gemm_wgmma_traces.tgz" . && rm -rf "$work"
L="$OUT/gemm_wgmma_noepilogue_ab.log"
for r in $(seq "${ROUNDS:-1}"); do
  for tag in base nostore; do
    bin=tools/symmoe
    [ $tag = nostore ] && bin=../ab/symmoe_nostore
    echo "== $tag round $r" >> "$L"
    timeout 150 "$bin" bench gemm --dtype fp8 --tile wgmma --experts 8,32 --m 1024,4096 --reps "${REPS:-20}" --power \
      --no-baseline 2>&1 | grep -E "^  (gate_up|down) |power ours|rror" >> "$L"
  done
done
python3 "$root/scripts/analysis/ab_ratio.py" "$L" | tail -10
python3 "$root/scripts/analysis/ab_ratio.py" "$L" --per-ghz | tail -1
