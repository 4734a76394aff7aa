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
# the tests, gemm_wgmma_env_ab.sh with those SETTINGS (NAME=gemm_verify_ab, large M, 20 replays,
# --power, 2 rounds, no baselines) before the bench and Nsight Compute.
# The call prepared next (2026-12-07, bench/RESULTS.md "Stage scales by rows"), carrying
# ["build/ab"] with symmoe_va (HEAD's kernels, a3ca070), symmoe_scl and test_gemm_gpu_scl
# (`PROBE_TESTS=1 scripts/build-probes.sh bench/results/gemm_wgmma_scale_rows.patch:scl`) and
# symmoe_ssleep (`scripts/build-probes.sh bench/results/gemm_wgmma_scaler_sleep.patch:ssleep`),
# all stripped; the GPU tests of the candidate, then row-major and column-major scales on both
# builds, column-major by tensor copies (the scaler idle) and the scaler-sleep probe:
#   v=SYMMOE_AB_BIN=../ab/symmoe_va c=SYMMOE_AB_BIN=../ab/symmoe_scl col=SYMMOE_AB_ARG=--act-scales=col
#   TESTS=build/ab/test_gemm_gpu_scl TEST_TIMEOUT=240 NCU_SHAPES=" " SYMMOE_BUILD_COMMIT=scl-on-<HEAD> \
#   AB_SETTINGS="va $v"$'\n'"scl $c"$'\n'"va_col $v $col"$'\n'"scl_col $c $col"$'\n'\
#   "scl_coltma $c $col SYMMOE_GEMM_WGMMA_SCALES=tma"$'\n'"ssleep SYMMOE_AB_BIN=../ab/symmoe_ssleep" \
#   scripts/device/gemm_verify_session.sh
# If scl does not land, HEAD's own GPU tests are still owed (a3ca070's scaler step): the same
# with TESTS=build/ab/test_gemm_gpu_va (HEAD's tests, stripped) and no AB_SETTINGS. With the
# error bound from the reference (bench/RESULTS.md, "Where the GPU suite's time went") a suite
# should take well under the ~270 s it took: if the first call's log shows so, both binaries
# fit one call (TESTS="build/ab/test_gemm_gpu_scl build/ab/test_gemm_gpu_va").
# The call prepared before it (not run; relpost: gemm_wgmma_release_after_promotion.patch):
#   TESTS=build/ab/test_gemm_gpu_va NCU_SHAPES=" " SYMMOE_BUILD_COMMIT=a3ca070 \
#   AB_SETTINGS="sc SYMMOE_AB_BIN=../ab/symmoe_sc"$'\n'"va SYMMOE_AB_BIN=../ab/symmoe_va"$'\n'\
#   "relpost SYMMOE_AB_BIN=../ab/symmoe_relpost"$'\n'"ssleep SYMMOE_AB_BIN=../ab/symmoe_ssleep"$'\n'\
#   "tma SYMMOE_AB_BIN=../ab/symmoe_va SYMMOE_GEMM_WGMMA_SCALES=tma" scripts/device/gemm_verify_session.sh
# The whole GPU suite takes ~270 s on an H100 (TEST_TIMEOUT, default 360), the A/B ~35 s per setting, the
# H200 bench up to 240 s: past 600 s together, so on an H200 give the bench its own call
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
  SETTINGS=$AB_SETTINGS NAME=gemm_verify_ab NOBASE=1 MS=1024,4096 REPS=20 POWER=1 ROUNDS=2 \
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
