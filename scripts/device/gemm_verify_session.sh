#!/usr/bin/env bash
# One call: the grouped GEMM GPU suite of the carried build, then on an H200 the README's default
# bench (every size, every baseline), and Nsight Compute of our default fp8 kernel beside
# DeepGEMM's 128 x 192 s4 (one launch each, stall samples) at the shapes in NCU_SHAPES
# (default "down:8:4096 gate_up:8:4096"; on an H200 only the first, for time).
# Carry build/dev (stripped test_gemm_gpu) and build/release/tools/symmoe; run as
#   SYMMOE_BUILD_COMMIT=<hash> scripts/device/gemm_verify_session.sh
# Writes $OUT/test_gemm_gpu_<commit>.log, gemm_default_h200.{log,json} (H200), ncu_vs_<op>.{log,tgz}.
# TESTS: the test binaries, one after the other, each its own log when there are several
# (default build/dev/tests/test_gemm_gpu). AB_SETTINGS, when set: after
# the tests, gemm_wgmma_env_ab.sh with those SETTINGS (NAME=gemm_verify_ab, rows per expert
# AB_MS (1024,4096), 20 replays, --power, AB_ROUNDS (2) rounds, no baselines) before the bench and
# Nsight Compute. DEFAULT_ARGS: more arguments for the H200 bench (e.g. --act-scales col).
# Run 2026-12-07 (H100): the scale-rows candidate (landed, 5c834ba), then d0b0e31's tests with
# the A/B of row-major, column-major and row-to-col scales against 4b10be8 (bench/RESULTS.md,
# "Stage scales by rows ... measured", "Row-major scales copied column-major"):
#   v=SYMMOE_AB_BIN=../ab/symmoe_va h=SYMMOE_AB_BIN=../ab/symmoe_head
#   TESTS=build/ab/test_gemm_gpu_head TEST_TIMEOUT=150 NCU_SHAPES=" " SYMMOE_BUILD_COMMIT=d0b0e31 \
#   AB_SETTINGS="va $v"$'\n'"head $h"$'\n'"head_col $h SYMMOE_AB_ARG=--act-scales=col"$'\n'\
#   "head_r2c $h SYMMOE_AB_ARG=--act-scales=row-to-col" scripts/device/gemm_verify_session.sh
# Owed on an H200 (none was lent): the same A/B, and the README's table in its own call.
# Owed since 2026-12-08 (any card; refused machine starts took that session's time): 2b9901a's
# tests and its row-band A/B against the same build with the old threshold (bench/RESULTS.md
# "Row bands from 512 rows per expert"):
#   c=SYMMOE_AB_ARG=--act-scales=col; TESTS=build/ab/test_gemm_gpu_head NCU_SHAPES=" " AB_MS=512,1024 \
#   AB_SETTINGS="base SYMMOE_AB_BIN=../ab/symmoe_base $c"$'\n'"head $c" DEFAULT_ARGS="--act-scales col" \
#   SYMMOE_BUILD_COMMIT=2b9901a scripts/device/gemm_verify_session.sh
# The whole GPU suite takes ~15 s since the reference's error bound (it took ~270 s), the A/B
# ~35 s per setting, the H200 bench up to 240 s; with many settings give the bench its own call
# (SYMMOE_BUILD_COMMIT=<hash> PARTS=default scripts/device/gemm_stagger_session.sh).
set -o pipefail  # a failed step under "| tail" still counts
export PATH=/usr/local/cuda/bin:$PATH
root=$(cd "$(dirname "$0")/../.." && pwd)
c=${SYMMOE_BUILD_COMMIT:-unknown}
status=0
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
tests=${TESTS:-build/dev/tests/test_gemm_gpu}
several=$([ "$(wc -w <<<"$tests")" -gt 1 ] && echo 1)
for t in $tests; do
  log=$OUT/test_gemm_gpu_$c${several:+_$(basename "$t")}.log
  echo "== $t" >&2
  timeout "${TEST_TIMEOUT:-360}" "$root/$t" > "$log" 2>&1 || status=1
  grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|Failure" "$log" | head
done
if [ -n "${AB_SETTINGS:-}" ]; then
  SETTINGS=$AB_SETTINGS NAME=gemm_verify_ab NOBASE=1 MS=${AB_MS:-1024,4096} REPS=20 POWER=1 ROUNDS=${AB_ROUNDS:-2} \
    "$root/scripts/device/gemm_wgmma_env_ab.sh" > /dev/null || status=1
  python3 "$root/scripts/analysis/ab_ratio.py" "$OUT/gemm_verify_ab.log" | tail -20
fi
shapes=${NCU_SHAPES:-down:8:4096 gate_up:8:4096}
if [[ $gpu == *H200* ]]; then
  if [ -x "$root/build/release/tools/symmoe" ]; then
    SYMMOE_BUILD_COMMIT=$c PARTS=default "$root/scripts/device/gemm_stagger_session.sh" | tail -40 || status=1
  else
    echo "gemm_verify_session: no build/release/tools/symmoe carried: no default bench" >&2
  fi
  shapes=${shapes%% *}
fi
for sh in $shapes; do
  IFS=: read -r op e m <<<"$sh"
  OP=$op E=$e M=$m OURS="0:-1" SOURCE=1 TAR=1 NCU_TIMEOUT=120 "$root/scripts/device/gemm_vs_deepgemm_ncu.sh" > /dev/null || status=1
  mv "$OUT/ncu_vs.log" "$OUT/ncu_vs_${op}_${e}x$m.log"
  mv "$OUT/ncu_vs.tar.gz" "$OUT/ncu_vs_${op}_${e}x$m.tgz" 2>/dev/null
  grep -E "^==|Duration|SM Frequency|Compute \(SM\)|L2 Cache Throughput|L2 Hit|Executed Instructions inst|sm__pipe_tensor" "$OUT/ncu_vs_${op}_${e}x$m.log"
done
exit $status
