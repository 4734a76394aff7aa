#!/usr/bin/env bash
# The grouped GEMM's GPU tests and result benchmarks on prebuilt binaries (carry
# build/release/tools/symmoe and build/release/tests/test_gemm_gpu): the two `bench gemm` runs of
# run_all.sh, then decode sizes per kernel family (--tile swapab | decode | small), then large M with our
# wgmma kernels against CUTLASS's large-M tiles (--tile wgmma | large; bf16 per BF16_CLUSTERS, the
# SYMMOE_GEMM_WGMMA_BF16_CLUSTER values, default "1 2 4"; LARGE=0 skips these). SYMMOE_TEST_WGMMA_VARIANTS limits the
# wgmma test's variants (shorter runs). Output in $OUT:
# test_gemm_gpu.log, gemm_bench_h200.log, gemm_h200.json, gemm_masked_h200.json.
export PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")/../../build/release"
B=tools/symmoe
status=0
timeout 300 tests/test_gemm_gpu >$OUT/test_gemm_gpu.log 2>&1 || status=1
grep -E "^\[  (PASSED|FAILED) |Failure" $OUT/test_gemm_gpu.log | head -20
benches() {
  echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw --format=csv,noheader
  timeout 240 $B bench gemm --reps 10 --json $OUT/gemm_h200.json || status=1
  timeout 120 $B bench gemm --layout masked --m 8,16,64 --experts 8,32 --dtype fp8 --reps 10 \
    --json $OUT/gemm_masked_h200.json || status=1
  for t in swapab decode small; do
    echo "== fp8 decode sizes, contiguous, --tile $t"
    timeout 120 $B bench gemm --dtype fp8 --tile $t --experts 8,32 --m 8,16,32,64 --reps 10 --no-baseline 2>&1 |
      grep -E "^  (gate_up|down) |d2d"
  done
  [ "${LARGE:-1}" = 0 ] && return  # LARGE=0: no per-tile large-M comparisons
  for t in wgmma large; do
    echo "== fp8 large M, contiguous, --tile $t"
    timeout 180 $B bench gemm --dtype fp8 --tile $t --experts 8,32 --m 256,1024,4096 --reps 5 2>&1 |
      grep -E "^  (gate_up|down) |rror"
  done
  for c in ${BF16_CLUSTERS:-1 2 4} large; do
    t=wgmma
    [ "$c" = large ] && t=large && c=1
    echo "== bf16 large M, contiguous, --tile $t (SYMMOE_GEMM_WGMMA_BF16_CLUSTER=$c)"
    SYMMOE_GEMM_WGMMA_BF16_CLUSTER=$c timeout 180 $B bench gemm --dtype bf16 --tile $t --experts 8,32 \
      --m 256,1024,4096 --reps 5 2>&1 | grep -E "^  (gate_up|down) |rror"
  done
}
# Not in a pipeline: the failures benches() records in `status` must reach the exit code.
benches >$OUT/gemm_bench_h200.log 2>&1
cat $OUT/gemm_bench_h200.log
exit $status
