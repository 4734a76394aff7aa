#!/usr/bin/env bash
# The fp8 decode kernel's unit layouts (NOTE [decode lanes]) on prebuilt binaries (carry
# build/release/tools/symmoe, build/release/tests/test_gemm_gpu): the decode GPU test, then
# M = 8 per expert, both ops, E = 8 and 32, masked and contiguous, with
# SYMMOE_GEMM_DECODE_LANES = 4 and 1 alternating (two passes), CUTLASS's small tile once.
# Env: TESTS=0 skips the test, LANES (default "4 1"), REPS (10), HIDDEN (extra --hidden values).
# Output: $OUT/gemm_decode.log, JSON per case.
export PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")/../../build/release"
B=tools/symmoe
bench() {  # tag, then bench gemm arguments
  local tag=$1
  shift
  timeout 180 $B bench gemm --dtype fp8 --m 8 --experts 8,32 --reps ${REPS:-10} --json $OUT/gemm_decode_$tag.json "$@" 2>&1 |
    grep -E "^  (gate_up|down) |rror"
}
{
  echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
  nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
  if [ "${TESTS:-1}" != 0 ]; then
    timeout 300 tests/test_gemm_gpu --gtest_filter='*Decode*:*EveryDtype*:*Integer*' 2>&1 |
      grep -E "^\[  (PASSED|FAILED) |^\[       OK|Failure|different|mismatch|Which is|Expected" | head -40
  fi
  for pass in 1 2; do
    for l in ${LANES:-4 1}; do
      for layout in masked contiguous; do
        echo "== pass $pass lanes $l $layout"
        SYMMOE_GEMM_DECODE_LANES=$l bench p${pass}_l${l}_$layout --tile decode --layout $layout
      done
    done
  done
  echo "== small tile (CUTLASS 64x128), masked"
  bench small_masked --tile small --layout masked
  for h in ${HIDDEN:-}; do
    for l in ${LANES:-4 1}; do
      echo "== hidden $h lanes $l masked (down only)"
      SYMMOE_GEMM_DECODE_LANES=$l bench h${h}_l$l --tile decode --layout masked --op down --hidden $h --no-baseline
    done
  done
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
} 2>&1 | tee $OUT/gemm_decode.log
