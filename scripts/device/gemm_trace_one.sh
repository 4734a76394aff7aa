#!/usr/bin/env bash
# One K-block clock trace of a traced build of the fp8 wgmma kernel at one shape (the timing-only
# builds of bench/results/gemm_wgmma_kblock_trace.patch and its kin, or DeepGEMM's 128 x 192 s4
# from deepgemm_kblock_trace.py): runs it, keeps its output and TRACE lines under WORK, prints a
# summary block (the build's own result lines, scripts/analysis/wgmma_trace.py's statistics).
# usage: gemm_trace_one.sh BIN TAG OP EXPERTS M KBLOCKS_PER_TILE WORK [bench args...]
#   BIN runs as `BIN bench gemm --dtype fp8 --tile wgmma ...` (default args: --no-baseline);
#   WORK/TAG_OP_ExM.out and .txt are written. Exit status: the bench run's.
root=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 7 ] || { echo "usage: $0 BIN TAG OP EXPERTS M KBLOCKS_PER_TILE WORK [bench args...]" >&2; exit 2; }
bin=$1 tag=$2 op=$3 e=$4 m=$5 kpt=$6 work=$7
shift 7
[ $# -gt 0 ] || set -- --no-baseline
t="$work/${tag}_${op}_${e}x$m"
timeout 90 "$bin" bench gemm --dtype fp8 --tile wgmma --op "$op" --experts "$e" --m "$m" --reps 5 --warmup-ms 300 \
  "$@" > "$t.out" 2>&1
rc=$?
grep -E "^(TRACE|TILE|PROD) " "$t.out" > "$t.txt"
echo "== $tag $op $e x $m ($(grep -c '^TRACE ' "$t.txt") trace lines); the build's own lines:"
grep -hE "^  (gate_up|down) |DeepGEMM 128x192 s4" "$t.out"
python3 "$root/scripts/analysis/wgmma_trace.py" "$t.txt" "$kpt"
exit $rc
