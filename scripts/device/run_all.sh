#!/usr/bin/env bash
# The accelerator-machine job, in one call: build, GPU + CPU tests, doctor, benchmarks.
# Logs and JSON land in $OUT (at most 8 files come back). Usage: scripts/device/run_all.sh
# [--quick]  (--quick skips the benchmarks). The copy there has no .git and no network: run
# it as (third_party/cutlass, git-ignored, must travel with the tree: the device tool's carry)
#   SYMMOE_BUILD_COMMIT=<hash> scripts/device/run_all.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/symmoe-device-out}
mkdir -p "$OUT" "$OUT/json"
export PATH=/usr/local/cuda/bin:$PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Multicast stays off on shared machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nccl=$(ls /opt/torch/.venv/lib/python3.*/site-packages/nvidia/nccl/lib/libnccl.so.2 2>/dev/null | head -1)
[ -n "$nccl" ] && export SYMMOE_NCCL_LIBRARY=$nccl
quick=0
[ "${1:-}" = "--quick" ] && quick=1

status=0
step() { echo; echo "### $*"; }

{
  step "machine"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
  nvcc --version | tail -1
  cmake --version | head -1
  echo "commit: ${SYMMOE_BUILD_COMMIT:-unknown (pass SYMMOE_BUILD_COMMIT=<hash>)}"
  echo "SYMMOE_NCCL_LIBRARY=${SYMMOE_NCCL_LIBRARY:-}"
} 2>&1 | tee "$OUT/machine.log"

step "build"
scripts/fetch-cutlass.sh || { echo "BUILD FAILED: no CUTLASS headers (carry third_party/cutlass)"; exit 1; }
if ! { cmake --preset release -DCMAKE_CUDA_ARCHITECTURES=90a && cmake --build --preset release -j 16; } \
    >/tmp/symmoe-build.log 2>&1; then
  cp /tmp/symmoe-build.log "$OUT/build.log"
  tail -40 "$OUT/build.log"
  echo "BUILD FAILED"
  exit 1
fi
grep -E "warning|MPI group" /tmp/symmoe-build.log | head -20
bin=build/release/tools/symmoe

step "tests (ctest: CPU tests in parallel, then GPU tests one at a time with their output)"
ctest --preset release -L cpu -j 8 >"$OUT/ctest.log" 2>&1 || status=1
ctest --preset release -L gpu -V >>"$OUT/ctest.log" 2>&1 || status=1
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout" "$OUT/ctest.log"
grep -E "^[0-9]+: (auto resolved|free device memory|rank [0-9]|[0-9]+ ranks:|all SMs|reserve 2|CUDA_MODULE|spin release)" "$OUT/ctest.log"

step "doctor (8 virtual ranks + 8 processes on one GPU)"
timeout 180 "$bin" doctor --ranks 8 --processes --json "$OUT/doctor.json" >>"$OUT/machine.log" 2>&1
rc=$?
sed -n '/symmoe .* doctor/,$p' "$OUT/machine.log"
[ $rc = 0 ] || status=1

if [ $quick = 0 ]; then
  for b in "peer-check --ranks 2,8,72" "barrier --ranks 2,4,8" "residency --hold 2" \
           "prefetch --ranks 4 --phases" "prefetch --ranks 4 --mode push" \
           "prefetch --ranks 4 --static-weights" "grad-reduce --ranks 4" \
           "dispatch --ranks 8" "combine --ranks 8 --model qwen3-moe" \
           "dispatch --ranks 8 --payload fp8 --routing uniform --tokens 128,4096" \
           "gemm --reps 10" "gemm --layout masked --m 8,16,64 --experts 8,32 --dtype fp8 --reps 10"; do
    name=$(echo "$b" | tr -s ' ,-' '_' | sed -E 's/_ranks_[0-9]+(_[0-9]+)*/_/; s/__+/_/g; s/_$//')
    step "bench $b"
    timeout 150 "$bin" bench $b --json "$OUT/json/bench_$name.json" 2>&1 | tee -a "$OUT/bench.log"
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
  done
  # At most 8 files come back from the device: the JSON files travel as one archive.
  tar -C "$OUT" -czf "$OUT/bench_json.tgz" json && rm -rf "$OUT/json"
fi

step "summary"
grep -E "tests passed|tests failed" "$OUT/ctest.log"
grep -A2 "== verdict" "$OUT/machine.log"
echo "run_all status: $status"
exit $status
