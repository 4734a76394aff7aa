#!/usr/bin/env bash
# The staggered-warpgroups candidate (bench/results/gemm_wgmma_stagger.patch, NOTE [staggered
# consumer warpgroups] in it) in one device call (about 7 minutes; PARTS selects):
#   tests  its GPU tests: the wgmma ones, every dtype and tile, integer inputs, named errors (build/ab/test_gemm_gpu_stagger):
#          $OUT/test_gemm_gpu_stagger.log
#   trace  K-block clock traces at gate/up 8 x 4096 and down 8 x 4096 of HEAD's default kernel
#          (build/ab/symmoe_trace), of the candidate (symmoe_stagtrace) and of DeepGEMM's 128 x 192
#          s4 (symmoe_dgtrace), one after the other: summaries in $OUT/gemm_wgmma_stagger_trace.log,
#          raw traces in $OUT/gemm_wgmma_stagger_traces.tgz
#   ab     HEAD against the candidate (400 cycles) and its 700-cycle variant
#          (gemm_wgmma_stagger700.patch) at 8 / 32 experts x 1024 / 4096 rows, 2 rounds of 30
#          replays with --power (HEAD's first run carries the baselines, DeepGEMM's included):
#          $OUT/gemm_wgmma_stagger_ab.log, ratios by scripts/analysis/ab_ratio.py
# Build on the CPU machine first (a worktree of HEAD, nothing else touched):
#   cmake --build build/release
#   PROBE_TESTS=1 scripts/build-probes.sh bench/results/gemm_wgmma_stagger.patch:stagger
#   scripts/build-probes.sh bench/results/gemm_wgmma_stagger700.patch:stagger700 \
#     bench/results/gemm_wgmma_stagger_trace.patch:stagtrace bench/results/gemm_wgmma_kblock_trace.patch:trace \
#     bench/results/deepgemm_kblock_trace.py:dgtrace
# then carry ["build/release/tools/symmoe", "build/ab"] and run
#   SYMMOE_BUILD_COMMIT=<HEAD> scripts/device/gemm_stagger_session.sh
#   default  (PARTS="tests trace ab default"; on an H200 only) HEAD's `symmoe bench gemm --reps 10
#          --power` over every default size: $OUT/gemm_default_h200.{log,json}
# At most 8 files come back from a call: keep what this writes under $OUT to the seven above.
export PATH=/usr/local/cuda/bin:$PATH
root=$(cd "$(dirname "$0")/../.." && pwd)
parts=${PARTS:-tests trace ab}
status=0
echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
if [[ " $parts " == *" tests "* ]]; then
  timeout 200 "$root/build/ab/test_gemm_gpu_stagger" --gtest_filter='*Wgmma*:*BadCalls*:*SmBudget*:*EveryDtype*:*IntegerInputs*' \
    > "$OUT/test_gemm_gpu_stagger.log" 2>&1 || status=1
  grep -E "^\[  (PASSED|FAILED) |Failure" "$OUT/test_gemm_gpu_stagger.log" | head -20
fi
if [[ " $parts " == *" trace "* ]]; then
  work=$(mktemp -d)
  L="$OUT/gemm_wgmma_stagger_trace.log"
  cd "$root/build/release" || exit 1
  for c in "gate_up 8 4096 56" "down 8 4096 16"; do
    read -r op e m kpt <<<"$c"
    for b in trace stagtrace dgtrace; do
      # dgtrace may stay behind when the carried binaries would pass the call's 64 MiB
      [ -x "../ab/symmoe_$b" ] || continue
      t="$work/${b}_${op}_${e}x$m"
      extra="--no-baseline"
      [ $b = dgtrace ] && extra="--baselines deepgemm"
      # shellcheck disable=SC2086
      timeout 90 "../ab/symmoe_$b" bench gemm --dtype fp8 --tile wgmma --op "$op" --experts "$e" --m "$m" --reps 5 \
        $extra --warmup-ms 300 > "$t.out" 2>&1 || status=1
      grep TRACE "$t.out" > "$t.txt"
      {
        echo "== $b $op $e x $m ($(wc -l < "$t.txt") trace lines); the build's own lines:"
        grep -hE "^  (gate_up|down) |DeepGEMM 128x192 s4" "$t.out"
        python3 "$root/scripts/analysis/wgmma_trace.py" "$t.txt" "$kpt"
      } >> "$L"
    done
  done
  cat "$L"
  tar -C "$work" -czf "$OUT/gemm_wgmma_stagger_traces.tgz" . && rm -rf "$work"
fi
if [[ " $parts " == *" ab "* ]]; then
  settings="base
stagger SYMMOE_AB_BIN=../ab/symmoe_stagger
stagger700 SYMMOE_AB_BIN=../ab/symmoe_stagger700"
  NAME=gemm_wgmma_stagger_ab SETTINGS=$settings MS=1024,4096 ROUNDS=2 REPS=30 POWER=1 \
    timeout 360 "$root/scripts/device/gemm_wgmma_env_ab.sh" > /dev/null || status=1
  python3 "$root/scripts/analysis/ab_ratio.py" "$OUT/gemm_wgmma_stagger_ab.log" | tail -12
  python3 "$root/scripts/analysis/ab_ratio.py" "$OUT/gemm_wgmma_stagger_ab.log" --per-ghz | tail -1
  grep -E "DeepGEMM 128x192" "$OUT/gemm_wgmma_stagger_ab.log" | head -8
fi
# default: on an H200 only, every default size with the issue's baselines (the README's table):
# $OUT/gemm_default_h200.log and .json
if [[ " $parts " == *" default "* ]] && nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  timeout 240 "$root/build/release/tools/symmoe" bench gemm --reps 10 --power --json "$OUT/gemm_default_h200.json" \
    > "$OUT/gemm_default_h200.log" 2>&1 || status=1
  grep -E "^  (gate_up|down) " "$OUT/gemm_default_h200.log" | head -50
fi
exit $status
