#!/usr/bin/env bash
# Where the fp8 wgmma kernel's time goes per K block, and what its epilogue costs: two
# timing-only builds of the default 128 x 192 kernel, carried prebuilt in build/ab (build them
# here, on the CPU machine, from a clean tree; the CLI target must be named, or tools/symmoe is
# not relinked):
#   for p in kblock_trace:trace probe_no_epilogue:nostore; do
#     git apply bench/results/gemm_wgmma_${p%%:*}.patch &&
#     cmake --build build/release -j2 --target symmoe_cli &&
#     cp build/release/tools/symmoe build/ab/symmoe_${p##*:}; git checkout src; done
#   cmake --build build/release -j2   # back to HEAD's binaries
# then carry ["build/release/tools/symmoe", "build/ab"].
# 1. build/ab/symmoe_trace at gate/up 8 x 4096, down 8 x 4096 and down 8 x 1024: the SM clock at
#    each K block's wgmma issue, completion and promotion end (CTA 0, first 768 K blocks),
#    summarized by scripts/analysis/wgmma_trace.py ($OUT/trace_<op>_<E>x<M>.txt and .summary).
# 2. HEAD's default kernel against build/ab/symmoe_nostore (no stores; the promotion kept),
#    ROUNDS (1) rounds of 8 / 32 experts x 1024 / 4096 rows, REPS (20) replays, --power:
#    $OUT/gemm_wgmma_noepilogue_ab.log, ratios by scripts/analysis/ab_ratio.py.
export PATH=/usr/local/cuda/bin:$PATH
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root/build/release" || exit 1
echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
for c in "gate_up 8 4096 56" "down 8 4096 16" "down 8 1024 16"; do
  read -r op e m kpt <<<"$c"
  t="$OUT/trace_${op}_${e}x$m"
  timeout 60 ../ab/symmoe_trace bench gemm --dtype fp8 --tile wgmma --op "$op" --experts "$e" --m "$m" --reps 5 \
    --no-baseline --warmup-ms 300 | grep TRACE > "$t.txt"
  echo "== trace $op $e x $m ($(wc -l < "$t.txt") lines)"
  python3 "$root/scripts/analysis/wgmma_trace.py" "$t.txt" "$kpt" | tee "$t.summary"
done
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
