#!/usr/bin/env bash
# A/B of one setting of the fp8 wgmma kernel in the same device call (prebuilt binaries: carry
# build/release/tools/symmoe and build/release/tests/test_gemm_gpu): the wgmma GPU test on the
# chosen variants and the bf16 wgmma test (same frame), then `symmoe bench gemm --tile wgmma`
# per tile variant with $AB_VAR taking each of $AB_VALUES in turn, ROUNDS times, the first
# run with the same-run baselines (DeepGEMM included when built in).
# Env: AB_VAR (default SYMMOE_GEMM_WGMMA_UNROLL), AB_VALUES (default "1 0"), TEST_VARIANTS
# (SYMMOE_TEST_WGMMA_VARIANTS, default all), VARIANTS (TILE_N:OVERLAP, default "192:0 128:0"),
# MS (256,1024,4096), EXPERTS (8,32), ROUNDS (2), NAME (log name, default gemm_wgmma_ab),
# SKIP_TEST=1 (benchmarks only). AB_BINS="a b": A/B of two builds instead of a setting — each
# value a symmoe binary (relative to build/release, e.g. tools/symmoe and ../ab/symmoe_base,
# carried beside it), run alternately with the same settings; the log names the binary.
# Output: $OUT/$NAME.log, $OUT/${NAME}_json.tgz (JSON per run).
export PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")/../../build/release"
var=${AB_VAR:-SYMMOE_GEMM_WGMMA_UNROLL}
values=${AB_VALUES:-1 0}
if [ -n "${AB_BINS:-}" ]; then var=SYMMOE_AB_BIN values=$AB_BINS; fi
name=${NAME:-gemm_wgmma_ab}
{
  echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}; A/B: $var in $values"
  nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
  if [ "${SKIP_TEST:-0}" != 1 ]; then
    echo "== test, fp8 wgmma variants ${TEST_VARIANTS:-all}"
    SYMMOE_TEST_WGMMA_VARIANTS=${TEST_VARIANTS:-} timeout 400 \
      tests/test_gemm_gpu --gtest_filter='*WgmmaKernelMatches*:*Bf16WgmmaKernel*' 2>&1 |
      grep -E "^\[  (PASSED|FAILED) |^\[       OK|^\[  FAILED|Failure|rror|differ|Expected|Which" | head -30
  fi
  first=1
  for v in ${VARIANTS:-192:0 128:0}; do
    IFS=: read -r n ov <<<"$v"
    for round in $(seq "${ROUNDS:-2}"); do
      for val in $values; do
        echo "== bench n$n v$ov $var=$val round $round"
        base=--no-baseline
        [ $first = 1 ] && base=
        first=0
        bin=tools/symmoe tag=$val
        if [ -n "${AB_BINS:-}" ]; then bin=$val tag=$(basename "$val"); fi
        env "$var=$val" SYMMOE_GEMM_WGMMA_TILE_N=$n SYMMOE_GEMM_WGMMA_OVERLAP=$ov timeout 300 \
          "$bin" bench gemm --dtype fp8 --tile wgmma --experts ${EXPERTS:-8,32} --m ${MS:-256,1024,4096} \
          --reps 5 $base --json "$OUT/ab_n${n}_v${ov}_${tag}_r$round.json" 2>&1 |
          grep -E "^  (gate_up|down) |DeepGEMM 128x(128|192)|rror"
      done
    done
  done
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
} 2>&1 | tee "$OUT/$name.log"
tar -C "$OUT" -czf "$OUT/${name}_json.tgz" $(cd "$OUT" && ls ab_*.json) && rm -f "$OUT"/ab_*.json
