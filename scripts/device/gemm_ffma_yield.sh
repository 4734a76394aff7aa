#!/usr/bin/env bash
# Experiment (prebuilt binaries; carry build/release/tools/symmoe, build/release/tests/test_gemm_gpu):
# the fp8 wgmma kernel with the yield / reuse flags of its promotion FFMA runs rewritten
# (scripts/analysis/sass_ffma_yield.py), against the binary as built, alternating in one process
# sequence to even out GPU temperature. The patched test binary must pass the wgmma test.
# Env: POLICIES (default "first-half alternate"), MS, EXPERTS, REPS, TESTS=0 skips the test.
# Output: $OUT/gemm_ffma_yield.log, JSON per binary and pass.
export PATH=/usr/local/cuda/bin:$PATH
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root/build/release"
P="${POLICIES:-first-half alternate}"
{
  echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
  nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
  for p in $P; do
    python3 "$root/scripts/analysis/sass_ffma_yield.py" tools/symmoe --out tools/symmoe_$p --policy $p | tail -1
    chmod +x tools/symmoe_$p
  done
  if [ "${TESTS:-1}" != 0 ]; then
    p1=${P%% *}
    python3 "$root/scripts/analysis/sass_ffma_yield.py" tests/test_gemm_gpu --out tests/test_gemm_gpu_$p1 --policy $p1 | tail -1
    chmod +x tests/test_gemm_gpu_$p1
    timeout 300 tests/test_gemm_gpu_$p1 --gtest_filter='*Wgmma*' 2>&1 | grep -E "^\[  (PASSED|FAILED) |^\[       OK|Failure|mismatch" | head -20
  fi
  for pass in 1 2; do
    for b in symmoe $(for p in $P; do echo symmoe_$p; done); do
      echo "== pass $pass $b"
      SYMMOE_GEMM_WGMMA_EPILOGUE=tma timeout 240 tools/$b bench gemm --dtype fp8 --tile wgmma --experts ${EXPERTS:-8,32} \
        --m ${MS:-1024,4096} --reps ${REPS:-5} --no-baseline --json $OUT/gemm_yield_${b}_$pass.json 2>&1 |
        grep -E "^  (gate_up|down) |rror"
    done
  done
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
} 2>&1 | tee $OUT/gemm_ffma_yield.log
