#!/usr/bin/env bash
# One device call: does the tile order explain the L2 gap to DeepGEMM? The default 128 x 192
# kernel with column bands of 8 (default) against row bands of 16 (DeepGEMM's order: groups of 16
# row blocks, row blocks fastest) and of 8 (SYMMOE_GEMM_WGMMA_ROW_BAND): the L2 counters of each
# next to DeepGEMM's 128 x 192 (gemm_l2_traffic_ncu.sh: requests from the GPCs — fewer where
# neighbouring SMs read the same lines at once —, the fabric between the L2 partitions, DRAM),
# then a same-call A/B. Prebuilt binaries: carry build/release/tools/symmoe (with the DeepGEMM
# baseline, as gemm_deepgemm.sh says).
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name --format=csv,noheader
orders="auto SYMMOE_GEMM_WGMMA_ROW_BAND=0
rb16 SYMMOE_GEMM_WGMMA_ROW_BAND=16
rb8 SYMMOE_GEMM_WGMMA_ROW_BAND=8"
VARIANTS="$orders" NCU_TIMEOUT=45 timeout 200 scripts/device/gemm_l2_traffic_ncu.sh > /dev/null 2>&1; echo "ncu rc $?"
grep -E "^(metric|dram|gpu__time|l1tex|lts__t_sectors_srcnode_gpc|lts__t_sectors_srcunit_ltcfabric.sum|lts__ltcfabric2lts_cycles_active|lts__t_sectors_srcunit_tex.sum|lts__t_requests_srcunit_tex.sum|sm__pipe)" \
  $OUT/gemm_l2_traffic.log
SETTINGS="$orders" NAME=gemm_wgmma_order_ab MS=1024,4096 EXPERTS=8,32 ROUNDS=2 REPS=20 POWER=1 \
  timeout 300 scripts/device/gemm_wgmma_env_ab.sh > /dev/null 2>&1; echo "ab rc $?"
python3 scripts/analysis/ab_ratio.py $OUT/gemm_wgmma_order_ab.log | tail -12
python3 scripts/analysis/ab_ratio.py --per-ghz $OUT/gemm_wgmma_order_ab.log | tail -3
