#!/usr/bin/env bash
# Where the fp8 wgmma kernel's L2 traffic goes, against DeepGEMM's at one shape: Nsight Compute
# raw L2 counters (sectors by source unit — the SMs' L1/TMA path, the fabric between the two L2
# partitions —, hits and misses, DRAM bytes), one launch each, clocks not locked. Prebuilt
# binaries: carry build/release/tools/symmoe built with the DeepGEMM baseline
# (scripts/device/gemm_deepgemm.sh says how).
# Env: OP (gate_up), E (8), M (4096); VARIANTS: lines "<tag> VAR=value ..." of ours (default: the
# default schedule and the dynamic one); DG_SKIP (9: DeepGEMM's 128x192 s4, as in
# gemm_vs_deepgemm_ncu.sh); METRICS (regex list, comma-separated).
# Output: $OUT/l2_<tag>.csv per kernel, $OUT/l2_metrics_available.txt (the chip's L2 metric
# names that matched), and a digest in $OUT/gemm_l2_traffic.log.
export PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")/../../build/release"
metrics=${METRICS:-"regex:^lts__t_(sectors|requests)_srcunit_[a-z]+(_op_(read|write))?(_lookup_(hit|miss))?\.sum$,regex:^lts__t_sectors_srcnode_[a-z]+\.sum$,regex:^lts__.*fabric.*\.sum$,dram__bytes_read.sum,dram__bytes_write.sum,l1tex__m_xbar2l1tex_read_bytes.sum,gpu__time_duration.sum,sm__cycles_elapsed.avg,smsp__cycles_active.avg,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"}
variants=${VARIANTS:-"auto SYMMOE_GEMM_WGMMA_SCHEDULE=auto
dynamic SYMMOE_GEMM_WGMMA_SCHEDULE=dynamic"}
bench=(tools/symmoe bench gemm --dtype fp8 --tile wgmma --op ${OP:-gate_up} --experts ${E:-8} --m ${M:-4096} --reps 1 --per-graph 1)
profile() {  # tag, kernel regex, skip, env..., --, bench args...
  local tag=$1 kernel=$2 skip=$3
  shift 3
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" timeout ${NCU_TIMEOUT:-240} ncu --clock-control none --kernel-name "regex:$kernel" --launch-skip $skip \
    --launch-count 1 --metrics "$metrics" --csv "$@" > $OUT/l2_$tag.csv 2> $OUT/l2_$tag.err
  echo "$tag: ncu exit $?"
}
{
  echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}; ${OP:-gate_up} E=${E:-8} M=${M:-4096}"
  nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
  ncu --query-metrics --chip gh100 2>/dev/null | grep -E "^(lts__|dram__bytes)" | awk '{print $1}' > $OUT/l2_metrics_available.txt
  echo "L2 metric names on gh100: $(wc -l < $OUT/l2_metrics_available.txt)"
  while read -r tag envs; do
    [ -z "$tag" ] && continue
    # shellcheck disable=SC2086
    profile ours_$tag sm90_grouped_gemm_wgmma 0 $envs -- "${bench[@]}" --no-baseline
  done <<<"$variants"
  profile deepgemm 1d2d ${DG_SKIP:-9} -- "${bench[@]}"
  python3 - "$OUT" <<'PY'
import csv, glob, os, sys
out = sys.argv[1]
runs = {}
for f in sorted(glob.glob(os.path.join(out, "l2_*.csv"))):
    tag = os.path.basename(f)[3:-4]
    with open(f) as fh:
        lines = [l for l in fh if l.startswith('"')]
    vals = {}
    for row in csv.DictReader(lines):
        try:
            vals[row["Metric Name"]] = (float(row["Metric Value"].replace(",", "")), row["Metric Unit"])
        except (KeyError, ValueError):
            pass
    runs[tag] = vals
tags = list(runs)
names = sorted(set().union(*[set(v) for v in runs.values()])) if runs else []
print("%-64s %s" % ("metric", " ".join("%16s" % t[:16] for t in tags)))
for n in names:
    print("%-64s %s" % (n[:64], " ".join("%16.4g" % runs[t].get(n, (float("nan"), ""))[0] for t in tags)))
PY
} 2>&1 | tee $OUT/gemm_l2_traffic.log
