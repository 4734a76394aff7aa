#!/usr/bin/env bash
# Our grouped GEMM against the competitors' in one device call (prebuilt binaries: carry
# build/release/tools/symmoe built with the DeepGEMM baseline, see gemm_deepgemm.sh):
#  1. fp8: `symmoe bench gemm` with its DeepGEMM lines (gemm_deepgemm.sh);
#  2. bf16: ours, then PyTorch's torch._grouped_mm (torch_grouped_mm.py, timed the same way),
#     then ours again — a sandwich, since the GPU's clocks drift with temperature.
# Env: FP8=0 / BF16=0 skip a part; MS_BF16 (default 256,1024), EXPERTS_BF16 (default 8,32); the
# fp8 part takes gemm_deepgemm.sh's variables.
# Output: $OUT/gemm_deepgemm.log (+ JSON), $OUT/gemm_bf16_vs_torch.log (+ JSON).
export PATH=/usr/local/cuda/bin:$PATH
here="$(cd "$(dirname "$0")" && pwd)"
[ "${FP8:-1}" != 0 ] && "$here/gemm_deepgemm.sh"
if [ "${BF16:-1}" != 0 ]; then
  cd "$here/../../build/release"
  {
    echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown}"
    for r in ours1 torch ours2; do
      echo "== $r"
      if [ $r = torch ]; then
        MS=${MS_BF16:-256,1024} EXPERTS=${EXPERTS_BF16:-8,32} timeout 300 python3 "$here/torch_grouped_mm.py" \
          $OUT/gemm_bf16_torch.json 2>&1 | tail -12
      else
        timeout 300 tools/symmoe bench gemm --dtype bf16 --experts ${EXPERTS_BF16:-8,32} --m ${MS_BF16:-256,1024} \
          --reps ${REPS:-5} --no-baseline --json $OUT/gemm_bf16_$r.json 2>&1 | grep -E "^  (gate_up|down|Op) |rror"
      fi
    done
    nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
  } 2>&1 | tee $OUT/gemm_bf16_vs_torch.log
fi
