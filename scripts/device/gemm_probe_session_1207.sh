#!/usr/bin/env bash
# The fp8 GEMM probes built on 2026-12-07, in one device call (about 8 minutes; PARTS selects):
#   tests  the GPU tests of the descriptor-step candidate (bench/results/gemm_wgmma_desc_lo.patch,
#          NOTE [wgmma descriptor steps] in it): build/ab/test_gemm_gpu_desclo
#   ab     HEAD against the candidate, same call: the wgmma kernel at 8 / 32 experts x 1024 / 4096
#          rows (2 rounds of 30 replays, --power) and the default (swap-AB) kernels at 8 / 32
#          experts x 8 / 64 rows (3 rounds of 200 replays): $OUT/gemm_desc_lo_{large,decode}_ab.log,
#          ratios by scripts/analysis/ab_ratio.py
#   trace  scripts/device/gemm_wgmma_trace.sh: ours and DeepGEMM's 128 x 192 K-block traces, the
#          no-epilogue A/B
# Build on the CPU machine first (a worktree of HEAD, nothing else touched):
#   PROBE_TESTS=1 scripts/build-probes.sh bench/results/gemm_wgmma_desc_lo.patch:desclo
#   scripts/build-probes.sh bench/results/gemm_wgmma_kblock_trace.patch:trace \
#     bench/results/gemm_wgmma_probe_no_epilogue.patch:nostore bench/results/deepgemm_kblock_trace.py:dgtrace
# then carry ["build/release/tools/symmoe", "build/ab"] (about 58 MB) and run
#   SYMMOE_BUILD_COMMIT=<HEAD> scripts/device/gemm_probe_session_1207.sh
# Estimated ~7 minutes (tests ~2, A/Bs ~2, traces ~3); the parts' own timeouts add up to more than
# a call's 600 s, so on a slow machine run PARTS="tests ab" and PARTS=trace as two calls.
export PATH=/usr/local/cuda/bin:$PATH
root=$(cd "$(dirname "$0")/../.." && pwd)
parts=${PARTS:-tests ab trace}
status=0
echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
if [[ " $parts " == *" tests "* ]]; then
  timeout 240 "$root/build/ab/test_gemm_gpu_desclo" > "$OUT/test_gemm_gpu_desclo.log" 2>&1 || status=1
  grep -E "^\[  (PASSED|FAILED) |Failure" "$OUT/test_gemm_gpu_desclo.log" | head -20
fi
if [[ " $parts " == *" ab "* ]]; then
  settings="base
desclo SYMMOE_AB_BIN=../ab/symmoe_desclo"
  NAME=gemm_desc_lo_large_ab SETTINGS=$settings MS=1024,4096 ROUNDS=2 REPS=30 POWER=1 \
    timeout 200 "$root/scripts/device/gemm_wgmma_env_ab.sh" > /dev/null || status=1
  NAME=gemm_desc_lo_decode_ab SETTINGS=$settings TILE=auto MS=8,64 ROUNDS=3 REPS=200 \
    timeout 120 "$root/scripts/device/gemm_wgmma_env_ab.sh" > /dev/null || status=1
  for n in large decode; do
    echo "== desc-lo A/B, $n"
    python3 "$root/scripts/analysis/ab_ratio.py" "$OUT/gemm_desc_lo_${n}_ab.log" | tail -12
  done
  python3 "$root/scripts/analysis/ab_ratio.py" "$OUT/gemm_desc_lo_large_ab.log" --per-ghz | tail -1
fi
if [[ " $parts " == *" trace "* ]]; then
  timeout 300 "$root/scripts/device/gemm_wgmma_trace.sh" || status=1
fi
exit $status
